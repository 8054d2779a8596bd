import { deviceCommandStatusPost } from '../contract/routes/commands.js';
import { reportCommandResult } from '../core/commands/device-side.js';
import { storage } from '../platform/composition/storage.js';
import { routeHandler } from '../platform/http.js';

/**
 * POST {base_url}/device/commands/{commandId}/status: the calling device's result of one of its commands (SUCCEEDED
 * or FAILED); 204, 404 for a command not its own, 409 for one already final or expired.
 */
export const handler = routeHandler(deviceCommandStatusPost, async ({ params, body }, { principal }) => {
  const { devices, commands } = storage();
  await reportCommandResult({ devices, commands }, principal, params.commandId, body);
  return { statusCode: 204 };
});
