/**
 * Stateless resources of one stage: one ServiceFunction per handler module, the three HTTP APIs built from the route
 * table of the local runtime (functions/contract/routes.ts; docs/contract.md, "Addresses"), the search indexer fed by the devices and
 * scenarios table streams, the function validating archives PUT through presigned upload slots (S3 ObjectCreated
 * under ARCHIVE_UPLOADED.prefix), the upload sweeper (an EventBridge rule every few minutes), the heartbeat sweeper
 * (an EventBridge Scheduler schedule every minute), the search index setup (custom resource) and reindex functions, the
 * DeploymentChanged event bus, and the alarms (lib/monitoring.ts).
 *
 * Rollouts run on an SQS queue (docs/architecture.md, "Rollouts on AWS"): the functions whose access says
 * `rolloutQueue` send work messages to it, the rollout worker consumes them (ROLLOUT_WORKER: batches of `batchSize`,
 * at most `maxConcurrency` invocations at once), messages that keep failing land in its dead-letter queue, and the
 * rollout sweeper (an EventBridge Scheduler schedule every minute) drives waves and re-sends lost work.
 *
 * On AWS the authentication address is an API in front of the stateful stack's Cognito user pool: `POST /token`
 * runs functions/handlers/auth-cognito-token.ts (same contract as the local token endpoint) and
 * `GET /.well-known/jwks.json` proxies the pool's JWKS. Every route with a scope is behind the API's native JWT
 * authorizer: API Gateway verifies the pool's access token (issuer, the app client id as audience, expiry, signature)
 * and that it holds the route's scope before the function runs, and hands the function the token's claims
 * (`requestContext.authorizer.jwt`, read by functions/platform/auth.ts). A bad token never invokes a function.
 *
 * Devices get their tokens from the same `POST /token` (client credentials): the token function signs them with the
 * stateful stack's KMS key (lib/device-token-key.ts) for the device issuer `{auth_url}/device`, whose discovery
 * document and key set the auth API serves (functions/contract/routes/device-issuer.ts). Device routes (scope
 * DEVICE_SCOPE) have a second JWT authorizer trusting only that issuer; every other route keeps the Cognito one.
 */
import { type CfnElement, CfnOutput, CustomResource, Duration, Fn, Stack, type StackProps } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import {
  type CfnStage,
  CorsHttpMethod,
  HttpApi,
  HttpMethod,
  type HttpRouteIntegration,
  type HttpStage,
  LogGroupLogDestination,
  type ThrottleSettings,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpJwtAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration, HttpUrlIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { EventBus, Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { ScheduleExpression, Schedule as ScheduledInvocation } from 'aws-cdk-lib/aws-scheduler';
import { LambdaInvoke } from 'aws-cdk-lib/aws-scheduler-targets';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { type IRole, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { type IFunction, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import type { IDomain } from 'aws-cdk-lib/aws-opensearchservice';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { Bucket, EventType, type IBucket } from 'aws-cdk-lib/aws-s3';
import { LambdaDestination } from 'aws-cdk-lib/aws-s3-notifications';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Provider } from 'aws-cdk-lib/custom-resources';
import type { Construct } from 'constructs';
import { templateVersion } from '../functions/adapters/aws/opensearch-indexes.js';
import { replicasFor } from '../functions/adapters/aws/opensearch-queries.js';
import { TABLES, type TableKeySchema, type TableName } from '../functions/adapters/aws/tables.js';
import { countTokenFailures, Monitoring } from './monitoring.js';
import { acknowledge, managedPolicyFinding, wildcardResourceFinding } from './nag.js';
import { API_ADDRESS_ENV, ENV, type EnvName } from '../functions/contract/environment.js';
import { DEVICE_SCOPE } from '../functions/core/principal.js';
import { DEVICE_ISSUER_ENTRY, DEVICE_ISSUER_PATH, DEVICE_ISSUER_ROUTES } from '../functions/contract/routes/device-issuer.js';
import { authToken } from '../functions/contract/routes/service.js';
import { DEVICE_KEY_USE, DEVICE_TOKEN_SIGNING_ENTRY } from './device-token-key.js';
import {
  type ApiName,
  ARCHIVE_UPLOADED,
  DEPLOYMENT_CHANGES_ENTRY,
  HEARTBEAT_SWEEPER,
  ROLLOUT_SWEEPER,
  ROLLOUT_WORKER,
  ROUTES,
  type RouteDefinition,
  SEARCH_INDEX_SETUP_ENTRY,
  SEARCH_INDEXER_ENTRY,
  SEARCH_REINDEX_ENTRY,
  UPLOAD_SWEEPER,
} from '../functions/contract/routes.js';
import { SEARCH_ACTIONS, SEARCH_CLIENTS, SEARCH_INDEX_ALIAS, searchResources } from './search-domain.js';
import { STORED_ARCHIVES, UPLOADED_ARCHIVES } from '../functions/contract/archives.js';
import type { FunctionAccess as RouteFunctionAccess } from '../functions/contract/route.js';
import { type FunctionEnvironment, functionIdOf, ServiceFunction } from './service-function.js';
import type { ServiceSettings } from './settings.js';

/** The variable each table's name is read from (functions/contract/environment.ts). */
export const TABLE_ENV: Readonly<Record<TableName, EnvName>> = {
  companies: ENV.companiesTable,
  devices: ENV.devicesTable,
  scenarios: ENV.scenariosTable,
  deployments: ENV.deploymentsTable,
  presence: ENV.presenceTable,
  rollouts: ENV.rolloutsTable,
  idempotency: ENV.idempotencyTable,
  clientFailures: ENV.clientFailuresTable,
};

/** The variable the archive bucket's name is read from. */
export const ARCHIVE_BUCKET_ENV = ENV.archiveBucket;

/**
 * The token endpoint on AWS: users through Cognito InitiateAuth (USER_PASSWORD_AUTH), devices through the client
 * credentials grant signed by the device token key, behind the local endpoint's contract.
 */
export const AUTH_COGNITO_TOKEN_ENTRY = DEVICE_TOKEN_SIGNING_ENTRY;

/**
 * How each 'auth' route of ROUTES is served on AWS (the local runtime runs its own issuer): a function, or the
 * Cognito pool's JWKS behind an HTTP proxy integration. A new 'auth' route without an entry here fails the synth.
 */
const AUTH_ROUTES_ON_AWS: Readonly<Record<string, { entry: string } | 'cognito-jwks'>> = {
  AuthToken: { entry: AUTH_COGNITO_TOKEN_ENTRY },
  AuthJwks: 'cognito-jwks',
  // AWS only (DEVICE_ISSUER_ROUTES): the device issuer's discovery document and key set.
  ...Object.fromEntries(DEVICE_ISSUER_ROUTES.map((route) => [route.id, { entry: route.entry }])),
};

/** Every route of an address on AWS: ROUTES, and on the auth address the device issuer's (AWS only). */
function routesOn(api: ApiName): RouteDefinition[] {
  return [...ROUTES, ...DEVICE_ISSUER_ROUTES].filter((route) => route.api === api);
}

/** Device routes (scope DEVICE_SCOPE): behind the device issuer's authorizer, and route-level throttling. */
function isDeviceRoute(route: RouteDefinition): boolean {
  return route.scope === DEVICE_SCOPE;
}

/**
 * Whether a function reads the device settings (DEVICE_HEARTBEAT_SECONDS, DEVICE_TOKEN_LIFETIME_SECONDS): the token
 * function, the heartbeat sweeper, and the functions of device routes or of routes touching the presence table.
 */
function readsDeviceSettings(entry: string): boolean {
  if (entry === AUTH_COGNITO_TOKEN_ENTRY || entry === HEARTBEAT_SWEEPER.entry) return true;
  return ROUTES.some((route) => route.entry === entry && (isDeviceRoute(route) || route.access?.tables?.presence !== undefined));
}

/**
 * Whether a function reads the rollout settings (ROLLOUT_QUEUE_URL, ROLLOUT_CHUNK_TIMEOUT_SECONDS): the functions that
 * may send to the rollout queue (`rolloutQueue` access), and the worker, whose composition root builds the same
 * rollout services (the URL is a name, not a permission: only `rolloutQueue` grants sqs:SendMessage).
 */
function readsRolloutSettings(entry: string, access: FunctionAccess): boolean {
  return access.rolloutQueue === true || entry === ROLLOUT_WORKER.entry;
}

/**
 * What one handler module may touch (a route's `access`, with its timeout as a Duration). Search access (OpenSearch)
 * comes from SEARCH_CLIENTS.
 */
interface FunctionAccess extends Omit<RouteFunctionAccess, 'timeoutSeconds'> {
  /** @default HTTP (29 s) */
  timeout?: Duration;
}

/** How long validating and storing one presigned upload may take (archives above the upload API's 10 MB limit). */
const ARCHIVE_UPLOADED_TIMEOUT = Duration.minutes(2);

/**
 * Timeout of the rollout worker: one message is one chunk (at most ROLLOUT_CHUNK_SIZE = 500 devices, deployed 16
 * conditional writes at a time), seconds of work; the rest is headroom for throttled writes retried with backoff.
 */
export const ROLLOUT_WORKER_TIMEOUT = Duration.seconds(120);

/**
 * Visibility timeout of the rollout queue: 6 times the worker's timeout, as AWS recommends for a queue feeding a
 * Lambda function, so that a message is not delivered again while an invocation (or its retries by the event source
 * after a throttle) may still be working on it.
 */
export const ROLLOUT_QUEUE_VISIBILITY = Duration.seconds(6 * ROLLOUT_WORKER_TIMEOUT.toSeconds());

/** Receives of a rollout message before it moves to the dead-letter queue (each one a worker invocation that failed it). */
export const ROLLOUT_MAX_RECEIVE_COUNT = 5;

/**
 * ROLLOUT_CHUNK_TIMEOUT_SECONDS on AWS: the sweeper sends a chunk again when it was sent this long ago and is not
 * done (its message was lost, or it reached the dead-letter queue). Longer than the queue's visibility timeout, so a
 * chunk SQS will redeliver by itself is not sent twice.
 */
export const ROLLOUT_CHUNK_TIMEOUT = Duration.minutes(15);

/** Timeout of the index setup: its 10-minute retry budget (SETUP_RETRY_BUDGET_MS) plus one last attempt (the provider framework waits 15). */
export const SEARCH_INDEX_SETUP_TIMEOUT = Duration.minutes(12);

/** Why each archive key pattern is granted (cdk-nag acknowledgment of its wildcard). */
const OBJECT_PATTERN_REASONS: Readonly<Record<string, string>> = {
  [UPLOADED_ARCHIVES]:
    `Presigned uploads land under ${UPLOADED_ARCHIVES}: the slot function may only PUT there (the URL it signs), the ` +
    'validation function reads and then deletes each upload; nothing else of the bucket.',
  [STORED_ARCHIVES]:
    `Stored archives live under ${STORED_ARCHIVES} with a new key per upload; the upload functions write there and delete ` +
    'only the archive they just wrote when its version record is refused. The bucket is versioned and no role may delete ' +
    'versions, so a deleted archive stays recoverable for 30 days.',
};

/** The function serving GET /openapi.json; it is given the three API URLs for the document's `servers`. */
const OPENAPI_ENTRY = 'functions/handlers/openapi.ts';

/**
 * Least privilege of each route's function: the `access` of its route definition (functions/contract/routes), with
 * token settings for scoped routes. Routes sharing a handler module must declare the same access.
 */
function routeAccess(): Record<string, FunctionAccess> {
  const access: Record<string, FunctionAccess> = {};
  for (const route of ROUTES) {
    if (route.access === undefined) throw new Error(`Route ${route.id} declares no access; say what its function may touch.`);
    const { timeoutSeconds, ...rest } = route.access;
    const derived: FunctionAccess = {
      ...rest,
      ...(timeoutSeconds === undefined ? {} : { timeout: Duration.seconds(timeoutSeconds) }),
    };
    const previous = access[route.entry];
    if (previous !== undefined && JSON.stringify(previous) !== JSON.stringify(derived)) {
      throw new Error(`Routes served by '${route.entry}' declare different access; one function has one role.`);
    }
    access[route.entry] = derived;
  }
  return access;
}

/**
 * Least privilege, per handler module: the routes' own (routeAccess), and here the functions no route defines. A
 * function whose entry is missing fails the synth, so whoever adds a function decides what it may do.
 */
const ACCESS: Readonly<Record<string, FunctionAccess>> = {
  ...routeAccess(),
  // The deployments stream (read granted by the event source): writes history entries, purges undeployed slots,
  // publishes DeploymentChanged events; refreshes the desired state tag of each device whose deployments changed
  // (reads the device and queries its active slots, then one conditional UpdateItem of the device).
  // Device reports of a rollout's deployments are counted in the rollouts table: one TransactWriteItems of a Put
  // (conditioned on attribute_not_exists) and an Update (ADD). IAM checks each action of a transaction as its own
  // operation (PutItem, UpdateItem; ConditionCheckItem only for a ConditionCheck action, which it has none of), so
  // the write grant covers it without any read.
  [DEPLOYMENT_CHANGES_ENTRY]: {
    storage: true,
    tables: { deployments: 'RW', devices: 'Item', rollouts: 'W' },
    events: true,
    timeout: Duration.seconds(60),
  },
  // Users: Cognito InitiateAuth, an unauthenticated API (only the app client id). Devices: the token route's table
  // grants (the device's credential, the failed attempts' counts), the scrypt hash, which the memory size gives CPU
  // for, and a signature by the KMS key, whose key policy is the grant (kms:Sign, lib/device-token-key.ts).
  [AUTH_COGNITO_TOKEN_ENTRY]: { storage: true, tables: { ...authToken.access?.tables }, memorySize: 512 },
  // The device issuer's discovery document and key set: kms:GetPublicKey on the device token key only.
  [DEVICE_ISSUER_ENTRY]: { storage: false, memorySize: 256 },
  // Scheduled every minute: queries the presence table's `sweep` index for connected devices past their deadline,
  // marks each DISCONNECTED (conditional writes on the device) and clears its deadline. Under a minute, so that runs
  // do not overlap.
  [HEARTBEAT_SWEEPER.entry]: {
    storage: true,
    tables: { presence: 'RW', devices: 'RW' },
    timeout: Duration.seconds(50),
    memorySize: 512,
  },
  // The rollout queue: each message one chunk of a wave's targets, deployed or undeployed through the ordinary
  // deployment use case (devices and scenario versions read, conditional writes of slots), then marked done in the
  // rollouts table. It sends nothing: lost or failed chunks are the sweeper's to send again.
  [ROLLOUT_WORKER.entry]: {
    storage: true,
    tables: { devices: 'R', scenarios: 'R', deployments: 'RW', rollouts: 'RW' },
    timeout: ROLLOUT_WORKER_TIMEOUT,
  },
  // Scheduled every minute: queries the rollouts table's `sweep` index for running rollouts, starts, completes or
  // pauses their waves (conditional writes on the rollout's version) and sends their chunks to the rollout queue.
  // Under a minute, so that runs do not overlap.
  [ROLLOUT_SWEEPER.entry]: {
    storage: true,
    tables: { rollouts: 'RW' },
    rolloutQueue: true,
    timeout: Duration.seconds(50),
    memorySize: 512,
  },
  // S3 ObjectCreated under the upload prefix: reads the upload, stores it like a direct upload (server-side copy to
  // companies/, deleted again only when its version record is refused), deletes the upload.
  [ARCHIVE_UPLOADED.entry]: {
    storage: true,
    tables: { companies: 'RW', scenarios: 'RW' },
    timeout: ARCHIVE_UPLOADED_TIMEOUT,
    bucket: { [UPLOADED_ARCHIVES]: ['get', 'delete'], [STORED_ARCHIVES]: ['put', 'delete'] },
  },
  // Scheduled: queries the scenarios table's `sweep` index, rejects slots and drops staging records (conditional
  // writes); its object grant (head and delete only) is added with the schedule.
  [UPLOAD_SWEEPER.entry]: {
    storage: true,
    tables: { scenarios: 'RW' },
    timeout: Duration.minutes(5),
    memorySize: 256,
    bucket: { [UPLOADED_ARCHIVES]: ['get', 'delete'], [STORED_ARCHIVES]: ['get', 'delete'] },
  },
  // Stream reads are granted by the event sources; writes go to the index only (`index` access).
  [SEARCH_INDEXER_ENTRY]: { storage: false, timeout: Duration.seconds(60) },
  // Scans the two searchable tables into a new index (`admin` access), invoked by hand.
  [SEARCH_REINDEX_ENTRY]: { storage: false, tables: { devices: 'R', scenarios: 'R' }, timeout: Duration.minutes(15) },
  // Installs the index template and alias on deploy (`admin` access), retrying for up to 10 minutes while the new
  // domain refuses (SETUP_RETRY_BUDGET_MS); the last attempt fits in the remaining 2 minutes.
  [SEARCH_INDEX_SETUP_ENTRY]: { storage: false, timeout: SEARCH_INDEX_SETUP_TIMEOUT, memorySize: 256 },
};

/**
 * Throttling of the main and upload APIs' default stage (requests per second, burst). Uploads are heavy and rare. The
 * auth API's is a setting (ServiceSettings.authThrottle), given to its token route as a bucket of its own (it bounds
 * what wrong secrets cost in all) and, apart, to the stage's other routes (the key sets and discovery document).
 */
export const THROTTLE: Readonly<Record<Exclude<ApiName, 'auth'>, ThrottleSettings>> = {
  main: { rateLimit: 100, burstLimit: 200 },
  upload: { rateLimit: 10, burstLimit: 20 },
};

/**
 * Route-level throttling of each device route (main API), above the stage's user-facing default: 100,000 devices
 * reporting their health once a minute make ~1,667 requests/s on PUT /device/health alone. The account's API Gateway
 * limit (10,000/s per region by default) still applies across APIs.
 */
export const DEVICE_ROUTE_THROTTLE: ThrottleSettings = { rateLimit: 2_500, burstLimit: 5_000 };

/** One access-log line per request (HTTP API `$context` variables), JSON. */
const ACCESS_LOG_FORMAT = AccessLogFormat.custom(
  JSON.stringify({
    requestId: '$context.requestId',
    ip: '$context.identity.sourceIp',
    requestTime: '$context.requestTime',
    httpMethod: '$context.httpMethod',
    routeKey: '$context.routeKey',
    status: '$context.status',
    protocol: '$context.protocol',
    responseLength: '$context.responseLength',
    responseLatency: '$context.responseLatency',
    integrationLatency: '$context.integrationLatency',
    integrationStatus: '$context.integrationStatus',
    integrationError: '$context.integrationErrorMessage',
    // Why the JWT authorizer refused a request: the reason of a 401 that lib/monitoring.ts counts as a token failure.
    authorizerError: '$context.authorizer.error',
    userAgent: '$context.identity.userAgent',
  }),
);

/** Props of the stateless stack: what it uses of the stateful stack. */
export interface StatelessStackProps extends StackProps {
  /** Customer parameters (lib/settings.ts). */
  settings: ServiceSettings;
  /** The tables of StatefulStack, by logical name. */
  tables: Readonly<Record<TableName, ITable>>;
  archiveBucket: IBucket;
  /** Name of the stateful stack's export of the archive bucket's ARN (StatefulStack.archiveBucketArnExport). */
  archiveBucketArnExport: string;
  search: {
    /** Domain endpoint host name. */
    domainEndpoint: string;
    /** Name of the stateful stack's export of the domain ARN (StatefulStack.searchDomainArnExport). */
    domainArnExport: string;
    /** Execution role of each SEARCH_CLIENTS function, by handler module (named in the domain's access policy). */
    clientRoles: ReadonlyMap<string, IRole>;
    /** The domain itself, for its CloudWatch metrics (alarms). */
    domain: IDomain;
  };
  identity: {
    /** Token issuer (`iss`): `https://cognito-idp.<region>.amazonaws.com/<pool id>`, the JWT authorizers' issuer. */
    issuer: string;
    /** The issuer's public keys. */
    jwksUrl: string;
    /** The app client id: the access tokens' `client_id` (the JWT authorizers' audience), and the client the token endpoint signs in with. */
    clientId: string;
    /** The pool's pre-token-generation trigger (stateful stack): alarmed here with the other functions. */
    preTokenGeneration: IFunction;
  };
  /** The key listing cursors are signed with (StatefulStack.cursorSigningKey). */
  cursorSigningKey: ISecret;
  /** The device token key (StatefulStack.deviceTokenKey). */
  deviceTokens: {
    /** ARN of the KMS key; functions get only this, never key material. */
    keyArn: string;
    /** Execution role of each function using the key (DEVICE_KEY_USE), named in its key policy. */
    roles: ReadonlyMap<string, IRole>;
  };
}

/** The stateless half of one stage (see the module comment). */
export class StatelessStack extends Stack {
  readonly mainApi: HttpApi;
  readonly uploadApi: HttpApi;
  readonly authApi: HttpApi;
  readonly mainStage: HttpStage;
  readonly uploadStage: HttpStage;
  readonly authStage: HttpStage;
  /** Every function of this stack, keyed by `entry`. */
  readonly functions: ReadonlyMap<string, ServiceFunction>;
  readonly searchIndexer: ServiceFunction;
  /** Where stream batches that still fail after every retry are described (shard and sequence numbers). */
  readonly indexerDeadLetterQueue: Queue;
  /** Derives history entries and events from the deployments table's stream. */
  readonly deploymentChanges: ServiceFunction;
  /** Deployments stream batches that still fail after every retry. */
  readonly deploymentChangesDeadLetterQueue: Queue;
  /** Validates archives PUT through presigned upload slots (S3 ObjectCreated, ARCHIVE_UPLOADED.prefix). */
  readonly archiveUploaded: ServiceFunction;
  /** S3 events the archive function still failed on after its retries. */
  readonly archiveUploadedDeadLetterQueue: Queue;
  /** Rejects unfinished presigned uploads and deletes orphaned archives (UPLOAD_SWEEPER, on a schedule). */
  readonly uploadSweeper: ServiceFunction;
  /** Marks devices silent beyond their heartbeat window DISCONNECTED (HEARTBEAT_SWEEPER, on a schedule). */
  readonly heartbeatSweeper: ServiceFunction;
  /** Rollout work messages (one chunk of a wave's targets each), consumed by the rollout worker. */
  readonly rolloutQueue: Queue;
  /** Rollout messages that failed ROLLOUT_MAX_RECEIVE_COUNT receives. */
  readonly rolloutDeadLetterQueue: Queue;
  /** Deploys the chunks of the rollout queue (ROLLOUT_WORKER). */
  readonly rolloutWorker: ServiceFunction;
  /** Drives the waves of running rollouts and re-sends lost chunks (ROLLOUT_SWEEPER, on a schedule). */
  readonly rolloutSweeper: ServiceFunction;
  readonly monitoring: Monitoring;

  constructor(scope: Construct, id: string, props: StatelessStackProps) {
    super(scope, id, props);
    const { settings } = props;
    const replicas = replicasFor(settings.opensearch.instanceCount);
    const searchEnvironment = {
      [ENV.searchBackend]: 'opensearch',
      [ENV.openSearchUrl]: `https://${props.search.domainEndpoint}`,
      [ENV.openSearchIndex]: SEARCH_INDEX_ALIAS,
      [ENV.openSearchAuth]: 'aws-sigv4',
    } satisfies FunctionEnvironment;
    // A CloudFormation dynamic reference, resolved at deployment: no Secrets Manager call at cold start, but the value
    // is visible to whoever may read the functions' configuration (lambda:GetFunctionConfiguration).
    const cursorEnvironment = { [ENV.cursorSigningKey]: props.cursorSigningKey.secretValue.unsafeUnwrap() };
    const domainArn = Fn.importValue(props.search.domainArnExport);
    // Grants on archive objects name the bucket through the explicitly named export, so that their cdk-nag findings
    // (`<export>/<prefix>*`) can be acknowledged one by one.
    const archiveBucket = Bucket.fromBucketAttributes(this, 'ArchiveBucketReference', {
      bucketName: props.archiveBucket.bucketName,
      bucketArn: Fn.importValue(props.archiveBucketArnExport),
    });
    const objectsFinding = (pattern: string) => wildcardResourceFinding(`${props.archiveBucketArnExport}/${pattern}`);

    // DeploymentChanged events: customers subscribe with EventBridge rules on this bus.
    const deploymentEvents = new EventBus(this, 'DeploymentEvents');
    new CfnOutput(this, 'DeploymentEventBusName', {
      value: deploymentEvents.eventBusName,
      description: 'EventBridge bus of DeploymentChanged events.',
    });

    // Rollout work: created before the functions, since every function allowed to send to it gets its URL.
    this.rolloutDeadLetterQueue = deadLetterQueue(this, 'RolloutWorkDeadLetterQueue', 'queue');
    this.rolloutQueue = new Queue(this, 'RolloutWorkQueue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: ROLLOUT_QUEUE_VISIBILITY,
      // Longer than any wave waits for its chunks: the sweeper sends a chunk again after ROLLOUT_CHUNK_TIMEOUT anyway.
      retentionPeriod: Duration.days(4),
      deadLetterQueue: { queue: this.rolloutDeadLetterQueue, maxReceiveCount: ROLLOUT_MAX_RECEIVE_COUNT },
    });
    const rolloutEnvironment = {
      [ENV.rolloutQueueUrl]: this.rolloutQueue.queueUrl,
      [ENV.rolloutChunkTimeoutSeconds]: String(ROLLOUT_CHUNK_TIMEOUT.toSeconds()),
    } satisfies FunctionEnvironment;

    const functions = new Map<string, ServiceFunction>();
    const createFunction = (entry: string, environment: FunctionEnvironment = {}): ServiceFunction => {
      const existing = functions.get(entry);
      if (existing !== undefined) return existing;
      const access = ACCESS[entry];
      if (access === undefined)
        throw new Error(`lib/stateless-stack.ts: no ACCESS entry for '${entry}'; declare what its function may touch.`);
      const functionId = functionIdOf(entry);
      const searchAccess = SEARCH_CLIENTS[entry];
      const keyUse = DEVICE_KEY_USE[entry];
      let role: IRole | undefined;
      if (searchAccess !== undefined || keyUse !== undefined) {
        // Roles a resource policy of the stateful stack names (the domain's access policy, the device key's policy).
        const statefulRole = searchAccess !== undefined ? props.search.clientRoles.get(entry) : props.deviceTokens.roles.get(entry);
        if (statefulRole === undefined) throw new Error(`No role of the stateful stack for '${entry}' (SEARCH_CLIENTS, DEVICE_KEY_USE).`);
        // Mutable import: the function's other permissions become a policy of this stack attached to that role.
        role = Role.fromRoleArn(this, `${functionId}Role`, statefulRole.roleArn, { mutable: true });
      }
      const fn = new ServiceFunction(this, functionId, {
        entry,
        description: entry,
        logLevel: settings.logLevel,
        logRetention: settings.logRetention,
        ...(access.timeout === undefined ? {} : { timeout: access.timeout }),
        ...(access.memorySize === undefined ? {} : { memorySize: access.memorySize }),
        ...(access.packageFiles === undefined ? {} : { packageFiles: access.packageFiles }),
        ...(role === undefined ? {} : { role }),
        environment: {
          ...environment,
          ...(searchAccess === undefined ? {} : searchEnvironment),
          // Index administration creates indexes: their replicas follow the data node count (0 on one node).
          ...(searchAccess === 'admin' ? { [ENV.openSearchReplicas]: String(replicas) } : {}),
          ...(access.pagesListings === true ? cursorEnvironment : {}),
          ...(readsRolloutSettings(entry, access) ? rolloutEnvironment : {}),
        },
      });
      if (access.rolloutQueue === true) {
        // SendMessage covers SendMessageBatch; with SQS-managed encryption no KMS permission is needed.
        fn.addToRolePolicy(new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [this.rolloutQueue.queueArn] }));
      }
      if (searchAccess !== undefined && role !== undefined) {
        // The domain's access policy already allows exactly this; the same grant on the role keeps the function's
        // permissions readable in one place and survives permission boundaries, which limit resource-policy grants.
        fn.addToRolePolicy(
          new PolicyStatement({ actions: [...SEARCH_ACTIONS[searchAccess]], resources: searchResources(searchAccess, domainArn) }),
        );
        if (searchAccess === 'admin') {
          acknowledge(
            role,
            wildcardResourceFinding(`${props.search.domainArnExport}/*`),
            'Index administration (template, concrete indexes <alias>-<time>, the atomic _aliases switch, deleting old indexes) ' +
              'spans several OpenSearch paths of this one domain; only the setup custom resource and the manual reindex have it.',
          );
        }
      }
      if (keyUse !== undefined) {
        // The key policy already allows exactly this; the same grant on the role keeps the permissions readable here.
        fn.addToRolePolicy(new PolicyStatement({ actions: [keyUse], resources: [props.deviceTokens.keyArn] }));
      }
      if (readsDeviceSettings(entry)) {
        fn.addEnvironment(ENV.deviceHeartbeatSeconds, String(settings.devices.heartbeatSeconds));
        fn.addEnvironment(ENV.deviceTokenLifetimeSeconds, String(settings.devices.tokenLifetimeSeconds));
      }
      if (access.events === true) {
        deploymentEvents.grantPutEventsTo(fn);
        fn.addEnvironment(ENV.eventBusName, deploymentEvents.eventBusName);
      }
      for (const [name, table] of Object.entries(props.tables) as [TableName, ITable][]) {
        const tableAccess = access.tables?.[name];
        const indexes = (TABLES[name] as { globalSecondaryIndexes?: readonly { indexName: string }[] }).globalSecondaryIndexes ?? [];
        if (tableAccess !== undefined)
          fn.bindTable(
            table,
            tableAccess,
            TABLE_ENV[name],
            indexes.map((index) => index.indexName),
          );
        else if (access.storage) fn.addEnvironment(TABLE_ENV[name], table.tableName);
      }
      if (access.bucket !== undefined) {
        fn.bindBucket(archiveBucket, access.bucket, ARCHIVE_BUCKET_ENV);
        for (const pattern of Object.keys(access.bucket)) {
          const reason = OBJECT_PATTERN_REASONS[pattern];
          if (reason === undefined) throw new Error(`lib/stateless-stack.ts: no OBJECT_PATTERN_REASONS entry for '${pattern}'.`);
          acknowledge(fn.role as IRole, objectsFinding(pattern), reason);
        }
      } else if (access.storage) {
        fn.addEnvironment(ARCHIVE_BUCKET_ENV, props.archiveBucket.bucketName);
      }
      if (access.bucketGetObjectKeyPattern !== undefined) {
        fn.addToRolePolicy(
          new PolicyStatement({ actions: ['s3:GetObject'], resources: [archiveBucket.arnForObjects(access.bucketGetObjectKeyPattern)] }),
        );
        acknowledge(
          fn.role as IRole,
          objectsFinding(access.bucketGetObjectKeyPattern),
          `Presigned downloads of stored archives: s3:GetObject only, on the objects under ${access.bucketGetObjectKeyPattern} (one object per scenario version).`,
        );
      }
      functions.set(entry, fn);
      return fn;
    };

    // HTTP APIs: every route of ROUTES (and the device issuer's on the auth API); routes sharing a handler module share
    // one function. The APIs and stages come first: the device issuer is `{auth_url}/device` and device tokens are for
    // `{base_url}`, names the token function and the device authorizer both need.
    const newApi = (apiId: string, api: ApiName, description: string): { api: HttpApi; stage: HttpStage } => {
      const origins = settings.corsAllowedOrigins;
      const httpApi = new HttpApi(this, apiId, {
        description,
        createDefaultStage: false,
        ...(origins.length === 0
          ? {}
          : {
              corsPreflight: {
                allowOrigins: origins,
                allowMethods: [CorsHttpMethod.GET, CorsHttpMethod.POST, CorsHttpMethod.PUT, CorsHttpMethod.DELETE, CorsHttpMethod.OPTIONS],
                allowHeaders: ['authorization', 'content-type', 'idempotency-key', 'if-none-match'],
                exposeHeaders: ['location', 'retry-after', 'www-authenticate', 'idempotent-replayed', 'etag'],
                maxAge: Duration.hours(1),
              },
            }),
      });
      const accessLogs = new LogGroup(this, `${apiId}AccessLogs`, { retention: settings.logRetention });
      const stage = httpApi.addStage('DefaultStage', {
        stageName: '$default',
        autoDeploy: true,
        throttle: api === 'auth' ? settings.authThrottle : THROTTLE[api],
        accessLogSettings: { destination: new LogGroupLogDestination(accessLogs), format: ACCESS_LOG_FORMAT },
      });
      // Tokens the JWT authorizer refuses never reach a function: counted from the access log. Only on an API with
      // authorized routes, whose 401s are all refused tokens (the auth API's are wrong passwords).
      if (routesOn(api).some((route) => route.scope !== null)) countTokenFailures(accessLogs);
      return { api: httpApi, stage };
    };
    const main = newApi('MainApi', 'main', 'Device scenario service: scenarios, deployments, search, devices ({base_url}).');
    const upload = newApi('UploadApi', 'upload', 'Device scenario service: scenario uploads ({scenario_upload_url}).');
    const auth = newApi('AuthApi', 'auth', 'Device scenario service: token endpoint and JWKS, backed by Cognito and KMS ({auth_url}).');
    // Stage URLs end with `/`.
    const deviceIssuer = `${auth.stage.url}${DEVICE_ISSUER_PATH.slice(1)}`;
    const deviceAudience = main.stage.url;
    const deviceIssuerEnvironment = {
      [ENV.deviceTokenKeyArn]: props.deviceTokens.keyArn,
      [ENV.deviceTokenIssuer]: deviceIssuer,
      [ENV.deviceTokenAudience]: deviceAudience,
    } satisfies FunctionEnvironment;

    const integrationOf = (route: RouteDefinition): HttpRouteIntegration => {
      if (route.api !== 'auth') return new HttpLambdaIntegration(`${route.id}Integration`, createFunction(route.entry));
      const onAws = AUTH_ROUTES_ON_AWS[route.id];
      if (onAws === undefined) throw new Error(`lib/stateless-stack.ts: no AUTH_ROUTES_ON_AWS entry for auth route '${route.id}'.`);
      if (onAws === 'cognito-jwks')
        return new HttpUrlIntegration(`${route.id}Integration`, props.identity.jwksUrl, { method: HttpMethod.GET });
      const environment: FunctionEnvironment =
        onAws.entry === AUTH_COGNITO_TOKEN_ENTRY
          ? { [ENV.cognitoClientId]: props.identity.clientId, ...deviceIssuerEnvironment }
          : deviceIssuerEnvironment;
      return new HttpLambdaIntegration(`${route.id}Integration`, createFunction(onAws.entry, environment));
    };
    const addRoutes = ({ api: httpApi, stage }: { api: HttpApi; stage: HttpStage }, api: ApiName): void => {
      // One authorizer per API and issuer (an authorizer belongs to one API). Users: the pool's access tokens, whose
      // `client_id` is the app client (API Gateway checks `client_id` when a token has no `aud`); the issuer is built
      // from tokens (region, pool id), nothing hard-coded. Devices: the device issuer, whose discovery document API
      // Gateway reads, and the audience device tokens carry; created only on an API with device routes.
      const userAuthorizer = new HttpJwtAuthorizer('CognitoAccessToken', props.identity.issuer, { jwtAudience: [props.identity.clientId] });
      let deviceAuthorizer: HttpJwtAuthorizer | undefined;
      const deviceRouteKeys: string[] = [];
      for (const route of routesOn(api)) {
        let authorizer: HttpJwtAuthorizer | undefined;
        if (isDeviceRoute(route)) {
          deviceAuthorizer ??= new HttpJwtAuthorizer('DeviceAccessToken', deviceIssuer, { jwtAudience: [deviceAudience] });
          authorizer = deviceAuthorizer;
          deviceRouteKeys.push(`${route.method} ${route.path}`);
        } else if (route.scope !== null) authorizer = userAuthorizer;
        const [added] = httpApi.addRoutes({
          path: route.path,
          methods: [HttpMethod[route.method]],
          integration: integrationOf(route),
          // The token must hold the route's scope (its `scope` claim); the company in the path is the handler's check.
          ...(authorizer === undefined || route.scope === null ? {} : { authorizer, authorizationScopes: [route.scope] }),
        });
        if (route.scope === null && added !== undefined) {
          acknowledge(
            added,
            'AwsSolutions-APIG4',
            `${route.method} ${route.path} is public by contract (docs/contract.md): the token endpoint, the issuers' public keys and ` +
              'discovery document, or the OpenAPI document, which a caller needs before it has a token. Every other route has a JWT authorizer.',
          );
        }
      }
      // Route settings exist only on the CloudFormation stage (the L2 stage throttles its default route only). Device
      // routes get the fleet's throttle; the token route a bucket of its own, so that a flood of token requests never
      // throttles the device issuer's discovery document and key set, which the main API's device authorizer fetches.
      const throttled: [string, ThrottleSettings][] = deviceRouteKeys.map((key) => [key, DEVICE_ROUTE_THROTTLE]);
      if (api === 'auth') throttled.push([`${authToken.method} ${authToken.path}`, settings.authThrottle]);
      if (throttled.length > 0) {
        const routeSettings = Object.fromEntries(
          throttled.map(([key, throttle]) => [key, { ThrottlingRateLimit: throttle.rateLimit, ThrottlingBurstLimit: throttle.burstLimit }]),
        );
        (stage.node.defaultChild as CfnStage).addPropertyOverride('RouteSettings', routeSettings);
      }
    };
    addRoutes(main, 'main');
    addRoutes(upload, 'upload');
    addRoutes(auth, 'auth');
    this.mainApi = main.api;
    this.mainStage = main.stage;
    this.uploadApi = upload.api;
    this.uploadStage = upload.stage;
    this.authApi = auth.api;
    this.authStage = auth.stage;
    // The OpenAPI document names the addresses it is served from (its `servers`). The function only references the
    // APIs' ids, which depend on nothing, so naming the main API it is an integration of makes no dependency cycle.
    const openApiFunction = functions.get(OPENAPI_ENTRY);
    if (openApiFunction === undefined) throw new Error(`lib/stateless-stack.ts: no function for ${OPENAPI_ENTRY}.`);
    for (const [api, { stage }] of [
      ['main', main],
      ['upload', upload],
      ['auth', auth],
    ] as const)
      openApiFunction.addEnvironment(API_ADDRESS_ENV[api], stage.url);

    // The search indexer: the streams of the searchable tables (TABLES[name].stream 'search': devices, scenarios), in
    // order per item, retried from the failed record.
    this.searchIndexer = createFunction(SEARCH_INDEXER_ENTRY);
    this.indexerDeadLetterQueue = deadLetterQueue(this, 'SearchIndexerDeadLetterQueue');
    const streamed = (Object.keys(TABLES) as TableName[]).filter((name) => streamConsumerOf(name) === 'search');
    for (const table of streamed.map((name) => props.tables[name])) {
      this.searchIndexer.addEventSource(
        new DynamoEventSource(table, {
          startingPosition: StartingPosition.TRIM_HORIZON,
          batchSize: 100,
          bisectBatchOnError: true,
          retryAttempts: 10,
          reportBatchItemFailures: true,
          onFailure: new SqsDlq(this.indexerDeadLetterQueue),
        }),
      );
    }

    // Deployment changes: the deployments table's stream gives every DEPLOY and UNDEPLOY its history entry and event.
    // The consumer is idempotent, so a failed batch is retried (halved each time) until its records are a day old,
    // the stream's retention: a backend outage delays history and events, it does not lose them. Only records that
    // still fail then reach the dead-letter queue (alarmed; see docs/operations.md, "On AWS" for the replay).
    this.deploymentChanges = createFunction(DEPLOYMENT_CHANGES_ENTRY);
    this.deploymentChangesDeadLetterQueue = deadLetterQueue(this, 'DeploymentChangesDeadLetterQueue');
    for (const name of (Object.keys(TABLES) as TableName[]).filter((candidate) => streamConsumerOf(candidate) === 'deployment-changes')) {
      this.deploymentChanges.addEventSource(
        new DynamoEventSource(props.tables[name], {
          startingPosition: StartingPosition.TRIM_HORIZON,
          batchSize: 500,
          maxBatchingWindow: Duration.seconds(1),
          bisectBatchOnError: true,
          retryAttempts: -1,
          maxRecordAge: Duration.hours(23),
          reportBatchItemFailures: true,
          onFailure: new SqsDlq(this.deploymentChangesDeadLetterQueue),
        }),
      );
    }

    // Presigned uploads: S3 ObjectCreated under the upload prefix invokes the archive function asynchronously
    // (2 retries, then the dead-letter queue). The notification is configured through an imported reference to
    // the bucket, so its custom resource lives in this stack: configured from the bucket's own stack, it would
    // reference this stack's function while this stack already references the bucket (a cross-stack cycle).
    this.archiveUploaded = createFunction(ARCHIVE_UPLOADED.entry);
    this.archiveUploadedDeadLetterQueue = deadLetterQueue(this, 'ArchiveUploadedDeadLetterQueue');
    this.archiveUploaded.configureAsyncInvoke({
      retryAttempts: 2,
      maxEventAge: Duration.hours(6),
      onFailure: new SqsDestination(this.archiveUploadedDeadLetterQueue),
    });
    archiveBucket.addEventNotification(EventType.OBJECT_CREATED, new LambdaDestination(this.archiveUploaded), {
      prefix: ARCHIVE_UPLOADED.prefix,
    });

    // Unfinished uploads: a rule runs the sweeper every few minutes. It heads and deletes objects (expired or
    // interrupted uploads under uploads/, orphaned archives under companies/), and never writes one.
    this.uploadSweeper = createFunction(UPLOAD_SWEEPER.entry);
    // HEAD of an absent object answers 404 (not 403) only with ListBucket on the bucket itself.
    this.uploadSweeper.addToRolePolicy(new PolicyStatement({ actions: ['s3:ListBucket'], resources: [archiveBucket.bucketArn] }));
    new Rule(this, 'UploadSweeperSchedule', {
      description: 'Rejects presigned uploads that never finished and deletes orphaned archives.',
      schedule: Schedule.rate(Duration.minutes(UPLOAD_SWEEPER.everyMinutes)),
      // A missed run is made up by the next one.
      targets: [new LambdaFunction(this.uploadSweeper, { retryAttempts: 0 })],
    });

    // Silent devices: EventBridge Scheduler runs the heartbeat sweeper every minute (see scheduleEvery).
    this.heartbeatSweeper = createFunction(HEARTBEAT_SWEEPER.entry);
    scheduleEvery(this, 'HeartbeatSweeper', this.heartbeatSweeper, {
      entry: HEARTBEAT_SWEEPER.entry,
      everyMinutes: HEARTBEAT_SWEEPER.everyMinutes,
      description: 'Marks devices silent beyond their heartbeat window DISCONNECTED.',
    });

    // Rollouts: the worker consumes the rollout queue one message (chunk) per invocation, at most
    // ROLLOUT_WORKER.maxConcurrency invocations at once whatever the queue's depth, so a large rollout never takes
    // more of the account's concurrency than that from interactive requests. A chunk that throws is reported alone
    // (partial batch response), received again after the visibility timeout, and after ROLLOUT_MAX_RECEIVE_COUNT
    // receives moved to the dead-letter queue (alarmed); the sweeper sends a chunk not done again after
    // ROLLOUT_CHUNK_TIMEOUT, and the worker skips a chunk already done, so duplicates are harmless.
    this.rolloutWorker = createFunction(ROLLOUT_WORKER.entry);
    this.rolloutWorker.addEventSource(
      new SqsEventSource(this.rolloutQueue, {
        batchSize: ROLLOUT_WORKER.batchSize,
        maxConcurrency: ROLLOUT_WORKER.maxConcurrency,
        reportBatchItemFailures: true,
      }),
    );
    this.rolloutSweeper = createFunction(ROLLOUT_SWEEPER.entry);
    scheduleEvery(this, 'RolloutSweeper', this.rolloutSweeper, {
      entry: ROLLOUT_SWEEPER.entry,
      everyMinutes: ROLLOUT_SWEEPER.everyMinutes,
      description: 'Starts, completes and pauses the waves of running rollouts; sends their chunks again when lost.',
    });

    // The index template and alias: installed by the first deployment, the template put again by any deployment that
    // changes it (TemplateVersion, a hash of indexTemplate()). The domain's access policy is applied by the stateful
    // stack, which deploys first.
    const setup = createFunction(SEARCH_INDEX_SETUP_ENTRY);
    const setupProvider = new Provider(this, 'SearchIndexSetupProvider', {
      onEventHandler: setup,
      logGroup: new LogGroup(this, 'SearchIndexSetupProviderLogs', { retention: settings.logRetention }),
    });
    new CustomResource(this, 'SearchIndexSetup', {
      serviceToken: setupProvider.serviceToken,
      resourceType: 'Custom::SearchIndexSetup',
      properties: { Alias: SEARCH_INDEX_ALIAS, TemplateVersion: templateVersion(replicas) },
    });
    const reindex = createFunction(SEARCH_REINDEX_ENTRY);
    this.functions = functions;

    // Alarms: 5xx rate per API, errors and throttles per function, dead-letter queues, the indexer's stream lag, the
    // OpenSearch domain's health.
    this.monitoring = new Monitoring(this, 'Monitoring');
    for (const [api, name] of [
      [this.mainApi, 'Main API'],
      [this.uploadApi, 'Upload API'],
      [this.authApi, 'Auth API'],
    ] as const) {
      this.monitoring.api5xxRate(`${api.node.id}5xxRate`, api, name);
    }
    for (const [entry, fn] of functions) this.monitoring.functionHealth(fn.node.id, fn, entry);
    this.monitoring.functionHealth('PreTokenGenerationFunction', props.identity.preTokenGeneration, 'Cognito pre-token-generation trigger');
    this.monitoring.deadLetters('SearchIndexerDeadLetters', this.indexerDeadLetterQueue, 'Search indexer');
    this.monitoring.deadLetters('ArchiveUploadedDeadLetters', this.archiveUploadedDeadLetterQueue, 'Archive validation');
    this.monitoring.iteratorAge('SearchIndexerIteratorAge', this.searchIndexer, 'Search indexer');
    this.monitoring.deadLetters('DeploymentChangesDeadLetters', this.deploymentChangesDeadLetterQueue, 'Deployment changes');
    this.monitoring.iteratorAge('DeploymentChangesIteratorAge', this.deploymentChanges, 'Deployment changes');
    this.monitoring.searchDomain('SearchDomain', props.search.domain, settings.opensearch.volumeGiB);
    this.monitoring.scheduledFunction('HeartbeatSweeper', this.heartbeatSweeper, 'Heartbeat sweeper', {
      everyMinutes: HEARTBEAT_SWEEPER.everyMinutes,
      timeout: ACCESS[HEARTBEAT_SWEEPER.entry]?.timeout ?? Duration.seconds(50),
    });
    this.monitoring.deadLetters('RolloutWorkDeadLetters', this.rolloutDeadLetterQueue, 'Rollout worker');
    this.monitoring.queueAge('RolloutWorkQueueAge', this.rolloutQueue, 'Rollout queue');
    this.monitoring.scheduledFunction('RolloutSweeper', this.rolloutSweeper, 'Rollout sweeper', {
      everyMinutes: ROLLOUT_SWEEPER.everyMinutes,
      timeout: ACCESS[ROLLOUT_SWEEPER.entry]?.timeout ?? Duration.seconds(50),
    });

    new CfnOutput(this, 'MainApiUrl', { description: '{base_url}', value: this.mainStage.url });
    new CfnOutput(this, 'UploadApiUrl', { description: '{scenario_upload_url}', value: this.uploadStage.url });
    new CfnOutput(this, 'AuthApiUrl', { description: '{auth_url}: POST /token, GET /.well-known/jwks.json', value: this.authStage.url });
    new CfnOutput(this, 'DeviceTokenIssuer', {
      description: 'iss of device tokens; its discovery document is {issuer}/.well-known/openid-configuration.',
      value: deviceIssuer,
    });
    new CfnOutput(this, 'AlarmTopicArn', {
      description: 'SNS topic of every alarm of this stage (subscribe to it).',
      value: this.monitoring.topic.topicArn,
    });
    new CfnOutput(this, 'RolloutDeadLetterQueueUrl', {
      description: 'Rollout chunks that failed every receive (docs/operations.md, "On AWS").',
      value: this.rolloutDeadLetterQueue.queueUrl,
    });
    new CfnOutput(this, 'SearchReindexFunctionName', {
      description: 'Invoke to rebuild the search index from DynamoDB.',
      value: reindex.functionName,
    });

    this.acknowledgeCdkProvidedFunctions(setupProvider, setup);
  }

  /** Findings on the functions aws-cdk-lib adds for the S3 notification and the custom-resource provider. */
  private acknowledgeCdkProvidedFunctions(provider: Provider, onEvent: ServiceFunction): void {
    const notifications = this.node.tryFindChild('BucketNotificationsHandler050a0587b7544547bf325f094a3db834');
    if (notifications !== undefined) {
      acknowledge(
        notifications,
        managedPolicyFinding('service-role/AWSLambdaBasicExecutionRole'),
        "aws-cdk-lib's S3 notification handler (configures the uploads/ ObjectCreated notification at deploy time) comes with the " +
          'basic execution managed policy; it runs only during deployments.',
      );
    }
    acknowledge(
      provider,
      managedPolicyFinding('service-role/AWSLambdaBasicExecutionRole'),
      "The custom-resource provider framework function of aws-cdk-lib (relays the index setup's CloudFormation events) comes with " +
        'the basic execution managed policy; it runs only during deployments.',
    );
    const onEventId = this.getLogicalId(onEvent.node.defaultChild as CfnElement);
    acknowledge(
      provider,
      wildcardResourceFinding(`<${onEventId}.Arn>:*`),
      'The provider framework invokes the index setup function and any of its versions (lambda:InvokeFunction on <arn>:*), as ' +
        'aws-cdk-lib grants it; nothing else.',
    );
  }
}

/** The consumer of a table's stream (TABLES), if it has one. */
function streamConsumerOf(name: TableName): TableKeySchema['stream'] {
  const schema: TableKeySchema = TABLES[name];
  return schema.stream;
}

/**
 * Runs `fn` every `everyMinutes` from an EventBridge Scheduler schedule (asynchronous invocations; a run that fails is
 * not retried, the next one does what it left). Scheduler rather than an EventBridge rule: the schedule's role may
 * invoke this function only, and a schedule has its own failure metrics. Constructs `{id}ScheduleRole`, `{id}Schedule`.
 */
function scheduleEvery(
  stack: Stack,
  id: string,
  fn: ServiceFunction,
  schedule: { entry: string; everyMinutes: number; description: string },
): void {
  const role = new Role(stack, `${id}ScheduleRole`, {
    assumedBy: new ServicePrincipal('scheduler.amazonaws.com').withConditions({
      StringEquals: { 'aws:SourceAccount': stack.account },
    }),
    description: `EventBridge Scheduler invoking ${schedule.entry}`,
  });
  new ScheduledInvocation(stack, `${id}Schedule`, {
    description: schedule.description,
    schedule: ScheduleExpression.rate(Duration.minutes(schedule.everyMinutes)),
    target: new LambdaInvoke(fn, { role, retryAttempts: 0, maxEventAge: Duration.minutes(1) }),
  });
  acknowledge(
    role,
    wildcardResourceFinding(`<${stack.getLogicalId(fn.node.defaultChild as CfnElement)}.Arn>:*`),
    `The schedule's role may invoke ${schedule.entry} and its versions (lambda:InvokeFunction on <arn>:*, as aws-cdk-lib ` +
      'grants an invocation); no other function, no other action.',
  );
}

/**
 * An encrypted, TLS-only queue keeping failed events 14 days, the dead-letter queue of a Lambda event source or
 * asynchronous invocation, or (`of: 'queue'`) the one another queue's redrive policy names, which cdk-nag recognizes.
 */
function deadLetterQueue(scope: Construct, id: string, of: 'lambda' | 'queue' = 'lambda'): Queue {
  const queue = new Queue(scope, id, { encryption: QueueEncryption.SQS_MANAGED, enforceSSL: true, retentionPeriod: Duration.days(14) });
  if (of === 'queue') return queue;
  acknowledge(
    queue,
    'AwsSolutions-SQS3',
    'This queue is itself a dead-letter destination (of a Lambda event source mapping or asynchronous invocation), so it has ' +
      'no dead-letter queue of its own; its depth is alarmed.',
  );
  return queue;
}
