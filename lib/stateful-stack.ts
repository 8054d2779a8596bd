/**
 * Stateful resources: the DynamoDB tables (key design in functions/adapters/aws/tables.ts), the scenario archive
 * bucket (and its access-log bucket), the OpenSearch domain (lib/search-domain.ts, with the roles its access policy
 * names), the Cognito user pool (lib/identity.ts, with its pre-token-generation trigger), the secret listing
 * cursors are signed with, and the KMS key device tokens are signed with (lib/device-token-key.ts, with the roles its
 * key policy names). Data holders are
 * retained when the stack is deleted, and none has a physical name, so a second stage (or a re-created stack) never
 * collides with retained resources.
 */
import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import { AttributeType, BillingMode, StreamViewType, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { BlockPublicAccess, Bucket, BucketEncryption, type CorsRule, HttpMethods, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { TABLES, type TableKeySchema } from '../functions/adapters/aws/tables.js';
import { UPLOAD_PREFIX } from '../functions/contract/archives.js';
import { CORS_MAX_AGE_SECONDS } from '../functions/contract/cors.js';
import type { FunctionDefinition } from '../functions/contract/function.js';
import type { DeviceKeyUse, RouteDefinition, SearchAccess } from '../functions/contract/route.js';
import { TABLE_DEFINITIONS, TABLE_NAMES, type TableName } from '../functions/contract/tables.js';
import { awsFunctionAccess } from './constructs/function-access.js';
import { DeviceTokenKey } from './device-token-key.js';
import { Identity } from './identity.js';
import { acknowledge } from './nag.js';
import { SearchDomain } from './search-domain.js';
import type { ServiceSettings } from './settings.js';

/** Props of the stateful stack. */
export interface StatefulStackProps extends StackProps {
  /** Customer parameters (lib/settings.ts). */
  settings: ServiceSettings;
  /** Every route served on AWS: the search domain and the device token key name the roles of their functions. */
  routes: readonly RouteDefinition[];
  /** Every function no route runs: as `routes`, and the Cognito trigger lives here with its pool. */
  functions: readonly FunctionDefinition[];
}

/** How long a deleted archive can be restored (its noncurrent version is kept), days. */
export const NONCURRENT_ARCHIVE_DAYS = 30;

/** Presigned URLs are signed for these headers (functions/core/scenarios/presigned-upload.ts). */
const PRESIGNED_HEADERS = ['content-type'];

/** The stateful half of one stage (see the module comment). */
export class StatefulStack extends Stack {
  readonly companiesTable: Table;
  readonly devicesTable: Table;
  readonly scenariosTable: Table;
  readonly deploymentsTable: Table;
  /** Last-seen times and heartbeat deadlines of devices (small items rewritten by every health report). */
  readonly presenceTable: Table;
  /** Rollouts, their target chunks and wave counts. */
  readonly rolloutsTable: Table;
  readonly idempotencyTable: Table;
  /** Failed client authentications of the token endpoint, per client id and source, expired by TTL. */
  readonly clientFailuresTable: Table;
  /** Every table by logical name (TABLES). */
  readonly tables: Readonly<Record<TableName, Table>>;
  /** Uploaded scenario archives. */
  readonly archiveBucket: Bucket;
  /** Server access logs of the archive bucket. */
  readonly accessLogsBucket: Bucket;
  /**
   * Name of the export of the archive bucket's ARN. The stateless stack builds its object grants from
   * `Fn::ImportValue` of this name, so the cdk-nag findings of those `…/prefix/*` resources have a stable name to
   * acknowledge.
   */
  readonly archiveBucketArnExport: string;
  readonly search: SearchDomain;
  /** Name of the export of the OpenSearch domain's ARN (see archiveBucketArnExport). */
  readonly searchDomainArnExport: string;
  readonly identity: Identity;
  /**
   * The key of the listings' cursor signatures (CURSOR_SIGNING_KEY of the functions that page): 64 generated letters
   * and digits, read as base64 (48 bytes). Retained, so that a re-created stack keeps the key.
   */
  readonly cursorSigningKey: Secret;
  /** The KMS key device tokens are signed with, and the roles of the two functions its key policy lets use it. */
  readonly deviceTokenKey: DeviceTokenKey;

  constructor(scope: Construct, id: string, props: StatefulStackProps) {
    super(scope, id, props);
    const { settings } = props;
    this.tables = this.createTables();
    this.companiesTable = this.tables.companies;
    this.devicesTable = this.tables.devices;
    this.scenariosTable = this.tables.scenarios;
    this.deploymentsTable = this.tables.deployments;
    this.presenceTable = this.tables.presence;
    this.rolloutsTable = this.tables.rollouts;
    this.idempotencyTable = this.tables.idempotency;
    this.clientFailuresTable = this.tables.clientFailures;
    this.accessLogsBucket = this.createAccessLogsBucket(settings);
    this.archiveBucket = this.createArchiveBucket(settings);
    this.archiveBucketArnExport = `${this.stackName}:ArchiveBucketArn`;
    this.exportValue(this.archiveBucket.bucketArn, { name: this.archiveBucketArnExport });

    const { searchClients, deviceKeyUsers } = resourcePolicyUsers(props.routes, props.functions);
    this.search = new SearchDomain(this, 'Search', { ...settings.opensearch, logRetention: settings.logRetention, clients: searchClients });
    this.searchDomainArnExport = `${this.stackName}:SearchDomainArn`;
    this.exportValue(this.search.domain.domainArn, { name: this.searchDomainArnExport });

    this.identity = new Identity(this, 'Identity', {
      featurePlan: settings.cognitoFeaturePlan,
      preTokenGeneration: cognitoTrigger(props.functions),
      logLevel: settings.logLevel,
      logRetention: settings.logRetention,
    });
    this.cursorSigningKey = this.createCursorSigningKey();
    this.deviceTokenKey = new DeviceTokenKey(this, 'DeviceTokens', { users: deviceKeyUsers });
    this.addOutputs();
  }

  /** Every table of TABLE_DEFINITIONS with its key design (TABLES), and the outputs naming the two the customer writes. */
  private createTables(): Record<TableName, Table> {
    const tables = Object.fromEntries(TABLE_NAMES.map((name) => [name, this.table(name, TABLES[name])])) as Record<TableName, Table>;
    // Companies and devices are written by the customer (docs/aws.md, "First company, first user, first token").
    new CfnOutput(this, 'CompaniesTableName', {
      description: 'Companies table (one item per company: quota).',
      value: tables.companies.tableName,
    });
    new CfnOutput(this, 'DevicesTableName', {
      description: 'Devices table (one item per device of the fleet).',
      value: tables.devices.tableName,
    });
    return tables;
  }

  /** The server access logs of the archive bucket, kept as long as the other logs. */
  private createAccessLogsBucket(settings: ServiceSettings): Bucket {
    const retentionDays = settings.logRetention === RetentionDays.INFINITE ? undefined : settings.logRetention;
    const bucket = new Bucket(this, 'AccessLogsBucket', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      versioned: false,
      lifecycleRules: retentionDays === undefined ? [] : [{ id: 'ExpireAccessLogs', expiration: Duration.days(retentionDays) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    bucket.policy?.applyRemovalPolicy(RemovalPolicy.RETAIN);
    return bucket;
  }

  /**
   * The archive bucket: versioned, uploads expire, accesses logged, CORS for the browsers' presigned requests: from
   * `corsAllowedOrigins`, else from any API Gateway endpoint of the region (this stack cannot name the stateless
   * stack's API; S3 allows one `*` per origin), so that the operator console's uploads work out of the box.
   */
  private createArchiveBucket(settings: ServiceSettings): Bucket {
    const origins =
      settings.corsAllowedOrigins.length > 0 ? settings.corsAllowedOrigins : [`https://*.execute-api.${this.region}.${this.urlSuffix}`];
    const cors: CorsRule[] = [
      {
        // Browsers PUT archives to presigned upload URLs and may fetch presigned download URLs.
        allowedMethods: [HttpMethods.PUT, HttpMethods.GET, HttpMethods.HEAD],
        allowedOrigins: origins,
        allowedHeaders: PRESIGNED_HEADERS,
        exposedHeaders: ['ETag'],
        maxAge: CORS_MAX_AGE_SECONDS,
      },
    ];
    const bucket = new Bucket(this, 'ArchiveBucket', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      // Archive keys are unique per upload and never overwritten, but the upload functions may delete objects (their
      // own refused or processed uploads): with versioning, and no role allowed s3:DeleteObjectVersion, a deleted
      // archive stays recoverable as a noncurrent version for NONCURRENT_ARCHIVE_DAYS.
      versioned: true,
      serverAccessLogsBucket: this.accessLogsBucket,
      serverAccessLogsPrefix: 'archive-bucket/',
      cors,
      lifecycleRules: [
        { id: 'AbortIncompleteMultipartUploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
        // Presigned uploads live under uploads/ only until the validation function has run: accepted archives are
        // copied to companies/... and the upload deleted, rejected ones (REJECTED with the 409/413/422 problem) are
        // deleted too. Anything still there a day later (a slot never completed, a rejected upload whose deletion
        // failed, an event that went to the dead-letter queue) expires rather than escaping quota accounting.
        // Deleted uploads need no keeping: their noncurrent versions go after a day too.
        {
          id: 'ExpireUnprocessedAndRejectedUploads',
          prefix: UPLOAD_PREFIX,
          expiration: Duration.days(1),
          noncurrentVersionExpiration: Duration.days(1),
        },
        // Deleted or replaced objects elsewhere (stored archives) stay recoverable for NONCURRENT_ARCHIVE_DAYS; delete
        // markers left without versions are removed.
        {
          id: 'ExpireNoncurrentVersions',
          noncurrentVersionExpiration: Duration.days(NONCURRENT_ARCHIVE_DAYS),
          expiredObjectDeleteMarker: true,
        },
      ],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    // The TLS-only policy stays with the retained bucket.
    bucket.policy?.applyRemovalPolicy(RemovalPolicy.RETAIN);
    return bucket;
  }

  /** The retained, generated cursor signing key. */
  private createCursorSigningKey(): Secret {
    const secret = new Secret(this, 'CursorSigningKey', {
      description: 'HMAC-SHA256 key of the listing cursors (CURSOR_SIGNING_KEY of the paging functions); base64.',
      generateSecretString: { passwordLength: 64, excludePunctuation: true, includeSpace: false },
      removalPolicy: RemovalPolicy.RETAIN,
    });
    acknowledge(
      secret,
      'AwsSolutions-SMG4',
      'The cursor signing key only authenticates the opaque paging cursors the service hands out; rotating it (docs/aws.md, ' +
        '"Commands") merely makes outstanding cursors answer 400, and clients then list again from the first page.',
    );
    return secret;
  }

  /** Stack outputs (docs/aws.md, "First company, first user, first token"), under stable names. */
  private addOutputs(): void {
    new CfnOutput(this, 'UserPoolId', {
      description: 'Cognito user pool of the token endpoint and of users administration.',
      value: this.identity.userPool.userPoolId,
    });
    new CfnOutput(this, 'UserPoolClientId', {
      description: "App client of the token endpoint (the tokens' aud).",
      value: this.identity.client.userPoolClientId,
    });
    new CfnOutput(this, 'DeviceTokenKeyArn', {
      description: 'KMS key signing device tokens (ES256); only the token function may sign with it.',
      value: this.deviceTokenKey.key.keyArn,
    });
    new CfnOutput(this, 'SearchDomainEndpoint', {
      description: 'OpenSearch domain endpoint (SigV4 only).',
      value: `https://${this.search.domain.domainEndpoint}`,
    });
  }

  private table(name: TableName, schema: TableKeySchema): Table {
    const table = new Table(this, TABLE_DEFINITIONS[name].constructId, {
      partitionKey: { name: schema.partitionKey, type: AttributeType.STRING },
      ...(schema.sortKey === undefined ? {} : { sortKey: { name: schema.sortKey, type: AttributeType.STRING } }),
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      encryption: TableEncryption.AWS_MANAGED,
      ...(schema.stream === undefined
        ? {}
        : { stream: schema.streamView === 'NEW_IMAGE' ? StreamViewType.NEW_IMAGE : StreamViewType.NEW_AND_OLD_IMAGES }),
      ...(schema.timeToLiveAttribute === undefined ? {} : { timeToLiveAttribute: schema.timeToLiveAttribute }),
      // Retained tables hold the customer's data: CloudFormation or a console click must not delete them either.
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    // Indexes come from TABLES (deployments: gsi1 scenario history, gsi2 company history). CloudFormation creates or
    // deletes at most one global secondary index per table per stack update: add indexes one deployment at a time.
    // History entries written before an index existed need its keys backfilled (functions/local/migrate-shards.ts).
    for (const index of schema.globalSecondaryIndexes ?? []) {
      table.addGlobalSecondaryIndex({
        indexName: index.indexName,
        partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
        sortKey: { name: index.sortKey, type: AttributeType.STRING },
      });
    }
    return table;
  }
}

/**
 * The functions the stateful stack's resource policies name, by handler module: the search domain's clients (their
 * access's `search`) and the device token key's users (`deviceKey`).
 */
function resourcePolicyUsers(
  routes: readonly RouteDefinition[],
  functions: readonly FunctionDefinition[],
): { searchClients: Map<string, SearchAccess>; deviceKeyUsers: Map<string, DeviceKeyUse> } {
  const searchClients = new Map<string, SearchAccess>();
  const deviceKeyUsers = new Map<string, DeviceKeyUse>();
  for (const [entry, access] of awsFunctionAccess(routes, functions)) {
    if (access.search !== undefined) searchClients.set(entry, access.search);
    if (access.deviceKey !== undefined) deviceKeyUsers.set(entry, access.deviceKey);
  }
  return { searchClients, deviceKeyUsers };
}

/**
 * The one Cognito trigger of `functions`.
 * @throws Error when there is none or more than one.
 */
function cognitoTrigger(functions: readonly FunctionDefinition[]): FunctionDefinition {
  const triggers = functions.filter((definition) => definition.trigger.kind === 'cognito');
  if (triggers.length !== 1) throw new Error(`Exactly one function must be the user pool's Cognito trigger; got ${triggers.length}.`);
  return triggers[0] as FunctionDefinition;
}
