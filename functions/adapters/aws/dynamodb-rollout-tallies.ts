/**
 * A rollout's counts on the rollouts table: each wave's tally is ROLLOUT_COUNT_SHARDS counter items, added to only by
 * transactions that also write, once, what they count (a chunk done, a device's first terminal report, a device
 * joining a continuous rollout, a member's deployment result), so that nothing is counted twice; and read back summed.
 * The RolloutRepository methods of the same names (dynamodb-rollout-repository.ts) delegate here.
 */
import { type DynamoDBDocumentClient, QueryCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { COMMANDS_COUNT } from '../../core/rollouts/command-work.js';
import type { RolloutChunk, RolloutCommandResult, RolloutMember, RolloutReport, RolloutWaveTally } from '../../core/rollouts/model.js';
import { cancellationCodes, sendTransaction } from './dynamodb-shared.js';
import { addCounters, chunkSk, countsPk, memberKey, ROLLOUT_COUNT_SHARDS, rolloutKey, targetsPk } from './rollout-items.js';
import { shardOf } from './tables.js';

/** Attributes of a tally item that are not counts. */
const TALLY_ATTRIBUTES = new Set(['pk', 'sk', 'chunksDone', 'joined']);

/** Where the rollout tallies are: the client and the rollouts table's name. */
export interface RolloutTable {
  client: DynamoDBDocumentClient;
  tableName: string;
}

/** The Update of one tally item: ADD `amounts` to the counters of `wave` in `shard`. */
function tallyUpdate(
  table: RolloutTable,
  company: string,
  rolloutId: string,
  shard: number,
  wave: number,
  amounts: Record<string, number>,
) {
  return {
    Update: { TableName: table.tableName, Key: { pk: countsPk(company, rolloutId, shard), sk: String(wave) }, ...addCounters(amounts) },
  };
}

/**
 * RolloutRepository.markDone. One TransactWriteItems: [0] the chunk gets `done`, `results`, `failures` (and a COMMAND
 * rollout's `commands`) if it exists and is not done; [1] its wave's tally shard (chosen by the chunk index) ADDs the
 * results and `chunksDone` 1.
 * @returns false when cancelled by [0]: already done. @throws Error on any other failure.
 */
export async function markChunkDone(
  table: RolloutTable,
  company: string,
  rolloutId: string,
  chunk: Pick<RolloutChunk, 'index' | 'wave'>,
  results: Record<string, number>,
  failures: Record<string, string>,
  commands?: Record<string, string[]>,
): Promise<boolean> {
  const done = {
    Update: {
      TableName: table.tableName,
      Key: { pk: targetsPk(company, rolloutId), sk: chunkSk(chunk.index) },
      // `failures` (device id → cause) is at most 500 entries of ids ≤ 256 characters, `commands` as many device ids
      // with a 26-character id per advertising sub-device: with the chunk's ids, well within an item's 400 KB.
      UpdateExpression: `SET done = :true, results = :results, failures = :failures${commands === undefined ? '' : ', commands = :commands'}`,
      ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(done)',
      ExpressionAttributeValues: {
        ':true': true,
        ':results': results,
        ':failures': failures,
        ...(commands === undefined ? {} : { ':commands': commands }),
      },
    },
  };
  const shard = chunk.index % ROLLOUT_COUNT_SHARDS;
  return firstWriteOnce(table, [done, tallyUpdate(table, company, rolloutId, shard, chunk.wave, { ...results, chunksDone: 1 })]);
}

/** RolloutRepository.tallies: every shard read (in parallel, strongly consistent) and summed by wave. */
export async function readTallies(table: RolloutTable, company: string, rolloutId: string): Promise<Map<number, RolloutWaveTally>> {
  const tallies = new Map<number, RolloutWaveTally>();
  // One small partition per shard (an item per wave), read in parallel.
  const shards = await Promise.all(
    Array.from({ length: ROLLOUT_COUNT_SHARDS }, (_, shard) => queryAll(table, countsPk(company, rolloutId, shard))),
  );
  for (const item of shards.flat()) {
    const wave = Number(item.sk);
    const tally = tallies.get(wave) ?? { counts: {}, chunksDone: 0 };
    tally.chunksDone += typeof item.chunksDone === 'number' ? item.chunksDone : 0;
    if (typeof item.joined === 'number') tally.joined = (tally.joined ?? 0) + item.joined;
    for (const [name, value] of Object.entries(item)) {
      if (!TALLY_ATTRIBUTES.has(name) && typeof value === 'number') tally.counts[name] = (tally.counts[name] ?? 0) + value;
    }
    tallies.set(wave, tally);
  }
  return tallies;
}

/** Every item of partition `pk`, strongly consistent, following the pages. */
async function queryAll(table: RolloutTable, pk: string): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const response = await table.client.send(
      new QueryCommand({
        TableName: table.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': pk },
        ConsistentRead: true,
        ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }),
      }),
    );
    items.push(...(response.Items ?? []));
    startKey = response.LastEvaluatedKey;
  } while (startKey !== undefined);
  return items;
}

/**
 * RolloutRepository.recordReport. One TransactWriteItems: [0] puts `REPORT#{company}#{rolloutId}#{deviceId}` / `-` if
 * absent; [1] ADDs 1 to the state's counter of the wave's tally shard chosen by the device id.
 * @returns false when cancelled by [0]: reported before. @throws Error on any other failure.
 */
export async function recordReport(table: RolloutTable, report: RolloutReport): Promise<boolean> {
  const reported = {
    Put: {
      TableName: table.tableName,
      Item: {
        pk: `REPORT#${report.company}#${report.rolloutId}#${report.deviceId}`,
        sk: '-',
        entity: 'ROLLOUT_REPORT',
        wave: report.wave,
        state: report.state,
        at: report.at,
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  };
  const shard = shardOf(report.deviceId, ROLLOUT_COUNT_SHARDS);
  return firstWriteOnce(table, [reported, tallyUpdate(table, report.company, report.rolloutId, shard, report.wave, { [report.state]: 1 })]);
}

/**
 * RolloutRepository.recordCommandResult. One TransactWriteItems: [0] puts
 * `COMMAND#{company}#{rolloutId}#{commandId}` / `-` if absent; [1] ADDs 1 to the state's counter of the wave's tally
 * shard chosen by the command id.
 * @returns false when cancelled by [0]: counted before. @throws Error on any other failure.
 */
export async function recordCommandResult(table: RolloutTable, result: RolloutCommandResult): Promise<boolean> {
  const counted = {
    Put: {
      TableName: table.tableName,
      Item: {
        pk: `COMMAND#${result.company}#${result.rolloutId}#${result.commandId}`,
        sk: '-',
        entity: 'ROLLOUT_COMMAND_RESULT',
        wave: result.wave,
        state: result.state,
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  };
  const shard = shardOf(result.commandId, ROLLOUT_COUNT_SHARDS);
  return firstWriteOnce(table, [counted, tallyUpdate(table, result.company, result.rolloutId, shard, result.wave, { [result.state]: 1 })]);
}

/**
 * RolloutRepository.join. One TransactWriteItems: [0] the rollout item is RUNNING (ConditionCheck); [1] puts the
 * member if absent; [2] ADDs 1 to `joined` of the wave's tally shard chosen by the device id.
 * @returns `ended` when cancelled by [0]; `member` when cancelled by [1]. @throws Error on any other failure.
 */
export async function joinMember(
  table: RolloutTable,
  company: string,
  rolloutId: string,
  member: RolloutMember,
): Promise<'joined' | 'member' | 'ended'> {
  const running = {
    ConditionCheck: {
      TableName: table.tableName,
      Key: rolloutKey(company, rolloutId),
      ConditionExpression: '#state = :running',
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: { ':running': 'RUNNING' },
    },
  };
  const joined = {
    Put: {
      TableName: table.tableName,
      Item: { ...memberKey(company, rolloutId, member.deviceId), entity: 'ROLLOUT_MEMBER', wave: member.wave, at: member.at },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  };
  const shard = shardOf(member.deviceId, ROLLOUT_COUNT_SHARDS);
  try {
    await sendTransaction(table.client, {
      TransactItems: [running, joined, tallyUpdate(table, company, rolloutId, shard, member.wave, { joined: 1 })],
    });
    return 'joined';
  } catch (error) {
    const codes = cancellationCodes(error);
    if (codes?.[0] === 'ConditionalCheckFailed') return 'ended';
    if (codes?.[1] === 'ConditionalCheckFailed') return 'member';
    throw error;
  }
}

/**
 * RolloutRepository.recordJoinResult. One TransactWriteItems: [0] sets the member's `result` (and `commands`) if it has
 * none; [1] ADDs 1 to that result's counter (and the commands to COMMANDS) of the wave's tally shard chosen by the
 * device id.
 * @returns false when cancelled by [0]: recorded before. @throws Error on any other failure.
 */
export async function recordJoinResult(
  table: RolloutTable,
  company: string,
  rolloutId: string,
  member: RolloutMember & { result: string },
): Promise<boolean> {
  const recorded = {
    Update: {
      TableName: table.tableName,
      Key: memberKey(company, rolloutId, member.deviceId),
      UpdateExpression: `SET #result = :result${member.commands === undefined ? '' : ', commands = :commands'}`,
      ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(#result)',
      ExpressionAttributeNames: { '#result': 'result' },
      ExpressionAttributeValues: { ':result': member.result, ...(member.commands === undefined ? {} : { ':commands': member.commands }) },
    },
  };
  const shard = shardOf(member.deviceId, ROLLOUT_COUNT_SHARDS);
  const amounts = { [member.result]: 1, ...(member.commands === undefined ? {} : { [COMMANDS_COUNT]: member.commands.length }) };
  return firstWriteOnce(table, [recorded, tallyUpdate(table, company, rolloutId, shard, member.wave, amounts)]);
}

/**
 * Sends a transaction whose first item is conditioned on not being done yet.
 * @returns false when that condition cancelled it (done before: nothing counted). @throws Error on any other failure.
 */
async function firstWriteOnce(table: RolloutTable, items: NonNullable<TransactWriteCommandInput['TransactItems']>): Promise<boolean> {
  try {
    await sendTransaction(table.client, { TransactItems: items });
    return true;
  } catch (error) {
    if (cancellationCodes(error)?.[0] === 'ConditionalCheckFailed') return false;
    throw error;
  }
}
