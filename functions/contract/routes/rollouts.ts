/** Rollout routes of the main address: create, read, list, pause, resume and cancel a rollout, and list its targets. */
import * as z from 'zod';
import { COMMAND_STATES } from '../../core/commands/model.js';
import { DEVICE_STATUS_STATES } from '../../core/deployments/model.js';
import {
  DEFAULT_FAILURE_THRESHOLD,
  DEFAULT_WAVE_TIMEOUT_SECONDS,
  MAX_ROLLOUT_IDS,
  MAX_ROLLOUT_SCHEDULE_DAYS,
  MAX_ROLLOUT_TARGETS,
  MAX_ROLLOUT_WAVES,
  ROLLOUT_CHUNK_SIZE,
} from '../../core/rollouts/model.js';
import { MAX_CHUNKS_PER_TARGET_PAGE, TARGET_RESULT_STATES } from '../../core/rollouts/target-results.js';
import { withThousandsSeparators } from '../../core/shared/thousands.js';
import { CompanyParams, companyId, integer, ListQuery, NoQuery, oneOf, pagingParameters, pathId } from '../parameters.js';
import { defineRoute } from '../route.js';
import { ConflictProblem, PayloadTooLargeProblem, UnprocessableRequestProblem } from '../schemas/problems.js';
import { AUTHENTICATED_PROBLEMS, HEADERS, PROBLEM_RESPONSES, problem, serviceUnavailable } from '../schemas/responses.js';
import { ROLLOUT_TARGET_CAUSES, RolloutPreview } from '../schemas/rollout-commands.js';
import { Rollout, RolloutCreateBody, RolloutPage, RolloutTargetPage, rolloutCreateTooLarge } from '../schemas/rollouts.js';

const count = withThousandsSeparators;

/** The listing's path, and the parent of each rollout's. */
export const ROLLOUTS_PATH = '/companies/{companyId}/resources/rollouts';
const ROLLOUT_PATH = `${ROLLOUTS_PATH}/{rolloutId}`;

/**
 * `{rolloutId}`: a rollout's `id` (a ULID). Validated as the other path ids are (1 to 256 characters): anything else is
 * simply a rollout that does not exist (404).
 */
const rolloutId = pathId('rolloutId', 'The rollout (its `id`, a ULID).');
const RolloutParams = z.object({ companyId, rolloutId });

const notFound = problem('NotFound', 'The company has no such rollout.');

/** What every rollout operation's description says about how a rollout runs. */
const HOW_IT_RUNS =
  "Waves run in order. Each deployment a rollout makes is an ordinary deployment, made in the name of its creator with its note: the same conditional write, history entry and DeploymentChanged event as `POST …/resources/deployments`, and a device that already has the version reports ALREADY_DEPLOYED in the counts. A wave completes when each device it deployed to has reported INSTALLED or FAILED (`POST /device/deployments/status`), or once `waveTimeoutSeconds` have passed since it started; when the share of FAILED reports in a completed wave is above `failureThreshold`, the rollout becomes PAUSED with `pausedReason`, otherwise the next wave starts. A COMMAND rollout queues, on each target, one ordinary command (`…/devices/{deviceId}/commands`, `by` its creator, `rolloutId` set) per sub-device that advertises the command in the target's latest health report, or records the target FAILURE with cause COMMAND_NOT_ADVERTISED; its wave completes when its commands are final (or at `waveTimeoutSeconds`), and its failure share is that of its commands FAILED or EXPIRED. The rollout runs in the background and survives restarts: it goes on where it was.";

/** POST /companies/{companyId}/resources/rollouts */
export const rolloutCreate = defineRoute({
  id: 'RolloutCreate',
  api: 'main',
  method: 'POST',
  path: ROLLOUTS_PATH,
  summary: 'Create a rollout: deploy a scenario version to a fleet, or run a command on it, wave by wave',
  description: `Resolves the targets once, now: the devices of the company that \`targets.query\` (a device search's query string: the same filters, values and semantics as \`GET /resources/search\`) matches, or the devices \`targets.ids\` lists, at most ${count(MAX_ROLLOUT_TARGETS)}; devices that match later are not added, unless \`continuous\` is true: then each device of the company that starts matching later (registered, or changed into the query) joins once while the rollout is RUNNING, gets the deployment in the last wave, and the rollout runs until cancelled (it may then also start with no target). The targets, sorted by id, are split into the waves \`waves\` gives (the rest forming the last wave). Answers 202 with the rollout (state RUNNING, its first wave about to start) and its address in \`Location\`; follow its progress there. With \`startAt\` the rollout is SCHEDULED instead: it deploys nothing until then and starts within a minute after it (cancel it meanwhile; pause and resume do not apply). ${HOW_IT_RUNS} \`POST …/rollouts/preview\` with the same body answers what it would do, writing nothing. Defaults: \`failureThreshold\` ${DEFAULT_FAILURE_THRESHOLD}, \`waveTimeoutSeconds\` ${DEFAULT_WAVE_TIMEOUT_SECONDS}, one wave. Needs \`deployments:write\` on the company, and \`devices:write\` too for a COMMAND rollout (running commands writes to devices: 403 without it).`,
  tags: ['Rollouts'],
  scope: 'deployments:write',
  companyParameter: 'companyId',
  request: {
    params: CompanyParams,
    query: NoQuery,
    body: {
      kind: 'json',
      schema: RolloutCreateBody,
      tooLarge: rolloutCreateTooLarge,
      invalidDetail: 'The rollout body is invalid; nothing was created.',
    },
  },
  // Reads the scenario version, writes the rollout and its target chunks, sends the first wave's work messages; the
  // targets query runs on the index.
  access: { storage: true, tables: { rollouts: 'RW', scenarios: 'R' }, rolloutQueue: true, search: 'search' },
  entry: 'functions/handlers/rollout-create.ts',
  responses: {
    415: PROBLEM_RESPONSES.UnsupportedMediaType,
    202: {
      description: 'The rollout is created and runs in the background.',
      schema: Rollout,
      headers: { Location: { ...HEADERS.Location, description: 'Address of the rollout (`GET` it to follow its progress).' } },
    },
    ...AUTHENTICATED_PROBLEMS,
    400: problem(
      'BadRequest',
      "Bad Request: a body that is not valid, e.g. not exactly one of `targets.query` and `targets.ids`, a repeated id, or a query parameter the search does not take or a rollout refuses (`errors[].path` `/targets/query/<parameter>`: `global`, `sort`, `direction`, `page`, `pageSize`, `type` other than DEVICE, `company` other than the rollout's), or a `startAt` not in the future or more than " +
        `${MAX_ROLLOUT_SCHEDULE_DAYS} days ahead (the detail says what to give instead). Nothing was created.`,
    ),
    413: {
      description: `Content Too Large: \`targets.ids\` lists more than ${count(MAX_ROLLOUT_IDS)} ids (select them with \`targets.query\`), or a body above the address's limit. Nothing was created.`,
      schema: PayloadTooLargeProblem,
    },
    422: {
      description: `Unprocessable: the scenario version does not exist, or the targets resolve to no device (a rollout that is not continuous) or to more than ${count(MAX_ROLLOUT_TARGETS)} (the detail names the count: narrow the query, or split it into several rollouts). Nothing was created.`,
      schema: UnprocessableRequestProblem,
    },
    503: serviceUnavailable(
      'A backend (the database, the search index the query runs on, or the work queue) is unavailable. Retry after `Retry-After` seconds; nothing was created.',
    ),
  },
});

/** POST /companies/{companyId}/resources/rollouts/preview */
export const rolloutPreview = defineRoute({
  id: 'RolloutPreview',
  api: 'main',
  method: 'POST',
  path: `${ROLLOUTS_PATH}/preview`,
  summary: 'Preview a rollout: what creating it would do, without creating it',
  description: `Takes the body of \`POST …/rollouts\`, checks it and resolves its targets as creating it would (the same 400, 403 and 422), and answers what the rollout would do, writing and sending nothing: how many targets, in which waves, and, for a COMMAND rollout, what their latest health reports advertise now: how many targets advertise the command (each would get it on every sub-device that advertises it), how many do not (each would be a FAILURE with cause COMMAND_NOT_ADVERTISED), how many listed ids no device has, and the commands it would queue, by sub-device type (\`capability.type\`). It reads every target's health report (batched, as the rollout's worker will): a report sent before a target's wave reaches it changes what the rollout finds. Needs \`deployments:write\` on the company, and \`devices:write\` too for a COMMAND rollout.`,
  tags: ['Rollouts'],
  scope: 'deployments:write',
  companyParameter: 'companyId',
  request: {
    params: CompanyParams,
    query: NoQuery,
    body: {
      kind: 'json',
      schema: RolloutCreateBody,
      tooLarge: rolloutCreateTooLarge,
      invalidDetail: 'The rollout body is invalid.',
    },
  },
  // Reads the scenario version, and a COMMAND rollout's targets' health (devices, BatchGetItem); the targets query
  // runs on the index. Writes nothing.
  access: { storage: true, tables: { scenarios: 'R', devices: 'R' }, search: 'search' },
  entry: 'functions/handlers/rollout-preview.ts',
  responses: {
    415: PROBLEM_RESPONSES.UnsupportedMediaType,
    200: { description: 'What the rollout would do; nothing was written.', schema: RolloutPreview },
    ...AUTHENTICATED_PROBLEMS,
    400: problem('BadRequest', 'Bad Request: a body that is not valid, as for `POST …/rollouts`.'),
    413: {
      description: `Content Too Large: \`targets.ids\` lists more than ${count(MAX_ROLLOUT_IDS)} ids, or a body above the address's limit.`,
      schema: PayloadTooLargeProblem,
    },
    422: {
      description: `Unprocessable: the scenario version does not exist, or the targets resolve to no device (a rollout that is not continuous) or to more than ${count(MAX_ROLLOUT_TARGETS)}.`,
      schema: UnprocessableRequestProblem,
    },
    503: serviceUnavailable(
      'A backend (the database or the search index the query runs on) is unavailable. Retry after `Retry-After` seconds.',
    ),
  },
});

/** GET /companies/{companyId}/resources/rollouts */
export const rolloutsList = defineRoute({
  id: 'RolloutsList',
  api: 'main',
  method: 'GET',
  path: ROLLOUTS_PATH,
  summary: 'List the rollouts',
  description:
    'Every rollout of the company, whatever its state, newest first, each as `GET …/rollouts/{rolloutId}` answers it. A cursor issued for another listing gives 400. Needs `deployments:read` on the company.',
  tags: ['Rollouts'],
  scope: 'deployments:read',
  companyParameter: 'companyId',
  request: { params: CompanyParams, query: ListQuery },
  // Pages the company's rollouts (one Query), and reads each one's counts.
  access: { storage: true, pagesListings: true, tables: { rollouts: 'R' } },
  entry: 'functions/handlers/rollouts-list.ts',
  responses: {
    200: { description: 'A page of rollouts, newest first.', schema: RolloutPage },
    ...AUTHENTICATED_PROBLEMS,
  },
});

/** GET /companies/{companyId}/resources/rollouts/{rolloutId} */
export const rolloutGet = defineRoute({
  id: 'RolloutGet',
  api: 'main',
  method: 'GET',
  path: ROLLOUT_PATH,
  summary: 'Get a rollout',
  description: `The rollout's state and, per wave, its size, state and counts: the deployment results by outcome (SUCCESS or the failure cause) and the devices' reports (INSTALLED, FAILED). ${HOW_IT_RUNS} Needs \`deployments:read\` on the company.`,
  tags: ['Rollouts'],
  scope: 'deployments:read',
  companyParameter: 'companyId',
  request: { params: RolloutParams, query: NoQuery },
  // The rollout item, its chunks' results and its report counters.
  access: { storage: true, tables: { rollouts: 'R' } },
  entry: 'functions/handlers/rollout-get.ts',
  responses: {
    200: { description: 'The rollout.', schema: Rollout },
    ...AUTHENTICATED_PROBLEMS,
    404: notFound,
  },
});

/** The pause, resume and cancel routes: one POST each on the rollout, answering it. */
function transition<const Id extends string>(definition: {
  id: Id;
  verb: 'pause' | 'resume' | 'cancel';
  summary: string;
  description: string;
  from: string;
  entry: string;
  rolloutQueue?: boolean;
}) {
  return defineRoute({
    id: definition.id,
    api: 'main',
    method: 'POST',
    path: `${ROLLOUT_PATH}/${definition.verb}`,
    summary: definition.summary,
    description: `${definition.description} Needs \`deployments:write\` on the company.`,
    tags: ['Rollouts'],
    scope: 'deployments:write',
    companyParameter: 'companyId',
    request: { params: RolloutParams, query: NoQuery },
    // One conditional update of the rollout item (on its version), after reading it.
    access: { storage: true, tables: { rollouts: 'RW' }, ...(definition.rolloutQueue === true ? { rolloutQueue: true } : {}) },
    entry: definition.entry,
    responses: {
      200: { description: 'The rollout, in its new state.', schema: Rollout },
      ...AUTHENTICATED_PROBLEMS,
      404: notFound,
      409: {
        description: `Conflict: the rollout is not ${definition.from}; the detail names its state. Nothing was changed.`,
        schema: ConflictProblem,
      },
    },
  });
}

/** POST /companies/{companyId}/resources/rollouts/{rolloutId}/pause */
export const rolloutPause = transition({
  id: 'RolloutPause',
  verb: 'pause',
  summary: 'Pause a rollout',
  description:
    "RUNNING → PAUSED, with `pausedReason` naming the caller. No further chunk of devices is deployed to; deployments already being made finish, and their devices' reports are still counted. Resume or cancel it later.",
  from: 'RUNNING',
  entry: 'functions/handlers/rollout-pause.ts',
});

/** POST /companies/{companyId}/resources/rollouts/{rolloutId}/resume */
export const rolloutResume = transition({
  id: 'RolloutResume',
  verb: 'resume',
  summary: 'Resume a paused rollout',
  description:
    'PAUSED → RUNNING, `pausedReason` cleared: the rollout goes on where it was (the rest of the current wave, or the next wave after one paused on failures).',
  from: 'PAUSED',
  entry: 'functions/handlers/rollout-resume.ts',
  // Sends the work messages of the wave it resumes.
  rolloutQueue: true,
});

/** POST /companies/{companyId}/resources/rollouts/{rolloutId}/cancel */
export const rolloutCancel = transition({
  id: 'RolloutCancel',
  verb: 'cancel',
  summary: 'Cancel a rollout',
  description:
    "SCHEDULED, RUNNING or PAUSED → CANCELLED, for good: no further device is deployed to (a SCHEDULED rollout never starts), and every wave not COMPLETED becomes CANCELLED. The deployments already made stay (undeploy them with `POST …/resources/deployments`, or with a rollout whose action is UNDEPLOY). A COMMAND rollout's commands still QUEUED become CANCELLED, in the background, moments later; those a device has fetched (DELIVERED) or answered stay as they are.",
  from: 'SCHEDULED, RUNNING or PAUSED',
  entry: 'functions/handlers/rollout-cancel.ts',
  // Sends the work messages that cancel a COMMAND rollout's QUEUED commands.
  rolloutQueue: true,
});

/** The filters of the targets listing (each optional, AND-ed) and its paging. */
const RolloutTargetsQuery = z.strictObject({
  // A rollout has at most MAX_ROLLOUT_WAVES listed waves plus the rest.
  wave: integer('wave', 1, MAX_ROLLOUT_WAVES + 1)
    .optional()
    .meta({ description: "Only the targets of this wave (1-based); beyond the rollout's waves gives 400.", example: 1 }),
  state: oneOf('state', TARGET_RESULT_STATES)
    .optional()
    .meta({ description: 'Only the targets whose deployment result (`result.state`) is this.', example: 'FAILURE' }),
  cause: oneOf('cause', ROLLOUT_TARGET_CAUSES)
    .optional()
    .meta({ description: 'Only the targets whose result failed with this cause (`result.cause`).', example: 'TARGET_NOT_FOUND' }),
  deviceStatus: oneOf('deviceStatus', DEVICE_STATUS_STATES).optional().meta({
    description: "Only the targets whose device's latest reported status (`deviceStatus.state`) is this. Not for a COMMAND rollout (400).",
    example: 'FAILED',
  }),
  commandState: oneOf('commandState', COMMAND_STATES).optional().meta({
    description: 'A COMMAND rollout only (400 otherwise): the targets with a command in this state (`commands[].state`).',
    example: 'FAILED',
  }),
  ...pagingParameters,
});

/** GET /companies/{companyId}/resources/rollouts/{rolloutId}/targets */
export const rolloutTargets = defineRoute({
  id: 'RolloutTargetsList',
  api: 'main',
  method: 'GET',
  path: `${ROLLOUT_PATH}/targets`,
  summary: "List a rollout's targets: each device's wave, result and reported status",
  description: `Every target device of the rollout, in wave order then by device id (then the devices that joined a continuous rollout, in its last wave, by device id), with its wave, the deployment result the rollout recorded for it (SUCCESS, FAILURE with its cause, or PENDING until its wave's work has reached it) and its latest reported status on the rollout's scenario version (\`deviceStatus\`: DOWNLOADING, INSTALLING, INSTALLED or FAILED with the device's message): why devices failed. For a COMMAND rollout, the result says whether the target's commands were queued (SUCCESS) or why not (COMMAND_NOT_ADVERTISED, TARGET_NOT_FOUND), and \`commands\` lists them with their states now (QUEUED … SUCCEEDED, FAILED with the device's message, EXPIRED, CANCELLED). The filters \`wave\`, \`state\`, \`cause\`, \`deviceStatus\` and \`commandState\` are AND-ed. A page looks at up to ${count(MAX_CHUNKS_PER_TARGET_PAGE * ROLLOUT_CHUNK_SIZE)} targets: with filters that keep few of them it may hold fewer than \`limit\` items, or none, and still carry a \`nextCursor\`; follow it until it is null. A cursor issued for another listing (or other filters) gives 400. Needs \`deployments:read\` on the company.`,
  tags: ['Rollouts'],
  scope: 'deployments:read',
  companyParameter: 'companyId',
  request: { params: RolloutParams, query: RolloutTargetsQuery },
  // Reads the rollout item, its target chunks and members (rollouts), and the targets' active slots of the version
  // (deployments, BatchGetItem) or their commands (commands, BatchGetItem); signs its cursors.
  access: { storage: true, pagesListings: true, tables: { rollouts: 'R', deployments: 'R', commands: 'R' } },
  entry: 'functions/handlers/rollout-targets.ts',
  responses: {
    200: { description: "A page of the rollout's targets.", schema: RolloutTargetPage },
    ...AUTHENTICATED_PROBLEMS,
    400: problem(
      'BadRequest',
      "Bad Request: a filter value that is not one of its values, a `wave` beyond the rollout's waves, `deviceStatus` on a COMMAND rollout or `commandState` on another, a `limit` out of bounds, an unknown parameter, or a cursor this listing did not issue.",
    ),
    404: notFound,
    503: serviceUnavailable('The database is unavailable. Retry after `Retry-After` seconds.'),
  },
});
