import { scenarioUsage } from '../contract/routes/scenarios.js';
import { getStorageUsage } from '../core/scenarios/catalog.js';
import { storage } from '../platform/composition/storage.js';
import { jsonResponse, routeHandler } from '../platform/http.js';

/**
 * GET {base_url}/companies/{companyId}/resources/scenarios/usage: the company's storage quota, the bytes used by
 * stored archives and the bytes available, `{ quotaBytes, usedBytes, availableBytes }`.
 */
export const handler = routeHandler(scenarioUsage, async ({ params }, { principal }) => {
  const { companies } = storage();
  return jsonResponse(200, await getStorageUsage({ companies }, principal, params.companyId));
});
