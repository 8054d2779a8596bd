/**
 * Configuration read once per cold start from the environment, through the schemas of functions/contract/environment.ts
 * (each variable's name, type, bounds and default are declared there once). A missing or malformed variable fails
 * fast: an EnvironmentError naming every bad variable of the group read. The CDK stack sets these on each function;
 * the local runtime sets them before loading the handlers.
 */
import { ENV, readEnvironment } from '../contract/environment.js';
import type { ClientFailurePolicy } from '../core/access/client-failures.js';
import { parseAllowedHttpHosts } from '../core/webhooks/addresses.js';

/** Table, bucket and endpoint settings. Endpoints are only set locally (DynamoDB Local, s3rver). */
export interface StorageConfig {
  companiesTable: string;
  devicesTable: string;
  scenariosTable: string;
  deploymentsTable: string;
  presenceTable: string;
  rolloutsTable: string;
  commandsTable: string;
  archiveBucket: string;
  /** e.g. `http://127.0.0.1:8000`; undefined in AWS. */
  dynamoDbEndpoint?: string;
  /** e.g. `http://127.0.0.1:4569`; undefined in AWS. */
  s3Endpoint?: string;
}

/** Reads the storage settings (the `storage` group). @throws EnvironmentError naming every missing or malformed variable. */
export function storageConfig(): StorageConfig {
  const env = readEnvironment('storage', process.env);
  const dynamoDbEndpoint = env[ENV.dynamoDbEndpoint];
  const s3Endpoint = env[ENV.s3Endpoint];
  return {
    companiesTable: env[ENV.companiesTable],
    devicesTable: env[ENV.devicesTable],
    scenariosTable: env[ENV.scenariosTable],
    deploymentsTable: env[ENV.deploymentsTable],
    presenceTable: env[ENV.presenceTable],
    rolloutsTable: env[ENV.rolloutsTable],
    commandsTable: env[ENV.commandsTable],
    archiveBucket: env[ENV.archiveBucket],
    ...(dynamoDbEndpoint === undefined ? {} : { dynamoDbEndpoint }),
    ...(s3Endpoint === undefined ? {} : { s3Endpoint }),
  };
}

/** Token verification settings (docs/contract.md, "Authentication and permissions"). */
export interface AuthConfig {
  /** Expected `iss`. */
  issuer: string;
  /** Expected `aud`. */
  audience: string;
  /** Where the issuer publishes its public keys. */
  jwksUrl: string;
}

/** Reads the token verification settings (JWT_ISSUER, JWT_AUDIENCE, JWKS_URL). @throws EnvironmentError naming each bad one. */
export function authConfig(): AuthConfig {
  const env = readEnvironment('tokenVerification', process.env);
  return { issuer: env[ENV.jwtIssuer], audience: env[ENV.jwtAudience], jwksUrl: env[ENV.jwksUrl] };
}

/** The Cognito app client the AWS token endpoint signs in with (COGNITO_CLIENT_ID). @throws EnvironmentError when unset. */
export function cognitoClientId(): string {
  return readEnvironment('tokenEndpoint', process.env)[ENV.cognitoClientId];
}

/**
 * The Cognito user pool users administration manages on AWS (COGNITO_USER_POOL_ID), set only on the functions whose
 * access names `userPool` actions.
 * @throws EnvironmentError when unset or not a pool id (`<region>_<id>`).
 */
export function cognitoUserPoolId(): string {
  return readEnvironment('userPool', process.env)[ENV.cognitoUserPoolId];
}

/**
 * Which search adapter to use: `embedded` (local runtime, the default) or `opensearch` (with OPENSEARCH_URL).
 * @throws EnvironmentError naming SEARCH_ENGINE or another search variable that is malformed, or OPENSEARCH_URL when
 *   `opensearch` is asked without it.
 */
export function searchEngine(): 'embedded' | 'opensearch' {
  return readEnvironment('search', process.env)[ENV.searchEngine];
}

/** How to reach OpenSearch (SEARCH_ENGINE=opensearch). */
export interface OpenSearchConfig {
  /** OPENSEARCH_URL: the domain endpoint, e.g. `https://search-….es.amazonaws.com`, or `http://localhost:9200`. */
  url: string;
  /** OPENSEARCH_INDEX: the alias searches and writes use (concrete indexes are `<alias>-<UTC time>`). @default resources */
  alias: string;
  /** OPENSEARCH_AUTH: `aws-sigv4` signs requests (service `es`, the function's role); `none` does not. @default none */
  auth: 'aws-sigv4' | 'none';
  /** AWS_REGION: the domain's region; required with `aws-sigv4`. */
  region?: string;
  /**
   * OPENSEARCH_REPLICAS: `number_of_replicas` of the indexes the setup and the reindex create (the CDK derives it
   * from the data node count: 0 on one node, else 1). @default 0
   */
  replicas: number;
}

/**
 * Reads the OpenSearch settings (OPENSEARCH_URL, OPENSEARCH_INDEX, OPENSEARCH_AUTH, OPENSEARCH_REPLICAS, AWS_REGION).
 * @throws EnvironmentError naming OPENSEARCH_URL when it is missing or not an http(s) URL, OPENSEARCH_AUTH when it is
 *   not `aws-sigv4` or `none`, OPENSEARCH_REPLICAS when it is not a whole number from 0 to 99, AWS_REGION when signing
 *   is asked without it.
 */
export function openSearchConfig(): OpenSearchConfig {
  // Read as an OpenSearch client whatever SEARCH_ENGINE says: the setup and reindex functions only ever use OpenSearch.
  const env = readEnvironment('search', { ...process.env, [ENV.searchEngine]: 'opensearch' });
  const region = env[ENV.awsRegion];
  return {
    url: env[ENV.openSearchUrl] as string,
    alias: env[ENV.openSearchIndex],
    auth: env[ENV.openSearchAuth],
    replicas: env[ENV.openSearchReplicas],
    ...(region === undefined ? {} : { region }),
  };
}

/** The tables a reindex reads the search documents from (DynamoDB, the source of truth). */
export interface SearchSourceConfig {
  /** DEVICES_TABLE. */
  devicesTable: string;
  /** SCENARIOS_TABLE. */
  scenariosTable: string;
  /** DYNAMODB_ENDPOINT, e.g. `http://127.0.0.1:8000` (DynamoDB Local); undefined in AWS. */
  dynamoDbEndpoint?: string;
}

/** Reads the reindex's source tables. @throws EnvironmentError naming DEVICES_TABLE, SCENARIOS_TABLE or DYNAMODB_ENDPOINT. */
export function searchSourceConfig(): SearchSourceConfig {
  const env = readEnvironment('searchSource', process.env);
  const dynamoDbEndpoint = env[ENV.dynamoDbEndpoint];
  return {
    devicesTable: env[ENV.devicesTable],
    scenariosTable: env[ENV.scenariosTable],
    ...(dynamoDbEndpoint === undefined ? {} : { dynamoDbEndpoint }),
  };
}

/** The idempotency records' table (IDEMPOTENCY_TABLE) and the local DynamoDB endpoint (undefined in AWS). */
export interface IdempotencyConfig {
  tableName: string;
  dynamoDbEndpoint?: string;
}

/** Reads the idempotency settings. @throws EnvironmentError naming IDEMPOTENCY_TABLE or DYNAMODB_ENDPOINT. */
export function idempotencyConfig(): IdempotencyConfig {
  const env = readEnvironment('idempotency', process.env);
  const dynamoDbEndpoint = env[ENV.dynamoDbEndpoint];
  return { tableName: env[ENV.idempotencyTable], ...(dynamoDbEndpoint === undefined ? {} : { dynamoDbEndpoint }) };
}

/** The audit log's table (AUDIT_TABLE) and the local DynamoDB endpoint (undefined in AWS). */
export interface AuditConfig {
  tableName: string;
  dynamoDbEndpoint?: string;
}

/** Reads the audit log settings. @throws EnvironmentError naming AUDIT_TABLE or DYNAMODB_ENDPOINT. */
export function auditConfig(): AuditConfig {
  const env = readEnvironment('audit', process.env);
  const dynamoDbEndpoint = env[ENV.dynamoDbEndpoint];
  return { tableName: env[ENV.auditTable], ...(dynamoDbEndpoint === undefined ? {} : { dynamoDbEndpoint }) };
}

/** Where failed client authentications are counted, and the policy (functions/core/access/client-failures.ts). */
export interface ClientFailuresConfig {
  /** CLIENT_FAILURES_TABLE. */
  tableName: string;
  /** CLIENT_FAILURE_LIMIT and CLIENT_FAILURE_WINDOW_SECONDS (as ms). */
  policy: ClientFailurePolicy;
}

/** Reads the `clientFailures` group. @throws EnvironmentError naming each missing or malformed variable. */
export function clientFailuresConfig(): ClientFailuresConfig {
  const env = readEnvironment('clientFailures', process.env);
  return {
    tableName: env[ENV.clientFailuresTable],
    policy: { limit: env[ENV.clientFailureLimit], windowMs: env[ENV.clientFailureWindowSeconds] * 1000 },
  };
}

/** Where DeploymentChanged events go: an EventBridge bus (AWS) or, without one, a local JSON-lines file. */
export type EventsConfig = { busName: string } | { localFile: string };

/** Reads the events settings. @throws EnvironmentError naming EVENT_BUS_NAME when neither it nor LOCAL_EVENTS_FILE is set. */
export function eventsConfig(): EventsConfig {
  const env = readEnvironment('events', process.env);
  const busName = env[ENV.eventBusName];
  return busName !== undefined ? { busName } : { localFile: env[ENV.localEventsFile] as string };
}

/** The local token issuer's settings (local runtime only). */
export interface LocalIssuerConfig {
  /** LOCAL_AUTH_DIR: the issuer's users and signing keys. */
  directory: string;
  issuer: string;
  audience: string;
  /** TOKEN_LIFETIME_SECONDS, seconds: user access tokens. @default 900 (ACCESS_TOKEN_LIFETIME_SECONDS) */
  tokenLifetimeSeconds: number;
}

/** Reads the local issuer's settings. @throws EnvironmentError naming LOCAL_AUTH_DIR (unset in AWS) or another bad one. */
export function localIssuerConfig(): LocalIssuerConfig {
  const env = readEnvironment('localIssuer', process.env);
  return {
    directory: env[ENV.localAuthDir],
    issuer: env[ENV.jwtIssuer],
    audience: env[ENV.jwtAudience],
    tokenLifetimeSeconds: env[ENV.tokenLifetimeSeconds],
  };
}

/**
 * UPLOAD_SLOT_TTL_SECONDS: lifetime of presigned upload URLs, seconds (a slot's `expiresAt` is this long after it was
 * granted); undefined when unset (the default, 900 s, applies).
 * @throws EnvironmentError when set to anything but a whole number of seconds from 1 to 604800 (S3's presigning limit, 7 days).
 */
export function uploadSlotLifetimeSeconds(): number | undefined {
  return readEnvironment('uploads', process.env)[ENV.uploadSlotTtlSeconds];
}

/**
 * Reads the key paged listings sign their cursors with (CursorCodec): CURSOR_SIGNING_KEY, at least 32 bytes given as
 * hex (64+ hex digits, e.g. `openssl rand -hex 32`) or base64/base64url (e.g. the 64 letters and digits Secrets
 * Manager generates, 48 bytes). The local runtime generates one into its data folder.
 * @throws EnvironmentError naming CURSOR_SIGNING_KEY when it is missing, not hex or base64, or shorter than 32 bytes.
 */
export function cursorSigningKey(): Buffer {
  return readEnvironment('cursors', process.env)[ENV.cursorSigningKey];
}

/** The device side's settings (the `devices` group). */
export interface DeviceConfig {
  /** A CONNECTED device silent for longer becomes DISCONNECTED, seconds. */
  heartbeatSeconds: number;
  /** Device token lifetime, seconds (at most 900). */
  tokenLifetimeSeconds: number;
}

/** Reads the device settings (`devices` group, defaults 300 s and 900 s). @throws EnvironmentError naming a malformed variable. */
export function deviceConfig(): DeviceConfig {
  const env = readEnvironment('devices', process.env);
  return { heartbeatSeconds: env[ENV.deviceHeartbeatSeconds], tokenLifetimeSeconds: env[ENV.deviceTokenLifetimeSeconds] };
}

/** The device token issuer on AWS (the `deviceIssuer` group): the KMS key, `iss` and `aud` of device tokens. */
export interface DeviceIssuerConfig {
  /** DEVICE_TOKEN_KEY_ARN: the ECC_NIST_P256 SIGN_VERIFY key. */
  keyArn: string;
  /** DEVICE_TOKEN_ISSUER: `{auth_url}/device`, no trailing slash. */
  issuer: string;
  /** DEVICE_TOKEN_AUDIENCE. */
  audience: string;
}

/** Reads the device issuer's settings. @throws EnvironmentError naming each missing or malformed variable (unset locally). */
export function deviceIssuerConfig(): DeviceIssuerConfig {
  const env = readEnvironment('deviceIssuer', process.env);
  return {
    keyArn: env[ENV.deviceTokenKeyArn],
    issuer: env[ENV.deviceTokenIssuer].replace(/\/+$/, ''),
    audience: env[ENV.deviceTokenAudience],
  };
}

/** Where rollout work goes and when it is sent again (the `rollouts` group). */
export interface RolloutConfig {
  /** ROLLOUT_QUEUE_URL: an SQS queue URL, or `local:<name>` (the local runtime's in-process queue). */
  queueUrl: string;
  /** ROLLOUT_CHUNK_TIMEOUT_SECONDS: a chunk sent this long ago and not done is sent again, seconds. @default 900 */
  chunkTimeoutSeconds: number;
}

/** Reads the rollout settings. @throws EnvironmentError naming ROLLOUT_QUEUE_URL or ROLLOUT_CHUNK_TIMEOUT_SECONDS. */
export function rolloutConfig(): RolloutConfig {
  const env = readEnvironment('rollouts', process.env);
  return { queueUrl: env[ENV.rolloutQueueUrl], chunkTimeoutSeconds: env[ENV.rolloutChunkTimeoutSeconds] };
}

/** The webhook settings (the `webhooks` group). */
export interface WebhookConfig {
  /** WEBHOOK_ALLOWED_HTTP_HOSTS: hosts a webhook may use plain http with, lowercase, without brackets; empty: none. */
  allowedHttpHosts: string[];
  /** WEBHOOK_RETRY_DIVISOR: what every retry wait is divided by (1, the schedule itself, but in local tests). */
  retryDivisor: number;
}

/**
 * Reads the webhook settings.
 * @throws EnvironmentError naming WEBHOOK_ALLOWED_HTTP_HOSTS or WEBHOOK_RETRY_DIVISOR when malformed.
 */
export function webhookConfig(): WebhookConfig {
  const env = readEnvironment('webhooks', process.env);
  return { allowedHttpHosts: parseAllowedHttpHosts(env[ENV.webhookAllowedHttpHosts]), retryDivisor: env[ENV.webhookRetryDivisor] };
}
