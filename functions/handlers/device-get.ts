import { deviceGet } from '../contract/routes/devices.js';
import { getDevice } from '../core/devices/registry.js';
import { storage } from '../platform/composition/storage.js';
import { jsonResponse, routeHandler } from '../platform/http.js';

/** GET {base_url}/companies/{companyId}/resources/devices/{deviceId}: the device resource; 404 when absent. */
export const handler = routeHandler(deviceGet, async ({ params }, { principal }) =>
  jsonResponse(200, await getDevice(storage(), principal, params.companyId, params.deviceId)),
);
