/**
 * DynamoDB Local with the local runtime's tables, for a unit test file that exercises the DynamoDB adapters against a
 * real engine: one JVM per file, on a free port and a fresh data folder, started before the file's first test and
 * stopped (its folder removed) after its last.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll } from 'vitest';
import { createDocumentClient } from '../../functions/adapters/aws/clients.js';
import { type DynamoDbLocal, startDynamoDbLocal } from '../../functions/local/dynamodb-local.js';
import { freePort } from '../../functions/local/free-port.js';
import { LOCAL_TABLES } from '../../functions/local/runtime.js';
import { ensureTables } from '../../functions/local/tables.js';

/**
 * Registers the file's `beforeAll` (start DynamoDB Local in a temporary folder named `<prefix>…`, create the local
 * tables) and `afterAll` (stop it, remove the folder). Call it at the top level, before the file's own hooks.
 * @returns the document client on it; reading it before `beforeAll` has run throws
 */
export function useLocalTables(prefix: string): () => DynamoDBDocumentClient {
  let directory: string | undefined;
  let dynamo: DynamoDbLocal | undefined;
  let client: DynamoDBDocumentClient | undefined;
  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), prefix));
    dynamo = await startDynamoDbLocal({ dataDirectory: directory, port: await freePort() });
    const admin = new DynamoDBClient({
      endpoint: dynamo.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    await ensureTables(admin, LOCAL_TABLES);
    admin.destroy();
    client = createDocumentClient(dynamo.endpoint);
  }, 90_000);
  afterAll(async () => {
    client?.destroy();
    await dynamo?.stop();
    if (directory !== undefined) await rm(directory, { recursive: true, force: true });
  });
  return () => {
    if (client === undefined) throw new Error('The local tables are read before useLocalTables started them.');
    return client;
  };
}
