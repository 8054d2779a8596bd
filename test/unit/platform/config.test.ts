/**
 * The environment schema (functions/contract/environment.ts) and the configuration read through it
 * (functions/platform/config.ts): what a function gets from good variables, and what an operator reads when one is
 * missing or malformed: the variable's name and what is wrong, for every bad variable of the group at once.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  checkEnvironment,
  DEFAULT_ADMISSION,
  ENV,
  ENVIRONMENT,
  EnvironmentError,
  type EnvironmentGroup,
  KNOWN_VARIABLES,
  readEnvironment,
  variablesOf,
} from '../../../functions/contract/environment.js';
import { LOCAL_HANDLER_GROUPS, localEnvironment } from '../../../functions/local/runtime.js';
import {
  authConfig,
  eventsConfig,
  idempotencyConfig,
  localIssuerConfig,
  openSearchConfig,
  searchEngine,
  storageConfig,
  uploadSlotLifetimeSeconds,
} from '../../../functions/platform/config.js';

const STORAGE = {
  COMPANIES_TABLE: 'companies',
  DEVICES_TABLE: 'devices',
  SCENARIOS_TABLE: 'scenarios',
  DEPLOYMENTS_TABLE: 'deployments',
  PRESENCE_TABLE: 'presence',
  ROLLOUTS_TABLE: 'rollouts',
  COMMANDS_TABLE: 'commands',
  WEBHOOKS_TABLE: 'webhooks',
  ALERTS_TABLE: 'alerts',
  API_CLIENTS_TABLE: 'api-clients',
  ARCHIVE_BUCKET: 'scenario-archives',
};

/** The error readEnvironment throws for `source`, or a failure when it throws none. */
function errorOf(group: EnvironmentGroup, source: Record<string, string | undefined>): EnvironmentError {
  try {
    readEnvironment(group, source);
  } catch (error) {
    expect(error).toBeInstanceOf(EnvironmentError);
    return error as EnvironmentError;
  }
  throw new Error(`readEnvironment('${group}') accepted ${JSON.stringify(source)}`);
}

describe('the environment schema', () => {
  it('declares every variable once, with a description', () => {
    const names = Object.values(ENV);
    expect(new Set(names).size).toBe(names.length);
    for (const group of Object.keys(ENVIRONMENT) as EnvironmentGroup[]) {
      for (const variable of variablesOf(group)) {
        expect(KNOWN_VARIABLES.has(variable.name), `${group}: ${variable.name}`).toBe(true);
        expect(variable.description.length, `${group}: ${variable.name}`).toBeGreaterThan(10);
      }
    }
    // Every declared name belongs to some group: none is set without being read and checked.
    const grouped = new Set(
      (Object.keys(ENVIRONMENT) as EnvironmentGroup[]).flatMap((group) => variablesOf(group).map((variable) => variable.name)),
    );
    expect([...KNOWN_VARIABLES].filter((name) => !grouped.has(name))).toEqual([]);
  });

  it('lists every missing or malformed variable of a group in one error, by name', () => {
    const error = errorOf('storage', {
      ...STORAGE,
      COMPANIES_TABLE: undefined,
      DEVICES_TABLE: '',
      ARCHIVE_BUCKET: 'Not_A_Bucket',
      S3_ENDPOINT: 'localhost:4569',
    });
    expect(error.variables).toEqual(['COMPANIES_TABLE', 'DEVICES_TABLE', 'ARCHIVE_BUCKET', 'S3_ENDPOINT']);
    expect(error.message).toBe(
      'Invalid environment (storage): COMPANIES_TABLE is missing; DEVICES_TABLE is missing; ' +
        "ARCHIVE_BUCKET must be an S3 bucket name (3 to 63 lowercase letters, digits, . and -), got 'Not_A_Bucket'; " +
        "S3_ENDPOINT must be an http(s) URL, got 'localhost:4569'.",
    );
  });

  it('types numbers, applies defaults and reads an empty value as unset', () => {
    expect(readEnvironment('search', { OPENSEARCH_REPLICAS: '', SEARCH_ENGINE: '' })).toEqual({
      SEARCH_ENGINE: 'embedded',
      OPENSEARCH_INDEX: 'resources',
      OPENSEARCH_AUTH: 'none',
      OPENSEARCH_REPLICAS: 0,
    });
    expect(readEnvironment('localRuntime', { API_PORT: '8080', UPLOAD_SWEEP_INTERVAL_MS: '500' })).toEqual({
      API_PORT: 8080,
      UPLOAD_PORT: 3001,
      AUTH_PORT: 3002,
      DYNAMODB_PORT: 0,
      S3_PORT: 0,
      OPENSEARCH_PORT: 0,
      OPENSEARCH_HEAP_MIB: 512,
      UPLOAD_SWEEP_INTERVAL_MS: 500,
      HEARTBEAT_SWEEP_INTERVAL_MS: 10_000,
      ROLLOUT_SWEEP_INTERVAL_MS: 1_000,
      COMMAND_SWEEP_INTERVAL_MS: 5_000,
      WEBHOOK_SWEEP_INTERVAL_MS: 1_000,
      ALERT_SWEEP_INTERVAL_MS: 1_000,
      SEARCH_SNAPSHOT_INTERVAL_MS: 60_000,
      SIMULATE: 0,
      MAX_IN_FLIGHT_MAIN: DEFAULT_ADMISSION.main,
      MAX_IN_FLIGHT_UPLOAD: DEFAULT_ADMISSION.upload,
      MAX_IN_FLIGHT_AUTH: DEFAULT_ADMISSION.auth,
      MAX_QUEUED_REQUESTS: DEFAULT_ADMISSION.queued,
      MAX_QUEUE_WAIT_MS: DEFAULT_ADMISSION.waitMs,
      OVERLOAD_QUEUE_WAIT_MS: DEFAULT_ADMISSION.overloadWaitMs,
      MAX_PER_SOURCE_AUTH: DEFAULT_ADMISSION.authPerSource,
    });
    expect(readEnvironment('function', { POWERTOOLS_LOG_LEVEL: 'silent' })).toMatchObject({
      POWERTOOLS_LOG_LEVEL: 'SILENT',
      POWERTOOLS_SERVICE_NAME: 'device-scenario-service',
    });
  });

  it('bounds whole numbers and names the unit', () => {
    for (const value of ['0', '604801', '1.5', '15m', '-1', '1e3']) {
      expect(errorOf('uploads', { UPLOAD_SLOT_TTL_SECONDS: value }).message, value).toBe(
        `Invalid environment (upload slots): UPLOAD_SLOT_TTL_SECONDS must be whole seconds from 1 to 604800, got '${value}'.`,
      );
    }
    expect(readEnvironment('uploads', { UPLOAD_SLOT_TTL_SECONDS: '604800' })).toEqual({ UPLOAD_SLOT_TTL_SECONDS: 604_800 });
    expect(errorOf('localRuntime', { AUTH_PORT: '70000', UPLOAD_SWEEP_INTERVAL_MS: '50' }).message).toBe(
      "Invalid environment (local runtime): AUTH_PORT must be a port number from 0 to 65535 (0: any free port), got '70000'; " +
        "UPLOAD_SWEEP_INTERVAL_MS must be whole milliseconds from 100 to 86400000, got '50'.",
    );
  });

  it('requires OPENSEARCH_URL with SEARCH_ENGINE=opensearch and AWS_REGION with signed requests, and names enum values', () => {
    expect(errorOf('search', { SEARCH_ENGINE: 'opensearch', OPENSEARCH_AUTH: 'aws-sigv4' }).message).toBe(
      'Invalid environment (search): OPENSEARCH_URL is missing (required with SEARCH_ENGINE=opensearch); AWS_REGION is missing (required with OPENSEARCH_AUTH=aws-sigv4).',
    );
    expect(errorOf('search', { SEARCH_ENGINE: 'elastic', OPENSEARCH_AUTH: 'iam' }).message).toBe(
      "Invalid environment (search): SEARCH_ENGINE must be one of embedded, opensearch, got 'elastic'; OPENSEARCH_AUTH must be one of aws-sigv4, none, got 'iam'.",
    );
  });

  it('never quotes a secret: the cursor key, or an OpenSearch URL that may carry credentials', () => {
    const short = randomBytes(16).toString('hex');
    const cursor = errorOf('cursors', { CURSOR_SIGNING_KEY: short });
    expect(cursor.message).toBe(
      'Invalid environment (listing cursors): CURSOR_SIGNING_KEY must be at least 32 bytes, given as hex or base64 (e.g. `openssl rand -hex 32`).',
    );
    const url = errorOf('search', { OPENSEARCH_URL: 'user:secret-password@search.example' });
    expect(url.message).toBe('Invalid environment (search): OPENSEARCH_URL must be an http(s) URL.');
  });

  it('requires one destination of deployment events', () => {
    expect(errorOf('events', {}).message).toBe(
      'Invalid environment (deployment events): EVENT_BUS_NAME is missing (or LOCAL_EVENTS_FILE in the local runtime).',
    );
    expect(readEnvironment('events', { LOCAL_EVENTS_FILE: '/tmp/events.jsonl' })).toEqual({ LOCAL_EVENTS_FILE: '/tmp/events.jsonl' });
  });
});

describe('functions/platform/config.ts', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  const stub = (variables: Record<string, string | undefined>) => {
    for (const [name, value] of Object.entries(variables)) vi.stubEnv(name, value);
  };

  it('reads each group into the shapes the adapters take', () => {
    stub({ ...STORAGE, DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000', S3_ENDPOINT: undefined });
    expect(storageConfig()).toEqual({
      companiesTable: 'companies',
      devicesTable: 'devices',
      scenariosTable: 'scenarios',
      deploymentsTable: 'deployments',
      presenceTable: 'presence',
      rolloutsTable: 'rollouts',
      commandsTable: 'commands',
      archiveBucket: 'scenario-archives',
      dynamoDbEndpoint: 'http://127.0.0.1:8000',
    });
    stub({ IDEMPOTENCY_TABLE: 'idempotency' });
    expect(idempotencyConfig()).toEqual({ tableName: 'idempotency', dynamoDbEndpoint: 'http://127.0.0.1:8000' });
    stub({
      JWT_ISSUER: 'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_abc',
      JWT_AUDIENCE: 'client',
      JWKS_URL: 'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_abc/.well-known/jwks.json',
    });
    expect(authConfig()).toEqual({
      issuer: 'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_abc',
      audience: 'client',
      jwksUrl: 'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_abc/.well-known/jwks.json',
    });
    stub({ EVENT_BUS_NAME: 'bus', LOCAL_EVENTS_FILE: '/tmp/events.jsonl' });
    expect(eventsConfig()).toEqual({ busName: 'bus' });
    stub({ LOCAL_AUTH_DIR: '/tmp/auth', TOKEN_LIFETIME_SECONDS: undefined });
    expect(localIssuerConfig()).toEqual({
      directory: '/tmp/auth',
      issuer: 'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_abc',
      audience: 'client',
      tokenLifetimeSeconds: 900,
    });
    stub({ UPLOAD_SLOT_TTL_SECONDS: undefined });
    expect(uploadSlotLifetimeSeconds()).toBeUndefined();
  });

  it('fails naming the variable: a storage table, the token audience, a replica count, the search backend', () => {
    stub({ ...STORAGE, SCENARIOS_TABLE: undefined });
    expect(() => storageConfig()).toThrow(/^Invalid environment \(storage\): SCENARIOS_TABLE is missing\.$/);
    stub({ JWT_ISSUER: 'https://issuer.test', JWT_AUDIENCE: undefined, JWKS_URL: 'https://issuer.test/jwks.json' });
    expect(() => authConfig()).toThrow(/JWT_AUDIENCE is missing/);
    stub({ OPENSEARCH_URL: 'http://127.0.0.1:9200', OPENSEARCH_REPLICAS: 'two', SEARCH_ENGINE: undefined });
    expect(() => openSearchConfig()).toThrow(/OPENSEARCH_REPLICAS must be whole replicas from 0 to 99, got 'two'/);
    stub({ OPENSEARCH_REPLICAS: '1', SEARCH_ENGINE: 'OpenSearch' });
    expect(() => searchEngine()).toThrow(/SEARCH_ENGINE must be one of embedded, opensearch/);
  });

  it('reads OpenSearch settings whatever SEARCH_ENGINE says, requiring OPENSEARCH_URL', () => {
    stub({
      SEARCH_ENGINE: undefined,
      OPENSEARCH_URL: undefined,
      OPENSEARCH_AUTH: undefined,
      OPENSEARCH_INDEX: undefined,
      OPENSEARCH_REPLICAS: undefined,
    });
    expect(() => openSearchConfig()).toThrow(/OPENSEARCH_URL is missing/);
    stub({ OPENSEARCH_URL: 'https://search.example', OPENSEARCH_AUTH: 'aws-sigv4', AWS_REGION: 'eu-west-1' });
    expect(openSearchConfig()).toEqual({
      url: 'https://search.example',
      alias: 'resources',
      auth: 'aws-sigv4',
      region: 'eu-west-1',
      replicas: 0,
    });
  });
});

describe('the local runtime environment', () => {
  const options = {
    dataDirectory: '/tmp/dss-data',
    addresses: { main: 'http://127.0.0.1:3000', upload: 'http://127.0.0.1:3001', auth: 'http://127.0.0.1:3002' },
    dynamoDbEndpoint: 'http://127.0.0.1:8000',
    s3Endpoint: 'http://127.0.0.1:4569',
    cursorSigningKey: randomBytes(32).toString('hex'),
  };

  it('sets only declared variables and satisfies every group its handlers read', () => {
    const environment = localEnvironment({ ...options, inherited: {} });
    for (const name of Object.keys(environment)) expect(KNOWN_VARIABLES.has(name), name).toBe(true);
    for (const group of LOCAL_HANDLER_GROUPS) expect(() => readEnvironment(group, environment), group).not.toThrow();
    expect(readEnvironment('search', environment)[ENV.searchEngine]).toBe('embedded');
    expect(readEnvironment('events', environment)).toEqual({ LOCAL_EVENTS_FILE: '/tmp/dss-data/events/events.jsonl' });
    expect(environment[ENV.awsRegion]).toBe('us-east-1');
  });

  it("keeps the user's settings, and a start with bad ones fails naming every one of them", () => {
    const inherited = { SEARCH_ENGINE: 'opensearch', AWS_REGION: 'eu-west-1', UPLOAD_SLOT_TTL_SECONDS: '0' };
    const environment = { ...inherited, ...localEnvironment({ ...options, inherited }) };
    expect(environment).toMatchObject({ SEARCH_ENGINE: 'opensearch', AWS_REGION: 'eu-west-1' });
    expect(() => checkEnvironment(LOCAL_HANDLER_GROUPS, environment)).toThrow(
      new Error(
        'Invalid environment (search): OPENSEARCH_URL is missing (required with SEARCH_ENGINE=opensearch).\n' +
          "Invalid environment (upload slots): UPLOAD_SLOT_TTL_SECONDS must be whole seconds from 1 to 604800, got '0'.",
      ),
    );
  });
});
