/**
 * The rollout model shared by the use cases (create.ts, reads.ts, transitions.ts, worker.ts, sweeper.ts), target
 * resolution (targets.ts) and the HTTP contract (docs/contract.md, "Rollouts"): limits, states, the create input, the
 * view every route answers, and the stored rollout with its target chunks and tallies.
 */

/** Most devices one rollout may target (a query matching more is refused, naming the count). */
export const MAX_ROLLOUT_TARGETS = 100_000;
/** Most device ids a `targets.ids` list may hold; beyond, select the devices with a query. */
export const MAX_ROLLOUT_IDS = 10_000;
/** Most waves one rollout may list (the rest of the targets forms one more). */
export const MAX_ROLLOUT_WAVES = 20;
/** Target device ids per chunk: one work message, one worker run. */
export const ROLLOUT_CHUNK_SIZE = 500;
/** Share of FAILED reports in a completed wave above which the rollout pauses, when the request gives none. */
export const DEFAULT_FAILURE_THRESHOLD = 0.1;
/** How long a wave waits for its devices' reports before it completes anyway, seconds, when the request gives none. */
export const DEFAULT_WAVE_TIMEOUT_SECONDS = 3600;
/** Bounds of `waveTimeoutSeconds`: a minute to a week. */
export const MIN_WAVE_TIMEOUT_SECONDS = 60;
export const MAX_WAVE_TIMEOUT_SECONDS = 604_800;
/**
 * How far ahead a rollout's `startAt` may be, days: a year covers any campaign planned ahead, and a later date is far
 * more likely a typo (a wrong year) than a plan.
 */
export const MAX_ROLLOUT_SCHEDULE_DAYS = 365;

/**
 * Events a rollout's log keeps: its first ROLLOUT_EVENTS_FIRST (creation and start) and its newest
 * ROLLOUT_EVENTS_NEWEST; those in between are dropped and counted (`eventsDropped`). The bound keeps the rollout item
 * far below DynamoDB's 400 KB item limit however often it is paused and resumed: the events that repeat without bound
 * (an operator's pause, resume) are ~100 bytes (`at` 24, `type` ≤ 14, `by` a token's `sub`, attribute names), and the
 * largest, at most one per wave (≤ MAX_ROLLOUT_WAVES + 1), are WAVE_COMPLETED with its counts (≤ ~20 causes × ~30
 * bytes ≈ 600 bytes) and PAUSED with a failure reason (~300 bytes): 200 events × ≤ 1 KB ≤ 200 KB, plus the rest of the
 * item (≤ 200 chunk first ids of a continuous rollout ≈ 26 KB, the note, ≤ 21 waves) — well under 400 KB, and ~20 KB
 * in the usual case.
 */
export const ROLLOUT_EVENTS_FIRST = 10;
/** See ROLLOUT_EVENTS_FIRST. */
export const ROLLOUT_EVENTS_NEWEST = 190;

/**
 * What a rollout event records: CREATED (by its creator, `startAt` when scheduled), STARTED (a scheduled rollout's
 * start), WAVE_STARTED / WAVE_COMPLETED (`wave`, the counts at completion), PAUSED (`by` an operator, or `reason` a
 * wave's failures), RESUMED / CANCELLED (`by`), COMPLETED (its last wave completed), FOLLOWING (a continuous
 * rollout's waves are all done: it goes on for the devices that join).
 */
export type RolloutEventType =
  | 'CREATED'
  | 'STARTED'
  | 'WAVE_STARTED'
  | 'WAVE_COMPLETED'
  | 'PAUSED'
  | 'RESUMED'
  | 'CANCELLED'
  | 'COMPLETED'
  | 'FOLLOWING';

/**
 * One transition of a rollout, stored on the rollout item and written by the same conditional write as the transition
 * it records (so it is never lost nor recorded twice), and answered as is.
 */
export interface RolloutEvent {
  /** ISO-8601: when the transition was written. */
  at: string;
  type: RolloutEventType;
  /** The wave it concerns, 1-based (as `pausedReason`'s "Wave 1" and the targets listing): WAVE_*, PAUSED on failures. */
  wave?: number;
  /** `sub` of the operator (or creator) who did it; absent when the sweeper did. */
  by?: string;
  /** Why: PAUSED on a wave's failures (the `pausedReason` it set). */
  reason?: string;
  /** WAVE_COMPLETED: the wave's counts when it completed (later reports still add to the wave's own counts). */
  counts?: Record<string, number>;
  /** CREATED of a scheduled rollout: when it is to start (ISO-8601, UTC). */
  startAt?: string;
}

/**
 * A rollout's state: SCHEDULED until its `startAt` (nothing deployed yet), RUNNING until its last wave completes,
 * PAUSED by an operator or too many failures, or ended.
 */
export type RolloutState = 'SCHEDULED' | 'RUNNING' | 'PAUSED' | 'COMPLETED' | 'CANCELLED';
/**
 * A wave's state: PENDING until it starts, RUNNING while it deploys and waits for reports, COMPLETED when it is done,
 * CANCELLED when the rollout was cancelled before the wave completed (it runs nothing more).
 */
export type WaveState = 'PENDING' | 'RUNNING' | 'COMPLETED' | 'CANCELLED';

/** What a rollout deploys (or undeploys): one scenario version. */
export interface RolloutWhat {
  type: 'SCENARIO';
  id: string;
  subId: string;
}

/**
 * What a rollout does on each target: deploy or undeploy a scenario version (`what`), or run a command on each of the
 * target's sub-devices that advertise it (`command`).
 */
export type RolloutAction = 'DEPLOY' | 'UNDEPLOY' | 'COMMAND';

/**
 * The command a COMMAND rollout runs (docs/rollouts.md, "Command rollouts"): on each target, one command per
 * sub-device that advertises `command` in the target's latest health report when its chunk runs.
 */
export interface RolloutCommand {
  /** The advertised command's name. */
  command: string;
  /** Sent with every command as is (free JSON, at most MAX_COMMAND_JSON_BYTES serialized); null when none. */
  arguments: unknown;
  /** Each command's lifetime from when the worker queues it, seconds (MIN_COMMAND_EXPIRY_SECONDS..MAX_COMMAND_EXPIRY_SECONDS). */
  expiresInSeconds: number;
}

/** What every create request gives, whatever its action. */
interface RolloutCreateCommon {
  /** The query string of a device search (e.g. `connection.state=CONNECTED&location.name=Lyon`), or device ids. */
  targets: { query: string } | { ids: string[] };
  /** Sizes of the first waves, in order; the remaining targets form the last wave. @default one wave of every target */
  waves?: number[];
  /** 0..1. @default DEFAULT_FAILURE_THRESHOLD */
  failureThreshold?: number;
  /** Seconds, MIN_WAVE_TIMEOUT_SECONDS..MAX_WAVE_TIMEOUT_SECONDS. @default DEFAULT_WAVE_TIMEOUT_SECONDS */
  waveTimeoutSeconds?: number;
  note?: string;
  /**
   * ISO-8601 date-time with offset: start the rollout then rather than now (state SCHEDULED until then). In the
   * future, at most MAX_ROLLOUT_SCHEDULE_DAYS ahead. @default now
   */
  startAt?: string;
  /**
   * Keep going: a device of the company that starts matching `targets.query` after creation (registered later, or
   * changed into the query) gets the deployment too, counted in the last wave, until the rollout is cancelled
   * (docs/rollouts.md, "Continuous rollouts"). Only with `targets.query`. @default false
   */
  continuous?: boolean;
}

/**
 * The body of a create request, validated by the route (whose schema is a union on `action`): DEPLOY and UNDEPLOY give
 * the scenario version (`what`), COMMAND the command to run (`command`, with `arguments` and `expiresInSeconds`
 * optional: null and DEFAULT_COMMAND_EXPIRY_SECONDS).
 */
export interface RolloutCreateInput extends RolloutCreateCommon {
  action: RolloutAction;
  what?: RolloutWhat;
  command?: { command: string; arguments?: unknown; expiresInSeconds?: number | undefined };
}

/** One wave as answered: its size, state and counts (deploy results by cause, device reports by state). */
export interface RolloutWaveView {
  size: number;
  state: WaveState;
  /** e.g. `{ SUCCESS: 98, TARGET_NOT_FOUND: 2, INSTALLED: 90, FAILED: 3 }`; absent keys are 0. */
  counts: Record<string, number>;
  /** ISO-8601. */
  startedAt?: string;
  /** ISO-8601. */
  completedAt?: string;
}

/** A rollout as every rollout route answers it. */
export interface RolloutView {
  /** ULID. */
  id: string;
  state: RolloutState;
  action: RolloutAction;
  /** DEPLOY and UNDEPLOY: the scenario version. */
  what?: RolloutWhat;
  /** COMMAND: the command run on the targets' advertising sub-devices. */
  command?: RolloutCommand;
  /** How many devices the targets resolved to at creation. */
  targets: number;
  waves: RolloutWaveView[];
  failureThreshold: number;
  waveTimeoutSeconds: number;
  note: string | null;
  /** `sub` of the creator: the deployments are made in their name. */
  createdBy: string;
  /** ISO-8601. */
  created: string;
  /** ISO-8601. */
  updated: string;
  /** Why the rollout is PAUSED (an operator, or a wave's failures). */
  pausedReason?: string;
  /** ISO-8601: when a scheduled rollout starts (or started); absent for one started at creation. */
  startAt?: string;
  /** Whether devices that start matching the query after creation join (RolloutCreateInput.continuous). */
  continuous: boolean;
  /** A continuous rollout's devices that joined since its creation (each counted once); absent otherwise. */
  joined?: number;
  /** Its transitions, oldest first: the first and newest kept (ROLLOUT_EVENTS_FIRST); `[]` for one stored before events. */
  events: RolloutEvent[];
  /** Events dropped from the middle of `events` to bound it (0 when none). */
  eventsDropped: number;
}

/** One wave of a stored rollout: its size, state and the range of target chunks holding its devices. */
export interface StoredRolloutWave {
  size: number;
  state: WaveState;
  /** ISO-8601: when the wave started; also the time of every deployment it makes (their ids' time part and `at`). */
  startedAt?: string;
  /** ISO-8601. */
  completedAt?: string;
  /** Indexes of its first and last chunk (inclusive). */
  chunks: [number, number];
}

/** A rollout as stored (rollouts table, `ROLLOUT#{company}` / `{id}`); key design in tables.ts. */
export interface StoredRollout {
  /** ULID. */
  id: string;
  company: string;
  action: RolloutAction;
  /** DEPLOY and UNDEPLOY: the scenario version. */
  what?: RolloutWhat;
  /** COMMAND: the command run on the targets' advertising sub-devices. */
  command?: RolloutCommand;
  /** COMMAND: who the commands are run by (their `by`): the creator's username. */
  commandBy?: string;
  /**
   * COMMAND, once cancelled: set by the cancel until the work messages that cancel the rollout's QUEUED commands are
   * sent (the sweeper sends them when the cancel could not); the rollout stays in the sweep index meanwhile.
   */
  cancelCommands?: boolean;
  /** How the targets were given: the search query string, or how many ids were listed. */
  targetsSpec: { query: string } | { ids: number };
  /** Devices targeted (resolved at creation). */
  targets: number;
  waves: StoredRolloutWave[];
  /** Index of the wave running, or next to run (0-based). */
  currentWave: number;
  /** 0..1. */
  failureThreshold: number;
  /** Seconds. */
  waveTimeoutSeconds: number;
  note?: string;
  /** `sub` of the creator: the deployments are made in their name. */
  createdBy: string;
  /** ISO-8601. */
  created: string;
  /** ISO-8601. */
  updated: string;
  state: RolloutState;
  pausedReason?: string;
  /** ISO-8601: when a scheduled rollout starts (or started); absent for one started at creation. */
  startAt?: string;
  /** Present on a continuous rollout: what a changed device is matched against, and where the rollout's own targets are. */
  continuous?: ContinuousSpec;
  /** Its transitions, oldest first, bounded (withEvents, state.ts); absent on a rollout stored before events were recorded. */
  events?: RolloutEvent[];
  /** Events dropped from the middle of `events` to bound it; absent while none. */
  eventsDropped?: number;
  /**
   * Optimistic lock: incremented by every write of the rollout item (RolloutRepository.update). When the sweeper looks
   * at the rollout next is not stored with it but derived from it (sweepIndexAt, state.ts).
   */
  version: number;
}

/**
 * How a continuous rollout tells a changed device apart: `filters` is its target query's selection (field → accepted
 * values, as the search matches them: documentMatches), `chunkFirstIds` the first device id of each target chunk, in
 * chunk order (the targets are sorted by id across chunks), so that whether a device is one of its targets is one
 * chunk's read (at most MAX_ROLLOUT_TARGETS / ROLLOUT_CHUNK_SIZE = 200 ids kept on the rollout item).
 */
export interface ContinuousSpec {
  filters: Record<string, string[]>;
  chunkFirstIds: string[];
}

/** A device that joined a continuous rollout after its creation (rollouts table, `JOINED#{company}#{rolloutId}` / deviceId). */
export interface RolloutMember {
  deviceId: string;
  /** The wave it counts in: the last one (0-based). */
  wave: number;
  /** ISO-8601: when it joined; also the time of the deployment made on it (its id's time part and `at`). */
  at: string;
  /** Its deployment's result, once made: `SUCCESS` or the cause. Absent while the deployment is not made yet. */
  result?: string;
  /** A COMMAND rollout's member, once its result is recorded: the ids of the commands queued on it. */
  commands?: string[];
}

/** A chunk of a rollout's targets (rollouts table, `TARGETS#{company}#{rolloutId}` / `{index, 6 digits}`). */
export interface RolloutChunk {
  /** 0-based, global across the waves. */
  index: number;
  /** The wave it belongs to (0-based). */
  wave: number;
  /** At most ROLLOUT_CHUNK_SIZE device ids, sorted. */
  deviceIds: string[];
  /** ISO-8601: when its work message was last sent again (absent: sent when its wave started). */
  dispatchedAt?: string;
  /** Set once the worker has run it (its results counted). */
  done?: boolean;
  /** Its deploy results by cause (`SUCCESS` for a write made), once done. */
  results?: Record<string, number>;
  /**
   * Once done: the cause of each device whose deployment was not made (`{ deviceId: cause }`; every other device of
   * the chunk got SUCCESS). Absent on a chunk done before per-device outcomes were recorded.
   */
  failures?: Record<string, string>;
  /**
   * Once done, a COMMAND rollout's chunk: the ids of the commands queued on each device (`{ deviceId: [commandId] }`,
   * the devices that got SUCCESS), what the targets listing reads their states with and a cancel cancels.
   */
  commands?: Record<string, string[]>;
}

/** The tallies of one wave: deploy results by cause, device reports by state, and how many chunks are done. */
export interface RolloutWaveTally {
  /** e.g. `{ SUCCESS: 480, TARGET_NOT_FOUND: 20, INSTALLED: 470, FAILED: 3 }`; absent keys are 0. */
  counts: Record<string, number>;
  chunksDone: number;
  /** Devices that joined the (continuous) rollout and count in this wave. */
  joined?: number;
}

/** A device's terminal status report on a deployment a rollout made. */
export interface RolloutReport {
  company: string;
  rolloutId: string;
  /** The wave that deployed it (0-based). */
  wave: number;
  deviceId: string;
  state: 'INSTALLED' | 'FAILED';
  /** ISO-8601: when the service received the report. */
  at: string;
}

/**
 * A final state of a command a COMMAND rollout queued, counted once for its wave (RolloutRepository.recordCommandResult).
 */
export interface RolloutCommandResult {
  company: string;
  rolloutId: string;
  /** The wave that queued it (0-based). */
  wave: number;
  commandId: string;
  state: 'SUCCEEDED' | 'FAILED' | 'EXPIRED' | 'CANCELLED';
}

/** The body of a rollout work message (SQS body JSON, and the local queue's): one chunk of a wave to run. */
export interface RolloutWorkMessage {
  type: 'RolloutChunk';
  company: string;
  rolloutId: string;
  /** 0-based. */
  wave: number;
  /** The chunk's index. */
  chunk: number;
}

/**
 * The QUEUED commands of a cancelled COMMAND rollout to cancel: those of one chunk (`chunk`), or those of the devices
 * that joined it (`members`: a continuous rollout's).
 */
export type RolloutCancelMessage = { type: 'RolloutCancelCommands'; company: string; rolloutId: string } & (
  | { chunk: number }
  | { members: true }
);

/** What the rollout queue carries: a chunk to run (its deployments, or its commands), or commands to cancel. */
export type RolloutQueueMessage = RolloutWorkMessage | RolloutCancelMessage;
