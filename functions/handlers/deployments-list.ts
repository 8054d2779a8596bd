import { deploymentsListAll, deploymentsListDevice } from '../contract/routes/deployments.js';
import { listActiveDeployments } from '../core/deployments/deployments.js';
import { storage } from '../platform/composition/storage.js';
import { jsonResponse, type RouteFunction, routeHandler } from '../platform/http.js';
import { routeDispatcher } from '../platform/router.js';

// At cold start: a function without CURSOR_SIGNING_KEY fails its initialization, naming the variable.
storage().cursors.load();

const listing: RouteFunction<typeof deploymentsListDevice> = async ({ params, query }, { principal }) => {
  const { devices, deployments } = storage();
  return jsonResponse(200, await listActiveDeployments({ devices, deployments }, principal, params.companyId, params.deviceId, query));
};
const allDevices = routeHandler(deploymentsListAll, (input, context, event) =>
  listing({ ...input, params: { ...input.params, deviceId: undefined as unknown as string } }, context, event),
);
const oneDevice = routeHandler(deploymentsListDevice, listing);

/**
 * GET {base_url}/companies/{companyId}/resources/{deviceId}/deployments and
 * GET {base_url}/companies/{companyId}/resources/DEVICE/deployments: active deployments,
 * `{ items, nextCursor }`, paginated with `limit` and `cursor`. One function serves both routes.
 */
export const handler = routeDispatcher([
  [deploymentsListAll, allDevices],
  [deploymentsListDevice, oneDevice],
]);
