import { scenarioUploadSlot } from '../contract/routes/uploads.js';
import { requestUploadSlot } from '../core/scenarios/presigned-upload.js';
import { uploadStorage } from '../platform/composition/archives.js';
import { uploadSlotLifetimeSeconds } from '../platform/config.js';
import { jsonResponse, routeHandler } from '../platform/http.js';

/**
 * POST {scenario_upload_url}/companies/{companyId}/resources/scenarios/uploads: a presigned upload slot for large
 * archives, 201 `{ uploadId, url, method, headers, expiresAt }` with the status address in `Location`.
 */
export const handler = routeHandler(scenarioUploadSlot, async ({ params: { companyId } }, { principal }) => {
  const lifetime = uploadSlotLifetimeSeconds();
  const grant = await requestUploadSlot(
    { ...uploadStorage(), ...(lifetime === undefined ? {} : { urlLifetimeSeconds: lifetime }) },
    principal,
    companyId,
  );
  return jsonResponse(201, grant, {
    location: `/companies/${encodeURIComponent(companyId)}/resources/scenarios/uploads/${grant.uploadId}`,
    'cache-control': 'no-store',
  });
});
