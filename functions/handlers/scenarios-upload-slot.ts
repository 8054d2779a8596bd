import { requestUploadSlot } from '../core/scenarios/presigned-upload.js';
import { services } from '../platform/composition.js';
import { uploadSlotLifetimeSeconds } from '../platform/config.js';
import { httpHandler, jsonResponse, pathParameter, singleQueryParameters } from '../platform/http.js';

/**
 * POST {scenario_upload_url}/companies/{companyId}/resources/scenarios/uploads: a presigned upload slot for large
 * archives, 201 `{ uploadId, url, method, headers, expiresAt }` with the status address in `Location`.
 */
export const handler = httpHandler(async (event, { principal }) => {
  const companyId = pathParameter(event, 'companyId');
  singleQueryParameters(event, []);
  const lifetime = uploadSlotLifetimeSeconds();
  const grant = await requestUploadSlot({ ...services(), ...(lifetime === undefined ? {} : { urlLifetimeSeconds: lifetime }) }, principal, companyId);
  return jsonResponse(201, grant, {
    location: `/companies/${encodeURIComponent(companyId)}/resources/scenarios/uploads/${grant.uploadId}`,
    'cache-control': 'no-store',
  });
});
