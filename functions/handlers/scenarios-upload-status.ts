import { scenarioUploadStatus } from '../contract/routes/uploads.js';
import { getUploadSlot } from '../core/scenarios/presigned-upload.js';
import { storage } from '../platform/composition/storage.js';
import { jsonResponse, routeHandler } from '../platform/http.js';

/**
 * GET {scenario_upload_url}/companies/{companyId}/resources/scenarios/uploads/{uploadId}: `PENDING`, `STORED` (with
 * the 201 body in `result`) or `REJECTED` (with the 409/413/422 problem in `problem`).
 */
export const handler = routeHandler(scenarioUploadStatus, async ({ params }, { principal }) => {
  const view = await getUploadSlot(storage(), principal, params.companyId, params.uploadId);
  return jsonResponse(200, view, { 'cache-control': 'no-store' });
});
