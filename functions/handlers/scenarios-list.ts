import { listScenarios } from '../core/scenarios/catalog.js';
import { services } from '../platform/composition.js';
import { httpHandler, jsonResponse, pathParameter, queryPairs } from '../platform/http.js';

// At cold start: a function without CURSOR_SIGNING_KEY fails its initialization, naming the variable.
services().cursors.load();

/**
 * GET {base_url}/companies/{companyId}/resources/scenarios: the company's scenarios ordered by id, `{ items,
 * nextCursor }`, paginated with `limit` and `cursor`.
 */
export const handler = httpHandler(async (event, { principal }) => {
  const companyId = pathParameter(event, 'companyId');
  const { catalog } = services();
  return jsonResponse(200, await listScenarios({ catalog }, principal, companyId, queryPairs(event)));
});
