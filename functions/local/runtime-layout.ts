/**
 * What the local runtime settles before any backend starts: its own settings, the data folder, the ports and
 * addresses, and the handlers' environment (checked), and the small types its modules share.
 */
import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { InvokeStore } from '@aws/lambda-invoke-store';
import { writeConsole } from '../../console/build.js';
import { checkEnvironment, ENV, type EnvironmentOf, readEnvironment } from '../contract/environment.js';
import { localCursorSigningKey } from './cursor-key.js';
import { freePort } from './free-port.js';
import { consoleDirectoryOf, LOCAL_HANDLER_GROUPS, LOCAL_REGION, localAuthDirectory, localEnvironment } from './local-environment.js';

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

/** The local runtime's own settings (sweep intervals, admission bounds, snapshot interval). */
export type RuntimeSettings = EnvironmentOf<'localRuntime'>;

/** Steps that stop what a start began, run in reverse order of their push. */
export type StopSteps = (() => Promise<void>)[];

/** Progress and error reporting of the runtime. */
export type Log = (message: string) => void;

/** What configureRuntime settles before any backend starts. */
export interface RuntimeLayout {
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
export async function configureRuntime(options: LocalRuntimeOptions): Promise<RuntimeLayout> {
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
