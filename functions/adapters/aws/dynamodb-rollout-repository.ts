/**
 * RolloutRepository on the rollouts table (key design in tables.ts; its items in rollout-items.ts): the rollout item,
 * its target chunks, the sweep and continuous indexes, and a continuous rollout's members; the tallies and the
 * transactions that add to them are in dynamodb-rollout-tallies.ts.
 */
import { type DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import pLimit from 'p-limit';
import type {
  RolloutChunk,
  RolloutCommandResult,
  RolloutMember,
  RolloutReport,
  RolloutWaveTally,
  StoredRollout,
} from '../../core/rollouts/model.js';
import type { RolloutRepository } from '../../core/rollouts/ports.js';
import { ULID_PATTERN } from '../../core/shared/identifiers.js';
import type { Page } from '../../core/shared/paging.js';
import { type CursorCodec, cursorListing, invalidCursor } from './cursor-codec.js';
import { batchPutAll } from './dynamodb-batch.js';
import {
  joinMember,
  markChunkDone,
  type RolloutTable,
  readTallies,
  recordCommandResult,
  recordJoinResult,
  recordReport,
} from './dynamodb-rollout-tallies.js';
import { isConditionalCheckFailed, type TableNames } from './dynamodb-shared.js';
import {
  chunkFromItem,
  chunkSk,
  memberFromItem,
  memberKey,
  rolloutFromItem,
  rolloutItem,
  rolloutKey,
  SWEEP_SHARD,
  targetsPk,
} from './rollout-items.js';

/** Updates of chunks' `dispatchedAt` in flight at once. */
const DISPATCH_MARK_CONCURRENCY = 8;

/** The listing a rollouts cursor is bound to: the company. */
const rolloutsListing = (company: string) => cursorListing('rollouts', company);

/**
 * RolloutRepository on the rollouts table. The rollout item is written whole, conditioned on its `version`; a chunk's
 * completion and a device's first terminal report are each one transaction with the ADD to their wave's tally (a
 * sharded counter item), so that nothing is counted twice.
 */
export class DynamoDbRolloutRepository implements RolloutRepository {
  private readonly table: RolloutTable;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tables: TableNames,
    private readonly cursors: CursorCodec,
  ) {
    this.table = { client, tableName: tables.rollouts };
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
        Item: rolloutItem(rollout),
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
          Item: rolloutItem(rollout),
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

  /** @inheritdoc (dynamodb-rollout-tallies.ts, markChunkDone) */
  async markDone(
    company: string,
    rolloutId: string,
    chunk: Pick<RolloutChunk, 'index' | 'wave'>,
    results: Record<string, number>,
    failures: Record<string, string>,
    commands?: Record<string, string[]>,
  ): Promise<boolean> {
    return markChunkDone(this.table, company, rolloutId, chunk, results, failures, commands);
  }

  /** @inheritdoc */
  async tallies(company: string, rolloutId: string): Promise<Map<number, RolloutWaveTally>> {
    return readTallies(this.table, company, rolloutId);
  }

  /** @inheritdoc (dynamodb-rollout-tallies.ts) */
  async recordReport(report: RolloutReport): Promise<boolean> {
    return recordReport(this.table, report);
  }

  /** @inheritdoc (dynamodb-rollout-tallies.ts) */
  async recordCommandResult(result: RolloutCommandResult): Promise<boolean> {
    return recordCommandResult(this.table, result);
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

  /** @inheritdoc (dynamodb-rollout-tallies.ts, joinMember) */
  async join(company: string, rolloutId: string, member: RolloutMember): Promise<'joined' | 'member' | 'ended'> {
    return joinMember(this.table, company, rolloutId, member);
  }

  /** @inheritdoc (dynamodb-rollout-tallies.ts) */
  async recordJoinResult(company: string, rolloutId: string, member: RolloutMember & { result: string }): Promise<boolean> {
    return recordJoinResult(this.table, company, rolloutId, member);
  }
}
