import { type DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import pLimit from 'p-limit';
import type { RolloutChunk, RolloutMember, RolloutReport, RolloutWaveTally, StoredRollout } from '../../core/rollouts/model.js';
import type { RolloutRepository } from '../../core/rollouts/ports.js';
import { ULID_PATTERN } from '../../core/shared/identifiers.js';
import type { Page } from '../../core/shared/paging.js';
import { type CursorCodec, cursorListing, invalidCursor } from './cursor-codec.js';
import { batchPutAll } from './dynamodb-batch.js';
import { cancellationCodes, isConditionalCheckFailed, sendTransaction, type TableNames } from './dynamodb-shared.js';
import { shardOf } from './tables.js';

/**
 * Shards of a rollout's tallies (`COUNTS#{company}#{rolloutId}#{shard}` / `{wave}`): reports and done chunks spread
 * over as many partition keys, so that a wave whose devices all report within a minute (100,000 reports, each a
 * transaction of two writes) stays far below DynamoDB's 1,000 writes/s per partition (docs/capacity.md).
 */
export const ROLLOUT_COUNT_SHARDS = 16;

/** The `sweepShard` of every RUNNING or SCHEDULED rollout: one partition, since few rollouts run or wait at once. */
const SWEEP_SHARD = 'ROLLOUT';

/** Updates of chunks' `dispatchedAt` in flight at once. */
const DISPATCH_MARK_CONCURRENCY = 8;

/** Attributes of a rollout item that are keys or index attributes, not members of StoredRollout. */
const ROLLOUT_KEY_ATTRIBUTES = ['pk', 'sk', 'entity', 'sweepShard', 'continuousCompany'];

/** Attributes of a tally item that are not counts. */
const TALLY_ATTRIBUTES = new Set(['pk', 'sk', 'chunksDone', 'joined']);

const rolloutKey = (company: string, rolloutId: string) => ({ pk: `ROLLOUT#${company}`, sk: rolloutId });
const targetsPk = (company: string, rolloutId: string) => `TARGETS#${company}#${rolloutId}`;
const chunkSk = (index: number) => String(index).padStart(6, '0');
const countsPk = (company: string, rolloutId: string, shard: number) => `COUNTS#${company}#${rolloutId}#${shard}`;
const memberKey = (company: string, rolloutId: string, deviceId: string) => ({ pk: `JOINED#${company}#${rolloutId}`, sk: deviceId });

function memberFromItem(item: Record<string, unknown>): RolloutMember {
  return {
    deviceId: item.sk as string,
    wave: item.wave as number,
    at: item.at as string,
    ...(typeof item.result === 'string' ? { result: item.result } : {}),
  };
}

/** The listing a rollouts cursor is bound to: the company. */
const rolloutsListing = (company: string) => cursorListing('rollouts', company);

function rolloutFromItem(item: Record<string, unknown>): StoredRollout {
  const rollout = { ...item };
  for (const name of ROLLOUT_KEY_ATTRIBUTES) delete rollout[name];
  return rollout as unknown as StoredRollout;
}

function chunkFromItem(item: Record<string, unknown>): RolloutChunk {
  return {
    index: Number(item.sk),
    wave: item.wave as number,
    deviceIds: (item.deviceIds as string[] | undefined) ?? [],
    ...(typeof item.dispatchedAt === 'string' ? { dispatchedAt: item.dispatchedAt } : {}),
    ...(item.done === true ? { done: true } : {}),
    ...(item.results === undefined ? {} : { results: item.results as Record<string, number> }),
    ...(item.failures === undefined ? {} : { failures: item.failures as Record<string, string> }),
  };
}

/**
 * An ADD of `amounts` to the counters of one tally item: the UpdateExpression and its names and values. Counter names
 * are result causes and report states (upper case), so each gets an attribute name placeholder.
 */
function addCounters(amounts: Record<string, number>): {
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

/**
 * RolloutRepository on the rollouts table (key design in tables.ts). The rollout item is written whole, conditioned
 * on its `version`; a chunk's completion and a device's first terminal report are each one transaction with the
 * ADD to their wave's tally (a sharded counter item), so that nothing is counted twice.
 */
export class DynamoDbRolloutRepository implements RolloutRepository {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tables: TableNames,
    private readonly cursors: CursorCodec,
  ) {}

  private rolloutItem(rollout: StoredRollout): Record<string, unknown> {
    const { sweepAt, ...rest } = rollout;
    return {
      ...rest,
      ...rolloutKey(rollout.company, rollout.id),
      entity: 'ROLLOUT',
      // Only a RUNNING rollout, and a SCHEDULED one (at its startAt), is in the sparse sweep index; a RUNNING continuous
      // rollout only while it has a `sweepAt` (the sweeper drops it once every wave has completed: nothing left to sweep).
      ...(rollout.state === 'SCHEDULED' || (rollout.state === 'RUNNING' && (sweepAt !== undefined || rollout.continuous === undefined))
        ? { sweepShard: SWEEP_SHARD, sweepAt: sweepAt ?? rollout.startAt ?? rollout.updated }
        : {}),
      // A running continuous rollout is in the sparse `continuous` index under its company (continuousOf).
      ...(rollout.state === 'RUNNING' && rollout.continuous !== undefined ? { continuousCompany: rollout.company } : {}),
    };
  }

  /** @inheritdoc */
  async create(rollout: StoredRollout, chunks: readonly RolloutChunk[]): Promise<void> {
    await batchPutAll(
      this.client,
      this.tables.rollouts,
      chunks.map((chunk) => ({
        pk: targetsPk(rollout.company, rollout.id),
        sk: chunkSk(chunk.index),
        entity: 'ROLLOUT_TARGETS',
        wave: chunk.wave,
        deviceIds: chunk.deviceIds,
      })),
    );
    await this.client.send(
      new PutCommand({
        TableName: this.tables.rollouts,
        Item: this.rolloutItem(rollout),
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }

  /** @inheritdoc */
  async get(company: string, rolloutId: string): Promise<StoredRollout | undefined> {
    const { Item } = await this.client.send(
      new GetCommand({ TableName: this.tables.rollouts, Key: rolloutKey(company, rolloutId), ConsistentRead: true }),
    );
    return Item === undefined ? undefined : rolloutFromItem(Item);
  }

  /** @inheritdoc */
  async update(rollout: StoredRollout): Promise<boolean> {
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tables.rollouts,
          Item: this.rolloutItem(rollout),
          ConditionExpression: '#version = :read',
          ExpressionAttributeNames: { '#version': 'version' },
          ExpressionAttributeValues: { ':read': rollout.version - 1 },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }

  /** @inheritdoc */
  async list(company: string, limit: number, cursor: string | undefined): Promise<Page<StoredRollout>> {
    let startKey: Record<string, unknown> | undefined;
    if (cursor !== undefined) {
      const key = this.cursors.decode(rolloutsListing(company), cursor);
      if (typeof key.sk !== 'string' || !ULID_PATTERN.test(key.sk) || Object.keys(key).length !== 1) throw invalidCursor();
      startKey = rolloutKey(company, key.sk);
    }
    const response = await this.client.send(
      new QueryCommand({
        TableName: this.tables.rollouts,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': `ROLLOUT#${company}` },
        ScanIndexForward: false,
        // One extra item tells whether another page exists, so the last page carries no cursor.
        Limit: limit + 1,
        ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }),
      }),
    );
    const found = response.Items ?? [];
    const items = found.slice(0, limit).map(rolloutFromItem);
    const last = items.at(-1);
    // A query also stops at 1 MB read (rollouts carry their event logs, up to ~20 KB each): then more may follow
    // even though fewer than `limit` came back, and the page ends with a cursor rather than claiming to be the last.
    const more = found.length > limit || response.LastEvaluatedKey !== undefined;
    return {
      items,
      nextCursor: more && last !== undefined ? this.cursors.encode(rolloutsListing(company), { sk: last.id }) : null,
    };
  }

  /** @inheritdoc */
  async chunk(company: string, rolloutId: string, index: number): Promise<RolloutChunk | undefined> {
    const { Item } = await this.client.send(
      new GetCommand({
        TableName: this.tables.rollouts,
        Key: { pk: targetsPk(company, rolloutId), sk: chunkSk(index) },
        ConsistentRead: true,
      }),
    );
    return Item === undefined ? undefined : chunkFromItem(Item);
  }

  /** @inheritdoc */
  async chunkStates(company: string, rolloutId: string, first: number, last: number): Promise<RolloutChunk[]> {
    const chunks: RolloutChunk[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const response = await this.client.send(
        new QueryCommand({
          TableName: this.tables.rollouts,
          KeyConditionExpression: 'pk = :pk AND sk BETWEEN :first AND :last',
          ProjectionExpression: '#sk, #wave, #dispatchedAt, #done, #results',
          ExpressionAttributeNames: {
            '#sk': 'sk',
            '#wave': 'wave',
            '#dispatchedAt': 'dispatchedAt',
            '#done': 'done',
            '#results': 'results',
          },
          ExpressionAttributeValues: { ':pk': targetsPk(company, rolloutId), ':first': chunkSk(first), ':last': chunkSk(last) },
          ConsistentRead: true,
          ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }),
        }),
      );
      chunks.push(...(response.Items ?? []).map(chunkFromItem));
      startKey = response.LastEvaluatedKey;
    } while (startKey !== undefined);
    return chunks;
  }

  /** @inheritdoc */
  async markDispatched(company: string, rolloutId: string, indexes: readonly number[], at: string): Promise<void> {
    const limit = pLimit(DISPATCH_MARK_CONCURRENCY);
    await Promise.all(
      indexes.map((index) =>
        limit(async () => {
          try {
            await this.client.send(
              new UpdateCommand({
                TableName: this.tables.rollouts,
                Key: { pk: targetsPk(company, rolloutId), sk: chunkSk(index) },
                UpdateExpression: 'SET dispatchedAt = :at',
                ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(done)',
                ExpressionAttributeValues: { ':at': at },
              }),
            );
          } catch (error) {
            if (!isConditionalCheckFailed(error)) throw error;
          }
        }),
      ),
    );
  }

  /**
   * @inheritdoc
   * One TransactWriteItems: [0] the chunk gets `done`, `results` and `failures` if it exists and is not done; [1] its wave's tally
   * shard (chosen by the chunk index) ADDs the results and `chunksDone` 1. Cancelled by [0]: already done.
   */
  async markDone(
    company: string,
    rolloutId: string,
    chunk: Pick<RolloutChunk, 'index' | 'wave'>,
    results: Record<string, number>,
    failures: Record<string, string>,
  ): Promise<boolean> {
    const counters = addCounters({ ...results, chunksDone: 1 });
    try {
      await sendTransaction(this.client, {
        TransactItems: [
          {
            Update: {
              TableName: this.tables.rollouts,
              Key: { pk: targetsPk(company, rolloutId), sk: chunkSk(chunk.index) },
              // `failures` (device id → cause) is at most 500 entries of ids ≤ 256 characters: with the chunk's ids,
              // well within an item's 400 KB.
              UpdateExpression: 'SET done = :true, results = :results, failures = :failures',
              ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(done)',
              ExpressionAttributeValues: { ':true': true, ':results': results, ':failures': failures },
            },
          },
          {
            Update: {
              TableName: this.tables.rollouts,
              Key: { pk: countsPk(company, rolloutId, chunk.index % ROLLOUT_COUNT_SHARDS), sk: String(chunk.wave) },
              ...counters,
            },
          },
        ],
      });
      return true;
    } catch (error) {
      if (cancellationCodes(error)?.[0] === 'ConditionalCheckFailed') return false;
      throw error;
    }
  }

  /** @inheritdoc */
  async tallies(company: string, rolloutId: string): Promise<Map<number, RolloutWaveTally>> {
    const tallies = new Map<number, RolloutWaveTally>();
    // One small partition per shard (an item per wave), read in parallel.
    const shards = await Promise.all(
      Array.from({ length: ROLLOUT_COUNT_SHARDS }, async (_, shard) => {
        const items: Record<string, unknown>[] = [];
        let startKey: Record<string, unknown> | undefined;
        do {
          const response = await this.client.send(
            new QueryCommand({
              TableName: this.tables.rollouts,
              KeyConditionExpression: 'pk = :pk',
              ExpressionAttributeValues: { ':pk': countsPk(company, rolloutId, shard) },
              ConsistentRead: true,
              ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }),
            }),
          );
          items.push(...(response.Items ?? []));
          startKey = response.LastEvaluatedKey;
        } while (startKey !== undefined);
        return items;
      }),
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

  /**
   * @inheritdoc
   * One TransactWriteItems: [0] puts `REPORT#{company}#{rolloutId}#{deviceId}` / `-` if absent; [1] ADDs 1 to the
   * state's counter of the wave's tally shard chosen by the device id. Cancelled by [0]: reported before.
   */
  async recordReport(report: RolloutReport): Promise<boolean> {
    try {
      await sendTransaction(this.client, {
        TransactItems: [
          {
            Put: {
              TableName: this.tables.rollouts,
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
          },
          {
            Update: {
              TableName: this.tables.rollouts,
              Key: {
                pk: countsPk(report.company, report.rolloutId, shardOf(report.deviceId, ROLLOUT_COUNT_SHARDS)),
                sk: String(report.wave),
              },
              ...addCounters({ [report.state]: 1 }),
            },
          },
        ],
      });
      return true;
    } catch (error) {
      if (cancellationCodes(error)?.[0] === 'ConditionalCheckFailed') return false;
      throw error;
    }
  }

  /** @inheritdoc */
  async due(now: string, limit: number): Promise<{ company: string; rolloutId: string }[]> {
    const found: { company: string; rolloutId: string }[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const response = await this.client.send(
        new QueryCommand({
          TableName: this.tables.rollouts,
          IndexName: 'sweep',
          KeyConditionExpression: 'sweepShard = :shard AND sweepAt <= :now',
          ExpressionAttributeValues: { ':shard': SWEEP_SHARD, ':now': now },
          ProjectionExpression: '#company, #id',
          ExpressionAttributeNames: { '#company': 'company', '#id': 'id' },
          Limit: limit - found.length,
          ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }),
        }),
      );
      for (const item of response.Items ?? []) found.push({ company: item.company as string, rolloutId: item.id as string });
      startKey = response.LastEvaluatedKey;
    } while (startKey !== undefined && found.length < limit);
    return found;
  }

  /** @inheritdoc */
  async continuousOf(company: string): Promise<StoredRollout[]> {
    const rollouts: StoredRollout[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const response = await this.client.send(
        new QueryCommand({
          TableName: this.tables.rollouts,
          IndexName: 'continuous',
          KeyConditionExpression: 'continuousCompany = :company',
          ExpressionAttributeValues: { ':company': company },
          ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }),
        }),
      );
      rollouts.push(...(response.Items ?? []).map(rolloutFromItem));
      startKey = response.LastEvaluatedKey;
    } while (startKey !== undefined);
    return rollouts;
  }

  /** @inheritdoc */
  async member(company: string, rolloutId: string, deviceId: string): Promise<RolloutMember | undefined> {
    const { Item } = await this.client.send(
      new GetCommand({ TableName: this.tables.rollouts, Key: memberKey(company, rolloutId, deviceId), ConsistentRead: true }),
    );
    return Item === undefined ? undefined : memberFromItem(Item);
  }

  /** @inheritdoc */
  async members(
    company: string,
    rolloutId: string,
    after: string | undefined,
    limit: number,
  ): Promise<{ items: RolloutMember[]; more: boolean }> {
    const key = memberKey(company, rolloutId, after ?? '');
    const response = await this.client.send(
      new QueryCommand({
        TableName: this.tables.rollouts,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': key.pk },
        ConsistentRead: true,
        // One extra item tells whether more follow.
        Limit: limit + 1,
        ...(after === undefined ? {} : { ExclusiveStartKey: key }),
      }),
    );
    const found = response.Items ?? [];
    return { items: found.slice(0, limit).map(memberFromItem), more: found.length > limit };
  }

  /**
   * @inheritdoc
   * One TransactWriteItems: [0] the rollout item is RUNNING (ConditionCheck); [1] puts the member if absent; [2] ADDs 1
   * to `joined` of the wave's tally shard chosen by the device id. Cancelled by [0]: ended; by [1]: a member already.
   */
  async join(company: string, rolloutId: string, member: RolloutMember): Promise<'joined' | 'member' | 'ended'> {
    try {
      await sendTransaction(this.client, {
        TransactItems: [
          {
            ConditionCheck: {
              TableName: this.tables.rollouts,
              Key: rolloutKey(company, rolloutId),
              ConditionExpression: '#state = :running',
              ExpressionAttributeNames: { '#state': 'state' },
              ExpressionAttributeValues: { ':running': 'RUNNING' },
            },
          },
          {
            Put: {
              TableName: this.tables.rollouts,
              Item: { ...memberKey(company, rolloutId, member.deviceId), entity: 'ROLLOUT_MEMBER', wave: member.wave, at: member.at },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          {
            Update: {
              TableName: this.tables.rollouts,
              Key: { pk: countsPk(company, rolloutId, shardOf(member.deviceId, ROLLOUT_COUNT_SHARDS)), sk: String(member.wave) },
              ...addCounters({ joined: 1 }),
            },
          },
        ],
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
   * @inheritdoc
   * One TransactWriteItems: [0] sets the member's `result` if it has none; [1] ADDs 1 to that result's counter of the
   * wave's tally shard chosen by the device id. Cancelled by [0]: recorded before.
   */
  async recordJoinResult(company: string, rolloutId: string, member: RolloutMember & { result: string }): Promise<boolean> {
    try {
      await sendTransaction(this.client, {
        TransactItems: [
          {
            Update: {
              TableName: this.tables.rollouts,
              Key: memberKey(company, rolloutId, member.deviceId),
              UpdateExpression: 'SET #result = :result',
              ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(#result)',
              ExpressionAttributeNames: { '#result': 'result' },
              ExpressionAttributeValues: { ':result': member.result },
            },
          },
          {
            Update: {
              TableName: this.tables.rollouts,
              Key: { pk: countsPk(company, rolloutId, shardOf(member.deviceId, ROLLOUT_COUNT_SHARDS)), sk: String(member.wave) },
              ...addCounters({ [member.result]: 1 }),
            },
          },
        ],
      });
      return true;
    } catch (error) {
      if (cancellationCodes(error)?.[0] === 'ConditionalCheckFailed') return false;
      throw error;
    }
  }
}
