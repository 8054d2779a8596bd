/**
 * The rollout worker: runs one chunk of a wave (one work message) through the ordinary deployment use case, in the
 * rollout creator's name, and counts its results once in the wave's tally. Run twice (a redelivered message), it
 * writes the very same deployments (deterministic ids, the wave's start as their instant) and counts nothing twice.
 */
import { createHash } from 'node:crypto';
import { encodeTime } from 'ulid';
import * as z from 'zod';
import { type DeploymentDependencies, type DeploymentResultItem, executeDeployments } from '../deployments/deployments.js';
import { ULID_ALPHABET, ULID_PATTERN } from '../shared/identifiers.js';
import { MAX_ROLLOUT_WAVES, type RolloutWorkMessage } from './model.js';
import type { RolloutRepository } from './ports.js';

/** The zod schema of a work message body (RolloutWorkMessage): the worker drops anything else. */
export const RolloutWorkMessageSchema = z.object({
  type: z.literal('RolloutChunk'),
  company: z.string().min(1).max(128),
  rolloutId: z.string().regex(ULID_PATTERN),
  wave: z.number().int().min(0).max(MAX_ROLLOUT_WAVES),
  chunk: z.number().int().min(0).max(999_999),
}) satisfies z.ZodType<RolloutWorkMessage>;

/**
 * The id of the deployment a rollout makes on a device: a ULID whose time part is the wave's start (`startedAt`,
 * ISO-8601) and whose 80 random bits are the first 10 bytes of sha256(rolloutId + deviceId). A chunk run again gets
 * the same ids, so a DEPLOY whose write was already made finds its own id stored and reports SUCCESS.
 */
export function rolloutDeploymentId(rolloutId: string, deviceId: string, startedAt: string): string {
  const digest = createHash('sha256')
    .update(rolloutId + deviceId)
    .digest();
  let random = '';
  let value = 0;
  let bits = 0;
  for (const byte of digest.subarray(0, 10)) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      random += ULID_ALPHABET[(value >> bits) & 31];
    }
    value &= (1 << bits) - 1;
  }
  return encodeTime(Date.parse(startedAt), 10) + random;
}

/** What runRolloutChunk needs: the rollouts, and what the deployment use case needs. */
export type RolloutWorkerDependencies = DeploymentDependencies & { rollouts: RolloutRepository };

/** What running one chunk did: `done` with its results by cause, or `skipped` with why. */
export type RolloutChunkOutcome = { outcome: 'done'; results: Record<string, number> } | { outcome: 'skipped'; reason: string };

/** Thrown when some of a chunk's deployments met a backend error: the chunk is not marked done, its message is retried. */
export class RolloutChunkIncompleteError extends Error {}

/**
 * Runs one chunk of a rollout (the worker): unless the rollout is not RUNNING, the chunk's wave is not the running
 * one, or the chunk is done (then it is skipped, and the message acknowledged), deploys or undeploys the scenario
 * version on the chunk's devices through executeDeployments, in the creator's name with the rollout's note, each
 * with its deterministic id (rolloutDeploymentId) at the wave's start and the rollout tag on the slot; then marks the
 * chunk done with its results by cause, counted once in the wave's tally.
 * Run again (a redelivered message), it writes the same deployments: a DEPLOY already made reports SUCCESS again,
 * and the results are counted once. (An UNDEPLOY whose slot the stream has already purged reports ALREADY_UNDEPLOYED;
 * only the first run's results count.)
 * @param options `lastAttempt`: accept results with NONE causes (backend errors) instead of throwing, so that a
 *   message that keeps failing does not hold the wave forever.
 * @throws RolloutChunkIncompleteError when some deployments met a backend error (NONE) and this is not the last
 *   attempt: the chunk stays not done and its message should be retried.
 * @throws Error on backend failures reading or marking the chunk.
 */
export async function runRolloutChunk(
  deps: RolloutWorkerDependencies,
  message: RolloutWorkMessage,
  options: { lastAttempt?: boolean } = {},
): Promise<RolloutChunkOutcome> {
  const rollout = await deps.rollouts.get(message.company, message.rolloutId);
  if (rollout === undefined) return { outcome: 'skipped', reason: 'no such rollout' };
  if (rollout.state !== 'RUNNING') return { outcome: 'skipped', reason: `the rollout is ${rollout.state}` };
  const wave = rollout.waves[message.wave];
  if (rollout.currentWave !== message.wave || wave?.state !== 'RUNNING' || wave.startedAt === undefined) {
    return { outcome: 'skipped', reason: `wave ${message.wave + 1} is not the running wave` };
  }
  const chunk = await deps.rollouts.chunk(message.company, message.rolloutId, message.chunk);
  if (chunk === undefined || chunk.wave !== message.wave) return { outcome: 'skipped', reason: 'no such chunk in this wave' };
  if (chunk.done === true) return { outcome: 'skipped', reason: 'the chunk is done' };
  const startedAt = wave.startedAt;
  const { items } = await executeDeployments(
    deps,
    { subject: rollout.createdBy, companies: [rollout.company], scopes: new Set(['deployments:write']) },
    rollout.company,
    {
      requests: chunk.deviceIds.map((deviceId) => ({
        target: { type: 'DEVICE', id: deviceId, subId: null },
        what: rollout.what,
        action: rollout.action,
      })),
      ...(rollout.note === undefined ? {} : { note: rollout.note }),
    },
    {
      at: startedAt,
      ids: chunk.deviceIds.map((deviceId) => rolloutDeploymentId(rollout.id, deviceId, startedAt)),
      rollout: { id: rollout.id, wave: message.wave },
    },
  );
  const results = resultCounts(items);
  // Each device's cause is kept with the chunk (not only the counts), so that the targets listing can say which
  // devices failed and why without reading the deployments' history.
  const failures = Object.fromEntries(items.flatMap((item) => (item.cause === null ? [] : [[item.target.id, item.cause]])));
  if ((results.NONE ?? 0) > 0 && options.lastAttempt !== true) {
    throw new RolloutChunkIncompleteError(
      `${results.NONE} of ${items.length} deployments of chunk ${chunk.index} of rollout ${rollout.id} met a backend error; the chunk will run again.`,
    );
  }
  const marked = await deps.rollouts.markDone(rollout.company, rollout.id, chunk, results, failures);
  return marked ? { outcome: 'done', results } : { outcome: 'skipped', reason: 'the chunk was done meanwhile' };
}

/** Result items counted by cause, `SUCCESS` for a change made. */
function resultCounts(items: readonly DeploymentResultItem[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) {
    const key = item.cause ?? 'SUCCESS';
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}
