/**
 * The local runtime: the whole service on 127.0.0.1 with embedded backends, running the handlers Lambda runs. Its
 * parts: runtime-layout.ts (settings, ports, the handlers' environment), backends.ts (DynamoDB Local, s3rver,
 * OpenSearch, the tables), event-functions.ts (the functions no route runs, started from their definitions),
 * listeners.ts (the API and admin listeners); this module starts them in order and fills the search index.
 */
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import type S3rver from 's3rver';
import { SwappableSearchIndex } from '../adapters/embedded/swappable-search-index.js';
import { ENV } from '../contract/environment.js';
import { searchIndexer } from '../contract/functions.js';
import type { ApiName } from '../contract/route.js';
import type { ReindexResult } from '../core/search/reindex.js';
import { ServiceUnavailableError } from '../core/shared/errors.js';
import { searchIndex } from '../platform/composition/search.js';
import { reindexSearch } from '../platform/composition/search-rebuild.js';
import { services } from '../platform/composition/services.js';
import { prepareTables, startSearchBackend, startStorageBackends } from './backends.js';
import type { DynamoDbLocal } from './dynamodb-local.js';
import { type EventFunctions, localScheduleIntervalMs, startEventFunctions, tableStreamArnsOf } from './event-functions.js';
import { loadHandler } from './handler-module.js';
import { startAdmin, startApiListeners } from './listeners.js';
import { LOCAL_REGION, LOCAL_TABLES } from './local-environment.js';
import { configureRuntime, type LocalRuntimeOptions, type Log, type RuntimeLayout, type StopSteps } from './runtime-layout.js';
import { searchSnapshotFile } from './search-snapshot.js';
import {
  markSearchStreams,
  type PreloadedSnapshot,
  preloadSearchSnapshot,
  SearchSnapshots,
  type SearchStart,
  startEmbeddedSearch,
} from './search-startup.js';
import { seedDemoData, seedUsers } from './seed.js';
import type { DynamoDbStreamPoller } from './stream-poller.js';
import type { TableStreamArns } from './tables.js';
import { WriteCounter } from './write-counter.js';

// The runtime's names and environment, for the scripts and tests that read them beside startLocalRuntime.
export {
  LOCAL_AUDIENCE,
  LOCAL_BUCKET,
  LOCAL_HANDLER_GROUPS,
  LOCAL_ROLLOUT_QUEUE,
  LOCAL_TABLES,
  type LocalEnvironmentOptions,
  localEnvironment,
} from './local-environment.js';
export type { LocalPorts, LocalRuntimeOptions } from './runtime-layout.js';

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
  /**
   * The ids of the function definitions (FUNCTIONS) started, each on its trigger's local stand-in (see
   * functions/local/event-functions.ts).
   */
  functions: readonly string[];
  /** Stops listeners, the stream poller, s3rver and DynamoDB Local. */
  stop(): Promise<void>;
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
 * `preloaded`: the embedded snapshot as preloadSearchSnapshot read and loaded it while the backends started.
 * @throws what the rebuild throws, but ServiceUnavailableError from OpenSearch
 */
async function fillSearchIndex(
  poller: DynamoDbStreamPoller,
  streamArns: readonly string[],
  dynamoDbEndpoint: string,
  dataDirectory: string,
  stops: StopSteps,
  log: Log,
  preloaded?: Promise<PreloadedSnapshot>,
): Promise<SearchFill> {
  const search = searchIndex();
  if (search instanceof SwappableSearchIndex) {
    // The embedded engine: loaded from its snapshot in the data folder when usable, else rebuilt from a parallel scan.
    const searchStart = await startEmbeddedSearch({
      index: search,
      poller,
      streamArns,
      snapshotFile: searchSnapshotFile(dataDirectory),
      ...(preloaded === undefined ? {} : { preloaded }),
      rebuild: reindexSearch,
      mark: () => markSearchStreams(dynamoDbEndpoint, LOCAL_TABLES),
      log,
    });
    const snapshots = new SearchSnapshots({
      index: search,
      poller,
      streamArns,
      file: searchSnapshotFile(dataDirectory),
      log,
      ...(searchStart.path === 'snapshot'
        ? { loaded: { positions: poller.shardPositions(), withText: searchStart.withText === true } }
        : {}),
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

/**
 * Starts DynamoDB Local, s3rver and, when asked for, the OpenSearch node, side by side (two JVMs starting), pushing
 * their stops. Both settle before a failure stops the start: a backend still starting when the other failed would
 * push its stop after the stop steps ran, and outlive the runtime.
 * @throws the first backend's failure
 */
async function startBackends(layout: RuntimeLayout, stops: StopSteps, log: Log): Promise<{ dynamo: DynamoDbLocal; s3: S3rver }> {
  const [storage, search] = await Promise.allSettled([startStorageBackends(layout, stops, log), startSearchBackend(layout, stops, log)]);
  if (storage.status === 'rejected') throw storage.reason;
  if (search.status === 'rejected') throw search.reason;
  return storage.value;
}

/**
 * Starts every function of FUNCTIONS that runs locally on its stand-in (startEventFunctions), on DynamoDB Local's
 * streams and s3rver's notifications; the stream pollers wait for startStreams.
 */
async function startFunctions(
  layout: RuntimeLayout,
  root: string,
  backends: { dynamo: DynamoDbLocal; s3: S3rver; streamArns: TableStreamArns },
  stops: StopSteps,
  log: Log,
): Promise<EventFunctions> {
  const streams = new DynamoDBStreamsClient({
    endpoint: backends.dynamo.endpoint,
    region: LOCAL_REGION,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  // Pushed first, so run after the pollers' stop (stops run in reverse order).
  stops.push(async () => streams.destroy());
  return startEventFunctions({
    load: (entry) => loadHandler(root, entry),
    streams,
    streamArns: backends.streamArns,
    dataDirectory: layout.dataDirectory,
    s3: backends.s3,
    region: layout.region,
    scheduleIntervalMs: (definition) => localScheduleIntervalMs(definition, layout.runtimeSettings),
    // The search indexer's position is the search index's own (fillSearchIndex), not a checkpoint.
    positionedByRuntime: new Set([searchIndexer.id]),
    stops,
    log,
  });
}

/**
 * Starts the whole service on 127.0.0.1 with embedded backends: DynamoDB Local (tables with streams), s3rver, the
 * embedded search index rebuilt from DynamoDB and kept current by the stream poller feeding the search-indexer handler,
 * the local token issuer, every function no route runs on its trigger's stand-in (startEventFunctions: stream pollers,
 * the in-process rollout queue, timers for the schedules, at UPLOAD_SWEEP_INTERVAL_MS, HEARTBEAT_SWEEP_INTERVAL_MS and
 * ROLLOUT_SWEEP_INTERVAL_MS for the sweepers, the S3 event bridge), and the three API listeners invoking the Lambda
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
  const stops: StopSteps = [];
  const stop = async () => {
    for (const step of stops.reverse()) await step().catch((error: unknown) => log(`stop: ${(error as Error).message}`));
  };
  try {
    return await startService(layout, options.root, stops, log, stop);
  } catch (error) {
    await stop();
    throw error;
  }
}

/** startLocalRuntime once its layout is settled: every step, each pushing its stop; `stop` runs them all. */
async function startService(
  layout: RuntimeLayout,
  root: string,
  stops: StopSteps,
  log: Log,
  stop: () => Promise<void>,
): Promise<LocalRuntime> {
  const { runtimeSettings, dataDirectory, addresses } = layout;
  const search = searchIndex();
  // The embedded index loads its snapshot while DynamoDB Local starts (a JVM on the other core).
  const preloaded = search instanceof SwappableSearchIndex ? preloadSearchSnapshot(searchSnapshotFile(dataDirectory), search) : undefined;
  const { dynamo, s3 } = await startBackends(layout, stops, log);
  const streamArns = await prepareTables(dynamo.endpoint, log);
  await seedUsers(layout.authDirectory);
  const built = services();
  const seeded = await seedDemoData(built);
  if (seeded) log('Seeded the demo data (companies acme and globex, 240 devices, 2 scenarios with 2 versions each).');

  const functions = await startFunctions(layout, root, { dynamo, s3, streamArns }, stops, log);
  // What handlers write from here on, for benchmarks (GET {admin}/stats/writes); the start-up rebuild is not counted.
  const writeCounter = new WriteCounter();
  writeCounter.watchDynamoDb(built.dynamoDb);
  const poller = functions.pollers.get(searchIndexer.id);
  if (poller === undefined) throw new Error(`The search indexer (${searchIndexer.id}) has no stream poller.`);
  const searchArns = tableStreamArnsOf(searchIndexer, streamArns);
  const { indexedDocuments, searchStart, snapshots } = await fillSearchIndex(
    poller,
    searchArns,
    dynamo.endpoint,
    dataDirectory,
    stops,
    log,
    preloaded,
  );
  writeCounter.watchSearchIndex(searchIndex());
  await functions.startStreams();
  snapshots?.start(runtimeSettings[ENV.searchSnapshotIntervalMs]);

  await startApiListeners(layout, root, stops, log);
  const adminAddress = await startAdmin(dataDirectory, writeCounter, stops, log);
  return {
    addresses: { main: addresses.api, upload: addresses.upload, auth: addresses.auth },
    admin: adminAddress,
    reindexSearch,
    dynamoDbEndpoint: dynamo.endpoint,
    s3Endpoint: layout.s3Endpoint,
    indexedDocuments,
    ...(searchStart === undefined ? {} : { searchStart }),
    searchCaughtUp: async () => {
      const since = performance.now();
      while (!poller.caughtUpSince(since)) await new Promise((done) => setTimeout(done, 100));
    },
    functions: functions.started,
    dataDirectory,
    seeded,
    stop,
  };
}
