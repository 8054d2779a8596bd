/**
 * Device-side routes of the main address (`/device/...`): called by a device with its own token (client credentials
 * grant, scope `device`), never with a user's; they act on the device the token names, so they take no company.
 */
import * as z from 'zod';
import { DESIRED_STATE_URL_LIFETIME_SECONDS } from '../../core/devices/desired-state.js';
import { healthReportTooLarge, MAX_HEALTH_REPORT_BYTES } from '../../core/devices/health.js';
import { MAX_JSON_DEPTH } from '../../core/shared/json-depth.js';
import { DEVICE_SCOPE } from '../../core/shared/principal.js';
import { withThousandsSeparators } from '../../core/shared/thousands.js';
import { STORED_ARCHIVES } from '../archives.js';
import { NoQuery } from '../parameters.js';
import { defineRoute, type ResponseHeader } from '../route.js';
import { DesiredState, DeviceStatusReportBody } from '../schemas/deployments.js';
import { DeviceHealthReport } from '../schemas/device-side.js';
import { PayloadTooLargeProblem } from '../schemas/problems.js';
import { AUTHENTICATED_PROBLEMS, PROBLEM_RESPONSES, problem } from '../schemas/responses.js';

/** Headers of the desired state's answers (200 and 304). */
const DESIRED_STATE_HEADERS = {
  ETag: {
    description:
      'Strong entity tag of the set of active deployments (scenario, version, deployment id) and of the pending commands (their ids): it changes when a deployment is made or undeployed and when a command is queued or becomes final (a result, a cancel, an expiry), never when a status is reported, a command is delivered or a download URL is renewed. Send it back as `If-None-Match`; a change is seen by the first poll after the change stream has been processed (moments later).',
    schema: z.string().regex(/^"[^"]*"$/),
    required: true,
  },
  'Cache-Control': {
    description:
      '`private, no-cache`: a cache may keep the answer for this device only, and must revalidate it (`If-None-Match`) before reuse.',
    schema: z.literal('private, no-cache'),
    required: true,
  },
} as const satisfies Record<string, ResponseHeader>;

/** GET /device/deployments */
export const deviceDeploymentsGet = defineRoute({
  id: 'DeviceDeploymentsGet',
  api: 'main',
  method: 'GET',
  path: '/device/deployments',
  summary: "Get the calling device's desired state and pending commands",
  description: `Every scenario version active on the device the token names, and the commands for it to run (QUEUED or DELIVERED and not expired: answering them makes the QUEUED ones DELIVERED; report each one's result with \`POST /device/commands/{commandId}/status\`), with its size, SHA-256, a presigned download URL valid ${DESIRED_STATE_URL_LIFETIME_SECONDS / 60} minutes, when it was deployed and the latest status the device reported on it. Poll it with \`If-None-Match: <ETag of the last 200>\`: while the set of active deployments and pending commands is unchanged the answer is 304 with no body, after one read of the device (nothing else is read or signed); a deploy, an undeploy or a new command reaches the poll within moments (the tag polls are compared with follows the deployments' and commands' change streams). A list of tags, weak tags (\`W/"…"\`) and \`*\` are understood as RFC 9110 says. Only for device tokens (scope \`device\`); a user token gets 403. 401 when the device was deleted or its credentials replaced since the token was issued.`,
  tags: ['Devices'],
  scope: DEVICE_SCOPE,
  request: { query: NoQuery },
  // Reads the device (its token check and its stored tag: all a matching If-None-Match costs), else lists its active
  // deployments (one Query), stores the tag when it has none or another (one conditional UpdateItem: single items, so
  // an Item grant), reads their versions (batched), presigns each archive.
  // Also queries its pending commands and marks the QUEUED ones DELIVERED (one conditional UpdateItem each).
  access: {
    storage: true,
    tables: { devices: 'Item', deployments: 'R', scenarios: 'R', commands: 'RW' },
    bucketGetObjectKeyPattern: STORED_ARCHIVES,
  },
  entry: 'functions/handlers/device-deployments-get.ts',
  responses: {
    200: { description: 'The desired state.', schema: DesiredState, headers: DESIRED_STATE_HEADERS },
    304: {
      description: 'Not Modified: `If-None-Match` holds the current ETag (or `*`); the device already has this desired state. No body.',
      headers: DESIRED_STATE_HEADERS,
    },
    ...AUTHENTICATED_PROBLEMS,
  },
});

/** POST /device/deployments/status */
export const deviceDeploymentStatusPost = defineRoute({
  id: 'DeviceDeploymentStatusPost',
  api: 'main',
  method: 'POST',
  path: '/device/deployments/status',
  summary: 'Report the status of one of the calling device’s deployments',
  description:
    "Records the state the device is in for one scenario version active on it (DOWNLOADING, INSTALLING, INSTALLED, FAILED, with an optional message). It becomes the deployment's `deviceStatus` in the active deployment listings and the `status` of its desired state item at once, and a `DEVICE_STATUS` entry of the deployment history and a `DeploymentStatusChanged` event shortly after. Only for device tokens (scope `device`); a user token gets 403.",
  tags: ['Devices'],
  scope: DEVICE_SCOPE,
  request: {
    query: NoQuery,
    body: { kind: 'json', schema: DeviceStatusReportBody, invalidDetail: 'The status report is invalid; nothing was recorded.' },
  },
  // Checks the device, sets the status on its active deployment (one conditional UpdateItem).
  access: { storage: true, tables: { devices: 'R', deployments: 'W' } },
  entry: 'functions/handlers/device-deployment-status-post.ts',
  responses: {
    415: PROBLEM_RESPONSES.UnsupportedMediaType,
    204: { description: 'Recorded.' },
    ...AUTHENTICATED_PROBLEMS,
    404: problem('NotFound', 'That scenario version is not deployed on the calling device; nothing was recorded.'),
  },
});

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
    query: NoQuery,
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
    415: PROBLEM_RESPONSES.UnsupportedMediaType,
    204: { description: 'Recorded.' },
    ...AUTHENTICATED_PROBLEMS,
    400: problem(
      'BadRequest',
      `Bad Request: the body is not JSON, nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep, or is not a valid health object (\`errors\` names each bad member, or the first one too deep, as a JSON pointer), or the query string is not empty. Nothing was recorded: the device stays as it was.`,
    ),
    401: problem(
      'Unauthorized',
      'Unauthorized: the token is missing, malformed or expired, or (`error="invalid_token"`) the device was deleted or its credentials were replaced since the token was issued.',
    ),
    403: problem('Forbidden', 'Forbidden: not a device token (a user token lacks the `device` scope).'),
    413: {
      description: `Content Too Large: the health report has more than ${withThousandsSeparators(MAX_HEALTH_REPORT_BYTES)} bytes (serialized without white space), or the body exceeds the address's limit. Nothing was recorded.`,
      schema: PayloadTooLargeProblem,
    },
  },
});
