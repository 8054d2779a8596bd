/**
 * Device-side routes of the main address (`/device/...`): called by a device with its own token (client credentials
 * grant, scope `device`), never with a user's; they act on the device the token names, so they take no company.
 */
import { healthReportTooLarge, MAX_HEALTH_REPORT_BYTES } from '../../core/device-health.js';
import { DEVICE_SCOPE } from '../../core/principal.js';
import { defineRoute } from '../route.js';
import { DeviceHealthReport } from '../schemas/device-side.js';
import { PayloadTooLargeProblem } from '../schemas/problems.js';
import { AUTHENTICATED_PROBLEMS, problem } from '../schemas/responses.js';

/** PUT /device/health */
export const deviceHealthPut = defineRoute({
  id: 'DeviceHealthPut',
  api: 'main',
  method: 'PUT',
  path: '/device/health',
  summary: 'Report the device health',
  description:
    "A device reports its health (the `health` object of the device resource) and, by reporting, that it is alive. The device becomes CONNECTED (`connectedSince` kept while it stays connected) with this health, and search shows it within seconds; a device silent for longer than the heartbeat window (`DEVICE_HEARTBEAT_SECONDS`, default 300) becomes DISCONNECTED. Report at least once per window, e.g. every minute. `health.updated` is set by the service (an `updated` in the body is ignored). A report whose health equals the stored one (`updated` aside) from a device that is still connected writes only the device's last-seen time: its `updated`, `health.updated` and search document do not change. Needs a device token (scope `device`); a user token gets 403.",
  tags: ['Devices'],
  scope: DEVICE_SCOPE,
  request: {
    body: {
      kind: 'json',
      schema: DeviceHealthReport,
      tooLarge: healthReportTooLarge,
      invalidDetail: 'The health report is invalid; nothing was recorded.',
    },
  },
  // Reads the device (token still valid?), writes its presence entry and, when something searchable changed, the device.
  access: { storage: true, tables: { devices: 'RW', presence: 'W' } },
  entry: 'functions/handlers/device-health-put.ts',
  responses: {
    204: { description: 'Recorded.' },
    ...AUTHENTICATED_PROBLEMS,
    400: problem(
      'BadRequest',
      'Bad Request: the body is not JSON or not a valid health object (`errors` names each bad member as a JSON pointer), or the query string is not empty. Nothing was recorded.',
    ),
    401: problem(
      'Unauthorized',
      'Unauthorized: the token is missing, malformed or expired, or (`error="invalid_token"`) the device was deleted or its credentials were replaced since the token was issued.',
    ),
    403: problem('Forbidden', 'Forbidden: not a device token (a user token lacks the `device` scope).'),
    413: {
      description: `Content Too Large: the health report has more than ${MAX_HEALTH_REPORT_BYTES.toLocaleString('en-US')} bytes (serialized without white space), or the body exceeds the address's limit. Nothing was recorded.`,
      schema: PayloadTooLargeProblem,
    },
  },
});
