/** Routes of the upload address: direct upload, presigned upload slots and their status. */
import { defineRoute } from '../route.js';

/** POST /companies/{companyId}/resources/scenarios */
export const scenarioUpload = defineRoute({
  id: 'ScenarioUpload',
  api: 'upload',
  method: 'POST',
  path: '/companies/{companyId}/resources/scenarios',
  scope: 'scenarios:write',
  companyParameter: 'companyId',
  entry: 'functions/handlers/scenarios-upload.ts',
});

/** POST /companies/{companyId}/resources/scenarios/uploads */
export const scenarioUploadSlot = defineRoute({
  id: 'ScenarioUploadSlot',
  api: 'upload',
  method: 'POST',
  path: '/companies/{companyId}/resources/scenarios/uploads',
  scope: 'scenarios:write',
  companyParameter: 'companyId',
  entry: 'functions/handlers/scenarios-upload-slot.ts',
});

/** GET /companies/{companyId}/resources/scenarios/uploads/{uploadId} */
export const scenarioUploadStatus = defineRoute({
  id: 'ScenarioUploadStatus',
  api: 'upload',
  method: 'GET',
  path: '/companies/{companyId}/resources/scenarios/uploads/{uploadId}',
  scope: 'scenarios:read',
  companyParameter: 'companyId',
  entry: 'functions/handlers/scenarios-upload-status.ts',
});
