import { RESERVED_DEVICE_IDS } from '../contract/reserved-device-ids.js';
import { devicePut } from '../contract/routes/devices.js';
import { putDevice } from '../core/devices/registry.js';
import { storage } from '../platform/composition/storage.js';
import { jsonResponse, routeHandler } from '../platform/http.js';

/**
 * PUT {base_url}/companies/{companyId}/resources/devices/{deviceId}: registers the device (201) or sets its static
 * fields (200), answering the device resource; 400 for a bad or reserved id or a bad body, 409 while the device is
 * being deleted.
 */
export const handler = routeHandler(devicePut, async ({ params, body }, { principal }) => {
  const dependencies = { ...storage(), reservedIds: RESERVED_DEVICE_IDS };
  const { created, device } = await putDevice(dependencies, principal, params.companyId, params.deviceId, body);
  return jsonResponse(created ? 201 : 200, device);
});
