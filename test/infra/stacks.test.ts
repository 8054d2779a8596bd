/**
 * CDK assertions on the two stacks of a stage, built by lib/stage.ts exactly as bin/app.ts builds them. Most tests
 * synthesize with bundling skipped (`aws:cdk:bundling-stacks` = []) and without CloudFormation's built-in template
 * validation, which keeps them fast; cdk-nag's AwsSolutionsChecks runs on those assemblies too. One test runs the
 * real `cdk synth` (the CLI, offline, without credentials, real esbuild bundling, cdk-nag as bin/app.ts registers
 * it) and checks every function's bundle.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { type App, Validations } from 'aws-cdk-lib';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks, NagPack } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SETUP_RETRY_BUDGET_MS, templateVersion } from '../../functions/adapters/aws/opensearch-indexes.js';
import { ENV, type EnvironmentGroup, KNOWN_VARIABLES, readEnvironment } from '../../functions/contract/environment.js';
import { TABLES, type TableName } from '../../functions/adapters/aws/tables.js';
import { PRE_TOKEN_GENERATION_ENTRY } from '../../lib/identity.js';
import { ALARM_THRESHOLDS } from '../../lib/monitoring.js';
import { SEARCH_INDEX_SETUP_TIMEOUT } from '../../lib/stateless-stack.js';
import {
  ARCHIVE_UPLOADED,
  DEPLOYMENT_CHANGES_ENTRY,
  HEARTBEAT_SWEEPER,
  ROLLOUT_SWEEPER,
  ROLLOUT_WORKER,
  ROUTES,
  SEARCH_INDEX_SETUP_ENTRY,
  SEARCH_INDEXER_ENTRY,
  SEARCH_REINDEX_ENTRY,
  UPLOAD_SWEEPER,
} from '../../functions/contract/routes.js';
import { DEVICE_ISSUER_ENTRY, DEVICE_ISSUER_ROUTES } from '../../functions/contract/routes/device-issuer.js';
import { KEY_ADMINISTRATION_ACTIONS } from '../../lib/device-token-key.js';
import { SEARCH_ACTIONS, SEARCH_CLIENTS, SEARCH_LOGS_POLICY_NAME } from '../../lib/search-domain.js';
import { functionIdOf, LAMBDA_RUNTIME, REPO_ROOT } from '../../lib/service-function.js';
import { SERVICE_NAME } from '../../functions/platform/logger.js';
import { DEFAULT_METRICS_NAMESPACE, METRIC } from '../../functions/platform/observability.js';
import type { ServiceStage } from '../../lib/stage.js';
import {
  asArray,
  CONTEXT,
  checkAuthorizers,
  deniesInsecureTransport,
  flattenJoin,
  functionsByEntry,
  isCdkProvided,
  quickStage,
  type Resource,
  resourcesOf,
  rolePoliciesOf,
  type Statement,
  statementsOf,
  schedulesOf,
} from './template-helpers.js';
import { AUTH_COGNITO_TOKEN_ENTRY, THROTTLE } from '../../lib/stateless-stack.js';
import { DEFAULT_SETTINGS } from '../../lib/settings.js';

/** The logical table name behind each construct id prefix (StatefulStack). */
const TABLE_ID_PREFIX: Record<TableName, string> = {
  companies: 'CompaniesTable',
  devices: 'DevicesTable',
  scenarios: 'ScenariosTable',
  presence: 'PresenceTable',
  rollouts: 'RolloutsTable',
  deployments: 'DeploymentsTable',
  idempotency: 'IdempotencyTable',
  clientFailures: 'ClientFailuresTable',
};

/** Handler modules deployed as functions of the stateless stack. */
const STATELESS_ENTRIES = [
  ...new Set(ROUTES.filter((route) => route.api !== 'auth').map((route) => route.entry)),
  AUTH_COGNITO_TOKEN_ENTRY,
  SEARCH_INDEXER_ENTRY,
  DEPLOYMENT_CHANGES_ENTRY,
  ARCHIVE_UPLOADED.entry,
  SEARCH_REINDEX_ENTRY,
  SEARCH_INDEX_SETUP_ENTRY,
  UPLOAD_SWEEPER.entry,
  DEVICE_ISSUER_ENTRY,
  HEARTBEAT_SWEEPER.entry,
  ROLLOUT_WORKER.entry,
  ROLLOUT_SWEEPER.entry,
];

/** Every route API Gateway serves: ROUTES, and the device issuer's on the auth API (AWS only). */
const AWS_ROUTES = [...ROUTES, ...DEVICE_ISSUER_ROUTES];

/** Functions that verify bearer tokens: every route except the public ones. */

/** What Lambda itself adds to every function's environment at run time (absent from the template). */
const LAMBDA_PROVIDED: Readonly<Record<string, string>> = { [ENV.awsRegion]: 'eu-west-1' };

/** What the rollout queue's URL resolves to once deployed (a Ref to a queue is its URL). */
const DEPLOYED_QUEUE_URL = 'https://sqs.eu-west-1.amazonaws.com/123456789012/DeviceScenarioService-test-Stateless-RolloutWorkQueue-AbC123';

/** What the device token key's ARN resolves to once deployed. */
const DEPLOYED_KEY_ARN = 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';

/** What Secrets Manager generates for the cursor secret (64 letters and digits, its GenerateSecretString). */
const GENERATED_CURSOR_SECRET = `${'Ab3'.repeat(21)}x`;

/**
 * A value a template's variable plausibly takes once deployed: literals as they are, each CloudFormation token (Ref,
 * GetAtt, ImportValue) as a lowercase name (valid as a table, bucket or host name), a dynamic reference to a secret as
 * what Secrets Manager generates for the cursor key.
 * @throws Error on an intrinsic function a function environment is not expected to hold.
 */
function deployedValue(value: unknown): string {
  const token = (text: string) =>
    text
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .slice(0, 40)
      .replace(/^-+|-+$/g, '') || 'token';
  const resolve = (part: unknown): string => {
    if (typeof part === 'string') return part;
    const object = part as Record<string, unknown>;
    if ('Fn::Join' in object) {
      const [separator, parts] = object['Fn::Join'] as [string, unknown[]];
      return parts.map(resolve).join(separator);
    }
    if ('Ref' in object) return token(String(object.Ref));
    if ('Fn::GetAtt' in object) return token((object['Fn::GetAtt'] as string[]).join('-'));
    if ('Fn::ImportValue' in object) return token(JSON.stringify(object['Fn::ImportValue']));
    throw new Error(`Unexpected intrinsic function in a function environment: ${JSON.stringify(part)}`);
  };
  const resolved = resolve(value);
  return /^\{\{resolve:secretsmanager:/.test(resolved) ? GENERATED_CURSOR_SECRET : resolved;
}

/** Every `Validations.acknowledge` of the construct tree: path, rule id and reason. */
function acknowledgmentsOf(root: IConstruct): { path: string; id: string; reason: string }[] {
  const found: { path: string; id: string; reason: string }[] = [];
  const visit = (construct: IConstruct) => {
    for (const entry of construct.node.metadata) {
      if (entry.type !== Validations.ACKNOWLEDGED_RULES_METADATA_KEY) continue;
      for (const [id, reason] of Object.entries(entry.data as Record<string, string>)) {
        found.push({ path: construct.node.path, id: id.replace(/^annotation::/i, ''), reason });
      }
    }
    construct.node.children.forEach(visit);
  };
  visit(root);
  return found;
}

/** Runs AwsSolutionsChecks on `app` and records which acknowledgments matched a finding. */
function runNag(app: App): { violations: string[]; used: Set<string> } {
  const proto = NagPack.prototype as unknown as { isAcknowledged?: (node: IConstruct, id: string) => boolean };
  const original = proto.isAcknowledged;
  if (typeof original !== 'function') throw new Error('cdk-nag no longer has NagPack.isAcknowledged: update runNag in this test.');
  const used = new Set<string>();
  proto.isAcknowledged = function (this: unknown, node: IConstruct, id: string): boolean {
    const acknowledged = original.call(this, node, id);
    if (acknowledged) {
      for (let scope: IConstruct | undefined = node; scope !== undefined; scope = scope.node.scope) {
        if (acknowledgmentsOf(scope).some((ack) => ack.path === scope?.node.path && ack.id === id)) used.add(`${scope.node.path} ${id}`);
      }
    }
    return acknowledged;
  };
  try {
    const report = new AwsSolutionsChecks().validateScope(app);
    return {
      violations: report.violations.flatMap((violation) =>
        violation.violatingResources.map(
          (resource) => `${violation.severity} ${violation.ruleName} at ${resource.constructPath}: ${violation.description}`,
        ),
      ),
      used,
    };
  } finally {
    proto.isAcknowledged = original;
  }
}

describe('stacks (bundling skipped)', () => {
  let app: App;
  let stateful: Template;
  let stateless: Template;
  let ours: Map<string, [string, Resource]>;
  let statefulFunctions: Map<string, [string, Resource]>;

  beforeAll(() => {
    ({ app, stateful, stateless } = quickStage());
    ours = functionsByEntry(stateless);
    statefulFunctions = functionsByEntry(stateful);
  });

  /** The JSON of every policy attached to the execution role of `entry`'s function (own or imported role). */
  const policyOf = (entry: string): string => {
    const policies = rolePoliciesOf(stateless, (ours.get(entry) as [string, Resource])[1]);
    expect(policies, entry).toHaveLength(1);
    return JSON.stringify(policies.map(([, policy]) => policy.Properties?.PolicyDocument));
  };

  /** The logical id prefix of the policies attached to `entry`'s function role (see policyOf). */
  const policyIdOf = (entry: string): string => {
    const [[id]] = rolePoliciesOf(stateless, (ours.get(entry) as [string, Resource])[1]) as [[string, Resource]];
    return id;
  };

  it('declares every table of TABLES: on-demand, PITR, encrypted, streams where searched, retained and deletion-protected', () => {
    stateful.resourceCountIs('AWS::DynamoDB::Table', Object.keys(TABLES).length);
    const tables = resourcesOf(stateful, 'AWS::DynamoDB::Table');
    for (const [name, schema] of Object.entries(TABLES) as [TableName, (typeof TABLES)[TableName]][]) {
      const found = tables.filter(([id]) => id.startsWith(TABLE_ID_PREFIX[name]));
      expect(found, name).toHaveLength(1);
      const [, table] = found[0] as [string, Resource];
      expect(table.DeletionPolicy).toBe('Retain');
      expect(table.Properties).toMatchObject({
        DeletionProtectionEnabled: true,
        BillingMode: 'PAY_PER_REQUEST',
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        SSESpecification: { SSEEnabled: true },
        KeySchema: [
          { AttributeName: schema.partitionKey, KeyType: 'HASH' },
          ...('sortKey' in schema ? [{ AttributeName: schema.sortKey, KeyType: 'RANGE' }] : []),
        ],
      });
      if ('stream' in schema) expect(table.Properties?.StreamSpecification).toEqual({ StreamViewType: 'NEW_AND_OLD_IMAGES' });
      else expect(table.Properties?.StreamSpecification).toBeUndefined();
      // TTL where TABLES names an attribute (idempotency records, failed client authentications), nowhere else.
      if ('timeToLiveAttribute' in schema)
        expect(table.Properties?.TimeToLiveSpecification, name).toEqual({ AttributeName: schema.timeToLiveAttribute, Enabled: true });
      else expect(table.Properties?.TimeToLiveSpecification, name).toBeUndefined();
      const indexes = (table.Properties?.GlobalSecondaryIndexes as { IndexName: string; KeySchema: unknown }[] | undefined) ?? [];
      expect(indexes.map((index) => ({ name: index.IndexName, keys: index.KeySchema }))).toEqual(
        ('globalSecondaryIndexes' in schema ? schema.globalSecondaryIndexes : []).map((index) => ({
          name: index.indexName,
          keys: [
            { AttributeName: index.partitionKey, KeyType: 'HASH' },
            { AttributeName: index.sortKey, KeyType: 'RANGE' },
          ],
        })),
      );
    }
  });

  it('declares private, encrypted, TLS-only, retained buckets; the archive bucket is versioned, uploads expire, accesses are logged', () => {
    stateful.resourceCountIs('AWS::S3::Bucket', 2);
    for (const [id, bucket] of resourcesOf(stateful, 'AWS::S3::Bucket')) {
      expect(bucket.DeletionPolicy, id).toBe('Retain');
      expect(bucket.Properties, id).toMatchObject({
        PublicAccessBlockConfiguration: {
          BlockPublicAcls: true,
          BlockPublicPolicy: true,
          IgnorePublicAcls: true,
          RestrictPublicBuckets: true,
        },
        BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
        OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
      });
      expect(bucket.Properties?.AccessControl, id).toBeUndefined();
    }
    const [logsId] = resourcesOf(stateful, 'AWS::S3::Bucket').find(([id]) => id.startsWith('AccessLogsBucket')) as [string, Resource];
    stateful.hasResource('AWS::S3::Bucket', {
      Properties: {
        VersioningConfiguration: { Status: 'Enabled' },
        CorsConfiguration: Match.absent(),
        LoggingConfiguration: { DestinationBucketName: { Ref: logsId }, LogFilePrefix: 'archive-bucket/' },
        LifecycleConfiguration: {
          Rules: Match.arrayWith([
            Match.objectLike({ AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 }, Status: 'Enabled' }),
            Match.objectLike({
              Prefix: ARCHIVE_UPLOADED.prefix,
              ExpirationInDays: 1,
              NoncurrentVersionExpiration: { NoncurrentDays: 1 },
              Status: 'Enabled',
            }),
            Match.objectLike({
              Prefix: Match.absent(),
              NoncurrentVersionExpiration: { NoncurrentDays: 30 },
              ExpiredObjectDeleteMarker: true,
              Status: 'Enabled',
            }),
          ]),
        },
      },
    });
    const policies = resourcesOf(stateful, 'AWS::S3::BucketPolicy');
    expect(policies).toHaveLength(2);
    for (const [id, policy] of policies) expect(deniesInsecureTransport(policy.Properties?.PolicyDocument), id).toBe(true);
  });

  it('runs an OpenSearch domain encrypted at rest and node to node, HTTPS only with TLS 1.2+, IAM only, retained', () => {
    stateful.resourceCountIs('AWS::OpenSearchService::Domain', 1);
    const [[, domain]] = resourcesOf(stateful, 'AWS::OpenSearchService::Domain') as [[string, Resource]];
    expect(domain.DeletionPolicy).toBe('Retain');
    expect(domain.UpdateReplacePolicy).toBe('Retain');
    expect(domain.Properties).toMatchObject({
      EncryptionAtRestOptions: { Enabled: true },
      NodeToNodeEncryptionOptions: { Enabled: true },
      DomainEndpointOptions: { EnforceHTTPS: true, TLSSecurityPolicy: 'Policy-Min-TLS-1-2-2019-07' },
      ClusterConfig: { InstanceType: 't3.small.search', InstanceCount: 1, ZoneAwarenessEnabled: false, DedicatedMasterEnabled: false },
      EBSOptions: { EBSEnabled: true, VolumeSize: 10, VolumeType: 'gp3' },
      LogPublishingOptions: {
        SEARCH_SLOW_LOGS: { Enabled: true },
        INDEX_SLOW_LOGS: { Enabled: true },
        ES_APPLICATION_LOGS: { Enabled: true },
      },
    });
    // No fine-grained access control, no internal users, no VPC: every request is SigV4-signed and IAM decides.
    expect(domain.Properties?.AdvancedSecurityOptions).toBeUndefined();
    expect(domain.Properties?.VPCOptions).toBeUndefined();
    expect(domain.Properties?.AccessPolicies).toBeUndefined();
  });

  it("limits the domain's access policy to one role per client function and the paths that function uses", () => {
    const [[, custom]] = resourcesOf(stateful, 'Custom::OpenSearchAccessPolicy') as [[string, Resource]];
    const call = JSON.parse(flattenJoin(custom.Properties?.Create)) as { action: string; parameters: { AccessPolicies: string } };
    expect(call.action).toBe('updateDomainConfig');
    const statements = (JSON.parse(call.parameters.AccessPolicies) as { Statement: Statement[] }).Statement;
    const [domainId] = resourcesOf(stateful, 'AWS::OpenSearchService::Domain')[0] as [string, Resource];
    const roles = resourcesOf(stateful, 'AWS::IAM::Role');
    expect(statements).toHaveLength(Object.keys(SEARCH_CLIENTS).length);
    for (const [entry, access] of Object.entries(SEARCH_CLIENTS)) {
      const [roleId] = roles.find(([, role]) => (role.Properties?.Description as string).startsWith(`Execution role of ${entry} `)) as [
        string,
        Resource,
      ];
      const statement = statements.find(
        (candidate) => JSON.stringify(candidate.Principal) === JSON.stringify({ AWS: `{{${roleId}.Arn}}` }),
      );
      expect(statement, entry).toBeDefined();
      expect(statement?.Effect).toBe('Allow');
      expect(asArray(statement?.Action as string | string[]).sort(), entry).toEqual([...SEARCH_ACTIONS[access]].sort());
      const expected = { search: '/resources/_search', index: '/resources/_bulk', admin: '/*' }[access];
      expect(statement?.Resource, entry).toBe(`{{${domainId}.Arn}}${expected}`);
    }
    expect(JSON.stringify(statements)).not.toContain('"AWS":"*"');
  });

  it('issues tokens from a retained Essentials Cognito pool whose V2_0 trigger customizes access tokens, through a secretless USER_PASSWORD_AUTH client', () => {
    const [[, pool]] = resourcesOf(stateful, 'AWS::Cognito::UserPool') as [[string, Resource]];
    expect(pool.DeletionPolicy).toBe('Retain');
    const [triggerId] = statefulFunctions.get(PRE_TOKEN_GENERATION_ENTRY) as [string, Resource];
    expect(pool.Properties).toMatchObject({
      AdminCreateUserConfig: { AllowAdminCreateUserOnly: true },
      DeletionProtection: 'ACTIVE',
      UserPoolTier: 'ESSENTIALS',
      LambdaConfig: { PreTokenGenerationConfig: { LambdaArn: { 'Fn::GetAtt': [triggerId, 'Arn'] }, LambdaVersion: 'V2_0' } },
      Policies: {
        PasswordPolicy: { MinimumLength: 12, RequireLowercase: true, RequireUppercase: true, RequireNumbers: true, RequireSymbols: true },
      },
      Schema: expect.arrayContaining([
        expect.objectContaining({ Name: 'companies', Mutable: true }),
        expect.objectContaining({ Name: 'scope', Mutable: true }),
      ]),
    });
    stateful.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction',
      Principal: 'cognito-idp.amazonaws.com',
      FunctionName: { 'Fn::GetAtt': [triggerId, 'Arn'] },
    });
    const [[, client]] = resourcesOf(stateful, 'AWS::Cognito::UserPoolClient') as [[string, Resource]];
    expect(client.Properties).toMatchObject({
      ExplicitAuthFlows: ['ALLOW_USER_PASSWORD_AUTH', 'ALLOW_REFRESH_TOKEN_AUTH'],
      GenerateSecret: false,
      AllowedOAuthFlowsUserPoolClient: false,
      PreventUserExistenceErrors: 'ENABLED',
      // The token endpoint returns the access token: its lifetime is the contract's expires_in (1 h, as locally).
      AccessTokenValidity: 60,
      IdTokenValidity: 60,
    });
    // Users must not be able to grant themselves companies or scopes.
    const writable = client.Properties?.WriteAttributes as string[];
    expect(writable.length).toBeGreaterThan(0);
    expect(writable.filter((attribute) => attribute.startsWith('custom:'))).toEqual([]);
  });

  it('routes the three APIs exactly as ROUTES and the device issuer; on AWS the token route runs the Cognito function and the JWKS proxies the pool', () => {
    const apis = resourcesOf(stateless, 'AWS::ApiGatewayV2::Api');
    expect(apis).toHaveLength(3);
    const integrations = stateless.findResources('AWS::ApiGatewayV2::Integration') as Record<string, Resource>;
    const functionIds = new Map([...ours].map(([entry, [id]]) => [entry, id]));
    for (const [api, prefix] of [
      ['main', 'MainApi'],
      ['upload', 'UploadApi'],
      ['auth', 'AuthApi'],
    ] as const) {
      const apiId = apis.find(([id]) => id.startsWith(prefix))?.[0];
      expect(apiId, prefix).toBeDefined();
      const routes = resourcesOf(stateless, 'AWS::ApiGatewayV2::Route').filter(
        ([, route]) => (route.Properties?.ApiId as { Ref: string }).Ref === apiId,
      );
      const expected = AWS_ROUTES.filter((route) => route.api === api);
      expect(routes.map(([, route]) => route.Properties?.RouteKey).sort()).toEqual(
        expected.map((route) => `${route.method} ${route.path}`).sort(),
      );
      for (const definition of expected) {
        const [, route] = routes.find(([, candidate]) => candidate.Properties?.RouteKey === `${definition.method} ${definition.path}`) as [
          string,
          Resource,
        ];
        const target = (route.Properties?.Target as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1][1] as { Ref: string };
        const integration = integrations[target.Ref] as Resource;
        if (definition.id === 'AuthJwks') {
          expect(integration.Properties).toMatchObject({ IntegrationType: 'HTTP_PROXY', IntegrationMethod: 'GET' });
          expect(flattenJoin(integration.Properties?.IntegrationUri)).toMatch(/^https:\/\/cognito-idp\..*\/\.well-known\/jwks\.json$/);
          continue;
        }
        const entry = definition.id === 'AuthToken' ? AUTH_COGNITO_TOKEN_ENTRY : definition.entry;
        const uri = integration.Properties?.IntegrationUri as { 'Fn::GetAtt': [string, string] };
        expect(uri['Fn::GetAtt'][0], definition.id).toBe(functionIds.get(entry));
      }
      stateless.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
        ApiId: { Ref: apiId },
        StageName: '$default',
        AutoDeploy: true,
        DefaultRouteSettings: {
          ThrottlingRateLimit: (api === 'auth' ? DEFAULT_SETTINGS.authThrottle : THROTTLE[api]).rateLimit,
          ThrottlingBurstLimit: (api === 'auth' ? DEFAULT_SETTINGS.authThrottle : THROTTLE[api]).burstLimit,
        },
        AccessLogSettings: {
          DestinationArn: { 'Fn::GetAtt': [Match.stringLikeRegexp(`^${prefix}AccessLogs`), 'Arn'] },
          Format: Match.stringLikeRegexp('requestId'),
        },
      });
      // No CORS unless corsAllowedOrigins is set.
      expect(apis.find(([id]) => id === apiId)?.[1].Properties?.CorsConfiguration, prefix).toBeUndefined();
    }
    stateless.resourceCountIs('AWS::ApiGatewayV2::Stage', 3);
    for (const output of ['MainApiUrl', 'UploadApiUrl', 'AuthApiUrl', 'SearchReindexFunctionName', 'DeviceTokenIssuer'])
      stateless.hasOutput(output, {});
    for (const output of [
      'UserPoolId',
      'UserPoolClientId',
      'CompaniesTableName',
      'DevicesTableName',
      'SearchDomainEndpoint',
      'DeviceTokenKeyArn',
    ])
      stateful.hasOutput(output, {});
  });

  it("puts the Cognito JWT authorizer on user routes and the device issuer's on device routes, each with the route's scope, none on public routes", () => {
    checkAuthorizers(stateful, stateless, AWS_ROUTES);
    expect(
      AWS_ROUTES.filter((route) => route.scope === null)
        .map((route) => route.id)
        .sort(),
    ).toEqual([
      'ApiReference',
      'ApiReferenceScript',
      'AuthJwks',
      'AuthToken',
      'DeviceIssuerDiscovery',
      'DeviceIssuerJwks',
      'OpenApiDocument',
    ]);
  });

  it('runs one function per entry, all arm64 on the newest Node.js runtime, traced, with their own log groups and no managed policies', () => {
    expect([...ours.keys()].sort()).toEqual([...STATELESS_ENTRIES].sort());
    expect([...statefulFunctions.keys()]).toEqual([PRE_TOKEN_GENERATION_ENTRY]);
    for (const [id, fn] of [...ours.values(), ...statefulFunctions.values()]) {
      expect(fn.Properties, id).toMatchObject({
        Architectures: ['arm64'],
        Runtime: LAMBDA_RUNTIME.name,
        Handler: 'index.handler',
        TracingConfig: { Mode: 'Active' },
        LoggingConfig: { LogGroup: { Ref: expect.any(String) } },
      });
    }
    expect(LAMBDA_RUNTIME.name).toBe('nodejs24.x');
    for (const template of [stateful, stateless]) {
      for (const [id, logGroup] of resourcesOf(template, 'AWS::Logs::LogGroup')) expect(logGroup.Properties?.RetentionInDays, id).toBe(30);
      for (const [id, role] of resourcesOf(template, 'AWS::IAM::Role').filter(([roleId]) => !isCdkProvided(roleId))) {
        expect(role.Properties?.ManagedPolicyArns, id).toBeUndefined();
      }
    }
  });

  it("gives every function Powertools' service name and the metrics namespace the handlers fall back to, tracing and metrics left on", () => {
    for (const [id, fn] of [...ours.values(), ...statefulFunctions.values()]) {
      const variables = (fn.Properties?.Environment as { Variables: Record<string, unknown> }).Variables;
      expect(variables, id).toMatchObject({
        POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
        POWERTOOLS_METRICS_NAMESPACE: DEFAULT_METRICS_NAMESPACE,
      });
      expect(variables.POWERTOOLS_TRACE_ENABLED, id).toBeUndefined();
      expect(variables.POWERTOOLS_METRICS_DISABLED, id).toBeUndefined();
      expect(variables.LOG_FORMAT, id).toBeUndefined();
    }
  });

  it('gives no function token settings (API Gateway verifies tokens) and the OpenSearch settings only to search clients', () => {
    const variablesOf = (entry: string) =>
      (ours.get(entry)?.[1].Properties?.Environment as { Variables: Record<string, unknown> }).Variables;

    const [clientId] = resourcesOf(stateful, 'AWS::Cognito::UserPoolClient')[0] as [string, Resource];
    for (const entry of STATELESS_ENTRIES) {
      const variables = variablesOf(entry);
      expect(variables, entry).toMatchObject({ POWERTOOLS_SERVICE_NAME: 'device-scenario-service', POWERTOOLS_LOG_LEVEL: 'INFO' });
      expect(variables.JWT_ISSUER, entry).toBeUndefined();
      expect(variables.JWKS_URL, entry).toBeUndefined();
      if (entry in SEARCH_CLIENTS) {
        expect(variables, entry).toMatchObject({
          SEARCH_BACKEND: 'opensearch',
          OPENSEARCH_INDEX: 'resources',
          OPENSEARCH_AUTH: 'aws-sigv4',
        });
        expect(flattenJoin(variables.OPENSEARCH_URL), entry).toMatch(/^https:\/\/.*DomainEndpoint/);
      } else {
        expect(variables.SEARCH_BACKEND, entry).toBeUndefined();
        expect(variables.OPENSEARCH_URL, entry).toBeUndefined();
      }
    }
    expect(JSON.stringify(variablesOf(AUTH_COGNITO_TOKEN_ENTRY).COGNITO_CLIENT_ID)).toContain(clientId);
  });

  it('signs listing cursors with a generated, retained secret, given only to the functions that page', () => {
    const secrets = resourcesOf(stateful, 'AWS::SecretsManager::Secret');
    expect(secrets).toHaveLength(1);
    const [secretId, secret] = secrets[0] as [string, Resource];
    expect(secret.DeletionPolicy).toBe('Retain');
    expect(secret.UpdateReplacePolicy).toBe('Retain');
    // 64 letters and digits: base64 of 48 bytes, as CURSOR_SIGNING_KEY expects (functions/platform/config.ts).
    expect(secret.Properties?.GenerateSecretString).toEqual({ PasswordLength: 64, ExcludePunctuation: true, IncludeSpace: false });
    const paging = [
      'functions/handlers/deployments-list.ts',
      'functions/handlers/deployments-history.ts',
      'functions/handlers/scenarios-list.ts',
      // Pages the active deployments of the device it deletes.
      'functions/handlers/device-delete.ts',
      'functions/handlers/rollouts-list.ts',
    ];
    for (const entry of STATELESS_ENTRIES) {
      const variables = (ours.get(entry)?.[1].Properties?.Environment as { Variables: Record<string, unknown> }).Variables;
      if (paging.includes(entry)) {
        // A dynamic reference to the stateful stack's secret, resolved by CloudFormation at deployment.
        expect(flattenJoin(variables.CURSOR_SIGNING_KEY), entry).toMatch(
          new RegExp(`^\\{\\{resolve:secretsmanager:.*Ref${secretId}.*:SecretString:::\\}\\}$`),
        );
      } else {
        expect(variables.CURSOR_SIGNING_KEY, entry).toBeUndefined();
      }
    }
  });

  it("gives the OpenAPI document's function the three API URLs, for its servers", () => {
    const variables = (ours.get('functions/handlers/openapi.ts')?.[1].Properties?.Environment as { Variables: Record<string, unknown> })
      .Variables;
    const apis = new Map(resourcesOf(stateless, 'AWS::ApiGatewayV2::Api').map(([id]) => [id.replace(/[0-9A-F]{8}$/, ''), id]));
    for (const [variable, api] of [
      ['MAIN_API_URL', 'MainApi'],
      ['UPLOAD_API_URL', 'UploadApi'],
      ['AUTH_API_URL', 'AuthApi'],
    ] as const) {
      expect(flattenJoin(variables[variable]), variable).toMatch(new RegExp(`^https://\\{\\{${apis.get(api)}\\}\\}\\.execute-api\\.`));
    }
    // The main API integrates that function; Template.fromStack (beforeAll) refuses a template with a dependency cycle.
  });

  it('gives functions only variables the environment schema declares, valid for every group their handler reads', () => {
    const paging = [
      'functions/handlers/deployments-list.ts',
      'functions/handlers/deployments-history.ts',
      'functions/handlers/scenarios-list.ts',
      // Pages the active deployments of the device it deletes.
      'functions/handlers/device-delete.ts',
    ];
    /** Groups read beyond what every function reads (`function`) and what the common flags below imply. */
    const READS: Readonly<Record<string, readonly EnvironmentGroup[]>> = {
      'functions/handlers/deployments-execute.ts': ['idempotency'],
      [DEPLOYMENT_CHANGES_ENTRY]: ['events'],
      'functions/handlers/openapi.ts': ['addresses'],
      'functions/handlers/scenarios-upload-slot.ts': ['uploads'],
      [AUTH_COGNITO_TOKEN_ENTRY]: ['tokenEndpoint', 'deviceIssuer', 'devices', 'clientFailures'],
      [DEVICE_ISSUER_ENTRY]: ['deviceIssuer'],
      [HEARTBEAT_SWEEPER.entry]: ['devices'],
      [SEARCH_REINDEX_ENTRY]: ['searchSource'],
      ...Object.fromEntries(paging.map((entry) => [entry, ['cursors']])),
    };
    // The rollout settings: the functions that may send to the rollout queue, and the worker.
    const readsRollouts = new Set([
      ROLLOUT_WORKER.entry,
      ROLLOUT_SWEEPER.entry,
      ...ROUTES.filter((route) => route.access?.rolloutQueue === true).map((route) => route.entry),
    ]);
    const checked = new Set<EnvironmentGroup>();
    for (const [entry, [id, fn]] of [...ours, ...statefulFunctions]) {
      const variables = (fn.Properties?.Environment as { Variables: Record<string, unknown> }).Variables;
      expect(
        Object.keys(variables).filter((name) => !KNOWN_VARIABLES.has(name)),
        entry,
      ).toEqual([]);
      const environment = {
        ...LAMBDA_PROVIDED,
        ...Object.fromEntries(Object.entries(variables).map(([name, value]) => [name, deployedValue(value)])),
        // An import of the stateful stack's key ARN: what CloudFormation resolves it to.
        ...(ENV.deviceTokenKeyArn in variables ? { [ENV.deviceTokenKeyArn]: DEPLOYED_KEY_ARN } : {}),
        ...(ENV.rolloutQueueUrl in variables ? { [ENV.rolloutQueueUrl]: DEPLOYED_QUEUE_URL } : {}),
      };
      const groups: EnvironmentGroup[] = ['function', ...(READS[entry] ?? [])];
      expect(ENV.rolloutQueueUrl in variables, entry).toBe(readsRollouts.has(entry));
      if (readsRollouts.has(entry)) groups.push('rollouts');
      // The composition root reads every storage variable: a function given one table name for it gets them all.
      if (ENV.companiesTable in variables) groups.push('storage');
      if (entry in SEARCH_CLIENTS) groups.push('search');
      for (const group of groups) {
        expect(() => readEnvironment(group, environment), `${entry} (${id}): ${group}`).not.toThrow();
        checked.add(group);
      }
    }
    // No function verifies tokens on AWS (API Gateway's JWT authorizer does): tokenVerification is the local gateway's.
    expect([...checked].sort()).toEqual([
      'addresses',
      'clientFailures',
      'cursors',
      'deviceIssuer',
      'devices',
      'events',
      'function',
      'idempotency',
      'rollouts',
      'search',
      'searchSource',
      'storage',
      'tokenEndpoint',
      'uploads',
    ]);
    // The search clients sign their requests: without the region Lambda provides, they would not start.
    const indexer = (ours.get(SEARCH_INDEXER_ENTRY)?.[1].Properties?.Environment as { Variables: Record<string, unknown> }).Variables;
    const unsigned = Object.fromEntries(Object.entries(indexer).map(([name, value]) => [name, deployedValue(value)]));
    expect(() => readEnvironment('search', unsigned)).toThrow(/AWS_REGION is missing \(required with OPENSEARCH_AUTH=aws-sigv4\)/);
  });

  it('grants no wildcard action, and "*" resources only to X-Ray and dynamodb:ListStreams', () => {
    const cdkProvidedPolicy =
      /^(BucketNotificationsHandler|AWS679f53fac002430cb0da5b7982bd2287|SearchLogsResourcePolicy|SearchIndexSetupProviderframework)/;
    for (const template of [stateful, stateless]) {
      const statements = statementsOf(template).filter(([, statement]) => statement.Effect === 'Allow');
      expect(statements.length).toBeGreaterThan(0);
      for (const [id, statement] of statements) {
        for (const action of asArray(statement.Action)) {
          expect(action, id).not.toBe('*');
          expect(action, `${id}: no wildcard action on a data service`).not.toMatch(/^(dynamodb|s3|sqs|es|events|lambda|cognito-idp):.*\*/);
        }
        if (cdkProvidedPolicy.test(id)) continue;
        if (asArray(statement.Resource).includes('*')) {
          for (const action of asArray(statement.Action))
            expect(['xray:PutTraceSegments', 'xray:PutTelemetryRecords', 'dynamodb:ListStreams'], id).toContain(action);
        }
      }
    }
  });

  it('scopes each function to the tables, objects and search paths it uses', () => {
    const search = policyOf('functions/handlers/search.ts');
    expect(search).not.toMatch(/dynamodb:|s3:|_bulk|"\/\*"/);
    expect(search).toMatch(/"Action":\["es:ESHttpGet","es:ESHttpPost"\].*\/resources\/_search/);
    const filters = policyOf('functions/handlers/search-filters.ts');
    expect(filters).toContain('CompaniesTable');
    expect(filters).not.toMatch(/DevicesTable|ScenariosTable|DeploymentsTable|dynamodb:PutItem|s3:|_bulk/);
    const indexer = policyOf(SEARCH_INDEXER_ENTRY);
    expect(indexer).toMatch(/"Action":"es:ESHttpPost".*\/resources\/_bulk/);
    expect(indexer).not.toMatch(/_search|es:ESHttpDelete|es:ESHttpPut|s3:|dynamodb:(PutItem|GetItem|Query|Scan)/);
    const reindex = policyOf(SEARCH_REINDEX_ENTRY);
    expect(reindex).toMatch(/DevicesTable.*ScenariosTable|ScenariosTable.*DevicesTable/);
    expect(reindex).not.toMatch(/CompaniesTable|DeploymentsTable|dynamodb:(PutItem|UpdateItem|DeleteItem|BatchWriteItem)|s3:/);
    const setup = policyOf(SEARCH_INDEX_SETUP_ENTRY);
    expect(setup).not.toMatch(/dynamodb:|s3:/);
    // The token endpoint calls Cognito's unauthenticated InitiateAuth (no permission), reads devices (their credential),
    // reserves and clears attempts' counts by key (items only: no Query, Scan or batch), and signs device tokens with
    // the KMS key; nothing else.
    const token = policyOf(AUTH_COGNITO_TOKEN_ENTRY);
    expect(token).not.toMatch(/cognito-idp:|s3:|es:|kms:GetPublicKey/);
    expect(token).toMatch(/DevicesTable/);
    expect(token).not.toMatch(/CompaniesTable|ScenariosTable|DeploymentsTable|PresenceTable|IdempotencyTable/);
    expect(token).toMatch(/"Action":"kms:Sign"/);
    const tokenStatements = (JSON.parse(token) as { Statement: { Action: string | string[]; Resource: unknown }[] }[]).flatMap(
      (document) => document.Statement,
    );
    const writes = tokenStatements.filter((statement) =>
      asArray(statement.Action).some((action) => /^dynamodb:(PutItem|UpdateItem|DeleteItem|BatchWriteItem)$/.test(action)),
    );
    expect(writes.map((statement) => JSON.stringify(statement.Resource))).toEqual([expect.stringMatching(/ClientFailuresTable/)]);
    const onFailures = tokenStatements.filter((statement) => JSON.stringify(statement.Resource).includes('ClientFailuresTable'));
    expect(onFailures.flatMap((statement) => asArray(statement.Action)).sort()).toEqual([
      'dynamodb:DeleteItem',
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
    ]);
    const reads = tokenStatements.filter((statement) => asArray(statement.Action).includes('dynamodb:GetItem'));
    expect(reads.map((statement) => JSON.stringify(statement.Resource)).sort()).toEqual([
      expect.stringMatching(/ClientFailuresTable/),
      expect.stringMatching(/DevicesTable/),
    ]);
    const issuer = policyOf(DEVICE_ISSUER_ENTRY);
    expect(issuer).toMatch(/"Action":"kms:GetPublicKey"/);
    expect(issuer).not.toMatch(/kms:Sign|dynamodb:|s3:|es:/);
    // The device poll and the deployment changes consumer read and conditionally update single device items (the
    // desired state tag): the table of every device's credential hash is never scanned, queried or batch-written by them.
    for (const entry of ['functions/handlers/device-deployments-get.ts', DEPLOYMENT_CHANGES_ENTRY]) {
      const statements = (JSON.parse(policyOf(entry)) as { Statement: { Action: string | string[]; Resource: unknown }[] }[]).flatMap(
        (document) => document.Statement,
      );
      const onDevices = statements.filter((statement) => JSON.stringify(statement.Resource).includes('DevicesTable'));
      expect(onDevices.flatMap((statement) => asArray(statement.Action)).sort(), entry).toEqual([
        'dynamodb:DeleteItem',
        'dynamodb:GetItem',
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
      ]);
    }
    const list = policyOf('functions/handlers/deployments-list.ts');
    expect(list).not.toMatch(/dynamodb:(PutItem|UpdateItem|DeleteItem|BatchWriteItem)|s3:/);
    // The history reads the deployments table and its gsi1/gsi2, each by name, and nothing else.
    const history = policyOf('functions/handlers/deployments-history.ts');
    expect(history).toContain('dynamodb:Query');
    expect(history).toContain('DeploymentsTable');
    expect(history).toContain('/index/gsi1');
    expect(history).toContain('/index/gsi2');
    expect(history).not.toMatch(
      /\/index\/\*|dynamodb:(PutItem|UpdateItem|DeleteItem|BatchWriteItem)|CompaniesTable|DevicesTable|ScenariosTable|s3:/,
    );
    const execute = policyOf('functions/handlers/deployments-execute.ts');
    expect(execute).not.toMatch(/CompaniesTable|s3:|events:PutEvents/);
    // Events and the history of changes come from the deployments stream's consumer, which also refreshes each
    // changed device's desired state tag (reads the device and its slots, updates the device).
    const changes = policyOf(DEPLOYMENT_CHANGES_ENTRY);
    expect(changes).toContain('events:PutEvents');
    expect(changes).toContain('DeploymentsTable');
    expect(changes).toContain('DevicesTable');
    expect(changes).toContain('dynamodb:Query');
    expect(changes).not.toMatch(/CompaniesTable|ScenariosTable|s3:|es:/);
    const slot = policyOf('functions/handlers/scenarios-upload-slot.ts');
    expect(slot).toContain(`/${ARCHIVE_UPLOADED.prefix}*`);
    expect(slot).toMatch(/"Action":"s3:PutObject"/);
    expect(slot).not.toMatch(/s3:GetObject|s3:DeleteObject|s3:ListBucket/);
    const upload = policyOf('functions/handlers/scenarios-upload.ts');
    expect(upload).toMatch(
      /"Action":\["s3:PutObject","s3:DeleteObject"\],"Effect":"Allow","Resource":\{"Fn::Join":\["",\[[^\]]*"\/companies\/\*"/,
    );
    expect(upload).not.toMatch(/s3:GetObject|\/uploads\//);
    expect(upload).not.toMatch(/DevicesTable|DeploymentsTable/);
    const download = policyOf('functions/handlers/scenarios-get.ts');
    expect(download).toMatch(/"Action":"s3:GetObject".*\/companies\/\*/);
    expect(download).not.toMatch(/s3:PutObject|s3:DeleteObject|dynamodb:PutItem/);
  });

  it('feeds the indexer from the devices and scenarios streams, retrying from the failed record, failures to an encrypted queue', () => {
    // The indexer's two, the deployment changes' and the rollout worker's (test/infra/rollouts.test.ts).
    stateless.resourceCountIs('AWS::Lambda::EventSourceMapping', 4);
    const mappings = resourcesOf(stateless, 'AWS::Lambda::EventSourceMapping').filter(
      ([, mapping]) => JSON.stringify(mapping.Properties?.FunctionName) === JSON.stringify({ Ref: ours.get(SEARCH_INDEXER_ENTRY)?.[0] }),
    );
    expect(mappings).toHaveLength(2);
    for (const [id, mapping] of mappings) {
      expect(mapping.Properties, id).toMatchObject({
        FunctionName: { Ref: ours.get(SEARCH_INDEXER_ENTRY)?.[0] },
        StartingPosition: 'TRIM_HORIZON',
        BatchSize: 100,
        BisectBatchOnFunctionError: true,
        MaximumRetryAttempts: 10,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        DestinationConfig: {
          OnFailure: { Destination: { 'Fn::GetAtt': [expect.stringMatching(/^SearchIndexerDeadLetterQueue/), 'Arn'] } },
        },
      });
    }
    const sources = JSON.stringify(mappings.map(([, mapping]) => mapping.Properties?.EventSourceArn));
    expect(sources).toMatch(/DevicesTable.*StreamArn/);
    expect(sources).toMatch(/ScenariosTable.*StreamArn/);
    // Four dead-letter queues and the rollout queue (test/infra/rollouts.test.ts): all encrypted, all TLS only.
    stateless.resourceCountIs('AWS::SQS::Queue', 5);
    for (const [id, queue] of resourcesOf(stateless, 'AWS::SQS::Queue')) {
      expect(queue.Properties, id).toMatchObject({ SqsManagedSseEnabled: true });
      if (!id.startsWith('RolloutWorkQueue')) expect(queue.Properties?.MessageRetentionPeriod, id).toBe(14 * 24 * 3600);
    }
    const queuePolicies = resourcesOf(stateless, 'AWS::SQS::QueuePolicy');
    expect(queuePolicies).toHaveLength(5);
    for (const [id, policy] of queuePolicies) expect(deniesInsecureTransport(policy.Properties?.PolicyDocument), id).toBe(true);
  });

  it('derives history entries and events from the deployments stream, from its start, retrying until the records near expiry', () => {
    stateless.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: ours.get(DEPLOYMENT_CHANGES_ENTRY)?.[0] },
      EventSourceArn: { 'Fn::ImportValue': Match.stringLikeRegexp('DeploymentsTable.*StreamArn') },
      StartingPosition: 'TRIM_HORIZON',
      BisectBatchOnFunctionError: true,
      // Idempotent: retried until the records near the stream's 24-hour retention, not dropped after a few attempts.
      MaximumRetryAttempts: -1,
      MaximumRecordAgeInSeconds: 23 * 3600,
      DestinationConfig: {
        OnFailure: { Destination: { 'Fn::GetAtt': [Match.stringLikeRegexp('^DeploymentChangesDeadLetterQueue'), 'Arn'] } },
      },
    });
    stateful.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' },
    });
  });

  it('invokes the archive function for objects created under the upload prefix, failures to a dead-letter queue', () => {
    stateless.hasResourceProperties('Custom::S3BucketNotifications', {
      NotificationConfiguration: {
        LambdaFunctionConfigurations: [
          {
            Events: ['s3:ObjectCreated:*'],
            Filter: { Key: { FilterRules: [{ Name: 'prefix', Value: ARCHIVE_UPLOADED.prefix }] } },
            LambdaFunctionArn: { 'Fn::GetAtt': [ours.get(ARCHIVE_UPLOADED.entry)?.[0], 'Arn'] },
          },
        ],
      },
      Managed: false,
    });
    stateless.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: ours.get(ARCHIVE_UPLOADED.entry)?.[0] },
      MaximumRetryAttempts: 2,
      DestinationConfig: {
        OnFailure: { Destination: { 'Fn::GetAtt': [Match.stringLikeRegexp('^ArchiveUploadedDeadLetterQueue'), 'Arn'] } },
      },
    });
  });

  it('runs the upload sweeper every few minutes on the sparse sweep index of the scenarios table, heading and deleting objects only', () => {
    const [, scenarios] = resourcesOf(stateful, 'AWS::DynamoDB::Table').find(([id]) => id.startsWith(TABLE_ID_PREFIX.scenarios)) as [
      string,
      Resource,
    ];
    expect(scenarios.Properties?.GlobalSecondaryIndexes).toEqual([
      {
        IndexName: 'sweep',
        KeySchema: [
          { AttributeName: 'sweepShard', KeyType: 'HASH' },
          { AttributeName: 'sweepAt', KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      },
    ]);
    const [sweeperId] = ours.get(UPLOAD_SWEEPER.entry) as [string, Resource];
    stateless.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: `rate(${UPLOAD_SWEEPER.everyMinutes} minutes)`,
      State: 'ENABLED',
      Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [sweeperId, 'Arn'] } })],
    });
    stateless.hasResourceProperties('AWS::Lambda::Permission', {
      FunctionName: { 'Fn::GetAtt': [sweeperId, 'Arn'] },
      Principal: 'events.amazonaws.com',
      SourceArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^UploadSweeperSchedule'), 'Arn'] },
    });
    const policy = policyOf(UPLOAD_SWEEPER.entry);
    expect(policy).toContain('/index/sweep');
    expect(policy).toContain('dynamodb:Query');
    expect(policy).toMatch(/"Action":\["s3:GetObject","s3:DeleteObject"\]/);
    expect(policy).not.toMatch(/s3:PutObject|CompaniesTable|DevicesTable|DeploymentsTable|events:PutEvents/);
  });

  it('runs the heartbeat sweeper every minute with EventBridge Scheduler, on the sparse sweep index of the presence table', () => {
    const [, presence] = resourcesOf(stateful, 'AWS::DynamoDB::Table').find(([id]) => id.startsWith(TABLE_ID_PREFIX.presence)) as [
      string,
      Resource,
    ];
    expect(presence.DeletionPolicy).toBe('Retain');
    expect(presence.Properties).toMatchObject({
      KeySchema: [{ AttributeName: 'deviceKey', KeyType: 'HASH' }],
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      SSESpecification: { SSEEnabled: true },
      GlobalSecondaryIndexes: [
        {
          IndexName: 'sweep',
          KeySchema: [
            { AttributeName: 'sweepShard', KeyType: 'HASH' },
            { AttributeName: 'sweepAt', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
      ],
    });
    // No stream: a heartbeat is not a change anyone consumes.
    expect(presence.Properties?.StreamSpecification).toBeUndefined();
    const [sweeperId, sweeper] = ours.get(HEARTBEAT_SWEEPER.entry) as [string, Resource];
    // One schedule per scheduled function (the rollout sweeper's: test/infra/rollouts.test.ts).
    const schedules = schedulesOf(stateless, sweeperId);
    expect(schedules).toHaveLength(1);
    const [, schedule] = schedules[0] as [string, Resource];
    expect(schedule.Properties).toMatchObject({
      ScheduleExpression: `rate(${HEARTBEAT_SWEEPER.everyMinutes} minute)`,
      State: 'ENABLED',
      FlexibleTimeWindow: { Mode: 'OFF' },
      Target: { Arn: { 'Fn::GetAtt': [sweeperId, 'Arn'] }, RetryPolicy: { MaximumRetryAttempts: 0 } },
    });
    expect(schedule.Properties?.GroupName).toBeUndefined();
    expect(schedule.Properties?.Name).toBeUndefined();
    // The schedule's role may invoke this function (and its versions) only.
    const roleId = (schedule.Properties?.Target as { RoleArn: { 'Fn::GetAtt': [string, string] } }).RoleArn['Fn::GetAtt'][0];
    const [, role] = resourcesOf(stateless, 'AWS::IAM::Role').find(([id]) => id === roleId) as [string, Resource];
    expect(JSON.stringify(role.Properties?.AssumeRolePolicyDocument)).toContain('scheduler.amazonaws.com');
    expect(JSON.stringify(role.Properties?.AssumeRolePolicyDocument)).toContain('aws:SourceAccount');
    const invoke = statementsOf(stateless).filter(([id]) => id.startsWith(roleId.replace(/[0-9A-F]{8}$/, '')));
    expect(invoke.flatMap(([, statement]) => asArray(statement.Action))).toEqual(['lambda:InvokeFunction']);
    expect(JSON.stringify(invoke.map(([, statement]) => statement.Resource))).not.toMatch(new RegExp(`"Fn::GetAtt":\\["(?!${sweeperId})`));
    // Runs shorter than the schedule's period, so they do not overlap; presence and devices only.
    expect(sweeper.Properties?.Timeout).toBeLessThan(60 * HEARTBEAT_SWEEPER.everyMinutes);
    const policy = policyOf(HEARTBEAT_SWEEPER.entry);
    expect(policy).toContain('PresenceTable');
    expect(policy).toContain('/index/sweep');
    expect(policy).toContain('dynamodb:Query');
    expect(policy).not.toMatch(/s3:|CompaniesTable|ScenariosTable|DeploymentsTable|events:PutEvents|kms:/);
    // Its alarms beyond errors and throttles: no run for 10 minutes (no data counts), a run near its timeout.
    const dimensions = JSON.stringify([{ Name: 'FunctionName', Value: { Ref: sweeperId } }]);
    const alarms = resourcesOf(stateless, 'AWS::CloudWatch::Alarm').filter(
      ([, alarm]) => JSON.stringify(alarm.Properties?.Dimensions) === dimensions,
    );
    expect(alarms.map(([, alarm]) => alarm.Properties?.MetricName).sort()).toEqual(['Duration', 'Errors', 'Invocations', 'Throttles']);
    const missed = alarms.find(([, alarm]) => alarm.Properties?.MetricName === 'Invocations')?.[1];
    expect(missed?.Properties).toMatchObject({
      ComparisonOperator: 'LessThanThreshold',
      Threshold: 1,
      EvaluationPeriods: ALARM_THRESHOLDS.scheduledMissedPeriods,
      TreatMissingData: 'breaching',
    });
    const duration = alarms.find(([, alarm]) => alarm.Properties?.MetricName === 'Duration')?.[1];
    expect(duration?.Properties).toMatchObject({
      Statistic: 'Maximum',
      Threshold: ((sweeper.Properties?.Timeout as number) * 1000 * ALARM_THRESHOLDS.scheduledDurationPercent) / 100,
    });
  });

  it('signs device tokens with a retained P-256 KMS key whose policy lets only the token function sign and the issuer function read it', () => {
    const keys = resourcesOf(stateful, 'AWS::KMS::Key');
    expect(keys).toHaveLength(1);
    const [, key] = keys[0] as [string, Resource];
    expect(key.DeletionPolicy).toBe('Retain');
    expect(key.UpdateReplacePolicy).toBe('Retain');
    expect(key.Properties).toMatchObject({ KeySpec: 'ECC_NIST_P256', KeyUsage: 'SIGN_VERIFY' });
    const roleIdOf = (entry: string) =>
      (
        resourcesOf(stateful, 'AWS::IAM::Role').find(([, role]) =>
          String(role.Properties?.Description).startsWith(`Execution role of ${entry} `),
        ) as [string, Resource]
      )[0];
    const statements = (key.Properties?.KeyPolicy as { Statement: (Statement & { Condition?: unknown })[] }).Statement;
    expect(statements).toHaveLength(3);
    // The account administers the key and may not use it: no IAM policy can grant a signature.
    const [admin, sign, read] = statements as [Statement, Statement & { Condition?: unknown }, Statement];
    expect(JSON.stringify(admin.Principal)).toContain(':root');
    expect(asArray(admin.Action).sort()).toEqual([...KEY_ADMINISTRATION_ACTIONS].sort());
    expect(
      asArray(admin.Action).filter((action) => /\*|Sign|Verify|GetPublicKey|Decrypt|Encrypt|GenerateDataKey|CreateGrant/.test(action)),
    ).toEqual([]);
    expect(sign).toMatchObject({
      Effect: 'Allow',
      Action: 'kms:Sign',
      Principal: { AWS: { 'Fn::GetAtt': [roleIdOf(AUTH_COGNITO_TOKEN_ENTRY), 'Arn'] } },
      Condition: { StringEquals: { 'kms:SigningAlgorithm': 'ECDSA_SHA_256', 'kms:MessageType': 'DIGEST' } },
    });
    expect(read).toMatchObject({
      Effect: 'Allow',
      Action: 'kms:GetPublicKey',
      Principal: { AWS: { 'Fn::GetAtt': [roleIdOf(DEVICE_ISSUER_ENTRY), 'Arn'] } },
    });
    // Those two functions run with those roles (imported by the stateless stack).
    for (const entry of [AUTH_COGNITO_TOKEN_ENTRY, DEVICE_ISSUER_ENTRY]) {
      expect(JSON.stringify(ours.get(entry)?.[1].Properties?.Role), entry).toContain('Fn::ImportValue');
      expect(JSON.stringify(ours.get(entry)?.[1].Properties?.Role), entry).toContain(roleIdOf(entry));
    }
    // No other role of either stack is granted any KMS action.
    for (const template of [stateful, stateless]) {
      for (const [id, statement] of statementsOf(template)) {
        if (asArray(statement.Action).some((action) => action.startsWith('kms:'))) {
          expect(id, JSON.stringify(statement)).toMatch(/^(AuthCognitoTokenFunction|DeviceIssuerFunction)/);
        }
      }
    }
  });

  it('gives no function key material: the key ARN, the issuer and the audience, to the two functions using the key only', () => {
    const [keyId] = resourcesOf(stateful, 'AWS::KMS::Key')[0] as [string, Resource];
    const apis = new Map(resourcesOf(stateless, 'AWS::ApiGatewayV2::Api').map(([id]) => [id.replace(/[0-9A-F]{8}$/, ''), id]));
    for (const [entry, [, fn]] of [...ours, ...statefulFunctions]) {
      const variables = (fn.Properties?.Environment as { Variables: Record<string, unknown> }).Variables;
      const text = JSON.stringify(variables);
      // Nothing that looks like a private key, a JWK's private member or PEM.
      expect(text, entry).not.toMatch(/PRIVATE KEY|"d":|BEGIN /);
      if (entry === AUTH_COGNITO_TOKEN_ENTRY || entry === DEVICE_ISSUER_ENTRY) {
        expect(JSON.stringify(variables.DEVICE_TOKEN_KEY_ARN), entry).toContain(keyId);
        expect(flattenJoin(variables.DEVICE_TOKEN_ISSUER), entry).toMatch(
          new RegExp(`^https://\\{\\{${apis.get('AuthApi')}\\}\\}\\..*/device$`),
        );
        expect(flattenJoin(variables.DEVICE_TOKEN_AUDIENCE), entry).toMatch(new RegExp(`^https://\\{\\{${apis.get('MainApi')}\\}\\}\\.`));
      } else {
        expect(
          Object.keys(variables).filter((name) => name.startsWith('DEVICE_TOKEN_') && name !== 'DEVICE_TOKEN_LIFETIME_SECONDS'),
          entry,
        ).toEqual([]);
      }
    }
    // The device settings, from CDK context (defaults here), to the token function and the sweeper.
    for (const entry of [AUTH_COGNITO_TOKEN_ENTRY, HEARTBEAT_SWEEPER.entry]) {
      expect((ours.get(entry)?.[1].Properties?.Environment as { Variables: Record<string, unknown> }).Variables, entry).toMatchObject({
        DEVICE_HEARTBEAT_SECONDS: '300',
        DEVICE_TOKEN_LIFETIME_SECONDS: '900',
      });
    }
  });

  it('installs the index template on every deployment through a custom resource that changes with the template', () => {
    const [setupId] = ours.get(SEARCH_INDEX_SETUP_ENTRY) as [string, Resource];
    const [[, resource]] = resourcesOf(stateless, 'Custom::SearchIndexSetup') as [[string, Resource]];
    expect(resource.Properties).toMatchObject({ Alias: 'resources', TemplateVersion: templateVersion() });
    const serviceToken = (resource.Properties?.ServiceToken as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
    const framework = stateless.findResources('AWS::Lambda::Function')[serviceToken] as Resource;
    expect(framework.Properties?.Environment).toEqual({ Variables: { USER_ON_EVENT_FUNCTION_ARN: { 'Fn::GetAtt': [setupId, 'Arn'] } } });
  });

  it('alarms on 5xx rate per API, errors and throttles per function, dead letters and the indexer lag, all to the alarm topic', () => {
    const alarms = resourcesOf(stateless, 'AWS::CloudWatch::Alarm');
    const [topicId] = resourcesOf(stateless, 'AWS::SNS::Topic')[0] as [string, Resource];
    for (const [id, alarm] of alarms) expect(alarm.Properties?.AlarmActions, id).toEqual([{ Ref: topicId }]);
    const byMetric = (name: string) => alarms.filter(([, alarm]) => alarm.Properties?.MetricName === name);
    for (const [entry, [functionId]] of ours) {
      for (const metric of ['Errors', 'Throttles']) {
        const found = byMetric(metric).filter(
          ([, alarm]) =>
            JSON.stringify(alarm.Properties?.Dimensions) === JSON.stringify([{ Name: 'FunctionName', Value: { Ref: functionId } }]),
        );
        expect(found, `${metric} ${entry}`).toHaveLength(1);
        expect(found[0]?.[1].Properties).toMatchObject({
          Threshold: 1,
          ComparisonOperator: 'GreaterThanOrEqualToThreshold',
          Period: 300,
          Statistic: 'Sum',
        });
      }
    }
    const [triggerId] = statefulFunctions.get(PRE_TOKEN_GENERATION_ENTRY) as [string, Resource];
    expect(
      byMetric('Errors').filter(([, alarm]) => JSON.stringify(alarm.Properties?.Dimensions).includes(triggerId)),
      'trigger errors',
    ).toHaveLength(1);
    // Every queue but the rollout queue is a dead-letter queue (the rollout queue's age is alarmed instead).
    const deadLetters = byMetric('ApproximateNumberOfMessagesVisible');
    expect(deadLetters.map(([, alarm]) => JSON.stringify(alarm.Properties?.Dimensions)).sort()).toEqual(
      resourcesOf(stateless, 'AWS::SQS::Queue')
        .filter(([queueId]) => !queueId.startsWith('RolloutWorkQueue'))
        .map(([queueId]) => JSON.stringify([{ Name: 'QueueName', Value: { 'Fn::GetAtt': [queueId, 'QueueName'] } }]))
        .sort(),
    );
    for (const [id, alarm] of deadLetters)
      expect(alarm.Properties, id).toMatchObject({ Threshold: 0, ComparisonOperator: 'GreaterThanThreshold' });
    const iteratorAges = byMetric('IteratorAge');
    expect(iteratorAges.map(([, alarm]) => JSON.stringify(alarm.Properties?.Dimensions)).sort()).toEqual(
      [SEARCH_INDEXER_ENTRY, DEPLOYMENT_CHANGES_ENTRY]
        .map((entry) => JSON.stringify([{ Name: 'FunctionName', Value: { Ref: ours.get(entry)?.[0] } }]))
        .sort(),
    );
    for (const [id, alarm] of iteratorAges)
      expect(alarm.Properties, id).toMatchObject({ Threshold: ALARM_THRESHOLDS.iteratorAgeMs, Statistic: 'Maximum' });
    const rates = alarms.filter(([, alarm]) => alarm.Properties?.Metrics !== undefined);
    expect(rates).toHaveLength(3);
    for (const [id, alarm] of rates) {
      expect(alarm.Properties, id).toMatchObject({ Threshold: ALARM_THRESHOLDS.api5xxPercent, EvaluationPeriods: 3, DatapointsToAlarm: 2 });
      expect(JSON.stringify(alarm.Properties?.Metrics), id).toMatch(
        /"MetricName":"5xx".*"MetricName":"Count"|"MetricName":"Count".*"MetricName":"5xx"/,
      );
    }
    stateless.hasOutput('AlarmTopicArn', { Value: { Ref: topicId } });
  });

  it("counts the 401s in the access logs of the APIs with authorized routes as TokenFailures, in the functions' metrics namespace", () => {
    const filters = resourcesOf(stateless, 'AWS::Logs::MetricFilter');
    const logGroupOf = ([, filter]: [string, Resource]) => (filter.Properties?.LogGroupName as { Ref: string }).Ref;
    // The main and upload APIs, whose 401s are refused tokens; not the auth API, whose token endpoint answers 401 to a wrong password.
    const authorized = [...new Set(ROUTES.filter((route) => route.scope !== null).map((route) => route.api))].sort();
    expect(authorized).toEqual(['main', 'upload']);
    expect(filters.map(logGroupOf).sort()).toEqual([
      expect.stringMatching(/^MainApiAccessLogs/),
      expect.stringMatching(/^UploadApiAccessLogs/),
    ]);
    for (const [id, filter] of filters) {
      expect(filter.Properties, id).toEqual({
        LogGroupName: { Ref: logGroupOf([id, filter]) },
        FilterPattern: '{ $.status = "401" }',
        MetricTransformations: [
          { MetricNamespace: DEFAULT_METRICS_NAMESPACE, MetricName: METRIC.tokenFailures, MetricValue: '1', Unit: 'Count' },
        ],
      });
    }
    // The filter reads `status` as text, and the reason of a refusal is in the same line.
    for (const [id, stage] of resourcesOf(stateless, 'AWS::ApiGatewayV2::Stage')) {
      const format = JSON.parse((stage.Properties?.AccessLogSettings as { Format: string }).Format) as Record<string, unknown>;
      expect(format, id).toMatchObject({ status: '$context.status', authorizerError: '$context.authorizer.error' });
    }
  });

  it('deletes archive objects only under uploads/ and companies/, never versions, never with a bucket-wide grant', () => {
    const deletes: string[] = [];
    for (const template of [stateful, stateless]) {
      for (const [id, statement] of statementsOf(template).filter(([, candidate]) => candidate.Effect === 'Allow')) {
        const actions = asArray(statement.Action);
        expect(
          actions.filter((action) =>
            /^s3:(\*|DeleteObject\*|DeleteObjectVersion|PutLifecycleConfiguration|PutBucketVersioning)$/.test(action),
          ),
          id,
        ).toEqual([]);
        if (!actions.includes('s3:DeleteObject')) continue;
        for (const resource of asArray(statement.Resource)) deletes.push(`${id} ${flattenJoin(resource).replace(/^.*\}\}?/, '')}`);
      }
    }
    const byFunction = (entry: string) =>
      deletes
        .filter((line) => line.startsWith(policyIdOf(entry)))
        .map((line) => line.split(' ')[1])
        .sort();
    expect(byFunction(ARCHIVE_UPLOADED.entry)).toEqual(['/companies/*', `/${ARCHIVE_UPLOADED.prefix}*`]);
    expect(byFunction('functions/handlers/scenarios-upload.ts')).toEqual(['/companies/*']);
    expect(
      deletes
        .map((line) => line.split(' ')[1])
        .filter((pattern) => pattern !== '/companies/*' && pattern !== `/${ARCHIVE_UPLOADED.prefix}*`),
    ).toEqual([]);
    const archiveUploaded = policyOf(ARCHIVE_UPLOADED.entry);
    expect(archiveUploaded).toMatch(
      /"Action":\["s3:GetObject","s3:DeleteObject"\],"Effect":"Allow","Resource":\{"Fn::Join":\["",\[[^\]]*"\/uploads\/\*"/,
    );
    expect(archiveUploaded).toMatch(
      /"Action":\["s3:PutObject","s3:DeleteObject"\],"Effect":"Allow","Resource":\{"Fn::Join":\["",\[[^\]]*"\/companies\/\*"/,
    );
  });

  it("gives every function, aws-cdk-lib's own included, a log group with the configured retention", () => {
    for (const template of [stateful, stateless]) {
      const logGroups = template.findResources('AWS::Logs::LogGroup') as Record<string, Resource>;
      const functions = resourcesOf(template, 'AWS::Lambda::Function');
      expect(functions.length).toBeGreaterThan(0);
      for (const [id, fn] of functions) {
        const logGroup = (fn.Properties?.LoggingConfig as { LogGroup?: { Ref?: string } } | undefined)?.LogGroup?.Ref;
        expect(logGroup, id).toEqual(expect.any(String));
        expect(logGroups[logGroup as string]?.Properties?.RetentionInDays, id).toBe(30);
      }
    }
    expect(resourcesOf(stateful, 'AWS::Lambda::Function').some(([id]) => isCdkProvided(id))).toBe(true);
    expect(resourcesOf(stateless, 'AWS::Lambda::Function').filter(([id]) => isCdkProvided(id)).length).toBeGreaterThanOrEqual(2);
  });

  it('gives the index setup 10 minutes of retries within its timeout, and index administration the replica count of one node', () => {
    const [, setup] = ours.get(SEARCH_INDEX_SETUP_ENTRY) as [string, Resource];
    expect(setup.Properties?.Timeout).toBe(SEARCH_INDEX_SETUP_TIMEOUT.toSeconds());
    expect(SEARCH_INDEX_SETUP_TIMEOUT.toMilliseconds()).toBeGreaterThanOrEqual(SETUP_RETRY_BUDGET_MS + 60_000);
    expect(SEARCH_INDEX_SETUP_TIMEOUT.toMinutes()).toBeLessThan(15);
    for (const [entry, [, fn]] of ours) {
      const variables = (fn.Properties?.Environment as { Variables: Record<string, unknown> }).Variables;
      expect(variables.OPENSEARCH_REPLICAS, entry).toBe(SEARCH_CLIENTS[entry] === 'admin' ? '0' : undefined);
    }
    stateless.hasResourceProperties('Custom::SearchIndexSetup', { TemplateVersion: templateVersion(0) });
  });

  it('alarms on the OpenSearch domain: red, yellow, free storage, blocked writes, JVM memory pressure, failed snapshots', () => {
    const [domainId] = resourcesOf(stateful, 'AWS::OpenSearchService::Domain')[0] as [string, Resource];
    const [topicId] = resourcesOf(stateless, 'AWS::SNS::Topic')[0] as [string, Resource];
    const alarms = resourcesOf(stateless, 'AWS::CloudWatch::Alarm').filter(([, alarm]) => alarm.Properties?.Namespace === 'AWS/ES');
    const byMetric = new Map(
      alarms.map(([, alarm]) => [alarm.Properties?.MetricName as string, alarm.Properties as Record<string, unknown>]),
    );
    expect([...byMetric.keys()].sort()).toEqual([
      'AutomatedSnapshotFailure',
      'ClusterIndexWritesBlocked',
      'ClusterStatus.red',
      'ClusterStatus.yellow',
      'FreeStorageSpace',
      'JVMMemoryPressure',
    ]);
    for (const [, alarm] of alarms) {
      expect(alarm.Properties?.AlarmActions).toEqual([{ Ref: topicId }]);
      const dimensions = JSON.stringify(alarm.Properties?.Dimensions);
      expect(dimensions).toContain('"Name":"DomainName"');
      expect(dimensions).toContain(domainId);
      expect(dimensions).toContain('"Name":"ClientId"');
    }
    const atLeastOne = { Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold', Statistic: 'Maximum' };
    expect(byMetric.get('ClusterStatus.red')).toMatchObject({ ...atLeastOne, Period: 60, EvaluationPeriods: 1 });
    expect(byMetric.get('ClusterStatus.yellow')).toMatchObject({ ...atLeastOne, Period: 60, EvaluationPeriods: 5 });
    expect(byMetric.get('ClusterIndexWritesBlocked')).toMatchObject({ ...atLeastOne, Period: 300 });
    expect(byMetric.get('AutomatedSnapshotFailure')).toMatchObject({ ...atLeastOne, Period: 60 });
    // 20% of the default 10 GiB volume, in MiB (the metric's unit).
    expect(byMetric.get('FreeStorageSpace')).toMatchObject({
      Threshold: 2048,
      ComparisonOperator: 'LessThanOrEqualToThreshold',
      Statistic: 'Minimum',
      Period: 60,
    });
    expect(byMetric.get('JVMMemoryPressure')).toMatchObject({
      Threshold: 80,
      ComparisonOperator: 'GreaterThanThreshold',
      Statistic: 'Maximum',
      EvaluationPeriods: 3,
    });
  });

  it('lets OpenSearch publish its logs through one resource policy shared by every stage, never deleted by one', () => {
    expect(resourcesOf(stateful, 'Custom::CloudwatchLogResourcePolicy')).toEqual([]);
    const policies = resourcesOf(stateful, 'Custom::SharedLogsResourcePolicy');
    expect(policies).toHaveLength(1);
    const [[policyId, policy]] = policies as [[string, Resource]];
    const call = JSON.parse(flattenJoin(policy.Properties?.Create)) as {
      action: string;
      parameters: { policyName: string; policyDocument: string };
      physicalResourceId: { id: string };
    };
    expect(call).toMatchObject({
      action: 'putResourcePolicy',
      parameters: { policyName: SEARCH_LOGS_POLICY_NAME },
      physicalResourceId: { id: SEARCH_LOGS_POLICY_NAME },
    });
    expect(policy.Properties?.Update).toEqual(policy.Properties?.Create);
    expect(policy.Properties?.Delete).toBeUndefined();
    const document = JSON.parse(call.parameters.policyDocument) as { Statement: (Statement & { Condition: unknown })[] };
    expect(document.Statement).toEqual([
      expect.objectContaining({
        Effect: 'Allow',
        Principal: { Service: 'es.amazonaws.com' },
        Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        Resource: 'arn:{{AWS::Partition}}:logs:{{AWS::Region}}:{{AWS::AccountId}}:log-group:DeviceScenarioService-*',
        Condition: {
          StringEquals: { 'aws:SourceAccount': '{{AWS::AccountId}}' },
          ArnLike: { 'aws:SourceArn': 'arn:{{AWS::Partition}}:es:{{AWS::Region}}:{{AWS::AccountId}}:domain/*' },
        },
      }),
    ]);
    // Every stage puts the same document under the same name: one policy per account and region, whatever the stages.
    const other = quickStage({ stage: 'other' }).stateful;
    const [[, otherPolicy]] = resourcesOf(other, 'Custom::SharedLogsResourcePolicy') as [[string, Resource]];
    expect(flattenJoin(otherPolicy.Properties?.Create)).toBe(flattenJoin(policy.Properties?.Create));
    // The domain (whose log publishing needs the policy) is created or updated after it.
    const [[, domain]] = resourcesOf(stateful, 'AWS::OpenSearchService::Domain') as [[string, Resource & { DependsOn?: string[] }]];
    expect(domain.DependsOn).toContain(policyId);
    // Log groups are named by CloudFormation `<stack name>-<logical id>-<suffix>`: within the policy's scope.
    for (const [id, logGroup] of resourcesOf(stateful, 'AWS::Logs::LogGroup'))
      expect(logGroup.Properties?.LogGroupName, id).toBeUndefined();
    expect(CONTEXT.stage).toBe('test');
  });

  it('names no physical resource (several stages share an account)', () => {
    const named: Record<string, string> = {
      'AWS::DynamoDB::Table': 'TableName',
      'AWS::S3::Bucket': 'BucketName',
      'AWS::Lambda::Function': 'FunctionName',
      'AWS::SQS::Queue': 'QueueName',
      'AWS::IAM::Role': 'RoleName',
      'AWS::Logs::LogGroup': 'LogGroupName',
      'AWS::OpenSearchService::Domain': 'DomainName',
      'AWS::Cognito::UserPool': 'UserPoolName',
      'AWS::SNS::Topic': 'TopicName',
      'AWS::CloudWatch::Alarm': 'AlarmName',
      'AWS::Events::EventBus': 'Name',
      'AWS::SecretsManager::Secret': 'Name',
    };
    for (const template of [stateful, stateless]) {
      for (const [type, property] of Object.entries(named)) {
        for (const [id, resource] of resourcesOf(template, type)) {
          if (type === 'AWS::Events::EventBus') expect(resource.Properties?.[property], id).toMatch(/^DeviceScenarioServicetestStateless/);
          else expect(resource.Properties?.[property], id).toBeUndefined();
        }
      }
    }
  });

  it('passes cdk-nag AwsSolutionsChecks; every acknowledgment has a reason and matches a finding', () => {
    const { violations, used } = runNag(app);
    expect(violations).toEqual([]);
    const acknowledgments = acknowledgmentsOf(app);
    expect(acknowledgments.length).toBeGreaterThan(0);
    for (const ack of acknowledgments) {
      expect(ack.reason.length, `${ack.path} ${ack.id}`).toBeGreaterThanOrEqual(60);
      expect(used.has(`${ack.path} ${ack.id}`), `acknowledgment without a finding: ${ack.path} ${ack.id}`).toBe(true);
    }
    const grouped = new Map<string, string[]>();
    for (const ack of acknowledgments)
      grouped.set(`${ack.id}\n      ${ack.reason}`, [
        ...(grouped.get(`${ack.id}\n      ${ack.reason}`) ?? []),
        ack.path.replace(/^DeviceScenarioService-test-/, ''),
      ]);
    console.log(
      `cdk-nag acknowledgments (${acknowledgments.length}):\n${[...grouped].map(([rule, paths]) => `  ${rule}\n      on ${paths.join(', ')}`).join('\n')}`,
    );
  });
});

describe('customer parameters from CDK context', () => {
  let app: App;
  let stage: ServiceStage;
  let stateful: Template;
  let stateless: Template;

  beforeAll(() => {
    ({ app, stage, stateful, stateless } = quickStage({
      stage: 'staging',
      logRetentionDays: '90',
      corsAllowedOrigins: 'https://console.example.com,http://localhost:5173',
      opensearchInstanceType: 'r7g.large.search',
      opensearchInstanceCount: '2',
      opensearchVolumeGiB: '50',
      cognitoFeaturePlan: 'PLUS',
      logLevel: 'debug',
      authRateLimit: '50',
      authBurstLimit: 80,
    }));
  });

  it('throttles the token route in a bucket of its own at the given rate and burst, apart from the key sets and discovery document', () => {
    const apiIds = new Map(resourcesOf(stateless, 'AWS::ApiGatewayV2::Api').map(([id]) => [id.replace(/[0-9A-F]{8}$/, ''), id]));
    const stageOf = (api: string) =>
      resourcesOf(stateless, 'AWS::ApiGatewayV2::Stage').find(
        ([, candidate]) => (candidate.Properties?.ApiId as { Ref: string }).Ref === apiIds.get(api),
      )?.[1].Properties ?? {};
    const auth = stageOf('AuthApi');
    // POST /token alone has route settings: the routes a device authorizer fetches (discovery document, key set) and
    // the Cognito key set stay in the stage's default bucket, which a flood of token requests does not drain.
    expect(auth.RouteSettings).toEqual({ 'POST /token': { ThrottlingRateLimit: 50, ThrottlingBurstLimit: 80 } });
    const authRouteKeys = resourcesOf(stateless, 'AWS::ApiGatewayV2::Route')
      .filter(([, route]) => (route.Properties?.ApiId as { Ref: string }).Ref === apiIds.get('AuthApi'))
      .map(([, route]) => route.Properties?.RouteKey);
    expect(authRouteKeys).toEqual(
      expect.arrayContaining(['POST /token', 'GET /.well-known/jwks.json', ...DEVICE_ISSUER_ROUTES.map((route) => `GET ${route.path}`)]),
    );
    expect(auth.DefaultRouteSettings).toEqual({ ThrottlingRateLimit: 50, ThrottlingBurstLimit: 80 });
    expect(stageOf('MainApi').DefaultRouteSettings).toEqual({
      ThrottlingRateLimit: THROTTLE.main.rateLimit,
      ThrottlingBurstLimit: THROTTLE.main.burstLimit,
    });
  });

  it('names the stacks after the stage', () => {
    expect([stage.stateful.stackName, stage.stateless.stackName]).toEqual([
      'DeviceScenarioService-staging-Stateful',
      'DeviceScenarioService-staging-Stateless',
    ]);
  });

  it('sizes the OpenSearch domain, with zone awareness for two nodes', () => {
    stateful.hasResourceProperties('AWS::OpenSearchService::Domain', {
      ClusterConfig: {
        InstanceType: 'r7g.large.search',
        InstanceCount: 2,
        ZoneAwarenessEnabled: true,
        ZoneAwarenessConfig: { AvailabilityZoneCount: 2 },
      },
      EBSOptions: { VolumeSize: 50, VolumeType: 'gp3' },
    });
  });

  it('allows the given origins on the three APIs and on presigned PUTs to the archive bucket', () => {
    const origins = ['https://console.example.com', 'http://localhost:5173'];
    for (const [id, api] of resourcesOf(stateless, 'AWS::ApiGatewayV2::Api')) {
      expect(api.Properties?.CorsConfiguration, id).toMatchObject({
        AllowOrigins: origins,
        AllowHeaders: expect.arrayContaining(['authorization', 'content-type']),
      });
    }
    stateful.hasResourceProperties('AWS::S3::Bucket', {
      CorsConfiguration: {
        CorsRules: [
          Match.objectLike({ AllowedMethods: Match.arrayWith(['PUT']), AllowedOrigins: origins, AllowedHeaders: ['content-type'] }),
        ],
      },
    });
  });

  it('applies the log retention, the log level and the Plus plan with threat protection', () => {
    for (const template of [stateful, stateless]) {
      for (const [id, logGroup] of resourcesOf(template, 'AWS::Logs::LogGroup')) expect(logGroup.Properties?.RetentionInDays, id).toBe(90);
    }
    for (const [id, fn] of functionsByEntry(stateless)) {
      expect((fn[1].Properties?.Environment as { Variables: Record<string, unknown> }).Variables.POWERTOOLS_LOG_LEVEL, id).toBe('DEBUG');
    }
    stateful.hasResourceProperties('AWS::Cognito::UserPool', {
      UserPoolTier: 'PLUS',
      UserPoolAddOns: { AdvancedSecurityMode: 'ENFORCED' },
    });
  });

  it('alarms when a 50 GiB node has less than 20% free, and gives new indexes one replica on two nodes', () => {
    stateless.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'FreeStorageSpace', Threshold: 10_240 });
    const functions = functionsByEntry(stateless);
    for (const entry of [SEARCH_INDEX_SETUP_ENTRY, SEARCH_REINDEX_ENTRY]) {
      expect(
        (functions.get(entry)?.[1].Properties?.Environment as { Variables: Record<string, unknown> }).Variables.OPENSEARCH_REPLICAS,
        entry,
      ).toBe('1');
    }
    stateless.hasResourceProperties('Custom::SearchIndexSetup', { TemplateVersion: templateVersion(1) });
  });

  it('still passes cdk-nag, with no acknowledgment left unused', () => {
    const { violations, used } = runNag(app);
    expect(violations).toEqual([]);
    for (const ack of acknowledgmentsOf(app)) expect(used.has(`${ack.path} ${ack.id}`), `${ack.path} ${ack.id}`).toBe(true);
  });
});

describe('`cdk synth` with esbuild bundling (the CLI, offline, no credentials)', () => {
  const outputRoot = join(REPO_ROOT, 'cdk.out');
  let outdir: string | undefined;

  afterAll(() => {
    if (outdir !== undefined) rmSync(outdir, { recursive: true, force: true });
  });

  it('synthesizes both stacks in under 3 minutes, cdk-nag clean, every bundle an index.mjs under 1.25 MiB that exports handler', {
    timeout: 240_000,
  }, () => {
    mkdirSync(outputRoot, { recursive: true });
    // Inside the repository so that the runtime-provided @aws-sdk/* modules resolve when the bundles are loaded.
    outdir = mkdtempSync(join(outputRoot, 'infra-test-'));
    const environment: NodeJS.ProcessEnv = { ...process.env, AWS_EC2_METADATA_DISABLED: 'true', CDK_DISABLE_VERSION_CHECK: '1' };
    for (const name of Object.keys(environment))
      if (/^AWS_(ACCESS_KEY_ID|SECRET_ACCESS_KEY|SESSION_TOKEN|PROFILE)$/.test(name)) delete environment[name];
    const started = Date.now();
    const synth = spawnSync(join(REPO_ROOT, 'node_modules', '.bin', 'cdk'), ['synth', '--quiet', '--no-notices', '--output', outdir], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      env: environment,
      timeout: 200_000,
    });
    const seconds = (Date.now() - started) / 1000;
    expect(synth.status, `${synth.stdout}\n${synth.stderr}`).toBe(0);
    expect(seconds).toBeLessThan(180);

    const bundles: { id: string; file: string; bytes: number }[] = [];
    const packageFileChecks: { id: string; directory: string }[] = [];
    // Every variable a function of the stacks is given, with a value it plausibly takes once deployed (deployedValue):
    // functions that read their configuration at cold start fail to load without it, or with one the schema refuses.
    const configuration: Record<string, string> = {};
    for (const stack of ['Stateful', 'Stateless']) {
      const template = JSON.parse(readFileSync(join(outdir, `DeviceScenarioService-dev-${stack}.template.json`), 'utf8')) as {
        Resources: Record<string, Resource>;
      };
      for (const [id, resource] of Object.entries(template.Resources)) {
        if (resource.Type !== 'AWS::Lambda::Function' || isCdkProvided(id)) continue;
        const assetPath = resource.Metadata?.['aws:asset:path'];
        expect(assetPath, id).toEqual(expect.any(String));
        const file = join(outdir, assetPath as string, 'index.mjs');
        expect(existsSync(file), file).toBe(true);
        const variables = (resource.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};
        for (const [name, value] of Object.entries(variables))
          configuration[name] = name === ENV.rolloutQueueUrl ? DEPLOYED_QUEUE_URL : deployedValue(value);
        bundles.push({ id, file, bytes: statSync(file).size });
        packageFileChecks.push({ id, directory: join(outdir, assetPath as string) });
      }
    }
    console.log(
      `cdk synth took ${seconds.toFixed(1)} s. Bundle sizes (index.mjs):\n` +
        bundles.map((bundle) => `  ${bundle.id.padEnd(48)} ${String(bundle.bytes).padStart(9)} B`).join('\n'),
    );
    expect(bundles).toHaveLength(STATELESS_ENTRIES.length + 1);
    // zod (~450 KB minified: every route validates its input with its definition's schemas), the OpenSearch client of
    // the search functions (~250 KB) and the X-Ray SDK of Powertools Tracer (~80 KB) are most of the largest bundle.
    for (const bundle of bundles) expect(bundle.bytes, bundle.id).toBeLessThan(1.25 * 1_048_576);

    // The package files a route's handler reads at run time (its access's packageFiles, e.g. Redoc's script for the
    // API reference page) are in that function's bundle, at the path Node's resolution finds them from index.mjs.
    const withPackageFiles = ROUTES.filter((route) => route.access?.packageFiles !== undefined);
    expect(withPackageFiles.map((route) => route.id)).toEqual(['ApiReferenceScript']);
    for (const route of withPackageFiles) {
      const bundle = packageFileChecks.find(({ id }) => id.startsWith(functionIdOf(route.entry)));
      expect(bundle, route.id).toBeDefined();
      for (const file of route.access?.packageFiles ?? []) {
        const copied = join(bundle?.directory ?? '', 'node_modules', file);
        expect(existsSync(copied), copied).toBe(true);
        expect(readFileSync(copied).equals(readFileSync(join(REPO_ROOT, 'node_modules', file))), copied).toBe(true);
      }
    }

    // The ESM bundles load in plain Node (the createRequire banner, externals) and export a handler.
    const script = `for (const file of process.argv.slice(1)) { const m = await import(file); if (typeof m.handler !== 'function') throw new Error(file + ': no handler'); }`;
    const loaded = spawnSync(process.execPath, ['--input-type=module', '-e', script, ...bundles.map((bundle) => bundle.file)], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      env: { ...process.env, ...configuration, ...LAMBDA_PROVIDED, POWERTOOLS_LOG_LEVEL: 'SILENT' },
    });
    expect(loaded.status, loaded.stderr.slice(-2_000)).toBe(0);
  });
});
