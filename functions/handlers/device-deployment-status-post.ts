import { deviceDeploymentStatusPost } from '../contract/routes/device-side.js';
import { reportDeviceStatus } from '../core/devices/desired-state.js';
import { storage } from '../platform/composition/storage.js';
import { routeHandler } from '../platform/http.js';

/**
 * POST {base_url}/device/deployments/status: records the calling device's status on one of its active deployments
 * (204); 404 when that scenario version is not active on it.
 */
export const handler = routeHandler(deviceDeploymentStatusPost, async ({ body }, { principal }) => {
  const { devices, deployments } = storage();
  await reportDeviceStatus({ devices, deployments }, principal, {
    scenarioId: body.what.id,
    version: body.what.subId,
    state: body.state,
    ...(body.message === undefined ? {} : { message: body.message }),
  });
  return { statusCode: 204 };
});
