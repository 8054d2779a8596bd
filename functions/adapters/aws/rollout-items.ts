/**
 * The rollouts table's items, both ways, and their keys (key design in tables.ts): the rollout item with its sparse
 * index attributes, a target chunk, a member of a continuous rollout, and the sharded tally items' keys and counter
 * updates. Shared by the repository (dynamodb-rollout-repository.ts) and its tally transactions
 * (dynamodb-rollout-tallies.ts).
 */
import type { RolloutChunk, RolloutMember, StoredRollout } from '../../core/rollouts/model.js';
import { sweepIndexAt } from '../../core/rollouts/state.js';

/**
 * Shards of a rollout's tallies (`COUNTS#{company}#{rolloutId}#{shard}` / `{wave}`): reports and done chunks spread
 * over as many partition keys, so that a wave whose devices all report within a minute (100,000 reports, each a
 * transaction of two writes) stays far below DynamoDB's 1,000 writes/s per partition (docs/capacity.md).
 */
export const ROLLOUT_COUNT_SHARDS = 16;

/** The `sweepShard` of every rollout in the sweep index: one partition, since few rollouts run or wait at once. */
export const SWEEP_SHARD = 'ROLLOUT';

/**
 * Attributes of a rollout item that are keys or index attributes, not members of StoredRollout (`sweepAt` is derived
 * from the rollout at each write: sweepIndexAt).
 */
const ROLLOUT_KEY_ATTRIBUTES = ['pk', 'sk', 'entity', 'sweepShard', 'sweepAt', 'continuousCompany'];

/** How the partition key of every rollout item begins (and of no other item of the table). */
export const ROLLOUT_PARTITION_PREFIX = 'ROLLOUT#';
/** The key of a rollout item. */
export const rolloutKey = (company: string, rolloutId: string) => ({ pk: `${ROLLOUT_PARTITION_PREFIX}${company}`, sk: rolloutId });
/** The partition key of a rollout's target chunks. */
export const targetsPk = (company: string, rolloutId: string) => `TARGETS#${company}#${rolloutId}`;
/** The sort key of a target chunk: its index on 6 digits, so that chunks sort by index. */
export const chunkSk = (index: number) => String(index).padStart(6, '0');
/** The partition key of one shard (0 to ROLLOUT_COUNT_SHARDS - 1) of a rollout's tallies; the sort key is the wave. */
export const countsPk = (company: string, rolloutId: string, shard: number) => `COUNTS#${company}#${rolloutId}#${shard}`;
/** The key of a continuous rollout's member item. */
export const memberKey = (company: string, rolloutId: string, deviceId: string) => ({
  pk: `JOINED#${company}#${rolloutId}`,
  sk: deviceId,
});

/**
 * The item of a rollout: the rollout, its key, and its sparse index attributes — `sweepShard` and `sweepAt` while the
 * sweeper is to look at it (sweepIndexAt), `continuousCompany` while it is a RUNNING continuous rollout (continuousOf).
 */
export function rolloutItem(rollout: StoredRollout): Record<string, unknown> {
  const sweepAt = sweepIndexAt(rollout);
  const { command, ...rest } = rollout;
  return {
    ...rest,
    // A command's free JSON `arguments` as text, as the commands table keeps them: DynamoDB's types refuse some JSON.
    ...(command === undefined
      ? {}
      : {
          command: {
            command: command.command,
            argumentsJson: JSON.stringify(command.arguments ?? null),
            expiresInSeconds: command.expiresInSeconds,
          },
        }),
    ...rolloutKey(rollout.company, rollout.id),
    entity: 'ROLLOUT',
    ...(sweepAt === undefined ? {} : { sweepShard: SWEEP_SHARD, sweepAt }),
    ...(rollout.state === 'RUNNING' && rollout.continuous !== undefined ? { continuousCompany: rollout.company } : {}),
  };
}

/** The rollout of a rollout item (without its key and index attributes). */
export function rolloutFromItem(item: Record<string, unknown>): StoredRollout {
  const rollout = { ...item };
  for (const name of ROLLOUT_KEY_ATTRIBUTES) delete rollout[name];
  const command = item.command as { command: string; argumentsJson?: string; expiresInSeconds: number } | undefined;
  if (command !== undefined) {
    rollout.command = {
      command: command.command,
      arguments: JSON.parse(command.argumentsJson ?? 'null'),
      expiresInSeconds: Number(command.expiresInSeconds),
    };
  }
  return rollout as unknown as StoredRollout;
}

/** The chunk of a target chunk item (`deviceIds` empty when the read left them out). */
export function chunkFromItem(item: Record<string, unknown>): RolloutChunk {
  return {
    index: Number(item.sk),
    wave: item.wave as number,
    deviceIds: (item.deviceIds as string[] | undefined) ?? [],
    ...(typeof item.dispatchedAt === 'string' ? { dispatchedAt: item.dispatchedAt } : {}),
    ...(item.done === true ? { done: true } : {}),
    ...(item.results === undefined ? {} : { results: item.results as Record<string, number> }),
    ...(item.failures === undefined ? {} : { failures: item.failures as Record<string, string> }),
    ...(item.commands === undefined ? {} : { commands: item.commands as Record<string, string[]> }),
  };
}

/** The member of a member item. */
export function memberFromItem(item: Record<string, unknown>): RolloutMember {
  return {
    deviceId: item.sk as string,
    wave: item.wave as number,
    at: item.at as string,
    ...(typeof item.result === 'string' ? { result: item.result } : {}),
    ...(Array.isArray(item.commands) ? { commands: item.commands as string[] } : {}),
  };
}

/**
 * An ADD of `amounts` to the counters of one tally item: the UpdateExpression and its names and values. Counter names
 * are result causes and report states (upper case), so each gets an attribute name placeholder.
 */
export function addCounters(amounts: Record<string, number>): {
  UpdateExpression: string;
  ExpressionAttributeNames: Record<string, string>;
  ExpressionAttributeValues: Record<string, number>;
} {
  const entries = Object.entries(amounts).filter(([, amount]) => amount !== 0);
  return {
    UpdateExpression: `ADD ${entries.map((_, index) => `#c${index} :c${index}`).join(', ')}`,
    ExpressionAttributeNames: Object.fromEntries(entries.map(([name], index) => [`#c${index}`, name])),
    ExpressionAttributeValues: Object.fromEntries(entries.map(([, amount], index) => [`:c${index}`, amount])),
  };
}
