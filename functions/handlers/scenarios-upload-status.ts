import { getUploadSlot } from '../core/scenarios/presigned-upload.js';
import { services } from '../platform/composition.js';
import { httpHandler, jsonResponse, pathParameter, singleQueryParameters } from '../platform/http.js';

/**
 * GET {scenario_upload_url}/companies/{companyId}/resources/scenarios/uploads/{uploadId}: `PENDING`, `STORED` (with
 * the 201 body in `result`) or `REJECTED` (with the 409/413/422 problem in `problem`).
 */
export const handler = httpHandler(async (event, { principal }) => {
  singleQueryParameters(event, []);
  const view = await getUploadSlot(services(), principal, pathParameter(event, 'companyId'), pathParameter(event, 'uploadId'));
  return jsonResponse(200, view, { 'cache-control': 'no-store' });
});
