/**
 * Deployment request and responses: the request body (its limits are the core's DeploymentRequestBodySchema, which
 * stays the validator; this module only adds the documentation), result items, active deployments, history entries.
 */
import { z } from 'zod';
import { DEPLOYMENT_CAUSES, DeploymentRequestBodySchema, HISTORY_ONLY_CAUSES, MAX_DEPLOYMENT_ENTRIES } from '../../core/deployments.js';

const dateTime = (description: string) => z.iso.datetime({ offset: true }).describe(description);

const coreEntry = DeploymentRequestBodySchema.shape.requests.element;
const coreTarget = coreEntry.shape.target;
const coreWhat = coreEntry.shape.what;

export const DeploymentAction = z.enum(['DEPLOY', 'UNDEPLOY']).meta({ id: 'DeploymentAction' });

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

/** A result item's members (spec "Deployment result item"). */
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

export const ActiveDeployment = z
  .object({
    ...resultItemMembers,
    action: z.literal('DEPLOY'),
    state: z.literal('SUCCESS'),
    cause: z.null(),
    deployedAt: dateTime('When it was deployed.'),
    deployedBy: z.string().describe('`sub` of the caller who deployed it.'),
    note: z.string().nullable().describe('The note of the deployment request, or null.'),
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

export const DeploymentHistoryEntry = z
  .object({
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
    id: 'DeploymentHistoryEntry',
    description: 'One attempted action, successful or not: the result item it got, plus when, by whom and why.',
  });

export const DeploymentHistoryPage = z
  .object({
    items: z.array(DeploymentHistoryEntry).describe('Newest first.'),
    nextCursor: z.string().nullable().describe('Pass as `cursor`, with the same filters, to get the next page; null on the last page.'),
  })
  .strict()
  .meta({ id: 'DeploymentHistoryPage' });
