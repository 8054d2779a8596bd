/**
 * The rollout worker: runs one chunk of a wave (one work message) through the ordinary deployment use case, in the
 * rollout creator's name, or queues a COMMAND rollout's commands (command-work.ts), and counts its results once in the
 * wave's tally. Run twice (a redelivered message), it writes the very same deployments or commands (deterministic ids,
 * the wave's start as their instant) and counts nothing twice.
 */
import * as z from 'zod';
import type { CommandRepository } from '../commands/ports.js';
import { type DeploymentDependencies, type DeploymentResultItem, executeDeployments } from '../deployments/deployments.js';
import { ULID_PATTERN } from '../shared/identifiers.js';
import { runCommandChunk } from './command-work.js';
import { rolloutDeploymentId } from './derived-ids.js';
import { MAX_ROLLOUT_WAVES, type RolloutChunk, type RolloutQueueMessage, type RolloutWorkMessage, type StoredRollout } from './model.js';
import type { RolloutRepository, TargetHealthReader } from './ports.js';

const messageKey = { company: z.string().min(1).max(128), rolloutId: z.string().regex(ULID_PATTERN) };
const chunkIndex = z.number().int().min(0).max(999_999);

/** The zod schema of a work message body (RolloutQueueMessage): the worker drops anything else. */
export const RolloutWorkMessageSchema = z.union([
  z.object({ type: z.literal('RolloutChunk'), ...messageKey, wave: z.number().int().min(0).max(MAX_ROLLOUT_WAVES), chunk: chunkIndex }),
  z.object({ type: z.literal('RolloutCancelCommands'), ...messageKey, chunk: chunkIndex }),
  z.object({ type: z.literal('RolloutCancelCommands'), ...messageKey, members: z.literal(true) }),
]) satisfies z.ZodType<RolloutQueueMessage>;

export { rolloutDeploymentId } from './derived-ids.js';

/**
 * What runRolloutChunk needs: the rollouts, what the deployment use case needs, and, for COMMAND rollouts, the
 * commands and the targets' health (a COMMAND rollout's chunk throws without them).
 */
export type RolloutWorkerDependencies = DeploymentDependencies & {
  rollouts: RolloutRepository;
  commands?: Pick<CommandRepository, 'createEach' | 'transition'>;
  targetHealth?: TargetHealthReader;
};

/** What running one chunk did: `done` with its results by cause, or `skipped` with why. */
export type RolloutChunkOutcome = { outcome: 'done'; results: Record<string, number> } | { outcome: 'skipped'; reason: string };

/** Thrown when some of a chunk's deployments met a backend error: the chunk is not marked done, its message is retried. */
export class RolloutChunkIncompleteError extends Error {}

/**
 * Runs one chunk of a rollout (the worker): unless the rollout is not RUNNING, the chunk's wave is not the running
 * one, or the chunk is done (then it is skipped, and the message acknowledged), deploys or undeploys the scenario
 * version on the chunk's devices through executeDeployments, in the creator's name with the rollout's note, each
 * with its deterministic id (rolloutDeploymentId) at the wave's start and the rollout tag on the slot; or, for a
 * COMMAND rollout, queues the command on each target's advertising sub-devices (runCommandChunk, command-work.ts);
 * then marks the chunk done with its results by cause, counted once in the wave's tally.
 * Run again (a redelivered message), it writes the same deployments: a DEPLOY already made reports SUCCESS again,
 * and the results are counted once. (An UNDEPLOY whose slot the stream has already purged reports ALREADY_UNDEPLOYED;
 * only the first run's results count.)
 * @param options `lastAttempt`: accept results with NONE causes (backend errors) instead of throwing, so that a
 *   message that keeps failing does not hold the wave forever.
 * @throws RolloutChunkIncompleteError when some deployments (or commands) met a backend error (NONE) and this is not
 *   the last attempt: the chunk stays not done and its message should be retried.
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
  const lastAttempt = options.lastAttempt === true;
  if (rollout.action === 'COMMAND') return commandChunk(deps, rollout, chunk, wave.startedAt, lastAttempt);
  const startedAt = wave.startedAt;
  const { items } = await executeDeployments(
    deps,
    { subject: rollout.createdBy, companies: [rollout.company], scopes: new Set(['deployments:write']) },
    rollout.company,
    {
      requests: chunk.deviceIds.map((deviceId) => ({
        target: { type: 'DEVICE', id: deviceId, subId: null },
        what: rollout.what as NonNullable<StoredRollout['what']>,
        action: rollout.action as 'DEPLOY' | 'UNDEPLOY',
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
  if ((results.NONE ?? 0) > 0 && !lastAttempt) throw incomplete(results.NONE ?? 0, items.length, chunk, rollout, 'deployments');
  const marked = await deps.rollouts.markDone(rollout.company, rollout.id, chunk, results, failures);
  return marked ? { outcome: 'done', results } : { outcome: 'skipped', reason: 'the chunk was done meanwhile' };
}

/**
 * A COMMAND rollout's chunk (runCommandChunk). @throws RolloutChunkIncompleteError as runRolloutChunk; Error when the
 * worker was given no commands or health reader.
 */
async function commandChunk(
  deps: RolloutWorkerDependencies,
  rollout: StoredRollout,
  chunk: RolloutChunk,
  startedAt: string,
  lastAttempt: boolean,
): Promise<RolloutChunkOutcome> {
  const { commands, targetHealth } = deps;
  if (commands === undefined || targetHealth === undefined)
    throw new Error("A COMMAND rollout needs the commands and the targets' health.");
  const run = await runCommandChunk({ ...deps, commands, targetHealth }, rollout, chunk, startedAt, lastAttempt);
  if (run.outcome === 'incomplete') throw incomplete(run.results.NONE ?? 0, chunk.deviceIds.length, chunk, rollout, 'targets');
  return run.outcome === 'done'
    ? { outcome: 'done', results: run.results }
    : { outcome: 'skipped', reason: 'the chunk was done meanwhile' };
}

/** The error of a chunk some of whose work met a backend error: it runs again. */
function incomplete(failed: number, of: number, chunk: RolloutChunk, rollout: StoredRollout, what: string): RolloutChunkIncompleteError {
  return new RolloutChunkIncompleteError(
    `${failed} of ${of} ${what} of chunk ${chunk.index} of rollout ${rollout.id} met a backend error; the chunk will run again.`,
  );
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
