import { deviceHealthPut } from '../contract/routes/device-side.js';
import { reportDeviceHealth } from '../core/devices/health.js';
import { storage } from '../platform/composition/storage.js';
import { deviceConfig } from '../platform/config.js';
import { routeHandler } from '../platform/http.js';
import { recordHealthReportWrites } from '../platform/observability.js';

/**
 * PUT {base_url}/device/health: records the calling device's health report (reportDeviceHealth) and counts its
 * writes (DeviceWrites). 204 without a body.
 */
export const handler = routeHandler(deviceHealthPut, async ({ body }, { principal }) => {
  const outcome = await reportDeviceHealth({ ...storage(), heartbeatSeconds: deviceConfig().heartbeatSeconds }, principal, body);
  recordHealthReportWrites(outcome);
  return { statusCode: 204 };
});
