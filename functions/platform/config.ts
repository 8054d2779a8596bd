/**
 * Configuration read once per cold start from the environment. A missing required variable fails fast with its
 * name. The CDK stack sets these on each function; the local runtime sets them before loading the handlers.
 */

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

/** Token verification settings (decisions.md, "Authentication and permissions"). */
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
