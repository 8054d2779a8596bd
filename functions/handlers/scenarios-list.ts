import { scenarioList } from '../contract/routes/scenarios.js';
import { listScenarios } from '../core/scenarios/catalog.js';
import { storage } from '../platform/composition/storage.js';
import { jsonResponse, routeHandler } from '../platform/http.js';

// At cold start: a function without CURSOR_SIGNING_KEY fails its initialization, naming the variable.
storage().cursors.load();

/**
 * GET {base_url}/companies/{companyId}/resources/scenarios: the company's scenarios ordered by id, `{ items,
 * nextCursor }`, paginated with `limit` and `cursor`.
 */
export const handler = routeHandler(scenarioList, async ({ params, query }, { principal }) => {
  const { catalog } = storage();
  return jsonResponse(200, await listScenarios({ catalog }, principal, params.companyId, query));
});
