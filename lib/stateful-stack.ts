/**
 * Stateful resources: the four DynamoDB tables (key design in functions/adapters/aws/tables.ts) and the scenario
 * archive bucket. All are retained when the stack is deleted, and none has a physical name, so a second stage
 * (or a re-created stack) never collides with retained resources.
 */
import { Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import { AttributeType, BillingMode, StreamViewType, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { TABLES, type TableKeySchema, type TableName } from '../functions/adapters/aws/tables.js';
import { ARCHIVE_UPLOADED } from './routes.js';

/** Construct id of each table. */
const TABLE_IDS: Record<TableName, string> = {
  companies: 'CompaniesTable',
  devices: 'DevicesTable',
  scenarios: 'ScenariosTable',
  deployments: 'DeploymentsTable',
  idempotency: 'IdempotencyTable',
};

export class StatefulStack extends Stack {
  readonly companiesTable: Table;
  readonly devicesTable: Table;
  readonly scenariosTable: Table;
  readonly deploymentsTable: Table;
  readonly idempotencyTable: Table;
  /** Every table by logical name (TABLES). */
  readonly tables: Readonly<Record<TableName, Table>>;
  /** Uploaded scenario archives. */
  readonly archiveBucket: Bucket;

  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props);

    this.companiesTable = this.table('companies', TABLES.companies);
    this.devicesTable = this.table('devices', TABLES.devices);
    this.scenariosTable = this.table('scenarios', TABLES.scenarios);
    this.deploymentsTable = this.table('deployments', TABLES.deployments);
    this.idempotencyTable = this.table('idempotency', TABLES.idempotency);
    this.tables = {
      companies: this.companiesTable,
      devices: this.devicesTable,
      scenarios: this.scenariosTable,
      deployments: this.deploymentsTable,
      idempotency: this.idempotencyTable,
    };

    this.archiveBucket = new Bucket(this, 'ArchiveBucket', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      // Archive keys are unique per upload and immutable (scenario versions never change): nothing to version.
      versioned: false,
      lifecycleRules: [
        { id: 'AbortIncompleteMultipartUploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
        // Presigned uploads are copied to companies/... once validated and then deleted; anything left under
        // uploads/ (a slot never completed, a PUT racing the cleanup) expires rather than escaping quota accounting.
        { id: 'ExpireUnprocessedUploads', prefix: ARCHIVE_UPLOADED.prefix, expiration: Duration.days(1) },
      ],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    // The TLS-only policy stays with the retained bucket.
    this.archiveBucket.policy?.applyRemovalPolicy(RemovalPolicy.RETAIN);
  }

  private table(name: TableName, schema: TableKeySchema): Table {
    const table = new Table(this, TABLE_IDS[name], {
      partitionKey: { name: schema.partitionKey, type: AttributeType.STRING },
      ...(schema.sortKey === undefined ? {} : { sortKey: { name: schema.sortKey, type: AttributeType.STRING } }),
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      encryption: TableEncryption.AWS_MANAGED,
      ...(schema.streamsToSearch ? { stream: StreamViewType.NEW_AND_OLD_IMAGES } : {}),
      ...(schema.timeToLiveAttribute === undefined ? {} : { timeToLiveAttribute: schema.timeToLiveAttribute }),
      removalPolicy: RemovalPolicy.RETAIN,
    });
    // Indexes come from TABLES (deployments: gsi1 scenario history, gsi2 company history). CloudFormation creates or
    // deletes at most one global secondary index per table per stack update: add indexes one deployment at a time.
    // History entries written before an index existed need its keys backfilled (backfillHistoryKeys).
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
