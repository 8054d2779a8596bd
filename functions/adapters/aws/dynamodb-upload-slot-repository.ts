import { type DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { UploadSlot } from '../../core/scenarios/model.js';
import type { UploadSlotRepository } from '../../core/scenarios/ports.js';
import { isConditionalCheckFailed, overdueItems, type TableNames } from './dynamodb-shared.js';
import { sweepShardOf } from './tables.js';

function toUploadSlot(item: Record<string, unknown>): UploadSlot {
  const { sk: _sk, entity: _entity, sweepShard: _sweepShard, result, problem, ...slot } = item;
  return {
    ...(slot as unknown as UploadSlot),
    ...(result == null ? {} : { result: result as Record<string, unknown> }),
    ...(problem == null ? {} : { problem: problem as Record<string, unknown> }),
  };
}

/**
 * UploadSlotRepository on the scenarios table: pk `company`, sk `UPLOAD#{uploadId}` (not indexed for search); open
 * slots are in the `sweep` index (tables.ts).
 */
export class DynamoDbUploadSlotRepository implements UploadSlotRepository {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tables: TableNames,
  ) {}

  /** @inheritdoc */
  async create(slot: UploadSlot): Promise<void> {
    await this.client.send(
      new PutCommand({
        TableName: this.tables.scenarios,
        Item: {
          ...slot,
          sk: `UPLOAD#${slot.uploadId}`,
          entity: 'UPLOAD',
          ...(slot.sweepAt === undefined ? {} : { sweepShard: sweepShardOf('UPLOAD', slot.uploadId) }),
        },
        ConditionExpression: 'attribute_not_exists(sk)',
      }),
    );
  }

  /** @inheritdoc */
  async get(company: string, uploadId: string): Promise<UploadSlot | undefined> {
    const { Item } = await this.client.send(
      new GetCommand({ TableName: this.tables.scenarios, Key: { company, sk: `UPLOAD#${uploadId}` }, ConsistentRead: true }),
    );
    return Item === undefined ? undefined : toUploadSlot(Item);
  }

  /** @inheritdoc */
  async claim(company: string, uploadId: string, claimedAt: string, staleBefore: string, sweepAt: string): Promise<boolean> {
    return this.conditionalUpdate({
      TableName: this.tables.scenarios,
      Key: { company, sk: `UPLOAD#${uploadId}` },
      UpdateExpression: 'SET #status = :processing, claimedAt = :claimedAt, sweepAt = :sweepAt, sweepShard = :shard',
      ConditionExpression: '#status = :pending OR (#status = :processing AND claimedAt < :staleBefore)',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':processing': 'PROCESSING',
        ':pending': 'PENDING',
        ':claimedAt': claimedAt,
        ':staleBefore': staleBefore,
        ':sweepAt': sweepAt,
        ':shard': sweepShardOf('UPLOAD', uploadId),
      },
    });
  }

  /** @inheritdoc */
  async reject(
    company: string,
    uploadId: string,
    expected: { status: 'PENDING' } | { status: 'PROCESSING'; claimedAt: string },
    problem: Record<string, unknown>,
  ): Promise<boolean> {
    const claimed = expected.status === 'PROCESSING';
    return this.conditionalUpdate({
      TableName: this.tables.scenarios,
      Key: { company, sk: `UPLOAD#${uploadId}` },
      UpdateExpression: 'SET #status = :rejected, problem = :problem, #result = :null REMOVE sweepShard, sweepAt',
      ConditionExpression: claimed ? '#status = :expected AND claimedAt = :claimedAt' : '#status = :expected',
      ExpressionAttributeNames: { '#status': 'status', '#result': 'result' },
      ExpressionAttributeValues: {
        ':rejected': 'REJECTED',
        ':problem': problem,
        ':null': null,
        ':expected': expected.status,
        ...(claimed ? { ':claimedAt': expected.claimedAt } : {}),
      },
    });
  }

  /** @inheritdoc */
  async overdue(now: string, limit: number): Promise<UploadSlot[]> {
    return (await overdueItems(this.client, this.tables.scenarios, 'UPLOAD', now, limit)).map(toUploadSlot);
  }

  /** @inheritdoc */
  async complete(
    company: string,
    uploadId: string,
    claimedAt: string,
    outcome: Pick<UploadSlot, 'status' | 'result' | 'problem'>,
  ): Promise<boolean> {
    return this.conditionalUpdate({
      TableName: this.tables.scenarios,
      Key: { company, sk: `UPLOAD#${uploadId}` },
      UpdateExpression: 'SET #status = :status, #result = :result, problem = :problem REMOVE sweepShard, sweepAt',
      ConditionExpression: '#status = :processing AND claimedAt = :claimedAt',
      ExpressionAttributeNames: { '#status': 'status', '#result': 'result' },
      ExpressionAttributeValues: {
        ':status': outcome.status,
        ':result': outcome.result ?? null,
        ':problem': outcome.problem ?? null,
        ':processing': 'PROCESSING',
        ':claimedAt': claimedAt,
      },
    });
  }

  private async conditionalUpdate(input: ConstructorParameters<typeof UpdateCommand>[0]): Promise<boolean> {
    try {
      await this.client.send(new UpdateCommand(input));
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }
}
