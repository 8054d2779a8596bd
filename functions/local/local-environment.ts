/**
 * The local runtime's names and environment: the local tables, bucket, queue and region, and the variables it gives
 * its handlers through `process.env` (localEnvironment), as Lambda gives them theirs.
 */
import { join } from 'node:path';
import { ENV, type EnvironmentGroup, type EnvName } from '../contract/environment.js';
import type { ApiName } from '../contract/route.js';
import { TABLE_ENV, TABLE_NAMES, type TableName } from '../contract/tables.js';

/**
 * Local table names, by logical name: each table of TABLE_DEFINITIONS under its name in kebab case, e.g.
 * `client-failures` (CloudFormation generates unique ones on AWS).
 */
export const LOCAL_TABLES: { readonly [Name in TableName]: string } = Object.fromEntries(
  TABLE_NAMES.map((name) => [name, name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)]),
) as { readonly [Name in TableName]: string };
/** ROLLOUT_QUEUE_URL of the local runtime: its in-process rollout queue. */
export const LOCAL_ROLLOUT_QUEUE = 'local:rollouts';
/** WEBHOOK_ALLOWED_HTTP_HOSTS of the local runtime unless set: receivers on this machine. */
export const LOCAL_WEBHOOK_HTTP_HOSTS = '127.0.0.1,localhost';
/** ARCHIVE_BUCKET of the local runtime: s3rver's one bucket. */
export const LOCAL_BUCKET = 'scenario-archives';
/** `aud` of locally issued tokens. */
export const LOCAL_AUDIENCE = 'device-scenario-service';
/** The region the local clients name (DynamoDB Local and s3rver accept any) unless AWS_REGION says otherwise. */
export const LOCAL_REGION = 'us-east-1';

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
    ...Object.fromEntries(TABLE_NAMES.map((name) => [TABLE_ENV[name], LOCAL_TABLES[name]])),
    // The in-process queue the local runtime feeds the rollout worker from (SQS on AWS).
    [ENV.rolloutQueueUrl]: LOCAL_ROLLOUT_QUEUE,
    // Locally a lost message is one of a crashed runtime: send its chunk again soon after a restart.
    [ENV.rolloutChunkTimeoutSeconds]: inherited[ENV.rolloutChunkTimeoutSeconds] || '15',
    // Receivers on this machine (tests, a developer's listener) may get webhooks over plain http.
    [ENV.webhookAllowedHttpHosts]: inherited[ENV.webhookAllowedHttpHosts] || LOCAL_WEBHOOK_HTTP_HOSTS,
    [ENV.localEventsFile]: localEventsFileOf(dataDirectory),
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
  'webhooks',
  'addresses',
  'console',
  'localIssuer',
  'function',
];

/** The local event bus's file in the data folder (LOCAL_EVENTS_FILE), which the bus event followers read too. */
export function localEventsFileOf(dataDirectory: string): string {
  return join(dataDirectory, 'events', 'events.jsonl');
}

/** The console's build folder in the data folder. */
export function consoleDirectoryOf(dataDirectory: string): string {
  return join(dataDirectory, 'console');
}

/** The local issuer's folder (users, signing keys, the cursor key) in the data folder. */
export function localAuthDirectory(dataDirectory: string): string {
  return join(dataDirectory, 'auth');
}
