/**
 * A wave's work: one message per chunk of its targets, sent when the wave starts, and sent again for the chunks whose
 * message looks lost (by the sweeper) or that a pause held back (on resume). Delivery is at least once; the worker
 * runs a chunk once whatever arrives twice.
 */
import type { RolloutCancelMessage, RolloutWorkMessage, StoredRollout, StoredRolloutWave } from './model.js';
import type { RolloutRepository, WorkQueue } from './ports.js';

/** The work messages of a wave's chunks (all of them, or those listed by index). */
export function chunkMessages(rollout: StoredRollout, waveIndex: number, indexes?: readonly number[]): RolloutWorkMessage[] {
  const wave = rollout.waves[waveIndex] as StoredRolloutWave;
  const chunks = indexes ?? Array.from({ length: wave.chunks[1] - wave.chunks[0] + 1 }, (_, offset) => wave.chunks[0] + offset);
  return chunks.map((chunk) => ({ type: 'RolloutChunk', company: rollout.company, rolloutId: rollout.id, wave: waveIndex, chunk }));
}

/**
 * The work messages that cancel a cancelled COMMAND rollout's QUEUED commands: one per chunk of each wave that started
 * (the others queued nothing), and one for the members of a continuous rollout.
 */
export function cancelMessages(rollout: StoredRollout): RolloutCancelMessage[] {
  const key = { type: 'RolloutCancelCommands' as const, company: rollout.company, rolloutId: rollout.id };
  const chunks = rollout.waves
    .filter((wave) => wave.startedAt !== undefined)
    .flatMap((wave) => Array.from({ length: Math.max(0, wave.chunks[1] - wave.chunks[0] + 1) }, (_, offset) => wave.chunks[0] + offset));
  return [...chunks.map((chunk) => ({ ...key, chunk })), ...(rollout.continuous === undefined ? [] : [{ ...key, members: true as const }])];
}

/**
 * Sends again the current wave's chunks that are not done and that `due` selects (by their last dispatch, ISO-8601:
 * the wave's start when never sent again), and records when (`now`). @returns how many were sent.
 * @throws Error when sending or recording fails.
 */
export async function resendUnfinished(
  deps: { rollouts: RolloutRepository; queue: WorkQueue },
  rollout: StoredRollout,
  now: string,
  due: (lastSent: string) => boolean,
): Promise<number> {
  const wave = rollout.waves[rollout.currentWave] as StoredRolloutWave;
  if (wave.chunks[1] < wave.chunks[0]) return 0; // the empty wave of a continuous rollout created without targets
  const chunks = await deps.rollouts.chunkStates(rollout.company, rollout.id, wave.chunks[0], wave.chunks[1]);
  const resend = chunks.filter((chunk) => chunk.done !== true && due(chunk.dispatchedAt ?? wave.startedAt ?? rollout.created));
  if (resend.length === 0) return 0;
  const indexes = resend.map((chunk) => chunk.index);
  await deps.queue.send(chunkMessages(rollout, rollout.currentWave, indexes));
  await deps.rollouts.markDispatched(rollout.company, rollout.id, indexes, now);
  return indexes.length;
}
