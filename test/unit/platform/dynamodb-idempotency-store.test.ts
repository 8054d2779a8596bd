/**
 * The idempotency persistence layer against DynamoDB Local, which refuses items above 400 KB like DynamoDB: a
 * response of any size is stored (compressed, in chunk items when needed) and replayed unchanged.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IdempotencyConfig, IdempotencyPersistenceLayerError, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import type { BasePersistenceLayer } from '@aws-lambda-powertools/idempotency/persistence';
import { CreateTableCommand, DeleteItemCommand, DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompressedDynamoDbPersistenceLayer } from '../../../functions/adapters/aws/dynamodb-idempotency-store.js';
import { type DynamoDbLocal, startDynamoDbLocal } from '../../../functions/local/dynamodb-local.js';
import { freePort } from '../../../functions/local/free-port.js';

let dataDirectory: string;
let dynamoDbLocal: DynamoDbLocal;
let client: DynamoDBClient;
let table = 0;

beforeAll(async () => {
  dataDirectory = await mkdtemp(join(tmpdir(), 'idempotency-store-'));
  dynamoDbLocal = await startDynamoDbLocal({ dataDirectory, port: await freePort() });
  client = new DynamoDBClient({
    endpoint: dynamoDbLocal.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
}, 90_000);

afterAll(async () => {
  client?.destroy();
  await dynamoDbLocal?.stop();
  if (dataDirectory !== undefined) await rm(dataDirectory, { recursive: true, force: true });
});

/** A fresh idempotency table (pk `id`), like the stacks declare. */
async function newTable(): Promise<string> {
  const tableName = `idempotency-${(table += 1)}`;
  await client.send(
    new CreateTableCommand({
      TableName: tableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
    }),
  );
  return tableName;
}

/** A handler made idempotent on `key` with `store`, counting its executions. */
function idempotentHandler(store: BasePersistenceLayer, response: () => unknown) {
  let executions = 0;
  const config = new IdempotencyConfig({ eventKeyJmesPath: 'key', expiresAfterSeconds: 3_600 });
  config.registerLambdaContext({ getRemainingTimeInMillis: () => 30_000 } as Context);
  const handler = makeIdempotent(
    async (_event: { key: string }) => {
      executions += 1;
      return response();
    },
    { persistenceStore: store, config },
  );
  return { handler, executions: () => executions };
}

// 600,000 random bytes, base64: 800 KB of JSON that brotli cannot shrink below 400 KB.
const largeResponse = () => ({
  statusCode: 200,
  headers: { 'content-type': 'application/json' },
  body: randomBytes(600_000).toString('base64'),
});

describe('CompressedDynamoDbPersistenceLayer on DynamoDB Local', () => {
  it('the plain Powertools layer cannot store an 800 KB response: DynamoDB refuses the item', async () => {
    const { handler } = idempotentHandler(
      new DynamoDBPersistenceLayer({ tableName: await newTable(), awsSdkV3Client: client }),
      largeResponse,
    );
    await expect(handler({ key: 'plain' })).rejects.toBeInstanceOf(IdempotencyPersistenceLayerError);
  });

  it('stores an incompressible 800 KB response in chunk items under 400 KB, and replays it unchanged without executing again', async () => {
    const tableName = await newTable();
    const { handler, executions } = idempotentHandler(new CompressedDynamoDbPersistenceLayer({ tableName, client }), largeResponse);
    const first = await handler({ key: 'large' });
    const items = (await client.send(new ScanCommand({ TableName: tableName }))).Items ?? [];
    expect(items.length).toBeGreaterThan(2); // the record and at least two chunks
    for (const item of items) expect(item.data?.B?.byteLength ?? 0).toBeLessThan(300_000);

    // A new layer instance (another Lambda container) reads it back from the table alone.
    const replay = idempotentHandler(new CompressedDynamoDbPersistenceLayer({ tableName, client }), largeResponse);
    expect(await replay.handler({ key: 'large' })).toEqual(first);
    expect(await handler({ key: 'large' })).toEqual(first);
    expect(executions() + replay.executions()).toBe(1);
  });

  it('keeps a small response compressed inside the record, without chunk items', async () => {
    const tableName = await newTable();
    const response = {
      statusCode: 200,
      body: JSON.stringify({ items: Array.from({ length: 2_000 }, (_, index) => ({ id: index, state: 'SUCCESS' })) }),
    };
    const { handler, executions } = idempotentHandler(new CompressedDynamoDbPersistenceLayer({ tableName, client }), () => response);
    expect(await handler({ key: 'small' })).toEqual(response);
    expect(await handler({ key: 'small' })).toEqual(response);
    expect(executions()).toBe(1);
    const items = (await client.send(new ScanCommand({ TableName: tableName }))).Items ?? [];
    expect(items).toHaveLength(1);
    expect(items[0]!.data?.M?.json?.B).toBeInstanceOf(Uint8Array);
  });

  it('refuses to replay a response whose chunk is missing (instead of answering a truncated one)', async () => {
    const tableName = await newTable();
    const store = new CompressedDynamoDbPersistenceLayer({ tableName, client });
    const { handler } = idempotentHandler(store, largeResponse);
    await handler({ key: 'damaged' });
    const items = (await client.send(new ScanCommand({ TableName: tableName }))).Items ?? [];
    const chunk = items.find((item) => item.id?.S?.endsWith('#response-chunk#1'));
    await client.send(new DeleteItemCommand({ TableName: tableName, Key: { id: chunk!.id! } }));
    const retry = idempotentHandler(new CompressedDynamoDbPersistenceLayer({ tableName, client }), largeResponse);
    const error = await retry.handler({ key: 'damaged' }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(IdempotencyPersistenceLayerError);
    expect(((error as Error).cause as Error).message).toMatch(/Chunk 2 of \d+ .* is missing/);
    expect(retry.executions()).toBe(0);
  });
});
