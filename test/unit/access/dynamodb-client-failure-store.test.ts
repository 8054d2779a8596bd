/**
 * DynamoDbClientFailureStore on a real DynamoDB Local, in the table ensureTables creates: a window opens at the first
 * attempt and closes `windowMs` later whatever follows, at most `limit` attempts are reserved in it however many race
 * (on one function instance or many), a closed window is replaced, a clear forgets; the table has its TTL on. Then,
 * with a mocked client, the answers of a table that keeps losing races or cannot be used. Times are passed in (epoch
 * ms, from now on), never waited for.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConditionalCheckFailedException, DescribeTimeToLiveCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbClientFailureStore } from '../../../functions/adapters/aws/dynamodb-client-failure-store.js';
import { TABLES } from '../../../functions/adapters/aws/tables.js';
import { BoundedVerificationGate } from '../../../functions/adapters/verification-gate.js';
import { issueDeviceToken } from '../../../functions/core/devices/tokens.js';
import { OAuthError, ServiceUnavailableError } from '../../../functions/core/shared/errors.js';
import { type DynamoDbLocal, startDynamoDbLocal } from '../../../functions/local/dynamodb-local.js';
import { freePort } from '../../../functions/local/free-port.js';
import { LOCAL_TABLES } from '../../../functions/local/runtime.js';
import { ensureTables } from '../../../functions/local/tables.js';
import { problemHeadersOf, statusOf as problemStatusOf } from '../../../functions/platform/problem.js';

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
  const policy = { limit: 5, windowMs: WINDOW_MS };

  it('opens a window at the first attempt, counts the next ones up to the limit, then refuses until it closes', async () => {
    const key = 'acme~kiosk-1#203.0.113.9';
    expect(await store.reserve(key, T0, policy)).toEqual({ reserved: true, attempts: 1, windowEndsAt: T0 + WINDOW_MS });
    for (let attempt = 2; attempt <= 5; attempt += 1) {
      expect(await store.reserve(key, T0 + attempt * 50_000, policy)).toEqual({
        reserved: true,
        attempts: attempt,
        windowEndsAt: T0 + WINDOW_MS,
      });
    }
    // At the limit: refused, the window unchanged (refusals do not extend it).
    expect(await store.reserve(key, T0 + 299_999, policy)).toEqual({ reserved: false, windowEndsAt: T0 + WINDOW_MS });
    const { Item } = await DynamoDBDocumentClient.from(client).send(
      new GetCommand({ TableName: LOCAL_TABLES.clientFailures, Key: { pk: key } }),
    );
    expect(Item).toMatchObject({ failures: 5, windowEndsAt: T0 + WINDOW_MS, expiresAt: (T0 + WINDOW_MS) / 1000 });
    // Closed (the item waits for its TTL): the next attempt opens a new window.
    expect(await store.reserve(key, T0 + WINDOW_MS, policy)).toEqual({ reserved: true, attempts: 1, windowEndsAt: T0 + 2 * WINDOW_MS });
  });

  it('reserves exactly `limit` of many simultaneous attempts, also when they replace a closed window together', async () => {
    const key = 'acme~kiosk-2#203.0.113.9';
    const reserved = async (at: number) =>
      (await Promise.all(Array.from({ length: 20 }, () => store.reserve(key, at, policy)))).filter((answer) => answer.reserved);
    expect(await reserved(T0)).toHaveLength(5);
    const later = T0 + 2 * WINDOW_MS;
    const again = await reserved(later);
    expect(again).toHaveLength(5);
    expect(again.map((answer) => answer.windowEndsAt)).toEqual(Array(5).fill(later + WINDOW_MS));
  });

  it('forgets a key on clear, and only that key', async () => {
    for (let attempt = 0; attempt < 5; attempt += 1) {
      await store.reserve('acme~kiosk-3#198.51.100.7', T0, policy);
      await store.reserve('acme~kiosk-3#203.0.113.9', T0, policy);
    }
    await store.clear('acme~kiosk-3#198.51.100.7');
    expect(await store.reserve('acme~kiosk-3#198.51.100.7', T0, policy)).toMatchObject({ reserved: true, attempts: 1 });
    expect((await store.reserve('acme~kiosk-3#203.0.113.9', T0, policy)).reserved).toBe(false);
  });

  it('gives back one attempt on release, never below 0, and ignores a key it does not hold', async () => {
    const key = 'acme~kiosk-4#198.51.100.7';
    await store.reserve(key, T0, policy);
    await store.reserve(key, T0, policy);
    await store.release(key);
    expect(await store.reserve(key, T0, policy)).toMatchObject({ reserved: true, attempts: 2 });
    for (let release = 0; release < 4; release += 1) await store.release(key);
    expect(await store.reserve(key, T0, policy)).toMatchObject({ reserved: true, attempts: 1 });
    await expect(store.release('acme~kiosk-4#203.0.113.250')).resolves.toBeUndefined();
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

describe('the client credentials grant on several function instances sharing the table', () => {
  /** One Lambda environment: its own gate (each serves one request at a time on AWS) and store, the shared table. */
  const instance = (hashes: string[], now: () => number) => ({
    devices: { get: async () => undefined },
    signer: { sign: async () => 'token' },
    failures: new DynamoDbClientFailureStore(DynamoDBDocumentClient.from(client), LOCAL_TABLES.clientFailures),
    gate: new BoundedVerificationGate(),
    policy: { limit: 5, windowMs: WINDOW_MS },
    now,
    verify: async (candidate: string) => {
      hashes.push(candidate);
      return false;
    },
  });
  /** The status the token endpoint answers (an error outside OAuthError, e.g. a lost race, is the 500). */
  const statusOf = (attempt: Promise<unknown>) =>
    attempt.then(
      () => 200,
      (error: unknown) => (error instanceof OAuthError ? problemStatusOf(error) : 500),
    );
  const wrong = (clientId: string) => ({ grantType: 'client_credentials', clientId, clientSecret: 'wrong', source: '203.0.113.9' });

  it('hashes at most `limit` of 50 simultaneous wrong secrets for one key, each on its own instance; the others get 429', async () => {
    const hashes: string[] = [];
    const statuses = await Promise.all(
      Array.from({ length: 50 }, () =>
        statusOf(
          issueDeviceToken(
            instance(hashes, () => T0),
            wrong('acme~burst-1'),
            900,
          ),
        ),
      ),
    );
    expect(hashes.length).toBeLessThanOrEqual(5);
    expect(statuses.filter((status) => status === 401)).toHaveLength(hashes.length);
    expect(statuses.filter((status) => status === 429)).toHaveLength(50 - hashes.length);
  });

  it('answers every one of simultaneous attempts replacing a closed window, hashing at most `limit` (no 500)', async () => {
    const hashes: string[] = [];
    for (let attempt = 0; attempt < 5; attempt += 1)
      await statusOf(
        issueDeviceToken(
          instance(hashes, () => T0),
          wrong('acme~burst-2'),
          900,
        ),
      );
    hashes.length = 0;
    const later = T0 + 2 * WINDOW_MS;
    const statuses = await Promise.all(
      Array.from({ length: 30 }, () =>
        statusOf(
          issueDeviceToken(
            instance(hashes, () => later),
            wrong('acme~burst-2'),
            900,
          ),
        ),
      ),
    );
    expect(statuses.filter((status) => status !== 401 && status !== 429)).toEqual([]);
    expect(hashes.length).toBeLessThanOrEqual(5);
  });
});

describe('DynamoDbClientFailureStore on a table that keeps refusing', () => {
  const policy = { limit: 5, windowMs: WINDOW_MS };
  const refused = (item?: Record<string, unknown>) =>
    new ConditionalCheckFailedException({
      message: 'The conditional request failed',
      $metadata: { httpStatusCode: 400 },
      ...(item === undefined ? {} : { Item: marshall(item) }),
    });

  it('answers attempts that lose every race to replace a closed window 429 with Retry-After 1, never an error (500)', async () => {
    const documents = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));
    const mocked = mockClient(documents);
    try {
      // Every round: a closed window found, and replaced by another writer before this one.
      mocked.on(UpdateCommand).callsFake((input: { UpdateExpression: string }) => {
        throw input.UpdateExpression.startsWith('ADD') ? refused({ pk: 'k', failures: 5, windowEndsAt: T0 - 1 }) : refused();
      });
      mocked.on(GetCommand).resolves({});
      const contended = new DynamoDbClientFailureStore(documents, 'client-failures');
      const answer = await issueDeviceToken(
        {
          devices: { get: async () => undefined },
          signer: { sign: async () => 'token' },
          failures: contended,
          gate: new BoundedVerificationGate(),
          policy,
          now: () => T0,
        },
        { grantType: 'client_credentials', clientId: 'acme~kiosk-9', clientSecret: 'wrong', source: '203.0.113.9' },
        900,
      ).catch((error: unknown) => error);
      expect(answer).toBeInstanceOf(OAuthError);
      expect([problemStatusOf(answer as OAuthError), problemHeadersOf(answer as OAuthError)['Retry-After']]).toEqual([429, '1']);
      expect(await contended.reserve('k', T0, policy)).toEqual({ reserved: false, windowEndsAt: T0 + 1_000 });
    } finally {
      mocked.restore();
    }
  });

  it.each(['ResourceNotFoundException', 'AccessDeniedException'])(
    'answers a table that cannot be used (%s) 503 with Retry-After',
    async (name) => {
      const documents = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));
      const mocked = mockClient(documents);
      try {
        mocked.onAnyCommand().rejects(Object.assign(new Error(name), { name, $fault: 'client', $metadata: { httpStatusCode: 400 } }));
        const unusable = new DynamoDbClientFailureStore(documents, 'client-failures');
        for (const call of [() => unusable.reserve('k', T0, policy), () => unusable.clear('k')]) {
          const error = await call().catch((caught: unknown) => caught);
          expect(error).toBeInstanceOf(ServiceUnavailableError);
          expect([
            problemStatusOf(error as ServiceUnavailableError),
            problemHeadersOf(error as ServiceUnavailableError)['Retry-After'],
          ]).toEqual([503, '5']);
        }
      } finally {
        mocked.restore();
      }
    },
  );
});
