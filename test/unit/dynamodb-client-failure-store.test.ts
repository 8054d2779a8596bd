/**
 * DynamoDbClientFailureStore on a real DynamoDB Local, in the table ensureTables creates: a window opens at the first
 * failure and closes `windowMs` later whatever follows, racing writers count every failure once, a closed window is
 * replaced, a success clears; the table has its TTL on. Times are passed in (epoch ms, from now on), never waited for.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DescribeTimeToLiveCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbClientFailureStore } from '../../functions/adapters/aws/dynamodb-client-failure-store.js';
import { TABLES } from '../../functions/adapters/aws/tables.js';
import { type DynamoDbLocal, startDynamoDbLocal } from '../../functions/local/dynamodb-local.js';
import { freePort } from '../../functions/local/free-port.js';
import { LOCAL_TABLES } from '../../functions/local/runtime.js';
import { ensureTables } from '../../functions/local/tables.js';

// DynamoDB Local deletes items whose TTL attribute is past (as DynamoDB does, later): the windows start now.
const T0 = Math.ceil(Date.now() / 1000) * 1000;
const WINDOW_MS = 300_000;

let directory: string;
let dynamo: DynamoDbLocal;
let client: DynamoDBClient;
let store: DynamoDbClientFailureStore;

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'dss-failures-'));
  dynamo = await startDynamoDbLocal({ dataDirectory: directory, port: await freePort() });
  client = new DynamoDBClient({
    endpoint: dynamo.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  await ensureTables(client, LOCAL_TABLES);
  store = new DynamoDbClientFailureStore(DynamoDBDocumentClient.from(client), LOCAL_TABLES.clientFailures);
}, 60_000);

afterAll(async () => {
  client?.destroy();
  await dynamo?.stop();
  await rm(directory, { recursive: true, force: true });
});

describe('DynamoDbClientFailureStore', () => {
  it('opens a window at the first failure and adds to it until it closes, whenever the later failures come', async () => {
    const key = 'acme~kiosk-1#203.0.113.9';
    expect(await store.current(key, T0)).toBeUndefined();
    expect(await store.record(key, T0, WINDOW_MS)).toEqual({ failures: 1, windowEndsAt: T0 + WINDOW_MS });
    expect(await store.record(key, T0 + 200_000, WINDOW_MS)).toEqual({ failures: 2, windowEndsAt: T0 + WINDOW_MS });
    expect(await store.current(key, T0 + 299_999)).toEqual({ failures: 2, windowEndsAt: T0 + WINDOW_MS });
    // Closed: nothing is counted any more, though the item waits for its TTL.
    expect(await store.current(key, T0 + WINDOW_MS)).toBeUndefined();
    const { Item } = await DynamoDBDocumentClient.from(client).send(
      new GetCommand({ TableName: LOCAL_TABLES.clientFailures, Key: { pk: key } }),
    );
    expect(Item).toMatchObject({ failures: 2, windowEndsAt: T0 + WINDOW_MS, expiresAt: (T0 + WINDOW_MS) / 1000 });
    // The next failure opens a new window.
    expect(await store.record(key, T0 + 400_000, WINDOW_MS)).toEqual({ failures: 1, windowEndsAt: T0 + 400_000 + WINDOW_MS });
  });

  it('counts each of many simultaneous failures once, also when they replace a closed window together', async () => {
    const key = 'acme~kiosk-2#203.0.113.9';
    await Promise.all(Array.from({ length: 10 }, () => store.record(key, T0, WINDOW_MS)));
    expect(await store.current(key, T0)).toEqual({ failures: 10, windowEndsAt: T0 + WINDOW_MS });
    const later = T0 + 2 * WINDOW_MS;
    await Promise.all(Array.from({ length: 10 }, () => store.record(key, later, WINDOW_MS)));
    expect(await store.current(key, later)).toEqual({ failures: 10, windowEndsAt: later + WINDOW_MS });
  });

  it('forgets a key on clear, and only that key', async () => {
    await store.record('acme~kiosk-3#198.51.100.7', T0, WINDOW_MS);
    await store.record('acme~kiosk-3#203.0.113.9', T0, WINDOW_MS);
    await store.clear('acme~kiosk-3#198.51.100.7');
    expect(await store.current('acme~kiosk-3#198.51.100.7', T0)).toBeUndefined();
    expect((await store.current('acme~kiosk-3#203.0.113.9', T0))?.failures).toBe(1);
  });

  it('lives in a table whose TTL is on, on the attribute TABLES declares (as every table declaring one)', async () => {
    for (const name of ['clientFailures', 'idempotency'] as const) {
      const { TimeToLiveDescription } = await client.send(new DescribeTimeToLiveCommand({ TableName: LOCAL_TABLES[name] }));
      expect(TimeToLiveDescription, name).toMatchObject({
        AttributeName: TABLES[name].timeToLiveAttribute,
        TimeToLiveStatus: expect.stringMatching(/^ENABL(ED|ING)$/),
      });
    }
  });
});
