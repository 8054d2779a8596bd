import { RESERVED_DEVICE_IDS } from '../contract/reserved-device-ids.js';
import { devicesRegister } from '../contract/routes/devices.js';
import { registerDevices } from '../core/devices/registry.js';
import { storage } from '../platform/composition/storage.js';
import { jsonResponse, routeHandler } from '../platform/http.js';
import { logger } from '../platform/logger.js';

/**
 * POST {base_url}/companies/{companyId}/resources/devices: registers or updates up to 5,000 devices, 200 with one
 * result per entry in order (FAILURE entries carry `errors`); 413 above 5,000 entries.
 */
export const handler = routeHandler(devicesRegister, async ({ params, body }, { principal }) => {
  const { devices, deployments, presence } = storage();
  const results = await registerDevices(
    {
      devices,
      deployments,
      presence,
      reservedIds: RESERVED_DEVICE_IDS,
      onError: (error, context) => logger.error('Device registration write failed', { error: error as Error, ...context }),
    },
    principal,
    params.companyId,
    body,
  );
  return jsonResponse(200, results);
});
