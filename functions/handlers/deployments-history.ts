import { deploymentsHistory } from '../contract/routes/deployments.js';
import { listDeploymentHistory } from '../core/deployments/history.js';
import { storage } from '../platform/composition/storage.js';
import { jsonResponse, routeHandler } from '../platform/http.js';

// At cold start: a function without CURSOR_SIGNING_KEY fails its initialization, naming the variable.
storage().cursors.load();

/**
 * GET {base_url}/companies/{companyId}/resources/deployments/history: every DEPLOY and UNDEPLOY
 * attempted, newest first, `{ items, nextCursor }`, filtered by `deviceId`, `scenarioId`, `version`, `from`, `to`
 * and paginated with `limit` and `cursor`.
 */
export const handler = routeHandler(deploymentsHistory, async ({ params, query }, { principal }) => {
  const { history } = storage();
  return jsonResponse(200, await listDeploymentHistory({ history }, principal, params.companyId, query));
});
