import { scenarioGet } from '../contract/routes/scenarios.js';
import { getScenario } from '../core/scenarios/catalog.js';
import { archiveStorage } from '../platform/composition/archives.js';
import { storage } from '../platform/composition/storage.js';
import { jsonResponse, routeHandler } from '../platform/http.js';

/**
 * GET {base_url}/companies/{companyId}/resources/scenarios/{scenarioId}: one scenario and every stored version, each
 * with a presigned download URL valid 5 minutes.
 */
export const handler = routeHandler(scenarioGet, async ({ params }, { principal }) => {
  const { catalog, companies } = storage();
  const { archives } = archiveStorage();
  return jsonResponse(200, await getScenario({ catalog, archives, companies }, principal, params.companyId, params.scenarioId));
});
