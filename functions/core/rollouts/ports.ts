/**
 * Ports of the rollout area: rollouts with their target chunks and tallies, and the work queue; and what the
 * management use cases (create, reads, transitions) receive.
 */
import type { DeviceStatus } from '../deployments/model.js';
import type { StoredDevice } from '../devices/model.js';
import type { ScenarioRepository } from '../scenarios/ports.js';
import type { Page } from '../shared/paging.js';
import type {
  RolloutChunk,
  RolloutCommandResult,
  RolloutMember,
  RolloutQueueMessage,
  RolloutReport,
  RolloutWaveTally,
  StoredRollout,
} from './model.js';

/** Rollouts, their target chunks and their wave tallies (rollouts table). */
export interface RolloutRepository {
  /**
   * Writes the target chunks (batched puts), then the rollout item (a conditional put: only if new) last, so that a
   * crash in between leaves only chunks no rollout refers to. The rollout enters the sweep index at
   * sweepIndexAt(rollout).
   * @throws Error when a write fails (nothing refers to what was written).
   */
  create(rollout: StoredRollout, chunks: readonly RolloutChunk[]): Promise<void>;
  /** The rollout (a strongly consistent read), or undefined. */
  get(company: string, rolloutId: string): Promise<StoredRollout | undefined>;
  /**
   * Replaces the rollout item only if its stored `version` is `rollout.version - 1` (optimistic lock: the caller read
   * version n and writes n + 1). The rollout enters (or stays in) the sweep index at sweepIndexAt(rollout), or leaves
   * it when that is undefined.
   * @returns false when another write came first (nothing written).
   */
  update(rollout: StoredRollout): Promise<boolean>;
  /** A company's rollouts, newest first. @throws BadRequestError on a cursor this listing did not issue. */
  list(company: string, limit: number, cursor: string | undefined): Promise<Page<StoredRollout>>;
  /** One chunk with its device ids (strongly consistent), or undefined. */
  chunk(company: string, rolloutId: string, index: number): Promise<RolloutChunk | undefined>;
  /** Chunks `first`..`last` (inclusive) without their device ids (`deviceIds` empty), in index order. */
  chunkStates(company: string, rolloutId: string, first: number, last: number): Promise<RolloutChunk[]>;
  /** Sets `dispatchedAt` on the chunks not done yet (absent ones are ignored). */
  markDispatched(company: string, rolloutId: string, indexes: readonly number[], at: string): Promise<void>;
  /**
   * Marks a chunk done with its results and the cause of each device whose deployment was not made (`failures`,
   * `{ deviceId: cause }`), and, for a COMMAND rollout, the ids of the commands queued on each device (`commands`), and
   * adds the results (and one done chunk) to its wave's tally, in one transaction, only if the chunk is not done yet.
   * @returns false when it was (nothing counted twice).
   */
  markDone(
    company: string,
    rolloutId: string,
    chunk: Pick<RolloutChunk, 'index' | 'wave'>,
    results: Record<string, number>,
    failures: Record<string, string>,
    commands?: Record<string, string[]>,
  ): Promise<boolean>;
  /** Every wave's tally (waves without any are absent), by wave index. */
  tallies(company: string, rolloutId: string): Promise<Map<number, RolloutWaveTally>>;
  /**
   * Counts a device's terminal report once per rollout: records that the device reported and adds 1 to its wave's
   * `INSTALLED` or `FAILED`, in one transaction, only if the device has not reported in this rollout before.
   * @returns false when it had (a redelivered stream record, or a later report: nothing counted).
   */
  recordReport(report: RolloutReport): Promise<boolean>;
  /**
   * Counts a final state of a command a COMMAND rollout queued, once: records that the command was counted and adds 1
   * to its wave's counter of that state, in one transaction, only if the command was not counted before (a command
   * enters one final state only). @returns false when it was (a redelivered stream record: nothing counted).
   */
  recordCommandResult(result: RolloutCommandResult): Promise<boolean>;
  /**
   * The rollouts of the sweep index whose time there (sweepIndexAt, as last written) is at or before `now` (ISO-8601
   * UTC), at most `limit`, by an index query (no scan).
   */
  due(now: string, limit: number): Promise<{ company: string; rolloutId: string }[]>;
  /**
   * The company's RUNNING continuous rollouts, by an index query (no scan). Eventually consistent: a rollout paused or
   * cancelled a moment ago may still be listed (join checks its state again), one started a moment ago may not yet be.
   */
  continuousOf(company: string): Promise<StoredRollout[]>;
  /** The member record of a device that joined a continuous rollout (strongly consistent), or undefined. */
  member(company: string, rolloutId: string, deviceId: string): Promise<RolloutMember | undefined>;
  /**
   * Joins a device to a continuous rollout, in one transaction: only while the rollout is RUNNING, the member record
   * written only if the device has none, and 1 added to the joined count of the member's wave.
   * @returns `joined`; `member` when it had joined before (nothing written); `ended` when the rollout is not RUNNING.
   */
  join(company: string, rolloutId: string, member: RolloutMember): Promise<'joined' | 'member' | 'ended'>;
  /**
   * Records a member's deployment result once: the member gets `result` (and, for a COMMAND rollout, the ids of the
   * commands queued on it, `commands`) if it has none, and its wave's tally adds 1 to that result (and the number of
   * those commands to `COMMANDS`), in one transaction. @returns false when a result was recorded before (nothing
   * counted twice).
   */
  recordJoinResult(company: string, rolloutId: string, member: RolloutMember & { result: string }): Promise<boolean>;
  /**
   * The members of a continuous rollout by device id, ascending, after `after` (exclusive; from the first without):
   * at most `limit` (one Query), and whether more follow.
   */
  members(company: string, rolloutId: string, after: string | undefined, limit: number): Promise<{ items: RolloutMember[]; more: boolean }>;
}

/** What the rollout management use cases (create, reads, pause, resume, cancel) need. */
export interface RolloutDependencies {
  rollouts: RolloutRepository;
  queue: WorkQueue;
  scenarios: Pick<ScenarioRepository, 'existingVersions'>;
  /** Current time; injectable for tests. */
  now?: () => Date;
  /**
   * Called with an error the use case survives: sending work at creation or resumption (the sweeper sends it again
   * once ROLLOUT_CHUNK_TIMEOUT_SECONDS have passed).
   */
  onError?: (error: unknown, context: Record<string, unknown>) => void;
}

/** The queue of rollout work (SQS on AWS, the local runtime's in-process queue locally). */
export interface WorkQueue {
  /**
   * Sends the messages (in batches); delivery is at least once, in no particular order.
   * @throws Error naming how many messages could not be sent after retries.
   */
  send(messages: readonly RolloutQueueMessage[]): Promise<void>;
}

/** The devices' latest reports on their active deployments (the deployments table's active slots). */
export interface TargetStatusReader {
  /**
   * The latest status each of `deviceIds` reported on its active deployment of the scenario version, for the devices
   * that have one (an active slot with a report); others are absent from the map. Batched reads (100 keys a call),
   * never one request per device. @throws Error on a backend failure.
   */
  deviceStatuses(company: string, scenarioId: string, version: string, deviceIds: readonly string[]): Promise<Map<string, DeviceStatus>>;
}

/** The latest health reports of a rollout's targets: which of their sub-devices advertise which commands. */
export interface TargetHealthReader {
  /**
   * The `health` of each of `deviceIds` that exists in `company` and is not being deleted (a device that never
   * reported maps to undefined health); others are absent from the map. Batched reads (100 keys a call), never one
   * request per device. @throws Error on a backend failure.
   */
  healthOf(company: string, deviceIds: readonly string[]): Promise<Map<string, Pick<StoredDevice, 'health'>>>;
}
