/**
 * Every environment variable of the service, each named once (ENV) and described, typed and bounded once (the zod
 * schema of its group). The CDK stacks (lib/) and the local runtime (functions/local/, bin/) set variables by these
 * names; functions/platform/config.ts reads them through these schemas at cold start, so a missing or malformed
 * variable fails the function's initialization with its name and what is wrong, not a request later.
 *
 * Groups follow what one adapter or entry point needs (storage, token verification, search…): a function reads only
 * the groups it uses, and the stack gives it only those variables.
 */
import * as z from 'zod';
import { DEFAULT_CLIENT_FAILURE_POLICY } from '../core/access/client-failures.js';
import { ACCESS_TOKEN_LIFETIME_SECONDS } from '../core/access/user-tokens.js';
import type { ApiName } from './route.js';
import { TABLE_DEFINITIONS } from './tables.js';

/** The name of every variable the service reads or the stack sets, by setting. */
export const ENV = {
  // Storage (DynamoDB tables, whose variables functions/contract/tables.ts names with the tables; the archive bucket;
  // endpoints only locally).
  companiesTable: TABLE_DEFINITIONS.companies.env,
  devicesTable: TABLE_DEFINITIONS.devices.env,
  scenariosTable: TABLE_DEFINITIONS.scenarios.env,
  deploymentsTable: TABLE_DEFINITIONS.deployments.env,
  presenceTable: TABLE_DEFINITIONS.presence.env,
  rolloutsTable: TABLE_DEFINITIONS.rollouts.env,
  commandsTable: TABLE_DEFINITIONS.commands.env,
  webhooksTable: TABLE_DEFINITIONS.webhooks.env,
  alertsTable: TABLE_DEFINITIONS.alerts.env,
  apiClientsTable: TABLE_DEFINITIONS.apiClients.env,
  archiveBucket: 'ARCHIVE_BUCKET',
  dynamoDbEndpoint: 'DYNAMODB_ENDPOINT',
  s3Endpoint: 'S3_ENDPOINT',
  // Idempotency records.
  idempotencyTable: TABLE_DEFINITIONS.idempotency.env,
  // Failed client authentications of the token endpoint.
  clientFailuresTable: TABLE_DEFINITIONS.clientFailures.env,
  clientFailureLimit: 'CLIENT_FAILURE_LIMIT',
  clientFailureWindowSeconds: 'CLIENT_FAILURE_WINDOW_SECONDS',
  // The audit log of administrative changes.
  auditTable: TABLE_DEFINITIONS.audit.env,
  // Token verification, and the token endpoint on AWS.
  jwtIssuer: 'JWT_ISSUER',
  jwtAudience: 'JWT_AUDIENCE',
  jwksUrl: 'JWKS_URL',
  cognitoClientId: 'COGNITO_CLIENT_ID',
  // Users administration on AWS: the Cognito user pool.
  cognitoUserPoolId: 'COGNITO_USER_POOL_ID',
  // Search.
  searchEngine: 'SEARCH_ENGINE',
  openSearchUrl: 'OPENSEARCH_URL',
  openSearchIndex: 'OPENSEARCH_INDEX',
  openSearchAuth: 'OPENSEARCH_AUTH',
  openSearchReplicas: 'OPENSEARCH_REPLICAS',
  // DeploymentChanged events.
  eventBusName: 'EVENT_BUS_NAME',
  localEventsFile: 'LOCAL_EVENTS_FILE',
  // The operator console's built files.
  consoleDirectory: 'CONSOLE_DIRECTORY',
  // Listing cursors.
  cursorSigningKey: 'CURSOR_SIGNING_KEY',
  // Devices: heartbeat window and device token lifetime.
  deviceHeartbeatSeconds: 'DEVICE_HEARTBEAT_SECONDS',
  deviceTokenLifetimeSeconds: 'DEVICE_TOKEN_LIFETIME_SECONDS',
  // Devices on AWS: the KMS key device tokens are signed with, and their issuer and audience.
  deviceTokenKeyArn: 'DEVICE_TOKEN_KEY_ARN',
  deviceTokenIssuer: 'DEVICE_TOKEN_ISSUER',
  deviceTokenAudience: 'DEVICE_TOKEN_AUDIENCE',
  // Rollouts: the queue their work messages go through.
  rolloutQueueUrl: 'ROLLOUT_QUEUE_URL',
  rolloutChunkTimeoutSeconds: 'ROLLOUT_CHUNK_TIMEOUT_SECONDS',
  // Webhooks: the hosts a webhook may be sent to over plain http.
  webhookAllowedHttpHosts: 'WEBHOOK_ALLOWED_HTTP_HOSTS',
  // Webhooks: the retry schedule's divisor (tests of the local runtime only).
  webhookRetryDivisor: 'WEBHOOK_RETRY_DIVISOR',
  // Presigned uploads.
  uploadSlotTtlSeconds: 'UPLOAD_SLOT_TTL_SECONDS',
  // The three addresses, for the OpenAPI document's `servers`.
  mainApiUrl: 'MAIN_API_URL',
  uploadApiUrl: 'UPLOAD_API_URL',
  authApiUrl: 'AUTH_API_URL',
  // Local runtime only: its token issuer, data folder, ports and sweeper.
  localAuthDir: 'LOCAL_AUTH_DIR',
  tokenLifetimeSeconds: 'TOKEN_LIFETIME_SECONDS',
  dataDir: 'DATA_DIR',
  apiPort: 'API_PORT',
  uploadPort: 'UPLOAD_PORT',
  authPort: 'AUTH_PORT',
  dynamoDbPort: 'DYNAMODB_PORT',
  s3Port: 'S3_PORT',
  openSearchPort: 'OPENSEARCH_PORT',
  openSearchHeapMib: 'OPENSEARCH_HEAP_MIB',
  uploadSweepIntervalMs: 'UPLOAD_SWEEP_INTERVAL_MS',
  heartbeatSweepIntervalMs: 'HEARTBEAT_SWEEP_INTERVAL_MS',
  rolloutSweepIntervalMs: 'ROLLOUT_SWEEP_INTERVAL_MS',
  commandSweepIntervalMs: 'COMMAND_SWEEP_INTERVAL_MS',
  alertSweepIntervalMs: 'ALERT_SWEEP_INTERVAL_MS',
  webhookSweepIntervalMs: 'WEBHOOK_SWEEP_INTERVAL_MS',
  searchSnapshotIntervalMs: 'SEARCH_SNAPSHOT_INTERVAL_MS',
  simulate: 'SIMULATE',
  // Local runtime only: admission control of each address (functions/local/admission.ts).
  maxInFlightMain: 'MAX_IN_FLIGHT_MAIN',
  maxInFlightUpload: 'MAX_IN_FLIGHT_UPLOAD',
  maxInFlightAuth: 'MAX_IN_FLIGHT_AUTH',
  maxQueuedRequests: 'MAX_QUEUED_REQUESTS',
  maxQueueWaitMs: 'MAX_QUEUE_WAIT_MS',
  overloadQueueWaitMs: 'OVERLOAD_QUEUE_WAIT_MS',
  maxPerSourceAuth: 'MAX_PER_SOURCE_AUTH',
  // Every function: logging, source maps, region (AWS_REGION is set by Lambda itself).
  powertoolsServiceName: 'POWERTOOLS_SERVICE_NAME',
  powertoolsLogLevel: 'POWERTOOLS_LOG_LEVEL',
  powertoolsMetricsNamespace: 'POWERTOOLS_METRICS_NAMESPACE',
  powertoolsTraceEnabled: 'POWERTOOLS_TRACE_ENABLED',
  logFormat: 'LOG_FORMAT',
  lambdaMaxConcurrency: 'AWS_LAMBDA_MAX_CONCURRENCY',
  nodeOptions: 'NODE_OPTIONS',
  awsRegion: 'AWS_REGION',
} as const;

/** One variable's name. */
export type EnvName = (typeof ENV)[keyof typeof ENV];

/** The variable naming each address (its URL; on AWS the API's stage URL, locally the port listened on). */
export const API_ADDRESS_ENV: Readonly<Record<ApiName, EnvName>> = { main: ENV.mainApiUrl, upload: ENV.uploadApiUrl, auth: ENV.authApiUrl };

/** Service name in every structured log line (Powertools Logger), the default of POWERTOOLS_SERVICE_NAME. */
export const SERVICE_NAME = 'device-scenario-service';

/** Powertools log levels (POWERTOOLS_LOG_LEVEL; also the CDK context `logLevel`). */
export const LOG_LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'CRITICAL', 'SILENT'] as const;

/** Search adapters: `embedded` (the local runtime's in-memory engine) or `opensearch` (OPENSEARCH_URL). */
export const SEARCH_ENGINES = ['embedded', 'opensearch'] as const;

/** OpenSearch request signing: `aws-sigv4` (service `es`, the function's role) or `none`. */
export const OPENSEARCH_AUTH_MODES = ['aws-sigv4', 'none'] as const;

/** The default OpenSearch alias (OPENSEARCH_INDEX), the one the CDK stack gives its search clients. */
export const DEFAULT_SEARCH_ALIAS = 'resources';

/**
 * Defaults of the local runtime's admission control (MAX_IN_FLIGHT_*, MAX_QUEUED_REQUESTS, MAX_QUEUE_WAIT_MS,
 * OVERLOAD_QUEUE_WAIT_MS, MAX_PER_SOURCE_AUTH): requests served at once per address, requests waiting per address, the
 * longest wait while the queue absorbs a burst and once it stands, ms. Measured on a 2-core machine with `npm run bench
 * -- --only-devices` (docs/capacity.md, "The local runtime under load").
 */
export const DEFAULT_ADMISSION = {
  main: 16,
  upload: 8,
  auth: 8,
  queued: 256,
  waitMs: 1_000,
  overloadWaitMs: 250,
  // The auth address's share of one source address (served and waiting): above the simulator's 16 token requests at
  // once, far below a flood's thousand (`npm run bench -- --only-token-flood`).
  authPerSource: 32,
} as const;

/** Shortest cursor signing key, bytes (HMAC-SHA256 keys shorter than its output weaken it). */
export const MIN_CURSOR_KEY_BYTES = 32;

/** Longest presigned URL S3 accepts, seconds (7 days): the bound of UPLOAD_SLOT_TTL_SECONDS. */
export const MAX_PRESIGNED_URL_SECONDS = 604_800;

// Variable types. Each message completes "<NAME> …" in the error listing a group's bad variables; a description
// comes last (`.describe()` after `.optional()`/`.default()`, which wrap the schema).

const missing = { error: 'is missing' };

/** A non-empty string (empty values are treated as unset by readEnvironment). */
const text = () => z.string(missing);

/** A DynamoDB table name: 3 to 255 letters, digits, `_`, `-`, `.`. */
const tableName = () =>
  text().regex(/^[A-Za-z0-9_.-]{3,255}$/, { error: 'must be a DynamoDB table name (3 to 255 letters, digits, _ - .)' });

/** An http(s) URL (a trailing `/` allowed). */
const httpUrl = () =>
  z.url({ protocol: /^https?$/, error: (issue) => (issue.input === undefined ? 'is missing' : 'must be an http(s) URL') });

/** A whole number from `min` to `max`, given as decimal digits; `bounds` completes "<NAME> …" when it is not. */
const wholeNumber = (min: number, max: number, bounds: string) => {
  const error = { error: bounds };
  return text()
    .regex(/^\d{1,16}$/, error)
    .transform(Number)
    .pipe(z.number().min(min, error).max(max, error));
};

/** A whole number of `unit` from `min` to `max`. */
const amount = (unit: string, min: number, max: number) => wholeNumber(min, max, `must be whole ${unit} from ${min} to ${max}`);

/** A TCP port; 0 picks a free one. */
const port = () => wholeNumber(0, 65_535, 'must be a port number from 0 to 65535 (0: any free port)');

/** One of `values`. */
const oneOf = <const T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: (issue) => (issue.input === undefined ? 'is missing' : `must be one of ${values.join(', ')}`) });

/**
 * The cursor signing key as bytes: hex (an even number of hex digits) or base64/base64url, at least
 * MIN_CURSOR_KEY_BYTES bytes once decoded.
 */
const signingKey = () =>
  text().transform((value, context) => {
    const trimmed = value.trim();
    let key: Buffer | undefined;
    if (/^(?:[0-9a-fA-F]{2})+$/.test(trimmed)) key = Buffer.from(trimmed, 'hex');
    else if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)) key = Buffer.from(trimmed, 'base64');
    if (key === undefined || key.length < MIN_CURSOR_KEY_BYTES) {
      context.addIssue({
        code: 'custom',
        input: value,
        message: `must be at least ${MIN_CURSOR_KEY_BYTES} bytes, given as hex or base64 (e.g. \`openssl rand -hex 32\`)`,
      });
      return z.NEVER;
    }
    return key;
  });

// The groups. Each is built on first use: a function reads two or three of the eighteen, and building them all at
// module load cost every function ~5 ms of its cold start (zod schemas are objects built by many calls).

/** `build`, called once, on the first call. */
function once<T>(build: () => T): () => T {
  let built: { value: T } | undefined;
  return () => {
    built ??= { value: build() };
    return built.value;
  };
}

/** An object whose enumerable properties are `builders`' results, each computed on first read. */
function builtOnFirstUse<Builders extends Record<string, () => unknown>>(
  builders: Builders,
): { readonly [Name in keyof Builders]: ReturnType<Builders[Name]> } {
  const object = {};
  for (const [name, build] of Object.entries(builders)) Object.defineProperty(object, name, { enumerable: true, get: build });
  return object as { readonly [Name in keyof Builders]: ReturnType<Builders[Name]> };
}

/** Table and bucket names, and the local endpoints (unset in AWS). Read by every function that uses the composition root. */
const StorageEnvironment = once(() =>
  z.object({
    [ENV.companiesTable]: tableName().describe('DynamoDB table of companies (quota, usage).'),
    [ENV.devicesTable]: tableName().describe('DynamoDB table of devices.'),
    [ENV.scenariosTable]: tableName().describe('DynamoDB table of scenarios, their versions and upload slots.'),
    [ENV.deploymentsTable]: tableName().describe('DynamoDB table of active deployments and their history.'),
    [ENV.presenceTable]: tableName().describe("DynamoDB table of devices' last-seen times and heartbeat deadlines."),
    [ENV.rolloutsTable]: tableName().describe('DynamoDB table of rollouts, their target chunks and wave counts.'),
    [ENV.commandsTable]: tableName().describe("DynamoDB table of commands run on devices' sub-devices."),
    [ENV.webhooksTable]: tableName().describe("DynamoDB table of the companies' webhooks and their deliveries."),
    [ENV.alertsTable]: tableName().describe('DynamoDB table of alert rules, what they watch, and alerts.'),
    [ENV.apiClientsTable]: tableName().describe("DynamoDB table of the companies' API clients and their hashed secrets."),
    [ENV.archiveBucket]: text()
      .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, { error: 'must be an S3 bucket name (3 to 63 lowercase letters, digits, . and -)' })
      .describe('S3 bucket of scenario archives.'),
    [ENV.dynamoDbEndpoint]: httpUrl()
      .optional()
      .describe('DynamoDB endpoint, e.g. `http://127.0.0.1:8000` (DynamoDB Local); unset in AWS.'),
    [ENV.s3Endpoint]: httpUrl().optional().describe('S3 endpoint, e.g. `http://127.0.0.1:4569` (s3rver); unset in AWS.'),
  }),
);

/** The two tables a search reindex reads its documents from (DynamoDB, the source of truth). */
const SearchSourceEnvironment = once(() =>
  StorageEnvironment().pick({
    [ENV.devicesTable]: true,
    [ENV.scenariosTable]: true,
    [ENV.dynamoDbEndpoint]: true,
  }),
);

/** Idempotency records of `Idempotency-Key` requests (Powertools persistence layer). */
const IdempotencyEnvironment = once(() =>
  z.object({
    [ENV.idempotencyTable]: tableName().describe('DynamoDB table of idempotency records (pk `id`, TTL attribute `expiration`).'),
    [ENV.dynamoDbEndpoint]: StorageEnvironment().shape[ENV.dynamoDbEndpoint],
  }),
);

/**
 * Failed authentications of the token endpoint (docs/contract.md, "Credentials and device tokens"): where attempts
 * are counted, and how many a client id (or, locally, a username) may make from one source in what window
 * (functions/core/access/client-failures.ts).
 */
const ClientFailuresEnvironment = once(() =>
  z.object({
    [ENV.clientFailuresTable]: tableName().describe(
      'DynamoDB table of authentication attempts without a success, per key and window (pk `pk`, TTL attribute `expiresAt`).',
    ),
    [ENV.clientFailureLimit]: amount('failures', 1, 1_000)
      .default(DEFAULT_CLIENT_FAILURE_POLICY.limit)
      .describe(
        'Attempts without a success of one client id (or username) from one source after which it gets 429 until its window closes; also the most verified per window.',
      ),
    [ENV.clientFailureWindowSeconds]: amount('seconds', 1, 86_400)
      .default(DEFAULT_CLIENT_FAILURE_POLICY.windowMs / 1000)
      .describe("How long a window of failed client authentications lasts from its first failure, seconds (Retry-After's bound)."),
  }),
);

/** The audit log of administrative changes (docs/contract.md, "Audit"). */
const AuditEnvironment = once(() =>
  z.object({
    [ENV.auditTable]: tableName().describe(
      'DynamoDB table of the audit log of administrative changes (pk `pk`, sk `sk`, index `actor`; stream → AdministrativeChange events).',
    ),
    [ENV.dynamoDbEndpoint]: StorageEnvironment().shape[ENV.dynamoDbEndpoint],
  }),
);

/** How bearer tokens are verified (docs/contract.md, "Authentication and permissions"). */
const TokenVerificationEnvironment = once(() =>
  z.object({
    [ENV.jwtIssuer]: text().describe('Expected `iss` of tokens: the Cognito user pool URL in AWS, the local auth address locally.'),
    [ENV.jwtAudience]: text().describe('Expected `aud` of tokens: the Cognito app client id in AWS.'),
    [ENV.jwksUrl]: httpUrl().describe('Where the issuer publishes its public keys (JWKS).'),
  }),
);

/** The token endpoint on AWS (functions/handlers/auth-cognito-token.ts). */
const TokenEndpointEnvironment = once(() =>
  z.object({
    [ENV.cognitoClientId]: text().describe('The Cognito app client the token endpoint signs users in with (USER_PASSWORD_AUTH).'),
  }),
);

/** Users administration on AWS (functions/adapters/aws/cognito-user-directory.ts): the pool its users live in. */
const UserPoolEnvironment = once(() =>
  z.object({
    [ENV.cognitoUserPoolId]: text()
      .regex(/^[a-z]{2}(-[a-z]+)+-\d_[0-9A-Za-z]+$/, { error: 'must be a Cognito user pool id (<region>_<id>, e.g. eu-west-1_AbC123xyz)' })
      .describe(
        'The Cognito user pool users administration manages (AdminCreateUser, ListUsers…); set only on the functions granted its actions.',
      ),
  }),
);

/** Which search index, and how to reach OpenSearch. */
const SearchEnvironment = once(() =>
  z
    .object({
      [ENV.searchEngine]: oneOf(SEARCH_ENGINES)
        .default('embedded')
        .describe('Search adapter: `embedded` (in-memory, the local runtime) or `opensearch` (OPENSEARCH_URL).'),
      [ENV.openSearchUrl]: httpUrl()
        .optional()
        .describe(
          'OpenSearch endpoint, e.g. `https://search-….es.amazonaws.com` (basic auth in the URL allowed); required with SEARCH_ENGINE=opensearch.',
        ),
      [ENV.openSearchIndex]: text()
        .regex(/^[a-z0-9][a-z0-9._-]{0,199}$/, { error: 'must be an OpenSearch index name (lowercase letters, digits, . _ -)' })
        .default(DEFAULT_SEARCH_ALIAS)
        .describe('The alias searches and writes use; concrete indexes are `<alias>-<UTC time>`.'),
      [ENV.openSearchAuth]: oneOf(OPENSEARCH_AUTH_MODES)
        .default('none')
        .describe('`aws-sigv4` signs OpenSearch requests (service `es`, the role of the function; needs AWS_REGION); `none` does not.'),
      [ENV.openSearchReplicas]: amount('replicas', 0, 99)
        .default(0)
        .describe('`number_of_replicas` of the indexes the setup and a reindex create (0 on a single data node).'),
      [ENV.awsRegion]: text()
        .optional()
        .describe("The OpenSearch domain's region (set by Lambda); required with OPENSEARCH_AUTH=aws-sigv4."),
    })
    .refine((value) => value[ENV.searchEngine] !== 'opensearch' || value[ENV.openSearchUrl] !== undefined, {
      path: [ENV.openSearchUrl],
      message: 'is missing (required with SEARCH_ENGINE=opensearch)',
      when: () => true,
    })
    .refine((value) => value[ENV.openSearchAuth] !== 'aws-sigv4' || value[ENV.awsRegion] !== undefined, {
      path: [ENV.awsRegion],
      message: 'is missing (required with OPENSEARCH_AUTH=aws-sigv4)',
      when: () => true,
    }),
);

/** Where DeploymentChanged events go: EventBridge in AWS, a JSON-lines file locally. */
const EventsEnvironment = once(() =>
  z
    .object({
      [ENV.eventBusName]: text().optional().describe('EventBridge bus of DeploymentChanged events (AWS).'),
      [ENV.localEventsFile]: text()
        .optional()
        .describe('File the local runtime appends DeploymentChanged events to, one JSON object a line.'),
    })
    .refine((value) => value[ENV.eventBusName] !== undefined || value[ENV.localEventsFile] !== undefined, {
      path: [ENV.eventBusName],
      message: 'is missing (or LOCAL_EVENTS_FILE in the local runtime)',
      when: () => true,
    }),
);

/** The key listing cursors are signed with (CursorCodec). */
const CursorEnvironment = once(() =>
  z.object({
    [ENV.cursorSigningKey]: signingKey().describe(
      `HMAC-SHA256 key of listing cursors: at least ${MIN_CURSOR_KEY_BYTES} bytes as hex or base64 (AWS: a Secrets Manager secret; locally generated into the data folder).`,
    ),
  }),
);

/** Presigned upload slots. */
const UploadEnvironment = once(() =>
  z.object({
    [ENV.uploadSlotTtlSeconds]: amount('seconds', 1, MAX_PRESIGNED_URL_SECONDS)
      .optional()
      // Unset: the upload use case's default applies (UPLOAD_URL_LIFETIME_SECONDS, 900 s), kept in the domain.
      .describe("Lifetime of presigned upload URLs (a slot's `expiresAt`), seconds; at most S3's 7 days. Default 900."),
  }),
);

/** The device side: how long a device may stay silent, and how long its tokens live. */
const DeviceEnvironment = once(() =>
  z.object({
    [ENV.deviceHeartbeatSeconds]: amount('seconds', 1, 86_400)
      .default(300)
      .describe('A CONNECTED device silent for longer than this becomes DISCONNECTED, seconds.'),
    [ENV.deviceTokenLifetimeSeconds]: amount('seconds', 60, 900)
      .default(900)
      .describe('Lifetime of device tokens (client credentials grant), seconds; at most 15 minutes.'),
  }),
);

/**
 * Rollouts: where their work goes (functions/core/rollouts/dispatch.ts sends it, worker.ts does it). On AWS an SQS queue URL; in the local runtime
 * `local:rollouts`, the in-process queue feeding the same worker handler.
 */
const RolloutEnvironment = once(() =>
  z.object({
    [ENV.rolloutQueueUrl]: text()
      .regex(/^(https:\/\/sqs\.[^\s]+|local:[a-z-]+)$/, {
        error: 'must be an SQS queue URL (https://sqs.…) or local:<name> (the local runtime)',
      })
      .describe('Queue of rollout work messages: an SQS queue URL on AWS, `local:rollouts` in the local runtime.'),
    [ENV.rolloutChunkTimeoutSeconds]: amount('seconds', 1, 86_400)
      .default(900)
      .describe('A chunk of a running wave sent this long ago and not done is sent again (its message was lost), seconds.'),
  }),
);

/**
 * Webhooks (docs/webhooks.md): the hosts a webhook's URL may name with `http` (and, for a loopback address, be sent
 * to), read by the routes that check a webhook's URL and by the delivery function. Empty on AWS: https only.
 */
const WebhookEnvironment = once(() =>
  z.object({
    [ENV.webhookAllowedHttpHosts]: text()
      .regex(/^\s*[^\s,]+\s*(,\s*[^\s,]+\s*)*$/, {
        error: 'must be host names or IP addresses separated by commas (e.g. 127.0.0.1,localhost)',
      })
      .optional()
      .describe(
        'Hosts a webhook may use http with, comma-separated (e.g. `127.0.0.1,localhost`, the local default); a loopback address among them may be delivered to. Unset on AWS: https only, public addresses only.',
      ),
    [ENV.webhookRetryDivisor]: amount('divisions', 1, 1_000_000)
      .default(1)
      .describe(
        "Divides every wait of the deliveries' retry schedule (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h): 1, the schedule itself, unless a test of the local runtime shortens it (e.g. 1000: 5 ms, 300 ms…). Never set on AWS.",
      ),
  }),
);

/**
 * The device token issuer on AWS (functions/adapters/aws/kms-device-token-signer.ts): a KMS key signs device tokens
 * for this issuer and audience; the API Gateway JWT authorizer of the device routes expects both.
 */
const DeviceIssuerEnvironment = once(() =>
  z.object({
    [ENV.deviceTokenKeyArn]: text()
      .regex(/^arn:[a-z-]+:kms:[a-z0-9-]+:\d{12}:key\/[A-Za-z0-9-]+$/, {
        error: 'must be a KMS key ARN (arn:…:kms:<region>:<account>:key/<id>)',
      })
      .describe('ARN of the ECC_NIST_P256 KMS key that signs device tokens (only its ARN: the private key never leaves KMS).'),
    [ENV.deviceTokenIssuer]: httpUrl().describe(
      '`iss` of device tokens: `{auth_url}/device`, where its discovery document and JWKS are served.',
    ),
    [ENV.deviceTokenAudience]: text().describe("`aud` of device tokens: what the device routes' JWT authorizer expects ({base_url})."),
  }),
);

/** The addresses the OpenAPI document names in `servers` (the local default ports when unset). */
const AddressEnvironment = once(() =>
  z.object({
    [ENV.mainApiUrl]: httpUrl().optional().describe('Main API address ({base_url}).'),
    [ENV.uploadApiUrl]: httpUrl().optional().describe('Upload API address ({scenario_upload_url}).'),
    [ENV.authApiUrl]: httpUrl().optional().describe('Authentication service address ({auth_url}).'),
  }),
);

/** Where the operator console's built files are (console/build.ts). */
const ConsoleEnvironment = once(() =>
  z.object({
    [ENV.consoleDirectory]: text()
      .optional()
      .describe("Folder of the console's built files; unset on AWS, where they are in the function's bundle (`console/`)."),
    [ENV.s3Endpoint]: StorageEnvironment().shape[ENV.s3Endpoint],
    [ENV.awsRegion]: text().optional().describe('The region (set by Lambda): presigned uploads go to S3 there.'),
  }),
);

/** The local token issuer (functions/handlers/auth-token.ts in the local runtime). */
const LocalIssuerEnvironment = once(() =>
  z.object({
    [ENV.localAuthDir]: text().describe("Folder of the local issuer's users and signing keys."),
    [ENV.jwtIssuer]: TokenVerificationEnvironment().shape[ENV.jwtIssuer],
    [ENV.jwtAudience]: TokenVerificationEnvironment().shape[ENV.jwtAudience],
    [ENV.tokenLifetimeSeconds]: amount('seconds', 1, 86_400)
      .default(ACCESS_TOKEN_LIFETIME_SECONDS)
      .describe("Lifetime of the local issuer's user access tokens, seconds."),
  }),
);

/** The local data folder (`npm start`, `npm run reset`, `npm run reindex`). */
const LocalDataEnvironment = once(() =>
  z.object({
    [ENV.dataDir]: text().default('.data').describe("Folder of every local backend's data, relative to the repository root."),
  }),
);

/** The local runtime's listeners and timers (`npm start`). */
const LocalRuntimeEnvironment = once(() =>
  z.object({
    [ENV.apiPort]: port().default(3000).describe('Main API port (127.0.0.1).'),
    [ENV.uploadPort]: port().default(3001).describe('Upload API port (127.0.0.1).'),
    [ENV.authPort]: port().default(3002).describe('Authentication service port (127.0.0.1).'),
    [ENV.dynamoDbPort]: port().default(0).describe('DynamoDB Local port (it listens on every interface).'),
    [ENV.s3Port]: port().default(0).describe('s3rver port (127.0.0.1).'),
    [ENV.openSearchPort]: port()
      .default(0)
      .describe('HTTP port (127.0.0.1) of the OpenSearch node started with SEARCH_ENGINE=opensearch when OPENSEARCH_URL is unset.'),
    [ENV.openSearchHeapMib]: amount('MiB', 256, 32_768).default(512).describe('JVM heap of that OpenSearch node, MiB.'),
    [ENV.uploadSweepIntervalMs]: amount('milliseconds', 100, 86_400_000)
      .default(60_000)
      .describe('How often the upload sweeper rejects unfinished upload slots and deletes orphaned archives, ms.'),
    [ENV.heartbeatSweepIntervalMs]: amount('milliseconds', 100, 86_400_000)
      .default(10_000)
      .describe('How often the heartbeat sweeper marks silent devices DISCONNECTED, ms.'),
    [ENV.rolloutSweepIntervalMs]: amount('milliseconds', 100, 86_400_000)
      .default(1_000)
      .describe('How often the rollout sweeper completes waves, starts the next and re-sends unfinished work, ms.'),
    [ENV.commandSweepIntervalMs]: amount('milliseconds', 100, 86_400_000)
      .default(5_000)
      .describe('How often the command expiry sweeper makes commands past their `expiresAt` EXPIRED, ms.'),
    [ENV.alertSweepIntervalMs]: amount('milliseconds', 100, 86_400_000)
      .default(1_000)
      .describe("How often the alert sweeper raises the alerts whose condition has held for their rule's minutes, ms."),
    [ENV.webhookSweepIntervalMs]: amount('milliseconds', 100, 86_400_000)
      .default(1_000)
      .describe('How often the webhook retry sweeper attempts the deliveries whose next attempt is due, ms.'),
    [ENV.searchSnapshotIntervalMs]: amount('milliseconds', 1_000, 86_400_000)
      .default(60_000)
      .describe('How often the embedded search index is written to its snapshot in the data folder when it changed, ms (also at stop).'),
    [ENV.simulate]: amount('devices', 0, 100_000)
      .default(0)
      .describe("Simulated kiosks `npm start` keeps alive (acme's first N: health reports, pulls, installs); 0: none."),
    // Defaults measured on a 2-core machine (docs/capacity.md, "The local runtime under load").
    [ENV.maxInFlightMain]: amount('requests', 0, 10_000)
      .default(DEFAULT_ADMISSION.main)
      .describe('Requests the main address serves at once (token check, body, handler); more wait, then get 503. 0: no bound.'),
    [ENV.maxInFlightUpload]: amount('requests', 0, 10_000)
      .default(DEFAULT_ADMISSION.upload)
      .describe('Requests the upload address serves at once (each may hold an archive of up to 10 MiB); 0: no bound.'),
    [ENV.maxInFlightAuth]: amount('requests', 0, 10_000)
      .default(DEFAULT_ADMISSION.auth)
      .describe('Requests the auth address serves at once (password and client secret checks are scrypt hashes); 0: no bound.'),
    [ENV.maxQueuedRequests]: amount('requests', 0, 100_000)
      .default(DEFAULT_ADMISSION.queued)
      .describe('Requests that may wait for a place on each address; one more is answered 503 with Retry-After at once.'),
    [ENV.maxQueueWaitMs]: amount('milliseconds', 0, 60_000)
      .default(DEFAULT_ADMISSION.waitMs)
      .describe('Longest wait of a request for a place while the queue absorbs a burst, ms; then it is answered 503 with Retry-After.'),
    [ENV.overloadQueueWaitMs]: amount('milliseconds', 0, 60_000)
      .default(DEFAULT_ADMISSION.overloadWaitMs)
      .describe(
        'Longest wait for a place once the queue has held requests without emptying for longer than this, ms (sustained overload); at most MAX_QUEUE_WAIT_MS.',
      ),
    [ENV.maxPerSourceAuth]: amount('requests', 0, 100_000)
      .default(DEFAULT_ADMISSION.authPerSource)
      .describe(
        'Requests one client address may have served or waiting on the auth address at once; one more is answered 503 with Retry-After at once, so a flood from one address leaves room for devices elsewhere. 0: no bound.',
      ),
  }),
);

/** What every function is given (lib/service-function.ts) or Lambda sets. */
const FunctionEnvironment = once(() =>
  z.object({
    [ENV.powertoolsServiceName]: text().default(SERVICE_NAME).describe('Service name of every structured log line.'),
    [ENV.powertoolsLogLevel]: z
      .preprocess((value) => (typeof value === 'string' ? value.toUpperCase() : value), oneOf(LOG_LEVELS))
      .default('INFO')
      .describe('Powertools log level of the handlers.'),
    [ENV.powertoolsMetricsNamespace]: text().optional().describe('CloudWatch namespace of the EMF metrics (Powertools Metrics).'),
    [ENV.powertoolsTraceEnabled]: z
      .preprocess((value) => (typeof value === 'string' ? value.toLowerCase() : value), oneOf(['true', 'false', '1', '0'] as const))
      .optional()
      .describe('false turns the X-Ray tracer off (the local runtime and tests, where no X-Ray daemon runs).'),
    [ENV.logFormat]: z
      .preprocess((value) => (typeof value === 'string' ? value.toLowerCase() : value), oneOf(['json', 'text'] as const))
      .optional()
      .describe('text: one readable line per log item and metrics as DEBUG lines (what the local runtime sets); default JSON and EMF.'),
    [ENV.lambdaMaxConcurrency]: text()
      .optional()
      .describe(
        'Concurrent invocations per process: the local runtime serves requests concurrently, each in its own invoke-store context.',
      ),
    [ENV.nodeOptions]: text()
      .optional()
      .describe('Node.js options (`--enable-source-maps` in AWS: stack traces map to the TypeScript sources).'),
    [ENV.awsRegion]: text().optional().describe('The region (set by Lambda; locally us-east-1 unless set).'),
  }),
);

/**
 * Every group, by name: what readEnvironment() reads. Each group's schema is built when first read (see `once`).
 */
export const ENVIRONMENT = builtOnFirstUse({
  storage: StorageEnvironment,
  searchSource: SearchSourceEnvironment,
  idempotency: IdempotencyEnvironment,
  clientFailures: ClientFailuresEnvironment,
  audit: AuditEnvironment,
  tokenVerification: TokenVerificationEnvironment,
  tokenEndpoint: TokenEndpointEnvironment,
  userPool: UserPoolEnvironment,
  search: SearchEnvironment,
  events: EventsEnvironment,
  cursors: CursorEnvironment,
  uploads: UploadEnvironment,
  devices: DeviceEnvironment,
  rollouts: RolloutEnvironment,
  webhooks: WebhookEnvironment,
  deviceIssuer: DeviceIssuerEnvironment,
  addresses: AddressEnvironment,
  console: ConsoleEnvironment,
  localIssuer: LocalIssuerEnvironment,
  localData: LocalDataEnvironment,
  localRuntime: LocalRuntimeEnvironment,
  function: FunctionEnvironment,
});

/** A group's name. */
export type EnvironmentGroup = keyof typeof ENVIRONMENT;

/** What each group configures, as error messages name it. */
const GROUP_LABELS: Readonly<Record<EnvironmentGroup, string>> = {
  storage: 'storage',
  searchSource: 'search source tables',
  idempotency: 'idempotency',
  clientFailures: 'failed client authentications',
  audit: 'audit log',
  tokenVerification: 'token verification',
  tokenEndpoint: 'token endpoint',
  userPool: 'user pool',
  search: 'search',
  events: 'deployment events',
  cursors: 'listing cursors',
  uploads: 'upload slots',
  devices: 'devices',
  rollouts: 'rollouts',
  webhooks: 'webhooks',
  deviceIssuer: 'device token issuer',
  addresses: 'API addresses',
  console: 'operator console',
  localIssuer: 'local token issuer',
  localData: 'local data folder',
  localRuntime: 'local runtime',
  function: 'function runtime',
};

/** The parsed variables of a group, keyed by variable name, with defaults applied and numbers, keys and enums typed. */
export type EnvironmentOf<G extends EnvironmentGroup> = z.output<(typeof ENVIRONMENT)[G]>;

/** Every variable name some group knows. */
export const KNOWN_VARIABLES: ReadonlySet<string> = new Set(Object.values(ENV));

/** Variables whose values never appear in an error message (a key, or a URL that may carry credentials). */
const SECRET_VARIABLES: ReadonlySet<string> = new Set([ENV.cursorSigningKey, ENV.openSearchUrl]);

/** The shape (variable name → schema) of a group (a refined zod object keeps its shape). */
function shapeOf(group: EnvironmentGroup): Readonly<Record<string, z.ZodType>> {
  return ENVIRONMENT[group].shape;
}

/** The variables of `group`: name and description, in declaration order (docs/configuration.md, tests). */
export function variablesOf(group: EnvironmentGroup): { name: string; description: string }[] {
  return Object.entries(shapeOf(group)).map(([name, schema]) => ({ name, description: schema.description ?? '' }));
}

/** Thrown when the variables of a group are missing or malformed; `variables` lists each bad one by name. */
export class EnvironmentError extends Error {
  constructor(
    readonly group: EnvironmentGroup,
    readonly variables: readonly string[],
    problems: readonly string[],
  ) {
    super(`Invalid environment (${GROUP_LABELS[group]}): ${problems.join('; ')}.`);
    this.name = 'EnvironmentError';
  }
}

/**
 * Reads and validates one group from `source` (process.env in a function). An empty value counts as unset (then
 * the default applies, or the variable is missing).
 * @returns the group's variables keyed by name, typed (numbers, key bytes, enums), defaults applied.
 * @throws EnvironmentError naming every missing or malformed variable of the group and what is wrong with it
 *   (values are quoted, except those of secrets).
 */
export function readEnvironment<G extends EnvironmentGroup>(
  group: G,
  source: Readonly<Record<string, string | undefined>>,
): EnvironmentOf<G> {
  const input: Record<string, string | undefined> = {};
  for (const name of Object.keys(shapeOf(group))) {
    const value = source[name];
    if (value !== undefined && value !== '') input[name] = value;
  }
  const parsed = ENVIRONMENT[group].safeParse(input);
  if (parsed.success) return parsed.data as EnvironmentOf<G>;
  const problems = new Map<string, string>();
  for (const issue of parsed.error.issues) {
    const name = String(issue.path[0] ?? group);
    if (problems.has(name)) continue;
    const value = input[name];
    const shown =
      value === undefined || SECRET_VARIABLES.has(name) || issue.message.startsWith('is missing') ? '' : `, got '${value.slice(0, 100)}'`;
    problems.set(name, `${name} ${issue.message}${shown}`);
  }
  throw new EnvironmentError(group, [...problems.keys()], [...problems.values()]);
}

/**
 * Checks several groups at once (an entry point's whole environment, e.g. the local runtime's before it starts).
 * @throws Error listing the EnvironmentError message of every group with a bad variable, one a line.
 */
export function checkEnvironment(groups: readonly EnvironmentGroup[], source: Readonly<Record<string, string | undefined>>): void {
  const problems: string[] = [];
  for (const group of groups) {
    try {
      readEnvironment(group, source);
    } catch (error) {
      if (!(error instanceof EnvironmentError)) throw error;
      problems.push(error.message);
    }
  }
  if (problems.length > 0) throw new Error(problems.join('\n'));
}
