import { authorize } from '../core/principal.js';
import { getStorageUsage } from '../core/scenarios/catalog.js';
import { services } from '../platform/composition.js';
import { httpHandler, jsonResponse, pathParameter, singleQueryParameters } from '../platform/http.js';

/**
 * GET {base_url}/companies/{companyId}/resources/scenarios/usage: the company's storage quota, the bytes used by
 * stored archives and the bytes available, `{ quotaBytes, usedBytes, availableBytes }`.
 */
export const handler = httpHandler(async (event, { principal }) => {
  const companyId = pathParameter(event, 'companyId');
  // Company and scope first, so that a stranger learns nothing from parameter errors (the use case checks again).
  authorize(principal, 'scenarios:read', companyId);
  singleQueryParameters(event, []);
  const { companies } = services();
  return jsonResponse(200, await getStorageUsage({ companies }, principal, companyId));
});
