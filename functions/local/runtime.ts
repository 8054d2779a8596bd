import { mkdir, rm, writeFile } from 'node:fs/promises';
import type { Server } from 'node:net';
import { join, resolve } from 'node:path';
import { InvokeStore } from '@aws/lambda-invoke-store';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import S3rver from 's3rver';
import { writeConsole } from '../../console/build.js';
import { localQueue } from '../adapters/embedded/local-work-queue.js';
import { SwappableSearchIndex } from '../adapters/embedded/swappable-search-index.js';
import { retry } from '../adapters/retry.js';
import { CORS_MAX_AGE_SECONDS } from '../contract/cors.js';
import {
  checkEnvironment,
  ENV,
  type EnvironmentGroup,
  type EnvironmentOf,
  type EnvName,
  readEnvironment,
} from '../contract/environment.js';
import {
  ADMINISTRATIVE_CHANGES_ENTRY,
  type ApiName,
  ARCHIVE_UPLOADED,
  CONTINUOUS_ROLLOUTS_ENTRY,
  DEPLOYMENT_CHANGES_ENTRY,
  HEARTBEAT_SWEEPER,
  ROLLOUT_SWEEPER,
  ROLLOUT_WORKER,
  ROUTES,
  SEARCH_INDEXER_ENTRY,
  UPLOAD_SWEEPER,
} from '../contract/routes.js';
import type { ReindexResult } from '../core/search/reindex.js';
import { ServiceUnavailableError } from '../core/shared/errors.js';
import { searchIndex } from '../platform/composition/search.js';
import { reindexSearch } from '../platform/composition/search-rebuild.js';
import { services } from '../platform/composition/services.js';
import { createAdminServer, RUNTIME_FILE } from './admin.js';
import { localCursorSigningKey } from './cursor-key.js';
import { type DynamoDbLocal, startDynamoDbLocal } from './dynamodb-local.js';
import { FileStreamCheckpoints } from './file-checkpoints.js';
import { freePort } from './free-port.js';
import { loadHandler } from './handler-module.js';
import { type AdmissionOptions, createApiServer } from './http-gateway.js';
import { migrateDeploymentShards } from './migrate-shards.js';
import { startOpenSearchNode } from './opensearch-node.js';
import { toS3Event } from './s3-events.js';
import { searchSnapshotFile } from './search-snapshot.js';
import { markSearchStreams, SearchSnapshots, type SearchStart, startEmbeddedSearch } from './search-startup.js';
import { seedDemoData, seedUsers } from './seed.js';
import { DynamoDbStreamPoller, type StreamConsumer } from './stream-poller.js';
import { ensureTables, type StreamArns } from './tables.js';
import { WriteCounter } from './write-counter.js';

/**
 * Invocations of the archive handler per S3 event, the first included, as AWS makes for an asynchronous invocation
 * (two retries); the waits between them are jittered around 0.5 s and 1 s.
 */
const S3_EVENT_ATTEMPTS = 3;

/** Ports of the local runtime; 0 picks a free port. */
export interface LocalPorts {
  api: number;
  upload: number;
  auth: number;
  dynamoDb: number;
  s3: number;
}

/** Options of startLocalRuntime. */
export interface LocalRuntimeOptions {
  /** Folder holding every backend's data (created if missing). */
  dataDirectory: string;
  ports: LocalPorts;
  /** Repository root, to resolve handler modules. */
  root: string;
  /** Progress and error reporting. */
  log?: (message: string) => void;
}

/** A running local runtime. */
export interface LocalRuntime {
  /** `http://127.0.0.1:<port>` of each address. */
  addresses: Record<ApiName, string>;
  dynamoDbEndpoint: string;
  s3Endpoint: string;
  /** Documents in the search index after the start-up rebuild or snapshot load (0 when OpenSearch could not be reached). */
  indexedDocuments: number;
  /** How the embedded search index was filled at start (from its snapshot or by a rebuild); absent with OpenSearch. */
  searchStart?: SearchStart;
  /**
   * Resolves once the search stream consumer has handled every change of the devices and scenarios tables written
   * before the call (what seeding waits for before the snapshot is taken at stop).
   */
  searchCaughtUp(): Promise<void>;
  /**
   * `http://127.0.0.1:<port>` of the loopback-only admin listener: `POST /search/reindex` rebuilds the search index
   * (reindexSearch) and answers `{ index, documents, tookMs }`. Also written, with the pid, to RUNTIME_FILE.
   */
  admin: string;
  /** Rebuilds the search index from DynamoDB without downtime, as `POST {admin}/search/reindex` does. */
  reindexSearch(): Promise<ReindexResult>;
  /** The absolute data folder. */
  dataDirectory: string;
  /** Whether this start seeded the demo data (empty data folder). */
  seeded: boolean;
  /** Stops listeners, the stream poller, s3rver and DynamoDB Local. */
  stop(): Promise<void>;
}

/** Local table and bucket names (CloudFormation generates unique ones in AWS). */
export const LOCAL_TABLES = {
  companies: 'companies',
  devices: 'devices',
  scenarios: 'scenarios',
  deployments: 'deployments',
  presence: 'presence',
  rollouts: 'rollouts',
  idempotency: 'idempotency',
  clientFailures: 'client-failures',
  audit: 'audit',
} as const;
/** ROLLOUT_QUEUE_URL of the local runtime: its in-process rollout queue. */
export const LOCAL_ROLLOUT_QUEUE = 'local:rollouts';
export const LOCAL_BUCKET = 'scenario-archives';
/** `aud` of locally issued tokens. */
export const LOCAL_AUDIENCE = 'device-scenario-service';
/** The region the local clients name (DynamoDB Local and s3rver accept any) unless AWS_REGION says otherwise. */
const LOCAL_REGION = 'us-east-1';

/** What localEnvironment() needs: where the data lives and where each backend answers. */
export interface LocalEnvironmentOptions {
  /** Absolute data folder. */
  dataDirectory: string;
  /** `http://127.0.0.1:<port>` of each address. */
  addresses: Readonly<Record<ApiName, string>>;
  dynamoDbEndpoint: string;
  s3Endpoint: string;
  /** The cursor key (localCursorSigningKey). */
  cursorSigningKey: string;
  /** The runtime's own environment: its search and region settings are passed on. */
  inherited: Readonly<Record<string, string | undefined>>;
}

/**
 * The environment the local runtime gives its handlers (through `process.env`, as Lambda's): the local table and
 * bucket names, the embedded backends' endpoints, the local issuer, the events file, the cursor key, and the
 * addresses actually listened on. SEARCH_ENGINE (default `embedded`) and AWS_REGION (default us-east-1) come from
 * `inherited`; so do the other variables a user may set (OPENSEARCH_*, UPLOAD_SLOT_TTL_SECONDS, TOKEN_LIFETIME_SECONDS),
 * which this leaves in place.
 */
export function localEnvironment(options: LocalEnvironmentOptions): Partial<Record<EnvName, string>> {
  const { addresses, dataDirectory, inherited } = options;
  return {
    [ENV.companiesTable]: LOCAL_TABLES.companies,
    [ENV.devicesTable]: LOCAL_TABLES.devices,
    [ENV.scenariosTable]: LOCAL_TABLES.scenarios,
    [ENV.deploymentsTable]: LOCAL_TABLES.deployments,
    [ENV.presenceTable]: LOCAL_TABLES.presence,
    [ENV.rolloutsTable]: LOCAL_TABLES.rollouts,
    [ENV.idempotencyTable]: LOCAL_TABLES.idempotency,
    [ENV.clientFailuresTable]: LOCAL_TABLES.clientFailures,
    [ENV.auditTable]: LOCAL_TABLES.audit,
    // The in-process queue the local runtime feeds the rollout worker from (SQS on AWS).
    [ENV.rolloutQueueUrl]: LOCAL_ROLLOUT_QUEUE,
    // Locally a lost message is one of a crashed runtime: send its chunk again soon after a restart.
    [ENV.rolloutChunkTimeoutSeconds]: inherited[ENV.rolloutChunkTimeoutSeconds] || '15',
    [ENV.localEventsFile]: join(dataDirectory, 'events', 'events.jsonl'),
    // The console's build (console/build.ts), made at each start.
    [ENV.consoleDirectory]: consoleDirectoryOf(dataDirectory),
    [ENV.archiveBucket]: LOCAL_BUCKET,
    [ENV.dynamoDbEndpoint]: options.dynamoDbEndpoint,
    [ENV.s3Endpoint]: options.s3Endpoint,
    // The embedded engine, unless SEARCH_ENGINE=opensearch asks for OpenSearch: OPENSEARCH_URL's, or a node started here.
    [ENV.searchEngine]: inherited[ENV.searchEngine] || 'embedded',
    [ENV.localAuthDir]: localAuthDirectory(dataDirectory),
    [ENV.jwtIssuer]: addresses.auth,
    [ENV.jwtAudience]: LOCAL_AUDIENCE,
    [ENV.jwksUrl]: `${addresses.auth}/.well-known/jwks.json`,
    // Signs the listings' cursors; kept in the data folder so that cursors survive restarts.
    [ENV.cursorSigningKey]: options.cursorSigningKey,
    [ENV.awsRegion]: inherited[ENV.awsRegion] || LOCAL_REGION,
    // The addresses the OpenAPI document names in `servers`: the ports actually listened on.
    [ENV.mainApiUrl]: addresses.main,
    [ENV.uploadApiUrl]: addresses.upload,
    [ENV.authApiUrl]: addresses.auth,
    // Readable log lines (one per request) and metrics as DEBUG lines instead of JSON and EMF (LOG_FORMAT=json for
    // Lambda's output); no X-Ray daemon here.
    [ENV.logFormat]: inherited[ENV.logFormat] || 'text',
    [ENV.powertoolsTraceEnabled]: 'false',
  };
}

/**
 * The groups of variables the handlers read in the local runtime (every group but the AWS token endpoint's and
 * the runtime's own), checked once the environment is set: a bad one stops `npm start` with its name.
 */
export const LOCAL_HANDLER_GROUPS: readonly EnvironmentGroup[] = [
  'storage',
  'idempotency',
  'clientFailures',
  'tokenVerification',
  'search',
  'events',
  'cursors',
  'uploads',
  'devices',
  'rollouts',
  'addresses',
  'console',
  'localIssuer',
  'function',
];

/** The console's build folder in the data folder. */
function consoleDirectoryOf(dataDirectory: string): string {
  return join(dataDirectory, 'console');
}

/** The local issuer's folder (users, signing keys, the cursor key) in the data folder. */
function localAuthDirectory(dataDirectory: string): string {
  return join(dataDirectory, 'auth');
}

/** Listens on 127.0.0.1:`port` (0: a free port). @throws the server's error, e.g. EADDRINUSE */
function listen(server: Server, port: number): Promise<void> {
  return new Promise((done, fail) => {
    server.once('error', fail);
    server.listen(port, '127.0.0.1', () => done());
  });
}

/** Closes a listener and drops its open connections, for a stop step. */
function closeServer(server: Server & { closeAllConnections(): void }): Promise<void> {
  return new Promise<void>((done) => {
    server.close(() => done());
    server.closeAllConnections();
  });
}

/** The local runtime's own settings (sweep intervals, admission bounds, snapshot interval). */
type RuntimeSettings = EnvironmentOf<'localRuntime'>;

/** Steps that stop what a start began, run in reverse order of their push. */
type StopSteps = (() => Promise<void>)[];

/** Progress and error reporting of the runtime. */
type Log = (message: string) => void;

/** What configureRuntime settles before any backend starts. */
interface RuntimeLayout {
  runtimeSettings: RuntimeSettings;
  /** The absolute data folder (created). */
  dataDirectory: string;
  /** Every port, the 0s replaced by free ones. */
  ports: LocalPorts;
  /** `http://127.0.0.1:<port>` of each API listener. */
  addresses: { api: string; upload: string; auth: string };
  dynamoDbEndpoint: string;
  s3Endpoint: string;
  /** The local issuer's folder (created). */
  authDirectory: string;
  /** The region the handlers' clients name. */
  region: string;
  /**
   * The OpenSearch node to start (SEARCH_ENGINE=opensearch without OPENSEARCH_URL): its port, already named by
   * OPENSEARCH_URL in the handlers' environment, and its heap; absent otherwise.
   */
  openSearchNode?: { port: number; heapMiB: number };
}

/**
 * Prepares the process and the handlers' environment: the invoke store, the runtime's settings, the data and auth
 * folders, free ports for the 0s, and `process.env` as localEnvironment() gives it.
 * @throws Error naming every missing or malformed variable, before any backend starts
 */
async function configureRuntime(options: LocalRuntimeOptions): Promise<RuntimeLayout> {
  // Requests are served concurrently: each invocation gets its own invoke-store context (loadHandler), where Powertools
  // keeps its log keys and metrics, as on a Lambda instance with concurrent invocations. The store must be created
  // before the first AWS SDK call, which would otherwise create the single-invocation kind for the whole process.
  process.env.AWS_LAMBDA_MAX_CONCURRENCY ??= '1000';
  await InvokeStore.getInstanceAsync(true);
  // The runtime's own settings first: a bad one stops the start before any backend runs.
  const runtimeSettings = readEnvironment('localRuntime', process.env);
  const dataDirectory = resolve(options.dataDirectory);
  await mkdir(dataDirectory, { recursive: true });
  const ports: LocalPorts = { ...options.ports };
  for (const name of Object.keys(ports) as (keyof LocalPorts)[]) if (ports[name] === 0) ports[name] = await freePort();

  const addresses = {
    api: `http://127.0.0.1:${ports.api}`,
    upload: `http://127.0.0.1:${ports.upload}`,
    auth: `http://127.0.0.1:${ports.auth}`,
  };
  const dynamoDbEndpoint = `http://127.0.0.1:${ports.dynamoDb}`;
  const s3Endpoint = `http://127.0.0.1:${ports.s3}`;
  // SEARCH_ENGINE=opensearch without an OpenSearch of the user's: the runtime starts a node, whose address (like
  // every other) follows from its port, so that the handlers' environment is complete before any backend starts.
  const openSearchNode =
    process.env[ENV.searchEngine] === 'opensearch' && !process.env[ENV.openSearchUrl]
      ? { port: runtimeSettings[ENV.openSearchPort] || (await freePort()), heapMiB: runtimeSettings[ENV.openSearchHeapMib] }
      : undefined;
  if (openSearchNode !== undefined) process.env[ENV.openSearchUrl] = `http://127.0.0.1:${openSearchNode.port}`;
  const authDirectory = localAuthDirectory(dataDirectory);
  await mkdir(authDirectory, { recursive: true });
  // The handlers' environment is known before any backend starts (every address follows from its port): checked
  // first, a bad variable stops the start with its name before DynamoDB Local's JVM is even launched.
  Object.assign(
    process.env,
    localEnvironment({
      dataDirectory,
      addresses: { main: addresses.api, upload: addresses.upload, auth: addresses.auth },
      dynamoDbEndpoint,
      s3Endpoint,
      cursorSigningKey: await localCursorSigningKey(authDirectory),
      inherited: process.env,
    }),
  );
  checkEnvironment(LOCAL_HANDLER_GROUPS, process.env);
  // Built from the sources at each start, so the console served is the one in the working tree.
  await writeConsole(consoleDirectoryOf(dataDirectory));
  const region = process.env[ENV.awsRegion] ?? LOCAL_REGION;
  return {
    runtimeSettings,
    dataDirectory,
    ports,
    addresses,
    dynamoDbEndpoint,
    s3Endpoint,
    authDirectory,
    region,
    ...(openSearchNode === undefined ? {} : { openSearchNode }),
  };
}

/** The archive bucket's CORS configuration (S3's XML): `origin` may PUT, GET and HEAD with any header. */
function s3CorsConfiguration(origin: string): string {
  return `<CORSConfiguration><CORSRule><AllowedOrigin>${origin}</AllowedOrigin><AllowedMethod>PUT</AllowedMethod><AllowedMethod>GET</AllowedMethod><AllowedMethod>HEAD</AllowedMethod><AllowedHeader>*</AllowedHeader><ExposeHeader>ETag</ExposeHeader><MaxAgeSeconds>${CORS_MAX_AGE_SECONDS}</MaxAgeSeconds></CORSRule></CORSConfiguration>`;
}

/**
 * Starts the OpenSearch node the layout asks for (in the data folder's `opensearch`, kept across restarts), pushing
 * its stop; nothing when there is none to start.
 * @throws Error naming the Debian package when Java 17, javac or Maven is missing, or with the node's output
 */
async function startSearchBackend(layout: RuntimeLayout, stops: StopSteps, log: Log): Promise<void> {
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
async function startStorageBackends(layout: RuntimeLayout, stops: StopSteps, log: Log): Promise<{ dynamo: DynamoDbLocal; s3: S3rver }> {
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

/** Creates the missing local tables and moves the deployments table to sharded keys; returns their stream ARNs. */
async function prepareTables(endpoint: string, log: Log): Promise<StreamArns> {
  const tableClient = new DynamoDBClient({
    endpoint,
    region: LOCAL_REGION,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const streamArns = await ensureTables(tableClient, LOCAL_TABLES);
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

/** The stream handler of module `entry` as a poller's consumer. */
async function streamConsumerOf(root: string, entry: string): Promise<StreamConsumer> {
  const handler = await loadHandler<(event: DynamoDBStreamEvent, context: unknown) => Promise<DynamoDBBatchResponse>>(root, entry);
  return (event) => handler(event, {});
}

/** The four stream pollers (not started) and the streams client they share. */
interface StreamPollers {
  streams: DynamoDBStreamsClient;
  /** Feeds the search indexer from the devices and scenarios tables. */
  poller: DynamoDbStreamPoller;
  /** Feeds the deployment-changes handler from the deployments table, checkpointed in the data folder. */
  changesPoller: DynamoDbStreamPoller;
  /** Feeds the continuous rollouts handler from the devices table, checkpointed in the data folder. */
  continuousPoller: DynamoDbStreamPoller;
  /** Feeds the administrative changes handler from the audit table, checkpointed in the data folder. */
  auditPoller: DynamoDbStreamPoller;
}

/**
 * Creates the search, deployment-changes, continuous rollouts and administrative changes stream pollers on DynamoDB
 * Local's streams.
 */
async function createStreamPollers(
  endpoint: string,
  streamArns: StreamArns,
  root: string,
  dataDirectory: string,
  log: Log,
): Promise<StreamPollers> {
  const streams = new DynamoDBStreamsClient({
    endpoint,
    region: LOCAL_REGION,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const poller = new DynamoDbStreamPoller(streams, streamArns.search, await streamConsumerOf(root, SEARCH_INDEXER_ENTRY), {
    onError: (error) => log(`stream poller: ${(error as Error).message}`),
  });
  // Deployment changes resume where they stopped (history and events are derived from every change, even one made
  // just before a crash); the search streams start at LATEST because the index is rebuilt from a scan.
  const changesPoller = new DynamoDbStreamPoller(
    streams,
    streamArns['deployment-changes'],
    await streamConsumerOf(root, DEPLOYMENT_CHANGES_ENTRY),
    {
      onError: (error) => log(`deployment changes poller: ${(error as Error).message}`),
      checkpoints: new FileStreamCheckpoints(join(dataDirectory, 'streams', 'deployment-changes.json'), (error) => log(error.message)),
    },
  );
  // Devices that start matching a continuous rollout join it even when they changed while the runtime was stopped.
  const continuousPoller = new DynamoDbStreamPoller(
    streams,
    streamArns['continuous-rollouts'],
    await streamConsumerOf(root, CONTINUOUS_ROLLOUTS_ENTRY),
    {
      onError: (error) => log(`continuous rollouts poller: ${(error as Error).message}`),
      checkpoints: new FileStreamCheckpoints(join(dataDirectory, 'streams', 'continuous-rollouts.json'), (error) => log(error.message)),
    },
  );
  // Every audit entry gets its event, even one recorded just before a crash.
  const auditPoller = new DynamoDbStreamPoller(
    streams,
    streamArns['administrative-changes'],
    await streamConsumerOf(root, ADMINISTRATIVE_CHANGES_ENTRY),
    {
      onError: (error) => log(`administrative changes poller: ${(error as Error).message}`),
      checkpoints: new FileStreamCheckpoints(join(dataDirectory, 'streams', 'administrative-changes.json'), (error) => log(error.message)),
    },
  );
  return { streams, poller, changesPoller, continuousPoller, auditPoller };
}

/**
 * Hands s3rver's ObjectCreated notifications under the upload prefix to the archive handler, as S3 invokes it on AWS
 * (asynchronously: S3_EVENT_ATTEMPTS); the stop step waits for the invocations in flight.
 */
async function forwardS3Events(s3: S3rver, root: string, region: string, stops: StopSteps, log: Log): Promise<void> {
  const uploaded = await loadHandler<(event: ReturnType<typeof toS3Event>, context: unknown) => Promise<void>>(
    root,
    ARCHIVE_UPLOADED.entry,
  );
  const inFlight = new Set<Promise<void>>();
  s3.on('event', (event) => {
    for (const record of event.Records) {
      if (!record.eventName.startsWith('ObjectCreated') || !record.s3.object.key.startsWith(ARCHIVE_UPLOADED.prefix)) continue;
      const failed = (attempt: number, error: unknown) =>
        log(
          `S3 event handler failed (attempt ${attempt} of ${S3_EVENT_ATTEMPTS}) for ${record.s3.object.key}: ${(error as Error).message}`,
        );
      let attempts = 0;
      const invocation = retry(
        (attempt) => {
          attempts = attempt;
          return uploaded(toS3Event(record, region), {});
        },
        { attempts: S3_EVENT_ATTEMPTS, minDelayMs: 500, onRetry: ({ error, attempt }) => failed(attempt, error) },
      ).catch((error: unknown) => failed(attempts, error));
      inFlight.add(invocation);
      void invocation.finally(() => inFlight.delete(invocation));
    }
  });
  stops.push(async () => {
    await Promise.allSettled([...inFlight]);
  });
}

/**
 * Starts the pollers, the deployment changes, continuous rollouts and administrative changes from their checkpoints;
 * the stop step stops them and closes their streams client.
 */
async function startStreamPollers(
  { streams, poller, changesPoller, continuousPoller, auditPoller }: StreamPollers,
  stops: StopSteps,
): Promise<void> {
  await changesPoller.resume();
  await continuousPoller.resume();
  await auditPoller.resume();
  poller.start();
  changesPoller.start();
  continuousPoller.start();
  auditPoller.start();
  stops.push(async () => {
    await Promise.all([poller.stop(), changesPoller.stop(), continuousPoller.stop(), auditPoller.stop()]);
    streams.destroy();
  });
}

/**
 * Runs the scheduled handler of module `entry` every `intervalMs`, one run at a time (EventBridge Scheduler runs the
 * same handlers on AWS); the stop step clears the timer and waits for the run in progress.
 */
async function scheduleHandler(root: string, entry: string, intervalMs: number, name: string, stops: StopSteps, log: Log): Promise<void> {
  const run = await loadHandler<(event: unknown, context: unknown) => Promise<void>>(root, entry);
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    running ??= run({}, {})
      .catch((error: unknown) => log(`${name}: ${(error as Error).message}`))
      .finally(() => {
        running = undefined;
      });
  }, intervalMs);
  stops.push(async () => {
    clearInterval(timer);
    await running;
  });
}

/**
 * Starts the background work: the upload sweeper, the heartbeat sweeper that marks silent devices DISCONNECTED, the
 * rollout worker on the in-process rollout queue and the rollout sweeper.
 */
async function startBackgroundWork(root: string, runtimeSettings: RuntimeSettings, stops: StopSteps, log: Log): Promise<void> {
  await scheduleHandler(root, UPLOAD_SWEEPER.entry, runtimeSettings[ENV.uploadSweepIntervalMs], 'upload sweeper', stops, log);
  await scheduleHandler(root, HEARTBEAT_SWEEPER.entry, runtimeSettings[ENV.heartbeatSweepIntervalMs], 'heartbeat sweeper', stops, log);
  // Rollouts: the in-process queue feeds the worker handler as SQS feeds it on AWS (same batch size, concurrency and
  // redrive count), and the sweeper runs on its timer. Stopped before DynamoDB Local (stops run in reverse order):
  // the chunks in flight finish; messages still queued are lost with the process and sent again by the sweeper.
  const rolloutWorker = await loadHandler<(event: SQSEvent, context: unknown) => Promise<SQSBatchResponse>>(root, ROLLOUT_WORKER.entry);
  const rolloutConsumer = localQueue(LOCAL_ROLLOUT_QUEUE).consume((event) => rolloutWorker(event, {}), {
    batchSize: ROLLOUT_WORKER.batchSize,
    concurrency: ROLLOUT_WORKER.maxConcurrency,
    maxReceives: ROLLOUT_WORKER.maxReceiveCount,
    onError: (error) => log(`rollout worker: ${(error as Error).message}`),
  });
  stops.push(() => rolloutConsumer.stop());
  await scheduleHandler(root, ROLLOUT_SWEEPER.entry, runtimeSettings[ENV.rolloutSweepIntervalMs], 'rollout sweeper', stops, log);
}

/** How the search index was filled at start. */
interface SearchFill {
  /** Documents in the index (0 when OpenSearch could not be reached). */
  indexedDocuments: number;
  /** Absent with OpenSearch. */
  searchStart?: SearchStart;
  /** The embedded index's periodic snapshots (not started); absent with OpenSearch. */
  snapshots?: SearchSnapshots;
}

/**
 * Fills the search index and positions the search poller: the embedded engine from its snapshot when usable, else
 * by a rebuild (pushing the final snapshot's stop step); OpenSearch by a rebuild, skipped while it is unreachable.
 * @throws what the rebuild throws, but ServiceUnavailableError from OpenSearch
 */
async function fillSearchIndex(
  poller: DynamoDbStreamPoller,
  streamArns: StreamArns,
  dynamoDbEndpoint: string,
  dataDirectory: string,
  stops: StopSteps,
  log: Log,
): Promise<SearchFill> {
  const search = searchIndex();
  if (search instanceof SwappableSearchIndex) {
    // The embedded engine: loaded from its snapshot in the data folder when usable, else rebuilt from a parallel scan.
    const searchStart = await startEmbeddedSearch({
      index: search,
      poller,
      streamArns: streamArns.search,
      snapshotFile: searchSnapshotFile(dataDirectory),
      rebuild: reindexSearch,
      mark: () => markSearchStreams(dynamoDbEndpoint, LOCAL_TABLES),
      log,
    });
    const snapshots = new SearchSnapshots({
      index: search,
      poller,
      streamArns: streamArns.search,
      file: searchSnapshotFile(dataDirectory),
      log,
      ...(searchStart.path === 'snapshot' ? { loaded: poller.shardPositions() } : {}),
    });
    // Runs after the pollers' stop (stops run in reverse): the last snapshot covers every batch handled.
    stops.push(() => snapshots.stop());
    return { indexedDocuments: searchStart.documents, searchStart, snapshots };
  }
  await poller.positionAtLatest();
  try {
    return { indexedDocuments: (await reindexSearch()).documents };
  } catch (error) {
    if (!(error instanceof ServiceUnavailableError)) throw error;
    // OpenSearch down: the service starts anyway; search answers 503 and the stream consumer retries until it is back.
    log(`Search index not rebuilt (${error.message}) Search answers 503 until the backend is back; then run npm run reindex.`);
    return { indexedDocuments: 0 };
  }
}

/** The admission control of one API listener, or undefined when its MAX_IN_FLIGHT_* is 0 (no bound). */
function admissionOf(api: 'api' | 'upload' | 'auth', runtimeSettings: RuntimeSettings): AdmissionOptions | undefined {
  const maxInFlight = {
    api: runtimeSettings[ENV.maxInFlightMain],
    upload: runtimeSettings[ENV.maxInFlightUpload],
    auth: runtimeSettings[ENV.maxInFlightAuth],
  };
  // Every handler runs on this process's one event loop: bounded work per address keeps what is admitted fast
  // and answers the rest 503 at once (0: no bound).
  return maxInFlight[api] === 0
    ? undefined
    : {
        maxInFlight: maxInFlight[api],
        maxQueued: runtimeSettings[ENV.maxQueuedRequests],
        maxWaitMs: runtimeSettings[ENV.maxQueueWaitMs],
        overloadWaitMs: Math.min(runtimeSettings[ENV.overloadQueueWaitMs], runtimeSettings[ENV.maxQueueWaitMs]),
        // Secret checks are what a flood targets: one address's share of the auth address is bounded.
        ...(api === 'auth' && runtimeSettings[ENV.maxPerSourceAuth] > 0 ? { maxPerSource: runtimeSettings[ENV.maxPerSourceAuth] } : {}),
      };
}

/** Starts the main, upload and auth listeners invoking the route table's handlers. @throws Error when a port is taken */
async function startApiListeners(layout: RuntimeLayout, root: string, stops: StopSteps, log: Log): Promise<void> {
  const { addresses, ports, runtimeSettings } = layout;
  for (const api of ['api', 'upload', 'auth'] as const) {
    const server = createApiServer(
      api === 'api' ? 'main' : api,
      ROUTES,
      root,
      (error) => log(`handler error: ${(error as Error).stack ?? String(error)}`),
      {
        main: addresses.api,
        upload: addresses.upload,
        auth: addresses.auth,
      },
      admissionOf(api, runtimeSettings),
      // The console's page comes from the main address; it signs in and uploads across origins.
      api === 'api' ? [] : [addresses.api],
    );
    await listen(server, ports[api]);
    stops.push(() => closeServer(server));
  }
}

/**
 * Starts the loopback admin listener on a free port and writes its address, with the pid, to RUNTIME_FILE in the
 * data folder; returns `http://127.0.0.1:<port>`.
 */
async function startAdmin(dataDirectory: string, writeCounter: WriteCounter, stops: StopSteps, log: Log): Promise<string> {
  const admin = createAdminServer(reindexSearch, log, () => writeCounter.counts());
  await listen(admin, 0);
  const adminAddress = `http://127.0.0.1:${(admin.address() as { port: number }).port}`;
  stops.push(() => closeServer(admin));
  const runtimeFile = join(dataDirectory, RUNTIME_FILE);
  await writeFile(runtimeFile, `${JSON.stringify({ pid: process.pid, admin: adminAddress })}\n`);
  stops.push(() => rm(runtimeFile, { force: true }));
  return adminAddress;
}

/**
 * Starts the whole service on 127.0.0.1 with embedded backends: DynamoDB Local (tables with streams), s3rver, the
 * embedded search index rebuilt from DynamoDB and kept current by the stream poller feeding the search-indexer handler,
 * the local token issuer, the upload sweeper every UPLOAD_SWEEP_INTERVAL_MS (default 60,000 ms), the heartbeat sweeper
 * every HEARTBEAT_SWEEP_INTERVAL_MS (default 10,000 ms), the rollout worker on the in-process rollout queue and the
 * rollout sweeper every ROLLOUT_SWEEP_INTERVAL_MS (default 1,000 ms), and the three API listeners invoking the Lambda
 * handlers of the route table, each behind its admission control (MAX_IN_FLIGHT_*, MAX_QUEUED_REQUESTS,
 * MAX_QUEUE_WAIT_MS, OVERLOAD_QUEUE_WAIT_MS, MAX_PER_SOURCE_AUTH). Seeds the demo data on an empty data folder. Handler
 * configuration is passed through `process.env`, as Lambda's (localEnvironment), and checked against the schemas of the
 * groups the handlers read before any handler loads.
 * @throws Error naming every missing or malformed variable (e.g. UPLOAD_SLOT_TTL_SECONDS=0), before any backend starts.
 * @throws Error when a backend does not start (e.g. Java missing) or a port is taken.
 */
export async function startLocalRuntime(options: LocalRuntimeOptions): Promise<LocalRuntime> {
  const log = options.log ?? (() => undefined);
  const layout = await configureRuntime(options);
  const { runtimeSettings, dataDirectory, addresses, s3Endpoint } = layout;
  const stops: StopSteps = [];
  const stop = async () => {
    for (const step of stops.reverse()) await step().catch((error: unknown) => log(`stop: ${(error as Error).message}`));
  };

  try {
    // Side by side (two JVMs starting), and both settled before a failure stops the start: a backend still starting
    // when the other failed would push its stop after the stop steps ran, and outlive the runtime.
    const [storage, search] = await Promise.allSettled([startStorageBackends(layout, stops, log), startSearchBackend(layout, stops, log)]);
    if (storage.status === 'rejected') throw storage.reason;
    if (search.status === 'rejected') throw search.reason;
    const { dynamo, s3 } = storage.value;
    const streamArns = await prepareTables(dynamo.endpoint, log);
    await seedUsers(layout.authDirectory);
    const built = services();
    const seeded = await seedDemoData(built);
    if (seeded) log('Seeded the demo data (companies acme and globex, 240 devices, 2 scenarios with 2 versions each).');

    const pollers = await createStreamPollers(dynamo.endpoint, streamArns, options.root, dataDirectory, log);
    await forwardS3Events(s3, options.root, layout.region, stops, log);
    await startBackgroundWork(options.root, runtimeSettings, stops, log);
    // What handlers write from here on, for benchmarks (GET {admin}/stats/writes); the start-up rebuild is not counted.
    const writeCounter = new WriteCounter();
    writeCounter.watchDynamoDb(built.dynamoDb);
    const { poller } = pollers;
    const { indexedDocuments, searchStart, snapshots } = await fillSearchIndex(
      poller,
      streamArns,
      dynamo.endpoint,
      dataDirectory,
      stops,
      log,
    );
    writeCounter.watchSearchIndex(searchIndex());
    await startStreamPollers(pollers, stops);
    snapshots?.start(runtimeSettings[ENV.searchSnapshotIntervalMs]);

    await startApiListeners(layout, options.root, stops, log);
    const adminAddress = await startAdmin(dataDirectory, writeCounter, stops, log);
    return {
      addresses: { main: addresses.api, upload: addresses.upload, auth: addresses.auth },
      admin: adminAddress,
      reindexSearch,
      dynamoDbEndpoint: dynamo.endpoint,
      s3Endpoint,
      indexedDocuments,
      ...(searchStart === undefined ? {} : { searchStart }),
      searchCaughtUp: async () => {
        const since = performance.now();
        while (!poller.caughtUpSince(since)) await new Promise((done) => setTimeout(done, 100));
      },
      dataDirectory,
      seeded,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
