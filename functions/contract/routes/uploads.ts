/** Routes of the upload address: direct upload, presigned upload slots and their status. */
import * as z from 'zod';
import { MAX_DIRECT_UPLOAD_BYTES, STORED_ARCHIVES, UPLOADED_ARCHIVES } from '../archives.js';
import { CompanyParams, companyId, NoQuery, pathId } from '../parameters.js';
import { defineRoute } from '../route.js';

/**
 * Longest `uploadId` accepted, characters: an id is a ULID (26), but any longer string up to this bound is simply one
 * that does not exist (404), as it always was; beyond it, 400.
 */
const UPLOAD_ID_MAX_LENGTH = 4_096;

import { PayloadTooLargeProblem } from '../schemas/problems.js';
import { AUTHENTICATED_PROBLEMS, HEADERS, PROBLEM_RESPONSES, problem } from '../schemas/responses.js';
import { ScenarioUploadForm, StoredScenario, UploadSlotGrant, UploadSlotStatus } from '../schemas/scenarios.js';

/** POST /companies/{companyId}/resources/scenarios */
export const scenarioUpload = defineRoute({
  id: 'ScenarioUpload',
  api: 'upload',
  method: 'POST',
  path: '/companies/{companyId}/resources/scenarios',
  summary: 'Upload a scenario archive',
  description:
    'Validates the archive, then stores it as a new scenario version. Uploading a new `version` with an existing `id` adds a version; re-uploading an existing (`id`, `version`) gives 409. A refused upload stores nothing and consumes no quota. Needs `scenarios:write` on the company.',
  tags: ['Scenarios'],
  scope: 'scenarios:write',
  companyParameter: 'companyId',
  request: {
    params: CompanyParams,
    query: NoQuery,
    body: {
      kind: 'multipart',
      schema: ScenarioUploadForm,
      description: `One file part \`payload\`: the scenario archive (ZIP), at most ${MAX_DIRECT_UPLOAD_BYTES / 1024 ** 2} MiB.`,
    },
  },
  // Quota check and usage update on companies, version record on scenarios (one transaction), archive put under
  // companies/, deleted again only when its version record is refused (the key is new, nothing references it).
  access: { storage: true, tables: { companies: 'RW', scenarios: 'RW' }, bucket: { [STORED_ARCHIVES]: ['put', 'delete'] } },
  entry: 'functions/handlers/scenarios-upload.ts',
  responses: {
    201: { description: 'Stored and ready for deployment.', schema: StoredScenario, headers: { Location: HEADERS.Location } },
    ...AUTHENTICATED_PROBLEMS,
    404: problem('NotFound', 'The company does not exist.'),
    409: PROBLEM_RESPONSES.Conflict,
    413: PROBLEM_RESPONSES.PayloadTooLarge,
    422: PROBLEM_RESPONSES.UnprocessableArchive,
  },
});

/** POST /companies/{companyId}/resources/scenarios/uploads */
export const scenarioUploadSlot = defineRoute({
  id: 'ScenarioUploadSlot',
  api: 'upload',
  method: 'POST',
  path: '/companies/{companyId}/resources/scenarios/uploads',
  summary: 'Request a presigned upload slot for a large archive',
  description: `For archives above the ${MAX_DIRECT_UPLOAD_BYTES / 1024 ** 2} MiB limit of direct uploads: PUT the archive to the returned presigned URL; the S3 object-created event runs the same validation, quota and immutability rules as a direct upload. Poll the Location address for the outcome. Needs \`scenarios:write\` on the company.`,
  tags: ['Scenarios'],
  scope: 'scenarios:write',
  companyParameter: 'companyId',
  request: { params: CompanyParams, query: NoQuery },
  // Checks the company, records the slot (scenarios table, `UPLOAD#`), presigns a PUT. Its credentials sign the URL
  // handed to the client, so its bucket grant is PutObject under the upload prefix only.
  access: { storage: true, tables: { companies: 'R', scenarios: 'RW' }, bucket: { [UPLOADED_ARCHIVES]: ['put'] } },
  entry: 'functions/handlers/scenarios-upload-slot.ts',
  responses: {
    201: {
      description: 'The upload slot.',
      schema: UploadSlotGrant,
      headers: { Location: { ...HEADERS.Location, description: 'Path of the upload status.' }, 'Cache-Control': HEADERS['Cache-Control'] },
    },
    ...AUTHENTICATED_PROBLEMS,
    404: problem('NotFound', 'The company does not exist.'),
    413: { description: "Content Too Large: the request body exceeds the upload address's limit.", schema: PayloadTooLargeProblem },
  },
});

/** GET /companies/{companyId}/resources/scenarios/uploads/{uploadId} */
export const scenarioUploadStatus = defineRoute({
  id: 'ScenarioUploadStatus',
  api: 'upload',
  method: 'GET',
  path: '/companies/{companyId}/resources/scenarios/uploads/{uploadId}',
  summary: 'Read the outcome of a presigned upload',
  description: 'PENDING, STORED (with the 201 body) or REJECTED (with the 409/410/413/422 problem). Needs `scenarios:read` on the company.',
  tags: ['Scenarios'],
  scope: 'scenarios:read',
  companyParameter: 'companyId',
  request: {
    params: z.object({ companyId, uploadId: pathId('uploadId', 'The `uploadId` of the slot.', UPLOAD_ID_MAX_LENGTH) }),
    query: NoQuery,
  },
  // Reads the slot.
  access: { storage: true, tables: { scenarios: 'R' } },
  entry: 'functions/handlers/scenarios-upload-status.ts',
  responses: {
    200: { description: "The upload's status.", schema: UploadSlotStatus, headers: { 'Cache-Control': HEADERS['Cache-Control'] } },
    ...AUTHENTICATED_PROBLEMS,
    404: problem('NotFound', 'The company has no such upload.'),
  },
});
