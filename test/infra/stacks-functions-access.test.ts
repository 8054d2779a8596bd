/**
 * Each function and what it may touch: runtime, variables, and the grants read from its access (tables, archive
 * objects, search, device key, cursors). Built by lib/stage.ts exactly as bin/app.ts builds them, with bundling
 * skipped (template-helpers.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { ENV, type EnvironmentGroup, KNOWN_VARIABLES, readEnvironment } from '../../functions/contract/environment.js';
import {
  ARCHIVE_UPLOADED,
  alertChanges,
  bearerAuthorizer,
  CONTINUOUS_ROLLOUTS_ENTRY,
  commandChanges,
  DEPLOYMENT_CHANGES_ENTRY,
  HEARTBEAT_SWEEPER,
  preTokenGeneration,
  ROLLOUT_SWEEPER,
  ROLLOUT_WORKER,
  SEARCH_INDEX_SETUP_ENTRY,
  SEARCH_INDEXER_ENTRY,
  SEARCH_REINDEX_ENTRY,
} from '../../functions/contract/functions.js';
import { DEVICE_ISSUER_ENTRY } from '../../functions/contract/routes/device-issuer.js';
import { ROUTES } from '../../functions/contract/routes.js';
import { SERVICE_NAME } from '../../functions/platform/logger.js';
import { DEFAULT_METRICS_NAMESPACE } from '../../functions/platform/observability.js';
import { LAMBDA_RUNTIME } from '../../lib/service-function.js';
import {
  asArray,
  DEPLOYED_KEY_ARN,
  DEPLOYED_QUEUE_URL,
  DEPLOYED_USER_POOL_ID,
  deployedValue,
  flattenJoin,
  isCdkProvided,
  LAMBDA_PROVIDED,
  type Resource,
  resourcesOf,
  SEARCH_CLIENTS,
  type ServiceTemplates,
  STATELESS_ENTRIES,
  serviceTemplates,
  statementsOf,
  TOKEN_FUNCTION_ENTRY,
} from './template-helpers.js';

/** The functions that page listings (their access's `pagesListings`), which alone get the cursor signing key. */
const PAGING = [
  'functions/handlers/deployments-list.ts',
  'functions/handlers/deployments-history.ts',
  'functions/handlers/scenarios-list.ts',
  // Pages the active deployments of the device it deletes.
  'functions/handlers/device-delete.ts',
  'functions/handlers/rollouts-list.ts',
  'functions/handlers/rollout-targets.ts',
  'functions/handlers/admin-companies.ts',
  'functions/handlers/admin-users.ts',
  // Pages the API clients (GET /admin/api-clients); its other five routes share the function.
  'functions/handlers/admin-api-clients.ts',
  'functions/handlers/admin-audit.ts',
  // Pages a device's commands (GET …/devices/{deviceId}/commands); its other three routes share the function.
  'functions/handlers/device-commands.ts',
  // Pages a company's alerts (GET …/alerts); GET …/alerts/{alertId} shares the function.
  'functions/handlers/alerts.ts',
  // Pages a company's webhooks and a webhook's deliveries; its other routes share the function.
  'functions/handlers/webhooks.ts',
];

describe('stacks, functions access (bundling skipped)', () => {
  let stateful: ServiceTemplates['stateful'];
  let stateless: ServiceTemplates['stateless'];
  let ours: ServiceTemplates['ours'];
  let statefulFunctions: ServiceTemplates['statefulFunctions'];
  let policyOf: ServiceTemplates['policyOf'];
  let policyIdOf: ServiceTemplates['policyIdOf'];

  beforeAll(() => {
    ({ stateful, stateless, ours, statefulFunctions, policyOf, policyIdOf } = serviceTemplates());
  });

  it('runs one function per entry, all arm64 on the newest Node.js runtime, traced, with their own log groups and no managed policies', () => {
    expect([...ours.keys()].sort()).toEqual([...STATELESS_ENTRIES].sort());
    expect([...statefulFunctions.keys()]).toEqual([preTokenGeneration.entry]);
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

  it('gives the token settings to the bearer authorizer only (API Gateway runs it before any function) and the OpenSearch settings only to search clients', () => {
    const variablesOf = (entry: string) =>
      (ours.get(entry)?.[1].Properties?.Environment as { Variables: Record<string, unknown> }).Variables;

    const [clientId] = resourcesOf(stateful, 'AWS::Cognito::UserPoolClient')[0] as [string, Resource];
    for (const entry of STATELESS_ENTRIES) {
      const variables = variablesOf(entry);
      expect(variables, entry).toMatchObject({ POWERTOOLS_SERVICE_NAME: 'device-scenario-service', POWERTOOLS_LOG_LEVEL: 'INFO' });
      if (entry === bearerAuthorizer.entry) {
        expect(Object.keys(variables), entry).toEqual(expect.arrayContaining(['JWT_ISSUER', 'JWT_AUDIENCE', 'JWKS_URL']));
      } else {
        expect(variables.JWT_ISSUER, entry).toBeUndefined();
        expect(variables.JWKS_URL, entry).toBeUndefined();
      }
      if (entry in SEARCH_CLIENTS) {
        expect(variables, entry).toMatchObject({
          SEARCH_ENGINE: 'opensearch',
          OPENSEARCH_INDEX: 'resources',
          OPENSEARCH_AUTH: 'aws-sigv4',
        });
        expect(flattenJoin(variables.OPENSEARCH_URL), entry).toMatch(/^https:\/\/.*DomainEndpoint/);
      } else {
        expect(variables.SEARCH_ENGINE, entry).toBeUndefined();
        expect(variables.OPENSEARCH_URL, entry).toBeUndefined();
      }
    }
    expect(JSON.stringify(variablesOf(TOKEN_FUNCTION_ENTRY).COGNITO_CLIENT_ID)).toContain(clientId);
  });

  it('signs listing cursors with a generated, retained secret, given only to the functions that page', () => {
    const secrets = resourcesOf(stateful, 'AWS::SecretsManager::Secret');
    expect(secrets).toHaveLength(1);
    const [secretId, secret] = secrets[0] as [string, Resource];
    expect(secret.DeletionPolicy).toBe('Retain');
    expect(secret.UpdateReplacePolicy).toBe('Retain');
    // 64 letters and digits: base64 of 48 bytes, as CURSOR_SIGNING_KEY expects (functions/platform/config.ts).
    expect(secret.Properties?.GenerateSecretString).toEqual({ PasswordLength: 64, ExcludePunctuation: true, IncludeSpace: false });
    for (const entry of STATELESS_ENTRIES) {
      const variables = (ours.get(entry)?.[1].Properties?.Environment as { Variables: Record<string, unknown> }).Variables;
      if (PAGING.includes(entry)) {
        // A dynamic reference to the stateful stack's secret, resolved by CloudFormation at deployment.
        expect(flattenJoin(variables.CURSOR_SIGNING_KEY), entry).toMatch(
          new RegExp(`^\\{\\{resolve:secretsmanager:.*Ref${secretId}.*:SecretString:::\\}\\}$`),
        );
      } else {
        expect(variables.CURSOR_SIGNING_KEY, entry).toBeUndefined();
      }
    }
  });

  it('gives functions only variables the environment schema declares, valid for every group their handler reads', () => {
    /** Groups read beyond what every function reads (`function`) and what the common flags below imply. */
    const READS: Readonly<Record<string, readonly EnvironmentGroup[]>> = {
      'functions/handlers/deployments-execute.ts': ['idempotency'],
      [DEPLOYMENT_CHANGES_ENTRY]: ['events'],
      [commandChanges.entry]: ['events'],
      [CONTINUOUS_ROLLOUTS_ENTRY]: ['events'],
      [alertChanges.entry]: ['events'],
      'functions/handlers/openapi.ts': ['addresses'],
      'functions/handlers/scenarios-upload-slot.ts': ['uploads'],
      [TOKEN_FUNCTION_ENTRY]: ['tokenEndpoint', 'deviceIssuer', 'devices', 'clientFailures'],
      [DEVICE_ISSUER_ENTRY]: ['deviceIssuer'],
      [HEARTBEAT_SWEEPER.entry]: ['devices'],
      [SEARCH_REINDEX_ENTRY]: ['searchSource'],
      ...Object.fromEntries(PAGING.map((entry) => [entry, ['cursors']])),
      // Checks webhook URLs against WEBHOOK_ALLOWED_HTTP_HOSTS (unset on AWS by default: https only).
      'functions/handlers/webhooks.ts': ['cursors', 'webhooks'],
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
        ...(ENV.cognitoUserPoolId in variables ? { [ENV.cognitoUserPoolId]: DEPLOYED_USER_POOL_ID } : {}),
      };
      const groups: EnvironmentGroup[] = ['function', ...(READS[entry] ?? [])];
      expect(ENV.rolloutQueueUrl in variables, entry).toBe(readsRollouts.has(entry));
      if (readsRollouts.has(entry)) groups.push('rollouts');
      // The composition root reads every storage variable: a function given one table name for it gets them all.
      if (ENV.companiesTable in variables) groups.push('storage');
      if (entry in SEARCH_CLIENTS) groups.push('search');
      // Users administration: the functions granted Cognito actions get the pool's id.
      if (ENV.cognitoUserPoolId in variables) groups.push('userPool');
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
      // Once a route administers users (its access lists Cognito actions).
      ...(ROUTES.some((route) => (route.access?.userPool ?? []).length > 0) ? ['userPool' as const] : []),
      'webhooks',
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
    // The token endpoint calls Cognito's unauthenticated InitiateAuth (no permission), reads devices and API clients
    // (their credential), reserves and clears attempts' counts by key (items only: no Query, Scan or batch), writes an
    // API client's lastUsedAt by key, and signs device and client tokens with the KMS key; nothing else.
    const token = policyOf(TOKEN_FUNCTION_ENTRY);
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
    expect(writes.map((statement) => JSON.stringify(statement.Resource)).sort()).toEqual([
      expect.stringMatching(/ApiClientsTable/),
      expect.stringMatching(/ClientFailuresTable/),
    ]);
    const onFailures = tokenStatements.filter((statement) => JSON.stringify(statement.Resource).includes('ClientFailuresTable'));
    expect(onFailures.flatMap((statement) => asArray(statement.Action)).sort()).toEqual([
      'dynamodb:DeleteItem',
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
    ]);
    const reads = tokenStatements.filter((statement) => asArray(statement.Action).includes('dynamodb:GetItem'));
    expect(reads.map((statement) => JSON.stringify(statement.Resource)).sort()).toEqual([
      expect.stringMatching(/ApiClientsTable/),
      expect.stringMatching(/ClientFailuresTable/),
      expect.stringMatching(/DevicesTable/),
    ]);
    const issuer = policyOf(DEVICE_ISSUER_ENTRY);
    expect(issuer).toMatch(/"Action":"kms:GetPublicKey"/);
    expect(issuer).not.toMatch(/kms:Sign|dynamodb:|s3:|es:/);
    // The device poll and the deployment and command changes consumers read and conditionally update single device
    // items (the desired state tag): the table of every device's credential hash is never scanned, queried or
    // batch-written by them.
    for (const entry of ['functions/handlers/device-deployments-get.ts', DEPLOYMENT_CHANGES_ENTRY, commandChanges.entry]) {
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
    // A rollout's targets: reads its chunks (rollouts) and the targets' slots (deployments, BatchGetItem), writes nothing.
    const targets = policyOf('functions/handlers/rollout-targets.ts');
    expect(targets).toContain('RolloutsTable');
    expect(targets).toContain('DeploymentsTable');
    expect(targets).toContain('dynamodb:BatchGetItem');
    expect(targets).not.toMatch(
      /dynamodb:(PutItem|UpdateItem|DeleteItem|BatchWriteItem)|CompaniesTable|DevicesTable|ScenariosTable|s3:|es:|sqs:|kms:/,
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

  it('gives no function key material: the key ARN, the issuer and the audience, to the three functions using the key only', () => {
    const [keyId] = resourcesOf(stateful, 'AWS::KMS::Key')[0] as [string, Resource];
    const apis = new Map(resourcesOf(stateless, 'AWS::ApiGatewayV2::Api').map(([id]) => [id.replace(/[0-9A-F]{8}$/, ''), id]));
    for (const [entry, [, fn]] of [...ours, ...statefulFunctions]) {
      const variables = (fn.Properties?.Environment as { Variables: Record<string, unknown> }).Variables;
      const text = JSON.stringify(variables);
      // Nothing that looks like a private key, a JWK's private member or PEM.
      expect(text, entry).not.toMatch(/PRIVATE KEY|"d":|BEGIN /);
      if (entry === TOKEN_FUNCTION_ENTRY || entry === DEVICE_ISSUER_ENTRY || entry === bearerAuthorizer.entry) {
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
    for (const entry of [TOKEN_FUNCTION_ENTRY, HEARTBEAT_SWEEPER.entry]) {
      expect((ours.get(entry)?.[1].Properties?.Environment as { Variables: Record<string, unknown> }).Variables, entry).toMatchObject({
        DEVICE_HEARTBEAT_SECONDS: '300',
        DEVICE_TOKEN_LIFETIME_SECONDS: '900',
      });
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
});
