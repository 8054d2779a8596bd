/**
 * Stateless resources: one ServiceFunction per handler module of lib/routes.ts, the main and upload HTTP APIs
 * (decisions.md, "Addresses"), the search indexer fed by the devices and scenarios table streams, and the function
 * that validates archives uploaded through presigned upload slots (S3 ObjectCreated under ARCHIVE_UPLOADED.prefix).
 *
 * The 'auth' routes are not deployed here: on AWS the authentication address is an API in front of a Cognito user
 * pool (a later change). Until then the token settings come from CDK context:
 *
 * | context key     | environment variable | default (placeholder)                                   |
 * |-----------------|----------------------|---------------------------------------------------------|
 * | `jwtIssuer`     | JWT_ISSUER           | `https://auth.example.invalid`                          |
 * | `jwtAudience`   | JWT_AUDIENCE         | `device-scenario-service`                               |
 * | `jwksUrl`       | JWKS_URL             | `https://auth.example.invalid/.well-known/jwks.json`    |
 * | `searchBackend` | SEARCH_BACKEND       | `opensearch`                                            |
 * | `opensearchUrl` | OPENSEARCH_URL       | empty (the variable is then not set)                    |
 * | `logLevel`      | POWERTOOLS_LOG_LEVEL | `INFO`                                                  |
 *
 * e.g. `npx cdk synth -c jwtIssuer=https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_abc -c jwtAudience=...`.
 */
import { CfnOutput, Duration, Stack, type StackProps } from 'aws-cdk-lib';
import { HttpApi, HttpMethod, type HttpStage, type ThrottleSettings } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { EventBus } from 'aws-cdk-lib/aws-events';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import { DynamoEventSource, SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Bucket, EventType, type IBucket } from 'aws-cdk-lib/aws-s3';
import { LambdaDestination } from 'aws-cdk-lib/aws-s3-notifications';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { TABLES, type TableName } from '../functions/adapters/aws/tables.js';
import { type ApiName, ARCHIVE_UPLOADED, ROUTES, type RouteDefinition, SEARCH_INDEXER_ENTRY } from './routes.js';
import { type Access, ServiceFunction } from './service-function.js';

/** The variable each table's name is read from (functions/platform/config.ts). */
export const TABLE_ENV: Readonly<Record<TableName, string>> = {
  companies: 'COMPANIES_TABLE',
  devices: 'DEVICES_TABLE',
  scenarios: 'SCENARIOS_TABLE',
  deployments: 'DEPLOYMENTS_TABLE',
  idempotency: 'IDEMPOTENCY_TABLE',
};

/** The variable the archive bucket's name is read from. */
export const ARCHIVE_BUCKET_ENV = 'ARCHIVE_BUCKET';

/** Placeholder defaults of the context keys (see the table above). */
export const CONTEXT_DEFAULTS = {
  jwtIssuer: 'https://auth.example.invalid',
  jwtAudience: 'device-scenario-service',
  jwksUrl: 'https://auth.example.invalid/.well-known/jwks.json',
  searchBackend: 'opensearch',
  opensearchUrl: '',
  logLevel: 'INFO',
} as const;

/** What one handler module may touch. */
interface FunctionAccess {
  /**
   * The handler builds the composition root (`services()`), whose storageConfig() requires every table and bucket
   * name at cold start. Names are not permissions: the function gets the names, and grants only for `tables`/`bucket`.
   */
  storage: boolean;
  tables?: Partial<Record<TableName, Access>>;
  bucket?: Access;
  /** Objects the bucket grant covers. @default '*' */
  bucketKeyPattern?: string;
  /**
   * `s3:GetObject` only, on the objects matching this pattern: what presigning downloads needs (a presigned URL
   * carries its signer's permissions). Used instead of `bucket`.
   */
  bucketGetObjectKeyPattern?: string;
  /** Uses the search index: gets SEARCH_BACKEND and OPENSEARCH_URL. */
  search?: boolean;
  /** Publishes DeploymentChanged events: gets EVENT_BUS_NAME and events:PutEvents on the bus. */
  events?: boolean;
  /** @default HTTP (29 s) */
  timeout?: Duration;
}

/** How long validating and storing one presigned upload may take (archives above the upload API's 10 MB limit). */
const ARCHIVE_UPLOADED_TIMEOUT = Duration.minutes(2);

/**
 * Least privilege, per handler module. A route whose entry is missing here fails the synth, so whoever adds a
 * route decides what its function may do.
 */
const ACCESS: Readonly<Record<string, FunctionAccess>> = {
  'functions/handlers/scenarios-skeleton.ts': { storage: false },
  'functions/handlers/scenarios-schema.ts': { storage: false },
  'functions/handlers/openapi.ts': { storage: false },
  // Reads the devices and scenario versions a request names; writes active deployments and their history.
  'functions/handlers/deployments-execute.ts': { storage: true, tables: { devices: 'R', scenarios: 'R', deployments: 'RW', idempotency: 'RW' }, events: true },
  // Checks the device exists, pages active deployments.
  'functions/handlers/deployments-list.ts': { storage: true, tables: { devices: 'R', deployments: 'R' } },
  // Pages the history: one Query on the deployments table or its gsi1/gsi2 (a read grant covers the indexes).
  'functions/handlers/deployments-history.ts': { storage: true, tables: { deployments: 'R' } },
  // Only the index (OpenSearch, authorized by the search adapter, not by table grants).
  'functions/handlers/search.ts': { storage: true, search: true },
  // The index, plus company names for the `companies` filter.
  'functions/handlers/search-filters.ts': { storage: true, search: true, tables: { companies: 'R' } },
  // Quota check and usage update on companies, version record on scenarios (one transaction), archive put/delete.
  'functions/handlers/scenarios-upload.ts': { storage: true, tables: { companies: 'RW', scenarios: 'RW' }, bucket: 'RW' },
  // Checks the company, records the slot (scenarios table, `UPLOAD#`), presigns a PUT. Its credentials sign the URL
  // handed to the client, so its bucket grant is PutObject under the upload prefix only.
  'functions/handlers/scenarios-upload-slot.ts': {
    storage: true, tables: { companies: 'R', scenarios: 'RW' }, bucket: 'W', bucketKeyPattern: `${ARCHIVE_UPLOADED.prefix}*`,
  },
  // Reads the slot.
  'functions/handlers/scenarios-upload-status.ts': { storage: true, tables: { scenarios: 'R' } },
  // Pages the scenario summaries (one Query).
  'functions/handlers/scenarios-list.ts': { storage: true, tables: { scenarios: 'R' } },
  // Reads a summary and its versions, presigns each version's download (stored archives live under `companies/`).
  'functions/handlers/scenarios-get.ts': { storage: true, tables: { scenarios: 'R' }, bucketGetObjectKeyPattern: 'companies/*' },
  // Reads one version, presigns its download.
  'functions/handlers/scenario-version-get.ts': { storage: true, tables: { scenarios: 'R' }, bucketGetObjectKeyPattern: 'companies/*' },
  // Reads the company's quota and usage.
  'functions/handlers/scenarios-usage.ts': { storage: true, tables: { companies: 'R' } },
  // S3 ObjectCreated under the upload prefix: reads the upload, stores it like a direct upload, deletes the upload.
  [ARCHIVE_UPLOADED.entry]: {
    storage: true, tables: { companies: 'RW', scenarios: 'RW' }, bucket: 'RW', timeout: ARCHIVE_UPLOADED_TIMEOUT,
  },
  // Stream reads are granted by the event sources; writes go to the index only.
  [SEARCH_INDEXER_ENTRY]: { storage: true, search: true, timeout: Duration.seconds(60) },
};

/** Throttling of each API's default stage (requests per second, burst). Uploads are heavy and rare. */
const THROTTLE: Readonly<Record<Exclude<ApiName, 'auth'>, ThrottleSettings>> = {
  main: { rateLimit: 100, burstLimit: 200 },
  upload: { rateLimit: 10, burstLimit: 20 },
};

export interface StatelessStackProps extends StackProps {
  /** The tables of StatefulStack, by logical name. */
  tables: Readonly<Record<TableName, ITable>>;
  archiveBucket: IBucket;
}

export class StatelessStack extends Stack {
  readonly mainApi: HttpApi;
  readonly uploadApi: HttpApi;
  readonly mainStage: HttpStage;
  readonly uploadStage: HttpStage;
  /** One function per handler module, keyed by `entry`. */
  readonly functions: ReadonlyMap<string, ServiceFunction>;
  readonly searchIndexer: ServiceFunction;
  /** Where stream batches that still fail after every retry are described (shard and sequence numbers). */
  readonly indexerDeadLetterQueue: Queue;
  /** Validates archives PUT through presigned upload slots (S3 ObjectCreated, ARCHIVE_UPLOADED.prefix). */
  readonly archiveUploaded: ServiceFunction;
  /** S3 events the archive function still failed on after its retries. */
  readonly archiveUploadedDeadLetterQueue: Queue;

  constructor(scope: Construct, id: string, props: StatelessStackProps) {
    super(scope, id, props);

    const authEnvironment = {
      JWT_ISSUER: this.contextString('jwtIssuer'),
      JWT_AUDIENCE: this.contextString('jwtAudience'),
      JWKS_URL: this.contextString('jwksUrl'),
    };
    const backend = this.contextString('searchBackend');
    if (backend !== 'opensearch' && backend !== 'embedded') throw new Error(`CDK context 'searchBackend' must be 'opensearch' or 'embedded'; got '${backend}'.`);
    const searchEnvironment: Record<string, string> = { SEARCH_BACKEND: backend };
    const opensearchUrl = this.contextString('opensearchUrl');
    if (opensearchUrl !== '') searchEnvironment.OPENSEARCH_URL = opensearchUrl;
    const logLevel = this.contextString('logLevel');

    // DeploymentChanged events (issue 4): customers subscribe with EventBridge rules on this bus.
    const deploymentEvents = new EventBus(this, 'DeploymentEvents');
    new CfnOutput(this, 'DeploymentEventBusName', { value: deploymentEvents.eventBusName, description: 'EventBridge bus of DeploymentChanged events.' });

    const createFunction = (functionId: string, entry: string, environment: Record<string, string>): ServiceFunction => {
      const access = ACCESS[entry];
      if (access === undefined) throw new Error(`lib/stateless-stack.ts: no ACCESS entry for '${entry}'; declare what its function may touch.`);
      const fn = new ServiceFunction(this, functionId, {
        entry,
        description: entry,
        logLevel,
        ...(access.timeout === undefined ? {} : { timeout: access.timeout }),
        environment: { ...environment, ...(access.search === true ? searchEnvironment : {}) },
      });
      if (access.events === true) {
        deploymentEvents.grantPutEventsTo(fn);
        fn.addEnvironment('EVENT_BUS_NAME', deploymentEvents.eventBusName);
      }
      if (access.storage) {
        for (const [name, table] of Object.entries(props.tables) as [TableName, ITable][]) {
          const tableAccess = access.tables?.[name];
          if (tableAccess === undefined) fn.addEnvironment(TABLE_ENV[name], table.tableName);
          else fn.bindTable(table, tableAccess, TABLE_ENV[name]);
        }
        if (access.bucket !== undefined) fn.bindBucket(props.archiveBucket, access.bucket, ARCHIVE_BUCKET_ENV, access.bucketKeyPattern);
        else {
          fn.addEnvironment(ARCHIVE_BUCKET_ENV, props.archiveBucket.bucketName);
          if (access.bucketGetObjectKeyPattern !== undefined) {
            fn.addToRolePolicy(
              new PolicyStatement({ actions: ['s3:GetObject'], resources: [props.archiveBucket.arnForObjects(access.bucketGetObjectKeyPattern)] }),
            );
          }
        }
      }
      return fn;
    };

    // HTTP functions: routes sharing a handler module share one function.
    const httpRoutes = ROUTES.filter((route) => route.api !== 'auth');
    const functions = new Map<string, ServiceFunction>();
    for (const route of httpRoutes) {
      if (!functions.has(route.entry)) functions.set(route.entry, createFunction(functionIdOf(route.entry), route.entry, authEnvironment));
    }
    this.functions = functions;

    const httpApi = (apiId: string, api: Exclude<ApiName, 'auth'>, description: string): { api: HttpApi; stage: HttpStage } => {
      const httpApi = new HttpApi(this, apiId, { description, createDefaultStage: false });
      const stage = httpApi.addStage('DefaultStage', { stageName: '$default', autoDeploy: true, throttle: THROTTLE[api] });
      for (const route of httpRoutes.filter((candidate) => candidate.api === api)) addRoute(httpApi, route, functions);
      return { api: httpApi, stage };
    };
    const main = httpApi('MainApi', 'main', 'Device scenario service: scenarios, deployments, search ({base_url}).');
    const upload = httpApi('UploadApi', 'upload', 'Device scenario service: scenario uploads ({scenario_upload_url}).');
    this.mainApi = main.api;
    this.mainStage = main.stage;
    this.uploadApi = upload.api;
    this.uploadStage = upload.stage;

    // The search indexer: the streams of the searchable tables (TABLES.streamsToSearch: devices, scenarios), in order
    // per item, retried from the failed record.
    this.searchIndexer = createFunction('SearchIndexerFunction', SEARCH_INDEXER_ENTRY, {});
    this.indexerDeadLetterQueue = deadLetterQueue(this, 'SearchIndexerDeadLetterQueue');
    const streamed = (Object.keys(TABLES) as TableName[]).filter((name) => TABLES[name].streamsToSearch);
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

    // Presigned uploads: S3 ObjectCreated under the upload prefix invokes the archive function asynchronously
    // (2 retries, then the dead-letter queue). The notification is configured through an imported reference to
    // the bucket, so its custom resource lives in this stack: configured from the bucket's own stack, it would
    // reference this stack's function while this stack already references the bucket (a cross-stack cycle).
    this.archiveUploaded = createFunction('ArchiveUploadedFunction', ARCHIVE_UPLOADED.entry, {});
    this.archiveUploadedDeadLetterQueue = deadLetterQueue(this, 'ArchiveUploadedDeadLetterQueue');
    this.archiveUploaded.configureAsyncInvoke({
      retryAttempts: 2,
      maxEventAge: Duration.hours(6),
      onFailure: new SqsDestination(this.archiveUploadedDeadLetterQueue),
    });
    Bucket.fromBucketAttributes(this, 'ArchiveBucketReference', {
      bucketName: props.archiveBucket.bucketName,
      bucketArn: props.archiveBucket.bucketArn,
    }).addEventNotification(EventType.OBJECT_CREATED, new LambdaDestination(this.archiveUploaded), { prefix: ARCHIVE_UPLOADED.prefix });

    new CfnOutput(this, 'MainApiUrl', { description: '{base_url}', value: this.mainStage.url });
    new CfnOutput(this, 'UploadApiUrl', { description: '{scenario_upload_url}', value: this.uploadStage.url });
  }

  private contextString(key: keyof typeof CONTEXT_DEFAULTS): string {
    const value: unknown = this.node.tryGetContext(key);
    if (value === undefined || value === null) return CONTEXT_DEFAULTS[key];
    if (typeof value !== 'string') throw new Error(`CDK context '${key}' must be a string; got ${JSON.stringify(value)}.`);
    return value;
  }
}

/** An encrypted, TLS-only queue keeping failed events 14 days. */
function deadLetterQueue(scope: Construct, id: string): Queue {
  return new Queue(scope, id, { encryption: QueueEncryption.SQS_MANAGED, enforceSSL: true, retentionPeriod: Duration.days(14) });
}

/** `functions/handlers/deployments-list.ts` → `DeploymentsListFunction`. */
function functionIdOf(entry: string): string {
  const base = entry.replace(/^.*\//, '').replace(/\.ts$/, '');
  return `${base.split(/[^A-Za-z0-9]+/).map((part) => part.charAt(0).toUpperCase() + part.slice(1)).join('')}Function`;
}

function addRoute(api: HttpApi, route: RouteDefinition, functions: ReadonlyMap<string, ServiceFunction>): void {
  const fn = functions.get(route.entry);
  if (fn === undefined) throw new Error(`No function for ${route.entry}.`);
  api.addRoutes({
    path: route.path,
    methods: [route.method === 'GET' ? HttpMethod.GET : HttpMethod.POST],
    integration: new HttpLambdaIntegration(`${route.id}Integration`, fn),
  });
}
