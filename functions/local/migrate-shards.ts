/**
 * Migration of a local deployments table to the sharded key design (functions/adapters/aws/tables.ts): data folders
 * written before the hot keys were sharded hold slots under `ACTIVE#{company}` and history entries whose `gsi1pk` /
 * `gsi2pk` lack the shard (or, older still, lack `gsi2pk`). Run by the local runtime right after ensureTables, before
 * any handler or stream consumer runs.
 */
import { type DynamoDBClient, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, ScanCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import pLimit from 'p-limit';
import { historyKeys } from '../adapters/aws/dynamodb-deployment-history.js';
import { activePartition, DEPLOYMENT_SLOT_ENTITY } from '../adapters/aws/dynamodb-deployment-repository.js';
import { isConditionalCheckFailed } from '../adapters/aws/dynamodb-shared.js';
import { deploymentShardOf } from '../adapters/aws/tables.js';

/**
 * Key of the item recording that the migration completed: later starts read it and skip the Scan. Its `entity` is no
 * deployment slot, so the deployments stream's consumer ignores it.
 */
export const SHARD_MIGRATION_KEY = { pk: 'MIGRATION#deployment-shards', sk: '-' } as const;

/** Writes in flight at once. */
const CONCURRENCY = 8;

/** What one run did. */
export interface ShardMigrationResult {
  /** False when an earlier run had completed (nothing read but the marker). */
  scanned: boolean;
  /** Slots moved from `ACTIVE#{company}` to their shard. */
  slotsMoved: number;
  /** Slots left where they were because they changed (or their shard's key was taken) while the migration ran. */
  slotsLeft: number;
  /** History entries whose index keys were rewritten. */
  historyRekeyed: number;
}

/**
 * Moves every unsharded slot to its shard and gives every history entry its current index keys, then records that it
 * completed. A slot moves in one transaction: the put of the same item under `ACTIVE#{company}#{shard}` with
 * `movedFrom` (the old pk), conditioned on that key being free, and the delete of the old item, conditioned on its
 * deployment id being the one read. The stream consumer derives no change from either write (deploymentChangeOf), so
 * no history entry or event is repeated. Idempotent: a run interrupted at any point is completed by the next start.
 * @throws whatever DynamoDB throws other than a refused condition.
 */
export async function migrateDeploymentShards(client: DynamoDBClient, tableName: string): Promise<ShardMigrationResult> {
  const documents = DynamoDBDocumentClient.from(client);
  const result: ShardMigrationResult = { scanned: false, slotsMoved: 0, slotsLeft: 0, historyRekeyed: 0 };
  const marker = await documents.send(new GetCommand({ TableName: tableName, Key: SHARD_MIGRATION_KEY, ConsistentRead: true }));
  if (marker.Item !== undefined) return result;
  result.scanned = true;
  const limit = pLimit(CONCURRENCY);
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await documents.send(
      new ScanCommand({
        TableName: tableName,
        FilterExpression: 'begins_with(pk, :active) OR begins_with(pk, :history)',
        ExpressionAttributeValues: { ':active': 'ACTIVE#', ':history': 'HISTORY#' },
        ConsistentRead: true,
        ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }),
      }),
    );
    await Promise.all(
      (page.Items ?? []).map((item) =>
        limit(async () => {
          if (item.entity === DEPLOYMENT_SLOT_ENTITY) {
            const outcome = await moveSlot(documents, tableName, item);
            if (outcome === 'moved') result.slotsMoved += 1;
            if (outcome === 'left') result.slotsLeft += 1;
          } else if (await rekeyHistory(documents, tableName, item)) {
            result.historyRekeyed += 1;
          }
        }),
      ),
    );
    startKey = page.LastEvaluatedKey;
  } while (startKey !== undefined);
  await documents.send(
    new PutCommand({
      TableName: tableName,
      Item: { ...SHARD_MIGRATION_KEY, entity: 'MIGRATION', completedAt: new Date().toISOString(), ...result },
    }),
  );
  return result;
}

/** Moves one slot item to its shard; 'unchanged' when it is there already (or is no slot of a device). */
async function moveSlot(
  client: DynamoDBDocumentClient,
  tableName: string,
  item: Record<string, unknown>,
): Promise<'moved' | 'left' | 'unchanged'> {
  const { pk, sk, company, deviceId, id } = item;
  if (typeof company !== 'string' || typeof deviceId !== 'string' || typeof id !== 'string') return 'unchanged';
  const target = activePartition(company, deploymentShardOf(deviceId));
  if (pk === target) return 'unchanged';
  try {
    await client.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: tableName,
              Item: { ...item, pk: target, movedFrom: pk },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          {
            Delete: {
              TableName: tableName,
              Key: { pk, sk },
              ConditionExpression: 'id = :id',
              ExpressionAttributeValues: { ':id': id },
            },
          },
        ],
      }),
    );
    return 'moved';
  } catch (error) {
    if (error instanceof TransactionCanceledException || isConditionalCheckFailed(error)) return 'left';
    throw error;
  }
}

/** Rewrites the index keys of one history item when they are not historyKeys' (unsharded, or missing). */
async function rekeyHistory(client: DynamoDBDocumentClient, tableName: string, item: Record<string, unknown>): Promise<boolean> {
  const { company, deviceId, scenarioId, id } = item;
  if (typeof company !== 'string' || typeof deviceId !== 'string' || typeof scenarioId !== 'string' || typeof id !== 'string') return false;
  const keys = historyKeys({ company, deviceId, scenarioId, id });
  if (item.pk !== keys.pk || item.sk !== keys.sk) return false;
  if (item.gsi1pk === keys.gsi1pk && item.gsi1sk === keys.gsi1sk && item.gsi2pk === keys.gsi2pk && item.gsi2sk === keys.gsi2sk)
    return false;
  try {
    await client.send(
      new UpdateCommand({
        TableName: tableName,
        Key: { pk: item.pk, sk: item.sk },
        UpdateExpression: 'SET gsi1pk = :gsi1pk, gsi1sk = :gsi1sk, gsi2pk = :gsi2pk, gsi2sk = :gsi2sk',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':gsi1pk': keys.gsi1pk, ':gsi1sk': keys.gsi1sk, ':gsi2pk': keys.gsi2pk, ':gsi2sk': keys.gsi2sk },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionalCheckFailed(error)) return false;
    throw error;
  }
}
