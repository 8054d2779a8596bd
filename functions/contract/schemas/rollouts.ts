/**
 * Rollouts: the create body (its output is the core's RolloutCreateInput), the rollout as every rollout route answers
 * it (the core's RolloutView), and the listing's page. Limits come from functions/core/rollouts/model.ts.
 */
import * as z from 'zod';
import { DeploymentRequestBodySchema } from '../../core/deployments/deployments.js';
import { DEVICE_ID_RULE } from '../../core/devices/registry.js';
import {
  DEFAULT_FAILURE_THRESHOLD,
  DEFAULT_WAVE_TIMEOUT_SECONDS,
  MAX_ROLLOUT_IDS,
  MAX_ROLLOUT_SCHEDULE_DAYS,
  MAX_ROLLOUT_TARGETS,
  MAX_ROLLOUT_WAVES,
  MAX_WAVE_TIMEOUT_SECONDS,
  MIN_WAVE_TIMEOUT_SECONDS,
  ROLLOUT_EVENTS_FIRST,
  ROLLOUT_EVENTS_NEWEST,
  type RolloutCreateInput,
  type RolloutEventType,
  type RolloutState,
  type WaveState,
} from '../../core/rollouts/model.js';
import { TARGET_RESULT_STATES } from '../../core/rollouts/target-results.js';
import { IDENTIFIER_PATTERN } from '../../core/shared/identifiers.js';
import { withThousandsSeparators } from '../../core/shared/thousands.js';
import { MAX_TARGET_QUERY_LENGTH, parseTargetQuery } from '../rollout-targets.js';
import { DeploymentAction } from './deployment-action.js';
import { DeviceStatus } from './deployments.js';
import { RolloutCommand, RolloutCommandBody, RolloutTargetCause, RolloutTargetCommand } from './rollout-commands.js';

const dateTime = (description: string) => z.iso.datetime({ offset: true }).describe(description);
const count = withThousandsSeparators;

/** Longest `note`, characters (as a deployment request's). */
const MAX_NOTE_LENGTH = 2_000;

const ROLLOUT_STATES = ['SCHEDULED', 'RUNNING', 'PAUSED', 'COMPLETED', 'CANCELLED'] as const satisfies readonly RolloutState[];
const WAVE_STATES = ['PENDING', 'RUNNING', 'COMPLETED', 'CANCELLED'] as const satisfies readonly WaveState[];
const EVENT_TYPES = [
  'CREATED',
  'STARTED',
  'WAVE_STARTED',
  'WAVE_COMPLETED',
  'PAUSED',
  'RESUMED',
  'CANCELLED',
  'COMPLETED',
  'FOLLOWING',
] as const satisfies readonly RolloutEventType[];

const coreWhat = DeploymentRequestBodySchema.shape.requests.element.shape.what;

/** What a rollout deploys or undeploys: one scenario version (the bounds of a deployment request's `what`). */
export const RolloutWhat = z
  .strictObject({
    type: z.literal('SCENARIO'),
    id: coreWhat.shape.id.describe('Scenario identifier (`id` of scenario.json).'),
    subId: coreWhat.shape.subId.describe('Scenario version (`version` of scenario.json); it must exist.'),
  })
  .meta({ id: 'RolloutWhat', description: 'The scenario version a rollout deploys or undeploys.' });

/** `targets` of a create body: exactly one of `query` or `ids`; a query is checked as the search checks its own. */
export const RolloutTargetsBody = z
  .strictObject({
    query: z
      .string()
      .max(MAX_TARGET_QUERY_LENGTH, { error: `'query' has at most ${count(MAX_TARGET_QUERY_LENGTH)} characters.` })
      .optional()
      .meta({
        description: `The query string of a device search (\`GET /resources/search\`, without the leading \`?\`): its filter parameters, values of one parameter OR-ed, different parameters AND-ed, within the rollout's company; empty selects every device of the company. \`global\`, \`sort\`, \`direction\`, \`page\` and \`pageSize\` are refused (a rollout targets every match), as is \`type\` other than DEVICE and \`company\` other than the rollout's. At most ${count(MAX_TARGET_QUERY_LENGTH)} characters.`,
        examples: ['connection.state=CONNECTED&health.hubs.devices.capability.type=PRINTER'],
      }),
    ids: z
      .array(z.string().regex(IDENTIFIER_PATTERN, { error: DEVICE_ID_RULE }))
      .min(1, { error: "'ids' lists at least one device id." })
      .max(MAX_ROLLOUT_IDS, { error: `'ids' lists at most ${count(MAX_ROLLOUT_IDS)} device ids; select more with 'query'.` })
      .optional()
      .meta({
        description: `Device ids, each once, 1 to ${count(MAX_ROLLOUT_IDS)}; a device that does not exist gets the deployment result TARGET_NOT_FOUND.`,
        examples: [['kiosk-0001', 'kiosk-0002']],
      }),
  })
  .superRefine((targets, context) => {
    if ((targets.query === undefined) === (targets.ids === undefined)) {
      context.addIssue({ code: 'custom', path: [], message: "Give exactly one of 'query' (a device search) or 'ids' (device ids)." });
    }
    // A query above its length is reported for that alone.
    if (targets.query !== undefined && targets.query.length <= MAX_TARGET_QUERY_LENGTH) {
      const parsed = parseTargetQuery(targets.query);
      if ('violations' in parsed) {
        for (const violation of parsed.violations)
          context.addIssue({ code: 'custom', path: ['query', violation.path], message: violation.message });
      }
    }
    const first = new Map<string, number>();
    targets.ids?.forEach((id, index) => {
      const earlier = first.get(id);
      if (earlier === undefined) first.set(id, index);
      else
        context.addIssue({ code: 'custom', path: ['ids', index], message: `'${id}' is listed twice (also at /targets/ids/${earlier}).` });
    });
  })
  .transform((targets): RolloutCreateInput['targets'] =>
    targets.ids !== undefined ? { ids: targets.ids } : { query: targets.query ?? '' },
  )
  .meta({
    id: 'RolloutTargets',
    description: 'The devices of the rollout, resolved once, when it is created: exactly one of `query` or `ids`.',
    minProperties: 1,
    maxProperties: 1,
  });

/** The members of a create body every action takes. */
const createMembers = {
  targets: RolloutTargetsBody,
  waves: z
    .array(z.int().min(1).max(MAX_ROLLOUT_TARGETS).meta({ description: 'Devices in this wave.' }))
    .min(1)
    .max(MAX_ROLLOUT_WAVES)
    .optional()
    .meta({
      description: `Sizes of the first waves, in order, 1 to ${MAX_ROLLOUT_WAVES} of them; the remaining targets form one more, last wave (sizes beyond the targets are trimmed, empty waves dropped). Default: one wave of every target.`,
      examples: [[10, 100, 1000]],
    }),
  failureThreshold: z
    .number()
    .min(0)
    .max(1)
    .optional()
    .meta({
      description: `Share of a completed wave's devices reporting FAILED (a COMMAND rollout: of its commands FAILED or EXPIRED) above which the rollout pauses (0 to 1). Default ${DEFAULT_FAILURE_THRESHOLD}.`,
      examples: [0.05],
    }),
  waveTimeoutSeconds: z
    .int()
    .min(MIN_WAVE_TIMEOUT_SECONDS)
    .max(MAX_WAVE_TIMEOUT_SECONDS)
    .optional()
    .meta({
      description: `How long a wave waits for its devices' INSTALLED or FAILED reports (a COMMAND rollout: for its commands to be final) before it completes anyway, seconds, ${MIN_WAVE_TIMEOUT_SECONDS} to ${count(MAX_WAVE_TIMEOUT_SECONDS)}. Default ${DEFAULT_WAVE_TIMEOUT_SECONDS}.`,
    }),
  note: z
    .string()
    .max(MAX_NOTE_LENGTH)
    .optional()
    .describe('Free text giving the reason; the note of each deployment (or command) the rollout makes, kept in the history.'),
  // Future and within the bound are checked by the use case, against its clock (400 with what to do instead).
  startAt: dateTime(
    `When to start the rollout, ISO-8601 with an offset: in the future, at most ${MAX_ROLLOUT_SCHEDULE_DAYS} days ahead. The rollout is SCHEDULED until then and deploys nothing; it starts within a minute after it. The targets are resolved at creation all the same. Default: start now.`,
  )
    .optional()
    .meta({ examples: ['2030-03-01T22:00:00+01:00'] }),
  continuous: z
    .boolean()
    .optional()
    .describe(
      'Keep going: a device of the company that starts matching `targets.query` after creation (registered later, or changed into the query) joins the rollout and gets its deployment (or its commands), counted in the last wave, while the rollout is RUNNING, until it is cancelled; a device that stops matching keeps what it got. Only with `targets.query` (400 with ids). Default false.',
    ),
};

/**
 * The body of `POST /companies/{companyId}/resources/rollouts`, one of two by `action`: DEPLOY or UNDEPLOY with `what`,
 * COMMAND with `command`; its output is the core's RolloutCreateInput.
 */
export const RolloutCreateBody = z
  .discriminatedUnion('action', [
    z
      .strictObject({ action: DeploymentAction, what: RolloutWhat, ...createMembers })
      .meta({ id: 'DeploymentRolloutCreateBody', description: 'Deploy or undeploy one scenario version (`what`).' }),
    z
      .strictObject({
        action: z.literal('COMMAND').describe('Run a command on the targets.'),
        command: RolloutCommandBody,
        ...createMembers,
      })
      .meta({
        id: 'CommandRolloutCreateBody',
        description:
          'Run a command on each target, on every sub-device that advertises it in the target’s latest health report when its wave reaches it; a target advertising it nowhere is a FAILURE with cause COMMAND_NOT_ADVERTISED. Needs `devices:write` too.',
      }),
  ])
  .meta({
    id: 'RolloutCreateBody',
    discriminator: {
      propertyName: 'action',
      mapping: {
        DEPLOY: '#/components/schemas/DeploymentRolloutCreateBody',
        UNDEPLOY: '#/components/schemas/DeploymentRolloutCreateBody',
        COMMAND: '#/components/schemas/CommandRolloutCreateBody',
      },
    },
    description:
      'A rollout: deploy (or undeploy) one scenario version, or run one command, on the devices a query selects, wave after wave.',
    examples: [
      {
        action: 'DEPLOY',
        what: { type: 'SCENARIO', id: 'welcome', subId: '1.2.0' },
        targets: { query: 'connection.state=CONNECTED&health.hubs.devices.capability.type=PRINTER' },
        waves: [10, 100],
        failureThreshold: 0.05,
        note: 'Spring campaign',
      },
      {
        action: 'COMMAND',
        command: { command: 'reboot', expiresInSeconds: 600 },
        targets: { query: 'location.name=Lyon' },
        waves: [5],
        failureThreshold: 0.2,
      },
    ],
  });

/**
 * The 413 check of a create body, run on the parsed JSON before its schema: the `detail` when `targets.ids` lists
 * more than MAX_ROLLOUT_IDS ids (the rollout is then refused whole, nothing created), else undefined.
 */
export function rolloutCreateTooLarge(body: unknown): string | undefined {
  const ids = (body as { targets?: { ids?: unknown } } | null)?.targets?.ids;
  if (!Array.isArray(ids) || ids.length <= MAX_ROLLOUT_IDS) return undefined;
  return `targets.ids lists ${count(ids.length)} device ids; at most ${count(MAX_ROLLOUT_IDS)} are accepted. Select the devices with targets.query instead, or split them into several rollouts; nothing was created.`;
}

export const RolloutWave = z
  .object({
    size: z.int().min(0).describe("Devices in the wave (a continuous rollout's last wave: with the devices that joined)."),
    state: z
      .enum(WAVE_STATES)
      .describe(
        'PENDING (not started), RUNNING (deploying, or waiting for reports), COMPLETED, or CANCELLED (the rollout was cancelled before the wave completed; it runs nothing more).',
      ),
    counts: z
      .record(z.string(), z.int().min(0))
      .describe(
        "The wave's deployment results by outcome (SUCCESS, or the failure cause: TARGET_NOT_FOUND, ALREADY_DEPLOYED, ...) and its devices' reports (INSTALLED, FAILED); for a COMMAND rollout, its targets' results (SUCCESS: their commands are queued, COMMAND_NOT_ADVERTISED, TARGET_NOT_FOUND), the commands it queued (COMMANDS) and their final states, each command counted once (SUCCEEDED, FAILED, EXPIRED, CANCELLED). An absent key is 0.",
      ),
    startedAt: dateTime('When the wave started; absent while PENDING.').optional(),
    completedAt: dateTime('When the wave completed, or was cancelled while RUNNING; absent until then.').optional(),
  })
  .strict()
  .meta({ id: 'RolloutWave', examples: [{ size: 10, state: 'RUNNING', counts: { SUCCESS: 10, INSTALLED: 7, FAILED: 1 } }] });

/** One transition of a rollout, as its `events` log answers it (the core's RolloutEvent). */
export const RolloutEvent = z
  .object({
    at: dateTime('When the transition happened.'),
    type: z
      .enum(EVENT_TYPES)
      .describe(
        "CREATED (`by` its creator, `startAt` when scheduled); STARTED (a scheduled rollout started); WAVE_STARTED; WAVE_COMPLETED (with the wave's `counts` then); PAUSED (`by` an operator, or with the `reason` a wave's failures gave); RESUMED and CANCELLED (`by`); COMPLETED (its last wave completed); FOLLOWING (a continuous rollout's waves are all done: it goes on for the devices that join).",
      ),
    wave: z.int().min(1).optional().describe('The wave concerned, 1-based (WAVE_STARTED, WAVE_COMPLETED, PAUSED on failures).'),
    by: z.string().optional().describe('`sub` of the caller who did it; absent for what the service did on its own.'),
    reason: z.string().optional().describe("PAUSED on a wave's failures: the `pausedReason` it set."),
    counts: z
      .record(z.string(), z.int().min(0))
      .optional()
      .describe("WAVE_COMPLETED: the wave's counts when it completed (reports arriving later still add to the wave's `counts`)."),
    startAt: dateTime('CREATED of a scheduled rollout: when it is to start.').optional(),
  })
  .strict()
  .meta({
    id: 'RolloutEvent',
    examples: [{ at: '2025-03-01T12:04:10.000Z', type: 'WAVE_COMPLETED', wave: 1, counts: { SUCCESS: 10, INSTALLED: 8, FAILED: 2 } }],
  });

export const Rollout = z
  .object({
    id: z.string().describe('Rollout identifier (ULID).'),
    state: z
      .enum(ROLLOUT_STATES)
      .describe(
        'SCHEDULED until its `startAt` (nothing deployed yet); RUNNING until its last wave completes (COMPLETED; a continuous rollout stays RUNNING until cancelled); PAUSED by an operator or by too many failures (see `pausedReason`); CANCELLED.',
      ),
    action: z
      .enum(['DEPLOY', 'UNDEPLOY', 'COMMAND'])
      .describe('DEPLOY or UNDEPLOY the scenario version `what`, or run the command `command` (COMMAND).'),
    what: RolloutWhat.optional().describe('DEPLOY and UNDEPLOY: the scenario version; absent for a COMMAND rollout.'),
    command: RolloutCommand.optional().describe('COMMAND: the command it runs; absent otherwise.'),
    targets: z
      .int()
      .min(0)
      .describe('How many devices the targets resolved to when the rollout was created (0 only for a continuous rollout).'),
    waves: z.array(RolloutWave).describe('In the order they run.'),
    failureThreshold: z.number().min(0).max(1).describe("Share of a completed wave's FAILED reports above which the rollout pauses."),
    waveTimeoutSeconds: z
      .int()
      .min(MIN_WAVE_TIMEOUT_SECONDS)
      .max(MAX_WAVE_TIMEOUT_SECONDS)
      .describe('How long a wave waits for reports, seconds.'),
    note: z.string().nullable().describe('The note of the create request, or null.'),
    createdBy: z.string().describe('`sub` of the caller who created it: its deployments are made in their name.'),
    created: dateTime('Creation time.'),
    updated: dateTime('Last change of state.'),
    pausedReason: z.string().optional().describe('Why the rollout is PAUSED: an operator, or a wave with too many failures.'),
    startAt: dateTime('When a scheduled rollout starts (or started), UTC; absent for a rollout started when it was created.').optional(),
    continuous: z
      .boolean()
      .describe(
        'Whether devices that start matching the query after creation join (their deployments count in the last wave, whose `size` grows by them). A continuous rollout stays RUNNING after its last wave until it is cancelled.',
      ),
    joined: z.int().min(0).optional().describe('A continuous rollout: how many devices joined since its creation, each counted once.'),
    events: z
      .array(RolloutEvent)
      .describe(
        `Its transitions, oldest first, each recorded by the very write that made it. Bounded: past ${ROLLOUT_EVENTS_FIRST + ROLLOUT_EVENTS_NEWEST} events, the first ${ROLLOUT_EVENTS_FIRST} and the newest ${ROLLOUT_EVENTS_NEWEST} are kept (see \`eventsDropped\`). Empty for a rollout created before events were recorded.`,
      ),
    eventsDropped: z
      .int()
      .min(0)
      .describe(`How many events were dropped between the first ${ROLLOUT_EVENTS_FIRST} and the others of \`events\`; 0 when none.`),
  })
  .strict()
  .meta({
    id: 'Rollout',
    description: 'A rollout: its state, targets and waves with their counts.',
    examples: [
      {
        id: '01JD2X3Y4Z5A6B7C8D9E0F1G2H',
        state: 'PAUSED',
        action: 'DEPLOY',
        what: { type: 'SCENARIO', id: 'welcome', subId: '1.2.0' },
        targets: 110,
        waves: [
          {
            size: 10,
            state: 'COMPLETED',
            counts: { SUCCESS: 10, INSTALLED: 8, FAILED: 2 },
            startedAt: '2025-03-01T12:00:00.000Z',
            completedAt: '2025-03-01T12:04:10.000Z',
          },
          { size: 100, state: 'PENDING', counts: {} },
        ],
        failureThreshold: 0.1,
        waveTimeoutSeconds: 3600,
        note: 'Spring campaign',
        createdBy: 'operator-1',
        created: '2025-03-01T12:00:00.000Z',
        updated: '2025-03-01T12:04:10.000Z',
        pausedReason:
          'Wave 1: 2 of 10 devices reported FAILED (20 %), above the failure threshold of 10 %. Resume to go on with wave 2, or cancel.',
        continuous: false,
        events: [
          { at: '2025-03-01T12:00:00.000Z', type: 'CREATED', by: 'operator-1' },
          { at: '2025-03-01T12:00:00.000Z', type: 'WAVE_STARTED', wave: 1 },
          { at: '2025-03-01T12:04:10.000Z', type: 'WAVE_COMPLETED', wave: 1, counts: { SUCCESS: 10, INSTALLED: 8, FAILED: 2 } },
          {
            at: '2025-03-01T12:04:10.000Z',
            type: 'PAUSED',
            wave: 1,
            reason:
              'Wave 1: 2 of 10 devices reported FAILED (20 %), above the failure threshold of 10 %. Resume to go on with wave 2, or cancel.',
          },
        ],
        eventsDropped: 0,
      },
    ],
  });

export const RolloutPage = z
  .object({
    items: z.array(Rollout).describe('Newest first.'),
    nextCursor: z.string().nullable().describe('Pass as `cursor` to get the next page; null on the last page.'),
  })
  .strict()
  .meta({ id: 'RolloutPage' });

/** A target's deployment result, as the targets listing answers it. */
export const RolloutTargetResult = z
  .object({
    state: z
      .enum(TARGET_RESULT_STATES)
      .describe(
        "SUCCESS (the deployment was made) or FAILURE (see `cause`) once the target's chunk has run; PENDING while it has not (its wave has not started or reached it, or the rollout was paused or cancelled first); UNKNOWN when its chunk ran before per-device results were recorded and did not succeed on every device.",
      ),
    cause: RolloutTargetCause.nullable().describe('The failure cause on FAILURE; null otherwise.'),
  })
  .strict()
  .meta({ id: 'RolloutTargetResult', description: 'The deployment result the rollout recorded for one target.' });

/** One target of a rollout: its wave, result and reported status. */
export const RolloutTarget = z
  .object({
    deviceId: z.string().describe('The target device.'),
    wave: z.int().min(1).describe('The wave that deploys to it, 1-based.'),
    result: RolloutTargetResult,
    deviceStatus: DeviceStatus.optional().describe(
      "The device's latest report on its active deployment of the rollout's scenario version (`POST /device/deployments/status`), as the active deployments listing shows it; absent until it reports one, or once the version is undeployed.",
    ),
    commands: z
      .array(RolloutTargetCommand)
      .optional()
      .describe(
        'A COMMAND rollout only: the commands it queued on the target (one per advertising sub-device), with their states now; empty until its chunk has run, or when it advertised the command nowhere.',
      ),
  })
  .strict()
  .meta({
    id: 'RolloutTarget',
    examples: [
      {
        deviceId: 'kiosk-0042',
        wave: 1,
        result: { state: 'SUCCESS', cause: null },
        deviceStatus: { state: 'FAILED', message: 'disk full', updated: '2025-03-01T12:01:10.000Z' },
      },
    ],
  });

/** A page of a rollout's targets (`GET …/rollouts/{rolloutId}/targets`). */
export const RolloutTargetPage = z
  .object({
    items: z.array(RolloutTarget).describe('In wave order, then by device id.'),
    nextCursor: z
      .string()
      .nullable()
      .describe('Pass as `cursor` (with the same filters) to get the next page; null once every target has been looked at.'),
  })
  .strict()
  .meta({ id: 'RolloutTargetPage' });
