/**
 * The rollout model shared by the use cases (rollouts.ts), target resolution (rollout-targets.ts) and the HTTP
 * contract (docs/contract.md, "Rollouts"): limits, states, the create input and the view every route answers.
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

/** A rollout's state: RUNNING until its last wave completes, PAUSED by an operator or too many failures, or ended. */
export type RolloutState = 'RUNNING' | 'PAUSED' | 'COMPLETED' | 'CANCELLED';
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

/** The body of a create request, validated by the route. */
export interface RolloutCreateInput {
  action: 'DEPLOY' | 'UNDEPLOY';
  what: RolloutWhat;
  /** The query string of a device search (e.g. `connection.state=CONNECTED&location.name=Lyon`), or device ids. */
  targets: { query: string } | { ids: string[] };
  /** Sizes of the first waves, in order; the remaining targets form the last wave. @default one wave of every target */
  waves?: number[];
  /** 0..1. @default DEFAULT_FAILURE_THRESHOLD */
  failureThreshold?: number;
  /** Seconds, MIN_WAVE_TIMEOUT_SECONDS..MAX_WAVE_TIMEOUT_SECONDS. @default DEFAULT_WAVE_TIMEOUT_SECONDS */
  waveTimeoutSeconds?: number;
  note?: string;
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
  action: 'DEPLOY' | 'UNDEPLOY';
  what: RolloutWhat;
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
}
