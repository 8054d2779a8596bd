/**
 * Deployment request and responses: the request body (its limits are the core's DeploymentRequestBodySchema, which
 * stays the validator; this module only adds the documentation), result items, active deployments, history entries,
 * and the device side: a device's desired state and its status reports.
 */

import * as z from 'zod';
import {
  DEPLOYMENT_CAUSES,
  DeploymentRequestBodySchema,
  HISTORY_ONLY_CAUSES,
  MAX_DEPLOYMENT_ENTRIES,
} from '../../core/deployments/deployments.js';
import { DEVICE_STATUS_STATES } from '../../core/deployments/model.js';
import { DESIRED_STATE_URL_LIFETIME_SECONDS, MAX_DEVICE_STATUS_MESSAGE_LENGTH } from '../../core/devices/desired-state.js';
import { displayText } from '../../core/shared/display-text.js';
import { withThousandsSeparators } from '../../core/shared/thousands.js';
import { PendingCommand } from './commands.js';
import { DeploymentAction } from './deployment-action.js';

/** Re-exported: the deployment schemas are where the OpenAPI document and their users look for it. */
export { DeploymentAction };

const dateTime = (description: string) => z.iso.datetime({ offset: true }).describe(description);

const coreEntry = DeploymentRequestBodySchema.shape.requests.element;
const coreTarget = coreEntry.shape.target;
const coreWhat = coreEntry.shape.what;

export const DeploymentCause = z.enum(DEPLOYMENT_CAUSES).meta({
  id: 'DeploymentCause',
  description:
    'NONE: no specific cause; TARGET_NOT_FOUND: the device does not exist (or belongs to another company); WHAT_NOT_FOUND: the scenario or version does not exist; ALREADY_DEPLOYED; ALREADY_UNDEPLOYED; NOT_IMPLEMENTED: unsupported target or what type.',
});

/** The cause of a history entry: a result item's, or one only the history carries. */
export const DeploymentHistoryCause = z.enum([...DEPLOYMENT_CAUSES, ...HISTORY_ONLY_CAUSES]).meta({
  id: 'DeploymentHistoryCause',
  description:
    'A result item cause (see DeploymentCause), or DEVICE_DELETED, which appears only in the history: on the SUCCESS of an UNDEPLOY that no request asked for, made because its device was deleted.',
});

/** `target` of a request entry: the core's schema (same limits), documented. */
export const DeploymentTarget = coreTarget
  .extend({
    type: coreTarget.shape.type.meta({ description: 'DEVICE; any other type is reported as NOT_IMPLEMENTED.', examples: ['DEVICE'] }),
    id: coreTarget.shape.id.describe('Device identifier.'),
    subId: coreTarget.shape.subId.describe('null or absent for a device (a non-null subId is reported as NOT_IMPLEMENTED).'),
  })
  .meta({ id: 'DeploymentTarget' });

/** `what` of a request entry: the core's schema (same limits), documented. */
export const DeploymentWhat = coreWhat
  .extend({
    type: coreWhat.shape.type.meta({ description: 'SCENARIO; any other type is reported as NOT_IMPLEMENTED.', examples: ['SCENARIO'] }),
    id: coreWhat.shape.id.describe('Scenario identifier (`id` of scenario.json).'),
    subId: coreWhat.shape.subId.describe('Scenario version (`version` of scenario.json).'),
  })
  .meta({ id: 'DeploymentWhat' });

export const DeploymentRequest = coreEntry
  .extend({ target: DeploymentTarget, what: DeploymentWhat, action: DeploymentAction })
  .meta({ id: 'DeploymentRequest' });

/** The deployment request body; parsing with it is parsing with the core's DeploymentRequestBodySchema. */
export const DeploymentRequestBody = DeploymentRequestBodySchema.extend({
  requests: z
    .array(DeploymentRequest)
    .min(1)
    .max(MAX_DEPLOYMENT_ENTRIES)
    .describe('One entry per target/scenario pair; several scenarios and several versions of one scenario may be sent together.'),
  note: DeploymentRequestBodySchema.shape.note.describe('Free text giving the reason for the deployment; kept in the history.'),
}).meta({
  id: 'DeploymentRequestBody',
  examples: [
    {
      requests: [
        { target: { type: 'DEVICE', id: 'kiosk-0001' }, what: { type: 'SCENARIO', id: 'welcome', subId: '1.2.0' }, action: 'DEPLOY' },
      ],
      note: 'Spring campaign',
    },
  ],
});

/** A result item's members. */
const resultItemMembers = {
  id: z.string().describe('Deployment identifier (ULID of this action).'),
  target: z
    .object({ type: z.string(), id: z.string(), subId: z.string().nullable().describe('null for a device.') })
    .strict()
    .describe("The request entry's `target`, `subId` null when it was absent."),
  what: z.object({ type: z.string(), id: z.string(), subId: z.string() }).strict().describe("The request entry's `what`."),
  action: DeploymentAction,
  state: z.enum(['SUCCESS', 'FAILURE']),
  cause: DeploymentCause.nullable().describe('null on SUCCESS; the failure cause on FAILURE.'),
};

export const DeploymentResultItem = z.object(resultItemMembers).strict().meta({ id: 'DeploymentResultItem' });

export const DeploymentResultList = z
  .object({
    items: z.array(DeploymentResultItem).describe('One item per request entry, in request order.'),
    dryRun: z.boolean().describe('true when nothing was written (`dryRun=true`): the items say what would have happened.'),
  })
  .strict()
  .meta({ id: 'DeploymentResultList' });

export const DeviceStatusState = z.enum(DEVICE_STATUS_STATES).meta({
  id: 'DeviceStatusState',
  description:
    'What a device reports about a deployment: DOWNLOADING the archive, INSTALLING it, INSTALLED (running it), or FAILED (see `message`).',
});

/** The latest status a device reported on one of its active deployments. */
export const DeviceStatus = z
  .object({
    state: DeviceStatusState,
    message: z.string().nullable().describe("The device's message, or null."),
    updated: dateTime('When the service received the report.'),
  })
  .strict()
  .meta({ id: 'DeviceStatus', description: 'The latest status the device reported on this deployment.' });

export const ActiveDeployment = z
  .object({
    ...resultItemMembers,
    action: z.literal('DEPLOY'),
    state: z.literal('SUCCESS'),
    cause: z.null(),
    deployedAt: dateTime('When it was deployed.'),
    deployedBy: z.string().describe('`sub` of the caller who deployed it.'),
    note: z.string().nullable().describe('The note of the deployment request, or null.'),
    deviceStatus: DeviceStatus.optional().describe(
      'The latest status the device reported (`POST /device/deployments/status`); absent until it reports one.',
    ),
  })
  .strict()
  .meta({ id: 'ActiveDeployment', description: 'An active deployment: a successful DEPLOY result item plus when, by whom and why.' });

export const ActiveDeploymentPage = z
  .object({
    items: z.array(ActiveDeployment),
    nextCursor: z.string().nullable().describe('Pass as `cursor` to get the next page; null on the last page.'),
  })
  .strict()
  .meta({ id: 'ActiveDeploymentPage' });

export const ActionHistoryEntry = z
  .object({
    kind: z.literal('ACTION'),
    ...resultItemMembers,
    cause: DeploymentHistoryCause.nullable().describe(
      'null on SUCCESS, except DEVICE_DELETED on the UNDEPLOY of a deleted device; the failure cause on FAILURE.',
    ),
    at: dateTime('When the request was made.'),
    by: z.string().describe('`sub` of the caller who made it.'),
    note: z.string().nullable().describe('The note of the deployment request, or null.'),
  })
  .strict()
  .meta({
    id: 'ActionHistoryEntry',
    description: 'One attempted action, successful or not: the result item it got, plus when, by whom and why.',
  });

export const DeviceStatusHistoryEntry = z
  .object({
    kind: z.literal('DEVICE_STATUS'),
    id: z.string().describe('Identifier of the report (ULID).'),
    target: z
      .object({ type: z.literal('DEVICE'), id: z.string(), subId: z.null() })
      .strict()
      .describe('The reporting device.'),
    what: z
      .object({ type: z.literal('SCENARIO'), id: z.string(), subId: z.string() })
      .strict()
      .describe('The scenario version reported on.'),
    deploymentId: z.string().describe('The `id` of the active deployment reported on (its DEPLOY result item).'),
    deviceStatus: z
      .object({ state: DeviceStatusState, message: z.string().nullable().describe("The device's message, or null.") })
      .strict(),
    at: dateTime('When the service received the report.'),
    by: z.string().describe("The reporting device's client id (`{companyId}~{deviceId}`)."),
  })
  .strict()
  .meta({ id: 'DeviceStatusHistoryEntry', description: 'A status a device reported on one of its active deployments.' });

export const DeploymentHistoryEntry = z.discriminatedUnion('kind', [ActionHistoryEntry, DeviceStatusHistoryEntry]).meta({
  id: 'DeploymentHistoryEntry',
  description: 'An action (`kind` ACTION) or a status report of a device (`kind` DEVICE_STATUS).',
});

export const DeploymentHistoryPage = z
  .object({
    items: z.array(DeploymentHistoryEntry).describe('Newest first.'),
    nextCursor: z.string().nullable().describe('Pass as `cursor`, with the same filters, to get the next page; null on the last page.'),
  })
  .strict()
  .meta({ id: 'DeploymentHistoryPage' });

/** `what` of the device side: always a scenario version. */
const ScenarioWhat = z
  .object({
    type: z.literal('SCENARIO'),
    id: z.string().min(1).max(256).describe('Scenario identifier (`id` of scenario.json).'),
    subId: z.string().min(1).max(256).describe('Scenario version (`version` of scenario.json).'),
  })
  .strict();

export const DesiredDeployment = z
  .object({
    what: ScenarioWhat,
    name: z.string().describe("The `name` of the version's scenario.json."),
    size: z.int().min(0).describe('Archive size, bytes.'),
    sha256: z.string().describe('Hex SHA-256 of the archive: check the download against it.'),
    downloadUrl: z
      .string()
      .meta({ format: 'uri' })
      .describe(`GET it without a bearer token to download the archive; valid ${DESIRED_STATE_URL_LIFETIME_SECONDS / 60} minutes.`),
    downloadUrlExpiresAt: dateTime('When `downloadUrl` stops working.'),
    deployedAt: dateTime('When it was deployed.'),
    status: DeviceStatus.optional().describe('The latest status this device reported on it; absent until it reports one.'),
  })
  .strict()
  .meta({ id: 'DesiredDeployment', description: 'One scenario version the device should have installed.' });

export const DesiredState = z
  .object({
    items: z.array(DesiredDeployment).describe('Every scenario version active on the device, ordered by (scenario, version).'),
    commands: z
      .array(PendingCommand)
      .describe(
        'The commands for the device to run: each one QUEUED or DELIVERED and not expired, oldest first. Fetching one makes it DELIVERED.',
      ),
  })
  .strict()
  .meta({ id: 'DesiredState' });

export const DeviceStatusReportBody = z
  .strictObject({
    what: ScenarioWhat.describe('The scenario version reported on; it must be active on the calling device.'),
    state: DeviceStatusState,
    message: displayText(z.string().max(MAX_DEVICE_STATUS_MESSAGE_LENGTH), 'prose')
      .optional()
      .describe(
        `Free text, at most ${withThousandsSeparators(MAX_DEVICE_STATUS_MESSAGE_LENGTH)} characters (e.g. why it FAILED); tab, line feed and carriage return are its only control characters.`,
      ),
  })
  .meta({
    id: 'DeviceStatusReport',
    examples: [{ what: { type: 'SCENARIO', id: 'acme-welcome', subId: '1.1.0' }, state: 'INSTALLED' }],
  });
