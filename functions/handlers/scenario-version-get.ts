import { scenarioVersionGet } from '../contract/routes/scenarios.js';
import { getScenarioVersion } from '../core/scenarios/catalog.js';
import { archiveStorage } from '../platform/composition/archives.js';
import { storage } from '../platform/composition/storage.js';
import { jsonResponse, routeHandler } from '../platform/http.js';

/**
 * GET {base_url}/companies/{companyId}/resources/scenarios/{scenarioId}/versions/{version} (the `Location` of a 201
 * upload): one stored version with a presigned download URL valid 5 minutes.
 */
export const handler = routeHandler(scenarioVersionGet, async ({ params }, { principal }) => {
  const { catalog, companies } = storage();
  const { archives } = archiveStorage();
  return jsonResponse(
    200,
    await getScenarioVersion({ catalog, archives, companies }, principal, params.companyId, params.scenarioId, params.version),
  );
});
