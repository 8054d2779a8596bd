/**
 * What the sweeper does next with one rollout, decided from the rollout as read, its waves' tallies and the time,
 * without any I/O: the rollout to write (one write conditioned on the version read) and the work to send once it is
 * written, or what to wait for. One `switch` on the rollout's state, then on its current wave's; sweeper.ts reads,
 * writes and sends.
 */
import { COMMANDS_COUNT } from './command-work.js';
import { cancelMessages, chunkMessages } from './dispatch.js';
import type {
  RolloutCancelMessage,
  RolloutEvent,
  RolloutWaveTally,
  RolloutWorkMessage,
  StoredRollout,
  StoredRolloutWave,
} from './model.js';
import { replaceWave, startedWave, withEvents } from './state.js';

/** What a sweep does with one rollout (sweepStep). */
export type SweepStep =
  /** Nothing: the rollout is not SCHEDULED nor RUNNING (PAUSED or ended; the sweep index lags behind). */
  | { outcome: 'skipped' }
  /** Nothing yet: its scheduled start has not come, or its wave awaits its devices' reports (or its timeout). */
  | { outcome: 'waiting' }
  /** The current wave's chunks are not all done: send again those whose message looks lost (sent too long ago). */
  | { outcome: 'resend' }
  /**
   * Write `next` (its `version` is the one read + 1, `updated` the sweep's time), then, once written, send `messages`
   * (the chunks of a wave the write starts; none otherwise). `outcome` says what the write does: a rollout or a wave
   * started, a pause on failures, the last wave completed, or a continuous rollout following the devices that join.
   */
  | { outcome: 'started' | 'paused' | 'completed' | 'following'; next: StoredRollout; messages: RolloutWorkMessage[] }
  /**
   * A cancelled COMMAND rollout whose commands' cancel was not sent (the cancel could not): send `messages` first,
   * then write `next` (without `cancelCommands`, out of the sweep index); sent twice, they cancel nothing more.
   */
  | { outcome: 'cancelled'; next: StoredRollout; messages: RolloutCancelMessage[] };

/**
 * What the sweeper does next with `rollout`, at `now`:
 * - SCHEDULED and its `startAt` has come: it becomes RUNNING and its first wave starts (`started`, its chunks to send);
 * - RUNNING, current wave PENDING: the wave starts (`started`);
 * - RUNNING, current wave RUNNING with chunks not done (by its tally's `chunksDone`): `resend`;
 * - every chunk done and the wave complete (waveComplete): it is COMPLETED; then, when its share of FAILED reports is
 *   above the threshold (failurePauseReason) and a wave follows, the rollout pauses before that wave (`paused`); else
 *   the next wave starts (`started`), or the rollout is COMPLETED after its last wave (`completed`). A continuous
 *   rollout's last wave instead leaves it RUNNING for the devices that join (`following`), unless it failed too often;
 * - RUNNING past its last wave (a continuous rollout): it leaves the sweep index (`following`);
 * - CANCELLED with its commands' cancel not sent (`cancelCommands`): `cancelled`, the messages that cancel them;
 * - PAUSED, COMPLETED, CANCELLED otherwise: `skipped`.
 * @param tallies the rollout's tallies by wave index (RolloutRepository.tallies); a wave without one has none counted.
 */
export function sweepStep(rollout: StoredRollout, tallies: ReadonlyMap<number, RolloutWaveTally>, now: Date): SweepStep {
  switch (rollout.state) {
    case 'SCHEDULED':
      return scheduledStep(rollout, now);
    case 'RUNNING':
      return runningStep(rollout, tallies, now);
    case 'CANCELLED':
      return rollout.cancelCommands === true ? cancelledStep(rollout, now) : { outcome: 'skipped' };
    case 'PAUSED':
    case 'COMPLETED':
      return { outcome: 'skipped' };
  }
}

/** A cancelled COMMAND rollout whose commands' cancel is to be sent: the messages, and the rollout without the mark. */
function cancelledStep(rollout: StoredRollout, now: Date): SweepStep {
  const { cancelCommands: _sent, ...rest } = rollout;
  return {
    outcome: 'cancelled',
    next: { ...rest, updated: now.toISOString(), version: rollout.version + 1 },
    messages: cancelMessages(rollout),
  };
}

/**
 * Whether sweepStep reads `rollout`'s tallies: only for a RUNNING rollout whose current wave is RUNNING (the other
 * steps depend on the rollout alone), so that the sweeper reads them only then.
 */
export function sweepNeedsTallies(rollout: StoredRollout): boolean {
  return rollout.state === 'RUNNING' && rollout.waves[rollout.currentWave]?.state === 'RUNNING';
}

/** A SCHEDULED rollout: it starts, with its first wave, once its `startAt` has come. */
function scheduledStep(rollout: StoredRollout, now: Date): SweepStep {
  // The index holds it at its startAt, so it is due; the check keeps a rollout from starting early all the same.
  if (rollout.startAt !== undefined && Date.parse(rollout.startAt) > now.getTime()) return { outcome: 'waiting' };
  const at = now.toISOString();
  const index = rollout.currentWave;
  const started = withEvents(
    { ...rollout, state: 'RUNNING', waves: replaceWave(rollout.waves, index, startedWave(rollout.waves[index] as StoredRolloutWave, at)) },
    { at, type: 'STARTED' },
    { at, type: 'WAVE_STARTED', wave: index + 1 },
  );
  return written('started', rollout, started, at);
}

/** A RUNNING rollout, by the state of its current wave. */
function runningStep(rollout: StoredRollout, tallies: ReadonlyMap<number, RolloutWaveTally>, now: Date): SweepStep {
  const index = rollout.currentWave;
  const wave = rollout.waves[index] as StoredRolloutWave;
  const at = now.toISOString();
  switch (wave.state) {
    case 'COMPLETED': {
      // A continuous rollout past its last wave (resumed, or written so by an earlier version) has nothing to sweep:
      // written again, it leaves the sweep index.
      const following = rollout.events?.at(-1)?.type === 'FOLLOWING' ? rollout : withEvents(rollout, { at, type: 'FOLLOWING' });
      return written('following', rollout, following, at);
    }
    case 'PENDING': {
      const started = withEvents(
        { ...rollout, waves: replaceWave(rollout.waves, index, startedWave(wave, at)) },
        { at, type: 'WAVE_STARTED', wave: index + 1 },
      );
      return written('started', rollout, started, at);
    }
    case 'RUNNING':
      return runningWaveStep(rollout, wave, tallies.get(index) ?? { counts: {}, chunksDone: 0 }, now);
    case 'CANCELLED':
      // Only a cancelled rollout has cancelled waves; nothing of it runs again.
      return { outcome: 'skipped' };
  }
}

/** The RUNNING current wave: its chunks are all run and its reports in (or its timeout passed), or it waits. */
function runningWaveStep(rollout: StoredRollout, wave: StoredRolloutWave, tally: RolloutWaveTally, now: Date): SweepStep {
  if (tally.chunksDone < wave.chunks[1] - wave.chunks[0] + 1) return { outcome: 'resend' };
  // The empty wave of a continuous rollout created without targets completes at once: the counts it holds are only
  // those of devices that joined, which neither hold it open until they report nor pause it.
  const empty = wave.chunks[1] < wave.chunks[0];
  if (!empty && !waveComplete(rollout, wave, tally.counts, now)) return { outcome: 'waiting' };
  return waveCompletedStep(rollout, tally.counts, empty, now.toISOString());
}

/** The current wave completes (at `at`): what follows it, by its failures and the waves left. */
function waveCompletedStep(rollout: StoredRollout, counts: Record<string, number>, empty: boolean, at: string): SweepStep {
  const index = rollout.currentWave;
  const waves = replaceWave(rollout.waves, index, { ...(rollout.waves[index] as StoredRolloutWave), state: 'COMPLETED', completedAt: at });
  const next = waves[index + 1];
  const completed: RolloutEvent = { at, type: 'WAVE_COMPLETED', wave: index + 1, counts: { ...counts } };
  if (next === undefined && rollout.continuous === undefined) {
    return written('completed', rollout, withEvents({ ...rollout, waves, state: 'COMPLETED' }, completed, { at, type: 'COMPLETED' }), at);
  }
  const pausedReason = empty ? undefined : failurePauseReason(rollout, index, counts);
  if (pausedReason !== undefined) {
    // Paused before the next wave, which resuming starts; a continuous rollout's last wave stays its current one.
    const paused = withEvents(
      { ...rollout, waves, currentWave: next === undefined ? index : index + 1, state: 'PAUSED', pausedReason },
      completed,
      { at, type: 'PAUSED', wave: index + 1, reason: pausedReason },
    );
    return written('paused', rollout, paused, at);
  }
  if (next === undefined) {
    // A continuous rollout runs on after its last wave, for the devices that join.
    return written('following', rollout, withEvents({ ...rollout, waves }, completed, { at, type: 'FOLLOWING' }), at);
  }
  const advanced = withEvents(
    { ...rollout, waves: replaceWave(waves, index + 1, startedWave(next, at)), currentWave: index + 1 },
    completed,
    { at, type: 'WAVE_STARTED', wave: index + 2 },
  );
  return written('started', rollout, advanced, at);
}

/**
 * The step that writes `changed` over `read` at `at` (version + 1, `updated`), with the messages of the wave that the
 * write starts, if any.
 */
function written(
  outcome: 'started' | 'paused' | 'completed' | 'following',
  read: StoredRollout,
  changed: StoredRollout,
  at: string,
): SweepStep {
  const next: StoredRollout = { ...changed, updated: at, version: read.version + 1 };
  const wave = next.waves[next.currentWave];
  const startsWave = next.state === 'RUNNING' && wave?.state === 'RUNNING' && wave.startedAt === at;
  return { outcome, next, messages: startsWave ? chunkMessages(next, next.currentWave) : [] };
}

/**
 * Why a completed wave pauses the rollout, or undefined when it does not: its share of FAILED reports among the
 * devices it deployed to (FAILED / max(SUCCESS, 1)) is above the threshold; for a COMMAND rollout, its share of
 * commands FAILED or EXPIRED among those it queued (COMMANDS). UNDEPLOY waves get no reports.
 */
export function failurePauseReason(rollout: StoredRollout, waveIndex: number, counts: Record<string, number>): string | undefined {
  if (rollout.action === 'UNDEPLOY') return undefined;
  const command = rollout.action === 'COMMAND';
  const failed = (counts.FAILED ?? 0) + (command ? (counts.EXPIRED ?? 0) : 0);
  const made = (command ? counts[COMMANDS_COUNT] : counts.SUCCESS) ?? 0;
  const share = failed / Math.max(made, 1);
  if (share <= rollout.failureThreshold) return undefined;
  const what = command ? 'commands FAILED or EXPIRED' : 'devices reported FAILED';
  return (
    `Wave ${waveIndex + 1}: ${failed} of ${made} ${what} (${percent(share)} %), above the failure ` +
    `threshold of ${percent(rollout.failureThreshold)} %. ` +
    (waveIndex + 1 < rollout.waves.length
      ? `Resume to go on with wave ${waveIndex + 2}, or cancel.`
      : 'Resume to let devices that start matching join again, or cancel.')
  );
}

/** A share as a percentage with at most one decimal: 0.125 → "12.5", 0.2 → "20". */
function percent(share: number): string {
  return String(Math.round(share * 1000) / 10);
}

/** The final states of a command, each counted once in its wave: what a COMMAND wave waits for. */
const FINAL_COMMAND_COUNTS = ['SUCCEEDED', 'FAILED', 'EXPIRED', 'CANCELLED'] as const;

/**
 * Whether a RUNNING wave whose chunks are all done is complete: an UNDEPLOY wave at once; a DEPLOY wave when its
 * devices' first INSTALLED and FAILED reports are at least its successful deploys; a COMMAND wave when its commands'
 * final states are at least the commands it queued; or once its timeout has passed.
 */
export function waveComplete(rollout: StoredRollout, wave: StoredRolloutWave, counts: Record<string, number>, now: Date): boolean {
  if (rollout.action === 'UNDEPLOY') return true;
  if (rollout.action === 'COMMAND') {
    const final = FINAL_COMMAND_COUNTS.reduce((sum, state) => sum + (counts[state] ?? 0), 0);
    if (final >= (counts[COMMANDS_COUNT] ?? 0)) return true;
  } else if ((counts.INSTALLED ?? 0) + (counts.FAILED ?? 0) >= (counts.SUCCESS ?? 0)) return true;
  return wave.startedAt !== undefined && now.getTime() >= Date.parse(wave.startedAt) + rollout.waveTimeoutSeconds * 1000;
}
