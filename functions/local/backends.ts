/**
 * The local runtime's backends: DynamoDB Local and s3rver (with the archive bucket), the OpenSearch node when one is
 * asked for, and the local tables.
 */
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import S3rver from 's3rver';
import { CORS_MAX_AGE_SECONDS } from '../contract/cors.js';
import { type DynamoDbLocal, startDynamoDbLocal } from './dynamodb-local.js';
import { LOCAL_BUCKET, LOCAL_REGION, LOCAL_TABLES } from './local-environment.js';
import { migrateDeploymentShards } from './migrate-shards.js';
import { startOpenSearchNode } from './opensearch-node.js';
import type { Log, RuntimeLayout, StopSteps } from './runtime-layout.js';
import { ensureTableStreams, type TableStreamArns } from './tables.js';

/** The archive bucket's CORS configuration (S3's XML): `origin` may PUT, GET and HEAD with any header. */
function s3CorsConfiguration(origin: string): string {
  return `<CORSConfiguration><CORSRule><AllowedOrigin>${origin}</AllowedOrigin><AllowedMethod>PUT</AllowedMethod><AllowedMethod>GET</AllowedMethod><AllowedMethod>HEAD</AllowedMethod><AllowedHeader>*</AllowedHeader><ExposeHeader>ETag</ExposeHeader><MaxAgeSeconds>${CORS_MAX_AGE_SECONDS}</MaxAgeSeconds></CORSRule></CORSConfiguration>`;
}

/**
 * Starts the OpenSearch node the layout asks for (in the data folder's `opensearch`, kept across restarts), pushing
 * its stop; nothing when there is none to start.
 * @throws Error naming the Debian package when Java 17, javac or Maven is missing, or with the node's output
 */
export async function startSearchBackend(layout: RuntimeLayout, stops: StopSteps, log: Log): Promise<void> {
  if (layout.openSearchNode === undefined) return;
  const started = performance.now();
  const node = await startOpenSearchNode({
    dataDirectory: join(layout.dataDirectory, 'opensearch'),
    port: layout.openSearchNode.port,
    heapMiB: layout.openSearchNode.heapMiB,
    log,
  });
  stops.push(node.stop);
  log(
    `OpenSearch ${node.version} is answering on ${node.url} (${((performance.now() - started) / 1000).toFixed(1)} s, heap ${node.heapMiB} MiB).`,
  );
}

/**
 * Starts DynamoDB Local and s3rver (with the archive bucket), pushing their stops.
 * @throws Error when one does not start, or DynamoDB Local answers elsewhere than `layout.dynamoDbEndpoint`
 */
export async function startStorageBackends(
  layout: RuntimeLayout,
  stops: StopSteps,
  log: Log,
): Promise<{ dynamo: DynamoDbLocal; s3: S3rver }> {
  const { dataDirectory, ports, dynamoDbEndpoint } = layout;
  const dynamo = await startDynamoDbLocal({ dataDirectory: join(dataDirectory, 'dynamodb'), port: ports.dynamoDb, log });
  stops.push(dynamo.stop);
  if (dynamo.endpoint !== dynamoDbEndpoint) throw new Error(`DynamoDB Local answers on ${dynamo.endpoint}, not on ${dynamoDbEndpoint}.`);
  const s3 = new S3rver({
    address: '127.0.0.1',
    port: ports.s3,
    directory: join(dataDirectory, 's3'),
    silent: true,
    // The console (served by the main address, another origin) PUTs large archives to presigned URLs.
    configureBuckets: [{ name: LOCAL_BUCKET, configs: [s3CorsConfiguration(layout.addresses.api)] }],
  });
  await s3.run();
  stops.push(() => s3.close());
  return { dynamo, s3 };
}

/** Creates the missing local tables and moves the deployments table to sharded keys; returns their stream ARNs, by table. */
export async function prepareTables(endpoint: string, log: Log): Promise<TableStreamArns> {
  const tableClient = new DynamoDBClient({
    endpoint,
    region: LOCAL_REGION,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const streamArns = await ensureTableStreams(tableClient, LOCAL_TABLES);
  const migrated = await migrateDeploymentShards(tableClient, LOCAL_TABLES.deployments);
  if (migrated.slotsMoved + migrated.slotsLeft + migrated.historyRekeyed > 0) {
    log(
      `Migrated the deployments table to sharded keys: ${migrated.slotsMoved} slots moved (${migrated.slotsLeft} left in place), ` +
        `${migrated.historyRekeyed} history entries re-keyed.`,
    );
  }
  tableClient.destroy();
  return streamArns;
}
