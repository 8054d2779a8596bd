/** Routes of the upload address: direct upload, presigned upload slots and their status. */
import { z } from 'zod';
import { UPLOADED_ARCHIVES, STORED_ARCHIVES } from '../archives.js';
import { CompanyParams, companyId, NoQuery, pathId } from '../parameters.js';
import { defineRoute } from '../route.js';

/** The multipart form of a direct upload: one file part `payload` holding the ZIP archive. */
const UploadForm = z.object({
  payload: z.string().meta({ format: 'binary', contentMediaType: 'application/zip', description: 'The scenario archive (ZIP), at most 4 MiB.' }),
});

/** POST /companies/{companyId}/resources/scenarios */
export const scenarioUpload = defineRoute({
  id: 'ScenarioUpload',
  api: 'upload',
  method: 'POST',
  path: '/companies/{companyId}/resources/scenarios',
  scope: 'scenarios:write',
  companyParameter: 'companyId',
  request: { params: CompanyParams, query: NoQuery, body: { kind: 'multipart', schema: UploadForm } },
  // Quota check and usage update on companies, version record on scenarios (one transaction), archive put under
  // companies/, deleted again only when its version record is refused (the key is new, nothing references it).
  access: { storage: true, tables: { companies: 'RW', scenarios: 'RW' }, bucket: { [STORED_ARCHIVES]: ['put', 'delete'] } },
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
  request: { params: CompanyParams, query: NoQuery },
  // Checks the company, records the slot (scenarios table, `UPLOAD#`), presigns a PUT. Its credentials sign the URL
  // handed to the client, so its bucket grant is PutObject under the upload prefix only.
  access: { storage: true, tables: { companies: 'R', scenarios: 'RW' }, bucket: { [UPLOADED_ARCHIVES]: ['put'] } },
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
  request: { params: z.object({ companyId, uploadId: pathId('uploadId', 'The `uploadId` of the slot.') }), query: NoQuery },
  // Reads the slot.
  access: { storage: true, tables: { scenarios: 'R' } },
  entry: 'functions/handlers/scenarios-upload-status.ts',
});
