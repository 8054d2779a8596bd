import { deviceDelete } from '../contract/routes/devices.js';
import { deleteDevice } from '../core/devices/registry.js';
import { storage } from '../platform/composition/storage.js';
import { routeHandler } from '../platform/http.js';

// At cold start: a function without CURSOR_SIGNING_KEY (it pages the device's active deployments) fails its
// initialization, naming the variable.
storage().cursors.load();

/**
 * DELETE {base_url}/companies/{companyId}/resources/devices/{deviceId}: 204 once the device, its active deployments
 * (undeployed with cause DEVICE_DELETED) and its presence are gone; 404 when absent.
 */
export const handler = routeHandler(deviceDelete, async ({ params }, { principal }) => {
  await deleteDevice(storage(), principal, params.companyId, params.deviceId);
  return { statusCode: 204 };
});
