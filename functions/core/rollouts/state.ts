/**
 * What every writer of a rollout's state shares (creation, the operator's transitions, the sweeper): the bounded event
 * log, starting a wave, and when the sweeper is to look at the rollout. Pure: the callers write the result in one
 * conditional write.
 */
import { ROLLOUT_EVENTS_FIRST, ROLLOUT_EVENTS_NEWEST, type RolloutEvent, type StoredRollout, type StoredRolloutWave } from './model.js';

/**
 * The rollout with `added` appended to its events (oldest first), bounded: past ROLLOUT_EVENTS_FIRST +
 * ROLLOUT_EVENTS_NEWEST events, the first ROLLOUT_EVENTS_FIRST stay (how it was created and started) and the newest
 * ROLLOUT_EVENTS_NEWEST, the ones in between are dropped and added to `eventsDropped`. A rollout stored before events
 * were recorded starts its log with `added`. Pure: the caller writes the result in the same conditional write as the
 * transition the events record.
 */
export function withEvents(rollout: StoredRollout, ...added: RolloutEvent[]): StoredRollout {
  const all = [...(rollout.events ?? []), ...added];
  const excess = all.length - (ROLLOUT_EVENTS_FIRST + ROLLOUT_EVENTS_NEWEST);
  if (excess <= 0) return { ...rollout, events: all };
  return {
    ...rollout,
    events: [...all.slice(0, ROLLOUT_EVENTS_FIRST), ...all.slice(ROLLOUT_EVENTS_FIRST + excess)],
    eventsDropped: (rollout.eventsDropped ?? 0) + excess,
  };
}

/** The wave RUNNING since `now` (ISO-8601): the instant of every deployment it makes. */
export function startedWave(wave: StoredRolloutWave, now: string): StoredRolloutWave {
  return { ...wave, state: 'RUNNING', startedAt: now };
}

/** `waves` with the one at `index` (0-based) replaced by `wave`. */
export function replaceWave(waves: readonly StoredRolloutWave[], index: number, wave: StoredRolloutWave): StoredRolloutWave[] {
  return waves.map((current, position) => (position === index ? wave : current));
}

/**
 * Whether some wave has not completed: a RUNNING rollout is swept only while so; a continuous rollout past its last
 * wave is not, and runs on for the devices that join.
 */
export function hasWaveLeft(waves: readonly StoredRolloutWave[]): boolean {
  return waves.some((wave) => wave.state !== 'COMPLETED');
}

/**
 * When the sweeper is to look at the rollout as written (ISO-8601 UTC, compared as text by the sweep index), or
 * undefined when it has nothing to sweep: a SCHEDULED rollout at its `startAt`; a RUNNING one with a wave left, or a
 * cancelled COMMAND rollout whose commands' cancel is not sent yet (`cancelCommands`), at once, from its last write
 * (`updated`); never a PAUSED or ended one otherwise, nor a continuous one past its last wave. The one
 * place the sweep index key is derived: the repository stores the rollout in the index at this time, or out of it.
 */
export function sweepIndexAt(rollout: StoredRollout): string | undefined {
  if (rollout.state === 'SCHEDULED') return rollout.startAt ?? rollout.updated;
  if (rollout.state === 'CANCELLED' && rollout.cancelCommands === true) return rollout.updated;
  if (rollout.state === 'RUNNING' && hasWaveLeft(rollout.waves)) return rollout.updated;
  return undefined;
}
