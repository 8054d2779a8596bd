/**
 * CDK assertions on the stateful and stateless stacks. Most tests synthesize with bundling skipped
 * (`aws:cdk:bundling-stacks` = []) and without the built-in CloudFormation validation, which keeps them fast;
 * one test does a full synth with real esbuild bundling and checks every function's bundle.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TABLES, type TableName } from '../../functions/adapters/aws/tables.js';
import { ARCHIVE_UPLOADED, ROUTES, SEARCH_INDEXER_ENTRY } from '../../lib/routes.js';
import { LAMBDA_RUNTIME, REPO_ROOT } from '../../lib/service-function.js';
import { StatefulStack } from '../../lib/stateful-stack.js';
import { StatelessStack } from '../../lib/stateless-stack.js';

type Resource = { Type: string; Properties?: Record<string, unknown>; Metadata?: Record<string, unknown>; DeletionPolicy?: string };
type Statement = { Effect: string; Action: string | string[]; Resource?: unknown };

const CONTEXT = {
  stage: 'test',
  jwtIssuer: 'https://issuer.test',
  jwtAudience: 'audience-test',
  jwksUrl: 'https://issuer.test/jwks.json',
  opensearchUrl: 'https://search.test',
  '@aws-cdk/core:defaultCrossStackReferences': 'strong',
};

/** The logical table name behind each construct id prefix (StatefulStack). */
const TABLE_ID_PREFIX: Record<TableName, string> = {
  companies: 'CompaniesTable',
  devices: 'DevicesTable',
  scenarios: 'ScenariosTable',
  deployments: 'DeploymentsTable',
  idempotency: 'IdempotencyTable',
};

/** The custom resource handler CDK adds for S3 notifications: not one of ours (Python, CDK-managed). */
const isCdkProvided = (logicalId: string) => logicalId.startsWith('BucketNotificationsHandler');

function createStacks(app: App): { stateful: StatefulStack; stateless: StatelessStack } {
  const stateful = new StatefulStack(app, 'DeviceScenarioService-test-Stateful');
  const stateless = new StatelessStack(app, 'DeviceScenarioService-test-Stateless', {
    tables: stateful.tables,
    archiveBucket: stateful.archiveBucket,
  });
  return { stateful, stateless };
}

function resourcesOf(template: Template, type: string): [string, Resource][] {
  return Object.entries(template.findResources(type)) as [string, Resource][];
}

function statementsOf(template: Template): [string, Statement][] {
  const statements: [string, Statement][] = [];
  for (const [id, policy] of resourcesOf(template, 'AWS::IAM::Policy')) {
    const document = policy.Properties?.PolicyDocument as { Statement: Statement[] };
    for (const statement of document.Statement) statements.push([id, statement]);
  }
  for (const [id, role] of resourcesOf(template, 'AWS::IAM::Role')) {
    for (const inline of (role.Properties?.Policies as { PolicyDocument: { Statement: Statement[] } }[] | undefined) ?? []) {
      for (const statement of inline.PolicyDocument.Statement) statements.push([id, statement]);
    }
  }
  return statements;
}

const actionsOf = (statement: Statement): string[] => (Array.isArray(statement.Action) ? statement.Action : [statement.Action]);

/** Entries deployed as HTTP functions (routes sharing an entry share one). */
const HTTP_ENTRIES = [...new Set(ROUTES.filter((route) => route.api !== 'auth').map((route) => route.entry))];

describe('stacks (bundling skipped)', () => {
  let stateful: Template;
  let stateless: Template;
  let functionsByEntry: Map<string, string>;

  beforeAll(() => {
    const app = new App({ context: { ...CONTEXT, 'aws:cdk:bundling-stacks': [] }, builtinCloudFormationValidation: false });
    const stacks = createStacks(app);
    stateful = Template.fromStack(stacks.stateful);
    stateless = Template.fromStack(stacks.stateless);
    functionsByEntry = new Map(
      resourcesOf(stateless, 'AWS::Lambda::Function')
        .filter(([id]) => !isCdkProvided(id))
        .map(([id, fn]) => [fn.Properties?.Description as string, id]),
    );
  });

  it('declares every table of TABLES: on-demand, PITR, encrypted, streams where searched, retained', () => {
    stateful.resourceCountIs('AWS::DynamoDB::Table', Object.keys(TABLES).length);
    const tables = resourcesOf(stateful, 'AWS::DynamoDB::Table');
    for (const [name, schema] of Object.entries(TABLES) as [TableName, (typeof TABLES)[TableName]][]) {
      const found = tables.filter(([id]) => id.startsWith(TABLE_ID_PREFIX[name]));
      expect(found, name).toHaveLength(1);
      const [, table] = found[0] as [string, Resource];
      expect(table.DeletionPolicy).toBe('Retain');
      expect(table.Properties).toMatchObject({
        BillingMode: 'PAY_PER_REQUEST',
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        SSESpecification: { SSEEnabled: true },
        KeySchema: [
          { AttributeName: schema.partitionKey, KeyType: 'HASH' },
          ...('sortKey' in schema ? [{ AttributeName: schema.sortKey, KeyType: 'RANGE' }] : []),
        ],
      });
      if (schema.streamsToSearch) expect(table.Properties?.StreamSpecification).toEqual({ StreamViewType: 'NEW_AND_OLD_IMAGES' });
      else expect(table.Properties?.StreamSpecification).toBeUndefined();
      const indexes = (table.Properties?.GlobalSecondaryIndexes as { IndexName: string; KeySchema: unknown }[] | undefined) ?? [];
      expect(indexes.map((index) => ({ name: index.IndexName, keys: index.KeySchema }))).toEqual(
        ('globalSecondaryIndexes' in schema ? schema.globalSecondaryIndexes : []).map((index) => ({
          name: index.indexName,
          keys: [{ AttributeName: index.partitionKey, KeyType: 'HASH' }, { AttributeName: index.sortKey, KeyType: 'RANGE' }],
        })),
      );
    }
  });

  it('declares a private, encrypted, TLS-only, retained archive bucket', () => {
    stateful.resourceCountIs('AWS::S3::Bucket', 1);
    stateful.hasResource('AWS::S3::Bucket', {
      DeletionPolicy: 'Retain',
      Properties: {
        PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
        BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
        VersioningConfiguration: Match.absent(),
        LifecycleConfiguration: {
          Rules: Match.arrayWith([
            Match.objectLike({ AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 }, Status: 'Enabled' }),
            Match.objectLike({ Prefix: 'uploads/', ExpirationInDays: 1, Status: 'Enabled' }),
          ]),
        },
      },
    });
    stateful.hasResourceProperties('AWS::S3::BucketPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Action: 's3:*', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
  });

  it('routes the main and upload APIs exactly as ROUTES, to the function of each entry', () => {
    const apis = resourcesOf(stateless, 'AWS::ApiGatewayV2::Api');
    expect(apis).toHaveLength(2);
    const integrations = stateless.findResources('AWS::ApiGatewayV2::Integration');
    for (const [api, prefix] of [['main', 'MainApi'], ['upload', 'UploadApi']] as const) {
      const apiId = apis.find(([id]) => id.startsWith(prefix))?.[0];
      expect(apiId, prefix).toBeDefined();
      const routes = resourcesOf(stateless, 'AWS::ApiGatewayV2::Route').filter(([, route]) => (route.Properties?.ApiId as { Ref: string }).Ref === apiId);
      const expected = ROUTES.filter((route) => route.api === api);
      expect(routes.map(([, route]) => route.Properties?.RouteKey).sort()).toEqual(expected.map((route) => `${route.method} ${route.path}`).sort());
      for (const definition of expected) {
        const [, route] = routes.find(([, candidate]) => candidate.Properties?.RouteKey === `${definition.method} ${definition.path}`) as [string, Resource];
        const target = (route.Properties?.Target as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1][1] as { Ref: string };
        const integration = integrations[target.Ref] as Resource;
        const uri = integration.Properties?.IntegrationUri as { 'Fn::GetAtt': [string, string] };
        expect(uri['Fn::GetAtt'][0], definition.id).toBe(functionsByEntry.get(definition.entry));
      }
    }
    stateless.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      ApiId: { Ref: apis.find(([id]) => id.startsWith('MainApi'))?.[0] },
      StageName: '$default',
      AutoDeploy: true,
      DefaultRouteSettings: { ThrottlingRateLimit: 100, ThrottlingBurstLimit: 200 },
    });
    stateless.resourceCountIs('AWS::ApiGatewayV2::Stage', 2);
    stateless.hasOutput('MainApiUrl', {});
    stateless.hasOutput('UploadApiUrl', {});
  });

  it('runs one function per entry, all arm64 on the newest Node.js runtime, traced, logs kept a month', () => {
    expect([...functionsByEntry.keys()].sort()).toEqual([...HTTP_ENTRIES, SEARCH_INDEXER_ENTRY, ARCHIVE_UPLOADED.entry].sort());
    for (const [id, fn] of resourcesOf(stateless, 'AWS::Lambda::Function').filter(([logicalId]) => !isCdkProvided(logicalId))) {
      expect(fn.Properties, id).toMatchObject({
        Architectures: ['arm64'],
        Runtime: LAMBDA_RUNTIME.name,
        Handler: 'index.handler',
        MemorySize: 1024,
        TracingConfig: { Mode: 'Active' },
        LoggingConfig: { LogGroup: { Ref: expect.any(String) } },
      });
    }
    expect(LAMBDA_RUNTIME.name).toBe('nodejs24.x');
    for (const [, logGroup] of resourcesOf(stateless, 'AWS::Logs::LogGroup')) expect(logGroup.Properties?.RetentionInDays).toBe(30);
  });

  it('passes the token settings to every HTTP function and the search settings only to search functions', () => {
    for (const entry of HTTP_ENTRIES) {
      const fn = stateless.findResources('AWS::Lambda::Function')[functionsByEntry.get(entry) as string] as Resource;
      const variables = (fn.Properties?.Environment as { Variables: Record<string, unknown> }).Variables;
      expect(variables, entry).toMatchObject({
        JWT_ISSUER: CONTEXT.jwtIssuer,
        JWT_AUDIENCE: CONTEXT.jwtAudience,
        JWKS_URL: CONTEXT.jwksUrl,
        POWERTOOLS_SERVICE_NAME: 'device-scenario-service',
        POWERTOOLS_LOG_LEVEL: 'INFO',
      });
      const searches = entry.includes('/search');
      expect(variables.SEARCH_BACKEND, entry).toBe(searches ? 'opensearch' : undefined);
      expect(variables.OPENSEARCH_URL, entry).toBe(searches ? CONTEXT.opensearchUrl : undefined);
    }
  });

  it('grants no wildcard actions', () => {
    const statements = statementsOf(stateless).filter(([, statement]) => statement.Effect === 'Allow');
    expect(statements.length).toBeGreaterThan(0);
    for (const [id, statement] of statements) {
      for (const action of actionsOf(statement)) {
        expect(action, id).not.toBe('*');
        expect(action, id).not.toMatch(/^(dynamodb|s3|sqs|lambda):\*$/);
      }
    }
  });

  it('scopes each function to the tables and objects it uses', () => {
    /** Every statement of the policies attached to the function's role, as JSON. */
    const policyOf = (entry: string): string => {
      const fn = stateless.findResources('AWS::Lambda::Function')[functionsByEntry.get(entry) as string] as Resource;
      const roleId = (fn.Properties?.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
      const policies = resourcesOf(stateless, 'AWS::IAM::Policy').filter(([, policy]) =>
        (policy.Properties?.Roles as { Ref: string }[]).some((role) => role.Ref === roleId));
      expect(policies, entry).toHaveLength(1);
      return JSON.stringify(policies.map(([, policy]) => policy.Properties?.PolicyDocument));
    };
    const search = policyOf('functions/handlers/search.ts');
    expect(search).not.toContain('dynamodb:');
    expect(search).not.toContain('s3:');
    const filters = policyOf('functions/handlers/search-filters.ts');
    expect(filters).toContain('CompaniesTable');
    expect(filters).not.toMatch(/DevicesTable|ScenariosTable|DeploymentsTable|dynamodb:PutItem|s3:/);
    const list = policyOf('functions/handlers/deployments-list.ts');
    expect(list).not.toMatch(/dynamodb:(PutItem|UpdateItem|DeleteItem|BatchWriteItem)|s3:/);
    // The history reads the deployments table and its gsi1/gsi2 (`/index/*`), and nothing else.
    const history = policyOf('functions/handlers/deployments-history.ts');
    expect(history).toContain('dynamodb:Query');
    expect(history).toContain('DeploymentsTable');
    expect(history).toContain('/index/*');
    expect(history).not.toMatch(/dynamodb:(PutItem|UpdateItem|DeleteItem|BatchWriteItem)|CompaniesTable|DevicesTable|ScenariosTable|s3:/);
    const execute = policyOf('functions/handlers/deployments-execute.ts');
    expect(execute).not.toMatch(/CompaniesTable|s3:/);
    const slot = policyOf('functions/handlers/scenarios-upload-slot.ts');
    expect(slot).toContain(`/${ARCHIVE_UPLOADED.prefix}*`);
    expect(slot).not.toMatch(/s3:GetObject|s3:DeleteObject/);
    const upload = policyOf('functions/handlers/scenarios-upload.ts');
    expect(upload).toMatch(/s3:PutObject/);
    expect(upload).not.toMatch(/DevicesTable|DeploymentsTable/);
  });

  it('feeds the indexer from the devices and scenarios streams, retrying from the failed record', () => {
    stateless.resourceCountIs('AWS::Lambda::EventSourceMapping', 2);
    const mappings = resourcesOf(stateless, 'AWS::Lambda::EventSourceMapping');
    for (const [id, mapping] of mappings) {
      expect(mapping.Properties, id).toMatchObject({
        FunctionName: { Ref: functionsByEntry.get(SEARCH_INDEXER_ENTRY) },
        StartingPosition: 'TRIM_HORIZON',
        BatchSize: 100,
        BisectBatchOnFunctionError: true,
        MaximumRetryAttempts: 10,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [expect.stringMatching(/^SearchIndexerDeadLetterQueue/), 'Arn'] } } },
      });
    }
    const sources = JSON.stringify(mappings.map(([, mapping]) => mapping.Properties?.EventSourceArn));
    expect(sources).toMatch(/DevicesTable.*StreamArn/);
    expect(sources).toMatch(/ScenariosTable.*StreamArn/);
    for (const [id, queue] of resourcesOf(stateless, 'AWS::SQS::Queue')) expect(queue.Properties?.SqsManagedSseEnabled, id).toBe(true);
    stateless.hasResourceProperties('AWS::SQS::QueuePolicy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
    });
  });

  it('invokes the archive function for objects created under the upload prefix', () => {
    stateless.hasResourceProperties('Custom::S3BucketNotifications', {
      NotificationConfiguration: {
        LambdaFunctionConfigurations: [
          {
            Events: ['s3:ObjectCreated:*'],
            Filter: { Key: { FilterRules: [{ Name: 'prefix', Value: ARCHIVE_UPLOADED.prefix }] } },
            LambdaFunctionArn: { 'Fn::GetAtt': [functionsByEntry.get(ARCHIVE_UPLOADED.entry), 'Arn'] },
          },
        ],
      },
      Managed: false,
    });
    stateless.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: functionsByEntry.get(ARCHIVE_UPLOADED.entry) },
      MaximumRetryAttempts: 2,
      DestinationConfig: { OnFailure: { Destination: Match.anyValue() } },
    });
  });

  it('names no physical resource', () => {
    const named: Record<string, string> = {
      'AWS::DynamoDB::Table': 'TableName',
      'AWS::S3::Bucket': 'BucketName',
      'AWS::Lambda::Function': 'FunctionName',
      'AWS::SQS::Queue': 'QueueName',
      'AWS::IAM::Role': 'RoleName',
      'AWS::Logs::LogGroup': 'LogGroupName',
    };
    for (const template of [stateful, stateless]) {
      for (const [type, property] of Object.entries(named)) {
        for (const [id, resource] of resourcesOf(template, type)) expect(resource.Properties?.[property], id).toBeUndefined();
      }
    }
  });
});

describe('full synth with esbuild bundling', () => {
  const outputRoot = join(REPO_ROOT, 'cdk.out');
  let outdir: string | undefined;

  afterAll(() => {
    if (outdir !== undefined) rmSync(outdir, { recursive: true, force: true });
  });

  it('bundles every function into an index.mjs under 1 MiB that exports handler', { timeout: 180_000 }, () => {
    mkdirSync(outputRoot, { recursive: true });
    // Inside the repository so that the runtime-provided @aws-sdk/* modules resolve when the bundles are loaded.
    outdir = mkdtempSync(join(outputRoot, 'infra-test-'));
    const app = new App({ outdir, context: { ...CONTEXT, 'aws:cdk:enable-asset-metadata': true }, builtinCloudFormationValidation: false });
    const { stateless } = createStacks(app);
    const assembly = app.synth();
    const template = assembly.getStackByName(stateless.stackName).template as { Resources: Record<string, Resource> };

    const bundles: { id: string; file: string; bytes: number }[] = [];
    for (const [id, resource] of Object.entries(template.Resources)) {
      if (resource.Type !== 'AWS::Lambda::Function' || isCdkProvided(id)) continue;
      const assetPath = resource.Metadata?.['aws:asset:path'];
      expect(assetPath, id).toEqual(expect.any(String));
      const file = join(assembly.directory, assetPath as string, 'index.mjs');
      expect(existsSync(file), file).toBe(true);
      bundles.push({ id, file, bytes: statSync(file).size });
    }
    console.log(
      `Bundle sizes (index.mjs):\n${bundles.map((bundle) => `  ${bundle.id.padEnd(48)} ${String(bundle.bytes).padStart(9)} B`).join('\n')}`,
    );
    expect(bundles).toHaveLength(HTTP_ENTRIES.length + 2);
    for (const bundle of bundles) expect(bundle.bytes, bundle.id).toBeLessThan(1_048_576);

    // The ESM bundles load in plain Node (the createRequire banner, externals) and export a handler.
    const script = `for (const file of process.argv.slice(1)) { const m = await import(file); if (typeof m.handler !== 'function') throw new Error(file + ': no handler'); }`;
    const loaded = spawnSync(process.execPath, ['--input-type=module', '-e', script, ...bundles.map((bundle) => bundle.file)], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      env: { ...process.env, POWERTOOLS_LOG_LEVEL: 'SILENT' },
    });
    expect(loaded.status, loaded.stderr).toBe(0);
  });
});
