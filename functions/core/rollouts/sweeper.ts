/**
 * The rollout sweeper (scheduled): for each rollout due in the sweep index, reads it and its tallies, asks sweepStep
 * (sweep-step.ts) what follows, and does it: one write conditioned on the version read, then the work of a wave that
 * write started; or sends again the chunks whose message looks lost. A crash anywhere leaves a state the next run
 * picks up.
 */
import pLimit from 'p-limit';
import { resendUnfinished } from './dispatch.js';
import type { RolloutRepository, WorkQueue } from './ports.js';
import { sweepNeedsTallies, sweepStep } from './sweep-step.js';

/** What sweepRollouts needs. */
export interface RolloutSweepDependencies {
  rollouts: RolloutRepository;
  queue: WorkQueue;
  /** A chunk of a running wave sent this long ago and not done is sent again (ROLLOUT_CHUNK_TIMEOUT_SECONDS). */
  chunkTimeoutSeconds: number;
  /** Current time; injectable for tests. */
  now?: () => Date;
  /** Most rollouts looked at per run; the next run goes on. @default 100 */
  maxPerRun?: number;
  /** Rollouts handled at once. @default 4 */
  concurrency?: number;
  /** Called with the error of one rollout; the others are still swept. */
  onError?: (error: unknown, context: Record<string, unknown>) => void;
}

/** What the sweeper did with one rollout. */
export type RolloutSweepOutcome =
  /** It started (a SCHEDULED rollout whose `startAt` has come), its wave started, or the next one (chunks sent). */
  | 'started'
  /** Some chunks were sent again (their message was lost). */
  | 'resent'
  /** Nothing to do yet (chunks running, reports awaited). */
  | 'waiting'
  /** Its wave completed and it paused on too many failures. */
  | 'paused'
  /** Its last wave completed. */
  | 'completed'
  /** A continuous rollout's last wave completed: it runs on for the devices that join, out of the sweep index. */
  | 'following'
  /** A cancelled COMMAND rollout: the work that cancels its QUEUED commands was sent (the cancel itself could not). */
  | 'cancelled'
  /** Another writer changed it since it was read: nothing done, the next run looks again. */
  | 'conflict'
  /** Not RUNNING any more (the index lags behind). */
  | 'skipped'
  /** Its handling threw (reported through onError). */
  | 'failed';

/** The rollouts a sweep looked at, by outcome (`company/rolloutId`). */
export type RolloutSweepResult = Record<RolloutSweepOutcome, string[]>;

/**
 * The rollout sweeper (every minute on AWS, every ROLLOUT_SWEEP_INTERVAL_MS locally): for each SCHEDULED or RUNNING
 * rollout due in the sweep index, what sweepStep decides —
 * - a SCHEDULED rollout whose `startAt` has come starts, with its first wave (RUNNING since now), and its chunks are
 *   sent; on AWS that is within a minute of `startAt`; a PENDING current wave starts the same way;
 * - a RUNNING wave's chunks not done and sent more than `chunkTimeoutSeconds` ago are sent again;
 * - a wave whose chunks are all done completes on its reports or its timeout; then the rollout pauses on too many
 *   failures, starts its next wave (chunks sent), completes, or (continuous) follows the devices that join;
 * - a cancelled COMMAND rollout whose cancel could not send the work that cancels its QUEUED commands gets it sent.
 * Every state change is one write conditioned on the version read, so two sweepers racing change a rollout once (the
 * other gets `conflict` and sends nothing).
 */
export async function sweepRollouts(deps: RolloutSweepDependencies): Promise<RolloutSweepResult> {
  const now = deps.now?.() ?? new Date();
  const result: RolloutSweepResult = {
    started: [],
    resent: [],
    waiting: [],
    paused: [],
    completed: [],
    following: [],
    cancelled: [],
    conflict: [],
    skipped: [],
    failed: [],
  };
  const due = await deps.rollouts.due(now.toISOString(), deps.maxPerRun ?? 100);
  const limit = pLimit(Math.max(1, deps.concurrency ?? 4));
  await Promise.all(
    due.map(({ company, rolloutId }) =>
      limit(async () => {
        let outcome: RolloutSweepOutcome;
        try {
          outcome = await sweepRollout(deps, company, rolloutId, now);
        } catch (error) {
          deps.onError?.(error, { operation: 'sweepRollout', company, rolloutId });
          outcome = 'failed';
        }
        result[outcome].push(`${company}/${rolloutId}`);
      }),
    ),
  );
  return result;
}

/**
 * One rollout's sweep (sweepRollouts): its step at `now`, done.
 * @throws Error on a backend failure (reading, writing, sending).
 */
async function sweepRollout(deps: RolloutSweepDependencies, company: string, rolloutId: string, now: Date): Promise<RolloutSweepOutcome> {
  const rollout = await deps.rollouts.get(company, rolloutId);
  if (rollout === undefined) return 'skipped';
  const tallies = sweepNeedsTallies(rollout) ? await deps.rollouts.tallies(company, rolloutId) : new Map();
  const step = sweepStep(rollout, tallies, now);
  switch (step.outcome) {
    case 'skipped':
    case 'waiting':
      return step.outcome;
    case 'resend': {
      const timeoutMs = deps.chunkTimeoutSeconds * 1000;
      const overdue = (lastSent: string) => Date.parse(lastSent) + timeoutMs <= now.getTime();
      return (await resendUnfinished(deps, rollout, now.toISOString(), overdue)) > 0 ? 'resent' : 'waiting';
    }
    case 'cancelled':
      // Sent before the write that takes the rollout out of the sweep index: a crash between them sends them again.
      await deps.queue.send(step.messages);
      return (await deps.rollouts.update(step.next)) ? 'cancelled' : 'conflict';
    default:
      if (!(await deps.rollouts.update(step.next))) return 'conflict';
      if (step.messages.length > 0) await deps.queue.send(step.messages);
      return step.outcome;
  }
}
