import {
  CreateTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  type DynamoDBClient,
  type GlobalSecondaryIndex,
  PutItemCommand,
  ResourceNotFoundException,
  type TableDescription,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { type StreamConsumer, TABLES, type TableKeySchema, type TableName } from '../adapters/aws/tables.js';
import { type RetryPolicy, retry } from '../adapters/retry.js';

/** How long adding one index to an existing local table may take before the start fails. */
const INDEX_CREATION_TIMEOUT_MS = 120_000;

/** A table or index still being created; its message is the one thrown once the wait gives up. */
class NotActiveYet extends Error {}

/** Polling an index until it is ACTIVE: every 200 ms (a local poll: no jitter) for INDEX_CREATION_TIMEOUT_MS. */
const INDEX_ACTIVE_POLL: RetryPolicy = {
  attempts: Number.POSITIVE_INFINITY,
  minDelayMs: 200,
  maxDelayMs: 200,
  jitter: 0,
  budgetMs: INDEX_CREATION_TIMEOUT_MS,
  retryable: (error) => error instanceof NotActiveYet,
};

function indexDefinition(index: { indexName: string; partitionKey: string; sortKey: string }): GlobalSecondaryIndex {
  return {
    IndexName: index.indexName,
    KeySchema: [
      { AttributeName: index.partitionKey, KeyType: 'HASH' },
      { AttributeName: index.sortKey, KeyType: 'RANGE' },
    ],
    Projection: { ProjectionType: 'ALL' },
  };
}

/**
 * Adds the indexes of `schema` that an existing table lacks (a data folder made by an older version), one
 * UpdateTable per index as DynamoDB requires, waiting for each to become ACTIVE.
 * @returns the names of the indexes added.
 * @throws Error when an existing index has other keys than `schema` declares (the data folder must be reset).
 */
async function addMissingIndexes(
  client: DynamoDBClient,
  tableName: string,
  schema: TableKeySchema,
  description: TableDescription,
): Promise<string[]> {
  const existing = new Map((description.GlobalSecondaryIndexes ?? []).map((index) => [index.IndexName, index]));
  const added: string[] = [];
  for (const index of schema.globalSecondaryIndexes ?? []) {
    const current = existing.get(index.indexName);
    if (current !== undefined) {
      const keys = (current.KeySchema ?? []).map((key) => `${key.KeyType}:${key.AttributeName}`).join(',');
      if (keys !== `HASH:${index.partitionKey},RANGE:${index.sortKey}`) {
        throw new Error(
          `Table ${tableName}: index ${index.indexName} has keys ${keys}, expected ${index.partitionKey}/${index.sortKey}; run npm run reset.`,
        );
      }
      continue;
    }
    await client.send(
      new UpdateTableCommand({
        TableName: tableName,
        AttributeDefinitions: [
          { AttributeName: index.partitionKey, AttributeType: 'S' },
          { AttributeName: index.sortKey, AttributeType: 'S' },
        ],
        GlobalSecondaryIndexUpdates: [{ Create: indexDefinition(index) }],
      }),
    );
    await retry(async () => {
      const table = (await client.send(new DescribeTableCommand({ TableName: tableName }))).Table;
      const status = table?.GlobalSecondaryIndexes?.find((candidate) => candidate.IndexName === index.indexName)?.IndexStatus;
      if (status !== 'ACTIVE' || table?.TableStatus !== 'ACTIVE') {
        throw new NotActiveYet(
          `Table ${tableName}: index ${index.indexName} still ${status ?? 'absent'} after ${INDEX_CREATION_TIMEOUT_MS / 1000} s.`,
        );
      }
    }, INDEX_ACTIVE_POLL);
    added.push(index.indexName);
  }
  return added;
}

/** `entity` of the item that gives a local table's stream its first record (no consumer derives anything from it). */
export const STREAM_ANCHOR_ENTITY = 'STREAM_ANCHOR';

/**
 * Writes the anchor item of a table whose stream was just enabled, so that the stream's first record comes before
 * any record of the other streams. DynamoDB Local finds a stream's oldest record by walking every stream's records
 * from the oldest (in sequence-number order) on each write to a streamed table and each stream read: a table whose
 * stream starts after 20,000 records of another measured 76 ms per conditional put against 3.6 ms anchored.
 */
async function anchorStream(client: DynamoDBClient, tableName: string, schema: TableKeySchema): Promise<void> {
  const key = {
    [schema.partitionKey]: { S: 'STREAM#ANCHOR' },
    ...(schema.sortKey === undefined ? {} : { [schema.sortKey]: { S: 'STREAM#ANCHOR' } }),
  };
  await client.send(new PutItemCommand({ TableName: tableName, Item: { ...key, entity: { S: STREAM_ANCHOR_ENTITY } } }));
}

/**
 * Turns on the table's TTL on `attribute` unless it is on already (a table made before it was declared, or just now),
 * as the CDK stack declares it. Readers never rely on the deletion, which DynamoDB makes within days: expired items
 * are ignored by their expiry attribute.
 */
async function enableTimeToLive(client: DynamoDBClient, tableName: string, attribute: string): Promise<void> {
  const current = (await client.send(new DescribeTimeToLiveCommand({ TableName: tableName }))).TimeToLiveDescription;
  if (current?.AttributeName === attribute && (current.TimeToLiveStatus === 'ENABLED' || current.TimeToLiveStatus === 'ENABLING')) return;
  await client.send(
    new UpdateTimeToLiveCommand({ TableName: tableName, TimeToLiveSpecification: { AttributeName: attribute, Enabled: true } }),
  );
}

/** Stream ARNs of the local tables, by consumer (TableKeySchema.stream). */
export type StreamArns = Record<StreamConsumer, string[]>;

/** The stream ARN of each local table that has a stream, by the table's logical name. */
export type TableStreamArns = Partial<Record<TableName, string>>;

/**
 * Creates the tables in DynamoDB Local if they do not exist, with the key design of `tables.ts`, streams (of the view
 * TABLES names, NEW_AND_OLD_IMAGES by default) where TABLES names a consumer and TTL where it names an attribute (the
 * CDK stack declares the same). Existing tables get the indexes they lack (data folders of older versions; their items
 * get the index keys from migrateDeploymentShards, which the runtime runs right after), and their stream when they
 * have none yet.
 * @returns the stream ARNs, by consumer.
 */
export async function ensureTables(client: DynamoDBClient, names: Record<TableName, string>): Promise<StreamArns> {
  const byTable = await ensureTableStreams(client, names);
  const streams: StreamArns = {
    search: [],
    'deployment-changes': [],
    'continuous-rollouts': [],
    'administrative-changes': [],
    'command-changes': [],
    'webhook-deliveries': [],
    'alert-changes': [],
    'rollout-changes': [],
  };
  for (const [logical, schema] of Object.entries(TABLES) as [TableName, TableKeySchema][]) {
    const arn = byTable[logical];
    if (arn !== undefined) for (const consumer of [schema.stream ?? []].flat()) streams[consumer].push(arn);
  }
  return streams;
}

/**
 * ensureTables, returning the stream ARN of each streamed table by its logical name (what the local runtime reads: a
 * stream consumer's definition names its tables, as the CDK stack reads them).
 */
export async function ensureTableStreams(client: DynamoDBClient, names: Record<TableName, string>): Promise<TableStreamArns> {
  const streams: TableStreamArns = {};
  for (const [logical, schema] of Object.entries(TABLES) as [TableName, TableKeySchema][]) {
    const arn = await ensureTable(client, names[logical], schema);
    if (arn !== undefined) streams[logical] = arn;
  }
  return streams;
}

/** Creates or completes one table (see ensureTables); returns its stream ARN, if it has a stream. */
async function ensureTable(client: DynamoDBClient, tableName: string, schema: TableKeySchema): Promise<string | undefined> {
  let description: TableDescription | undefined;
  try {
    description = (await client.send(new DescribeTableCommand({ TableName: tableName }))).Table;
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
  }
  if (description !== undefined) {
    await addMissingIndexes(client, tableName, schema, description);
    if (schema.stream !== undefined && description.StreamSpecification?.StreamEnabled !== true) {
      description = (
        await client.send(
          new UpdateTableCommand({
            TableName: tableName,
            StreamSpecification: { StreamEnabled: true, StreamViewType: schema.streamView ?? 'NEW_AND_OLD_IMAGES' },
          }),
        )
      ).TableDescription;
      await anchorStream(client, tableName, schema);
    }
  } else {
    description = await createTable(client, tableName, schema);
    if (schema.stream !== undefined) await anchorStream(client, tableName, schema);
  }
  if (schema.timeToLiveAttribute !== undefined) await enableTimeToLive(client, tableName, schema.timeToLiveAttribute);
  return schema.stream === undefined ? undefined : description?.LatestStreamArn;
}

/** Creates a table with the keys, indexes and stream of `schema`; returns its description. */
async function createTable(client: DynamoDBClient, tableName: string, schema: TableKeySchema): Promise<TableDescription | undefined> {
  const indexes = schema.globalSecondaryIndexes ?? [];
  const attributes = new Set<string>([schema.partitionKey, ...(schema.sortKey === undefined ? [] : [schema.sortKey])]);
  for (const index of indexes) {
    attributes.add(index.partitionKey);
    attributes.add(index.sortKey);
  }
  const created = await client.send(
    new CreateTableCommand({
      TableName: tableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [...attributes].map((name) => ({ AttributeName: name, AttributeType: 'S' })),
      KeySchema: [
        { AttributeName: schema.partitionKey, KeyType: 'HASH' },
        ...(schema.sortKey === undefined ? [] : [{ AttributeName: schema.sortKey, KeyType: 'RANGE' as const }]),
      ],
      ...(indexes.length === 0 ? {} : { GlobalSecondaryIndexes: indexes.map(indexDefinition) }),
      ...(schema.stream === undefined
        ? {}
        : { StreamSpecification: { StreamEnabled: true, StreamViewType: schema.streamView ?? 'NEW_AND_OLD_IMAGES' } }),
    }),
  );
  return created.TableDescription;
}
