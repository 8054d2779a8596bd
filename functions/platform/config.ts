/**
 * Configuration read once per cold start from the environment. A missing required variable fails fast with its
 * name. The CDK stack sets these on each function; the local runtime sets them before loading the handlers.
 */
import { MIN_CURSOR_KEY_BYTES } from '../adapters/aws/cursor-codec.js';

function required(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`Missing required environment variable ${name}.`);
  return value;
}

function optional(name: string): string | undefined {
  const value = process.env[name];
  return value === undefined || value === '' ? undefined : value;
}

/** Table, bucket and endpoint settings. Endpoints are only set locally (DynamoDB Local, s3rver). */
export interface StorageConfig {
  companiesTable: string;
  devicesTable: string;
  scenariosTable: string;
  deploymentsTable: string;
  archiveBucket: string;
  /** e.g. `http://127.0.0.1:8000`; undefined in AWS. */
  dynamoDbEndpoint?: string;
  /** e.g. `http://127.0.0.1:4569`; undefined in AWS. */
  s3Endpoint?: string;
}

/** Reads the storage settings. @throws Error naming the first missing variable. */
export function storageConfig(): StorageConfig {
  const dynamoDbEndpoint = optional('DYNAMODB_ENDPOINT');
  const s3Endpoint = optional('S3_ENDPOINT');
  return {
    companiesTable: required('COMPANIES_TABLE'),
    devicesTable: required('DEVICES_TABLE'),
    scenariosTable: required('SCENARIOS_TABLE'),
    deploymentsTable: required('DEPLOYMENTS_TABLE'),
    archiveBucket: required('ARCHIVE_BUCKET'),
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

/** Reads the token verification settings. @throws Error naming the first missing variable. */
export function authConfig(): AuthConfig {
  return { issuer: required('JWT_ISSUER'), audience: required('JWT_AUDIENCE'), jwksUrl: required('JWKS_URL') };
}

/** Which search adapter to use: `embedded` (local runtime) or `opensearch` (with OPENSEARCH_URL). */
export function searchBackend(): 'embedded' | 'opensearch' {
  const value = optional('SEARCH_BACKEND') ?? 'embedded';
  if (value !== 'embedded' && value !== 'opensearch') throw new Error(`SEARCH_BACKEND must be 'embedded' or 'opensearch'; got '${value}'.`);
  return value;
}

/** How to reach OpenSearch (SEARCH_BACKEND=opensearch). */
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
 * @throws Error naming OPENSEARCH_URL when it is missing, OPENSEARCH_AUTH when it is not `aws-sigv4` or `none`,
 *   OPENSEARCH_REPLICAS when it is not a whole number,
 *   AWS_REGION when signing is asked without it.
 */
export function openSearchConfig(): OpenSearchConfig {
  const url = required('OPENSEARCH_URL');
  const auth = optional('OPENSEARCH_AUTH') ?? 'none';
  if (auth !== 'aws-sigv4' && auth !== 'none') throw new Error(`OPENSEARCH_AUTH must be 'aws-sigv4' or 'none'; got '${auth}'.`);
  const region = optional('AWS_REGION');
  if (auth === 'aws-sigv4' && region === undefined) throw new Error('Missing required environment variable AWS_REGION (OPENSEARCH_AUTH=aws-sigv4).');
  const replicasText = optional('OPENSEARCH_REPLICAS') ?? '0';
  if (!/^\d{1,2}$/.test(replicasText)) throw new Error(`OPENSEARCH_REPLICAS must be a whole number of replicas (0 on a single-node domain); got '${replicasText}'.`);
  return { url, alias: optional('OPENSEARCH_INDEX') ?? 'resources', auth, replicas: Number(replicasText), ...(region === undefined ? {} : { region }) };
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

/** Reads the reindex's source tables. @throws Error naming DEVICES_TABLE or SCENARIOS_TABLE when missing. */
export function searchSourceConfig(): SearchSourceConfig {
  const dynamoDbEndpoint = optional('DYNAMODB_ENDPOINT');
  return {
    devicesTable: required('DEVICES_TABLE'),
    scenariosTable: required('SCENARIOS_TABLE'),
    ...(dynamoDbEndpoint === undefined ? {} : { dynamoDbEndpoint }),
  };
}

/**
 * UPLOAD_SLOT_TTL_SECONDS: lifetime of presigned upload URLs, seconds (a slot's `expiresAt` is this long after it was
 * granted); undefined when unset (the default, 900 s, applies).
 * @throws Error when set to anything but a whole number of seconds from 1 to 604800 (S3's presigning limit, 7 days).
 */
export function uploadSlotLifetimeSeconds(): number | undefined {
  const raw = optional('UPLOAD_SLOT_TTL_SECONDS');
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1 || value > 604_800) throw new Error(`UPLOAD_SLOT_TTL_SECONDS must be whole seconds from 1 to 604800; got '${raw}'.`);
  return value;
}

/** The variable the cursor signing key is read from. */
export const CURSOR_SIGNING_KEY_ENV = 'CURSOR_SIGNING_KEY';

/**
 * Reads the key paged listings sign their cursors with (CursorCodec): CURSOR_SIGNING_KEY, at least 32 bytes given as
 * hex (64+ hex digits, e.g. `openssl rand -hex 32`) or base64/base64url (e.g. the 64 letters and digits Secrets
 * Manager generates, 48 bytes). The local runtime generates one into its data folder.
 * @throws Error naming CURSOR_SIGNING_KEY when it is missing, not hex or base64, or shorter than 32 bytes.
 */
export function cursorSigningKey(): Buffer {
  const value = required(CURSOR_SIGNING_KEY_ENV).trim();
  let key: Buffer | undefined;
  if (/^(?:[0-9a-fA-F]{2})+$/.test(value)) key = Buffer.from(value, 'hex');
  else if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(value)) key = Buffer.from(value, 'base64');
  if (key === undefined || key.length < MIN_CURSOR_KEY_BYTES) {
    throw new Error(`${CURSOR_SIGNING_KEY_ENV} must be at least ${MIN_CURSOR_KEY_BYTES} bytes, given as hex or base64 (e.g. \`openssl rand -hex 32\`).`);
  }
  return key;
}
