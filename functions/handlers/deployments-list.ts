import { listActiveDeployments } from '../core/deployments.js';
import { services } from '../platform/composition.js';
import { httpHandler, jsonResponse, pathParameter, queryPairs } from '../platform/http.js';

// At cold start: a function without CURSOR_SIGNING_KEY fails its initialization, naming the variable.
services().cursors.load();

/**
 * GET {base_url}/companies/{companyId}/resources/{deviceId}/deployments and
 * GET {base_url}/companies/{companyId}/resources/DEVICE/deployments (spec endpoint 4): active deployments,
 * `{ items, nextCursor }`, paginated with `limit` and `cursor`.
 */
export const handler = httpHandler(async (event, { principal }) => {
  const companyId = pathParameter(event, 'companyId');
  const deviceId = event.pathParameters?.deviceId === undefined ? undefined : pathParameter(event, 'deviceId');
  const { devices, deployments } = services();
  return jsonResponse(200, await listActiveDeployments({ devices, deployments }, principal, companyId, deviceId, queryPairs(event)));
});
