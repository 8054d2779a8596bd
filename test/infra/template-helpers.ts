/** Template helpers shared by the infrastructure tests. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, type CfnElement, Duration, NestedStack, type Stack, Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks, NagPack } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { expect } from 'vitest';
import { TABLES, type TableName } from '../../functions/adapters/aws/tables.js';
import { ENV } from '../../functions/contract/environment.js';
import {
  ADMINISTRATIVE_CHANGES_ENTRY,
  ARCHIVE_UPLOADED,
  alertChanges,
  alertSweeper,
  bearerAuthorizer,
  CONTINUOUS_ROLLOUTS_ENTRY,
  commandChanges,
  commandExpirySweeper,
  DEPLOYMENT_CHANGES_ENTRY,
  FUNCTIONS,
  HEARTBEAT_SWEEPER,
  ROLLOUT_SWEEPER,
  ROLLOUT_WORKER,
  rolloutChanges,
  SEARCH_INDEX_SETUP_ENTRY,
  SEARCH_INDEXER_ENTRY,
  SEARCH_REINDEX_ENTRY,
  searchIndexSetup,
  UPLOAD_SWEEPER,
  webhookDeliveries,
  webhookFanout,
  webhookRetrySweeper,
} from '../../functions/contract/functions.js';
import type { FunctionAccess, RouteDefinition, SearchAccess } from '../../functions/contract/route.js';
import { DEVICE_ISSUER_ENTRY } from '../../functions/contract/routes/device-issuer.js';
import { authToken } from '../../functions/contract/routes/service.js';
import { AWS_ROUTES, ROUTES } from '../../functions/contract/routes.js';
import { DEVICE_SCOPE } from '../../functions/core/shared/principal.js';
import { DYNAMODB_ITEM_ACTIONS, DYNAMODB_READ_ACTIONS, DYNAMODB_WRITE_ACTIONS, REPO_ROOT } from '../../lib/service-function.js';
import { readServiceSettings } from '../../lib/settings.js';
import { createStage, type ServiceDefinitions, type ServiceStage } from '../../lib/stage.js';

/** What bin/app.ts builds a stage from: every route served on AWS and every function no route runs. */
export const SERVICE: ServiceDefinitions = { routes: AWS_ROUTES, functions: FUNCTIONS };

/** The context of cdk.json (feature flags included) with the stage `test`, so that the tests build what `cdk synth` builds. */
export const CONTEXT: Record<string, unknown> = {
  ...(JSON.parse(readFileSync(join(REPO_ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> }).context,
  stage: 'test',
};

/** The nested stacks of `stack` (one level: the stateless stack's route stacks). */
export function nestedStacksOf(stack: Stack): NestedStack[] {
  return stack.node
    .findAll()
    .filter((construct): construct is NestedStack => NestedStack.isNestedStack(construct) && construct.nestedStackParent === stack);
}

/** `value` with every object `replace` answers for replaced, deeply. */
function substitute(value: unknown, replace: (object: Record<string, unknown>) => unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => substitute(item, replace));
  if (value === null || typeof value !== 'object') return value;
  const replaced = replace(value as Record<string, unknown>);
  if (replaced !== undefined) return substitute(replaced, replace);
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, substitute(item, replace)]));
}

/**
 * `stack` and its nested stacks as one template, what CloudFormation deploys in all: the nested stacks' resources
 * beside the stack's own (under their logical ids in their own template), each `Ref` to a nested stack's parameter
 * replaced by the value the stack passes it, each `Fn::GetAtt` of a nested stack's output by that output's value, and
 * the AWS::CloudFormation::Stack resources themselves left out. The assertions on what a function, route or grant is
 * read the same wherever lib/ puts it; test/infra/stacks-size.test.ts asserts the layout itself.
 * @throws Error when a logical id is in two of the templates, or a parameter is passed no value.
 */
export function flattenedTemplate(stack: Stack): Template {
  // A copy: toJSON() is the synthesized template itself, which later Template.fromStack calls return again.
  const merged = structuredClone(Template.fromStack(stack).toJSON()) as { Resources: Record<string, Resource & { DependsOn?: string[] }> };
  const outputsOf = new Map<string, Record<string, { Value: unknown }>>();
  for (const nested of nestedStacksOf(stack)) {
    const resourceId = stack.getLogicalId(nested.nestedStackResource as CfnElement);
    const passed = (merged.Resources[resourceId]?.Properties?.Parameters ?? {}) as Record<string, unknown>;
    const template = Template.fromStack(nested).toJSON() as {
      Parameters?: Record<string, unknown>;
      Resources: Record<string, Resource>;
      Outputs?: Record<string, { Value: unknown }>;
    };
    for (const name of Object.keys(template.Parameters ?? {})) {
      if (!(name in passed)) throw new Error(`${nested.node.path}: no value passed for its parameter ${name}.`);
    }
    const resolveParameter = (object: Record<string, unknown>) =>
      typeof object.Ref === 'string' && object.Ref in passed ? passed[object.Ref] : undefined;
    for (const [id, resource] of Object.entries(template.Resources)) {
      if (id in merged.Resources) throw new Error(`${nested.node.path}: logical id ${id} is also in ${stack.node.path}.`);
      merged.Resources[id] = substitute(resource, resolveParameter) as Resource;
    }
    outputsOf.set(resourceId, substitute(template.Outputs ?? {}, resolveParameter) as Record<string, { Value: unknown }>);
    delete merged.Resources[resourceId];
  }
  const resolveOutput = (object: Record<string, unknown>) => {
    const getAtt = object['Fn::GetAtt'];
    if (!Array.isArray(getAtt) || !outputsOf.has(getAtt[0] as string)) return undefined;
    const output = outputsOf.get(getAtt[0] as string)?.[(getAtt[1] as string).replace(/^Outputs\./, '')];
    if (output === undefined) throw new Error(`No output ${getAtt[1]} of ${getAtt[0]}.`);
    return output.Value;
  };
  const resolved = substitute(merged, resolveOutput) as typeof merged;
  for (const resource of Object.values(resolved.Resources)) {
    if (resource.DependsOn === undefined) continue;
    resource.DependsOn = resource.DependsOn.filter((id) => !outputsOf.has(id));
    if (resource.DependsOn.length === 0) delete resource.DependsOn;
  }
  return Template.fromJSON(resolved);
}

/**
 * Both stacks of a stage built by lib/stage.ts as bin/app.ts builds them, from CONTEXT and `context`, and from
 * `definitions` (the service's own unless a test passes fixtures), with bundling skipped and without CloudFormation's
 * built-in template validation (fast; cdk-nag can still run on `app`). `stateless` is the stateless stack with its
 * nested stacks (flattenedTemplate).
 */
export function quickStage(
  context: Record<string, unknown> = {},
  definitions: ServiceDefinitions = SERVICE,
): {
  app: App;
  stage: ServiceStage;
  stateful: Template;
  stateless: Template;
} {
  const app = new App({ context: { ...CONTEXT, ...context, 'aws:cdk:bundling-stacks': [] }, builtinCloudFormationValidation: false });
  const stage = createStage(app, readServiceSettings(app.node), definitions);
  return { app, stage, stateful: Template.fromStack(stage.stateful), stateless: flattenedTemplate(stage.stateless) };
}

/** One statement of an IAM policy document. */
export type Statement = { Effect: string; Action: string | string[]; Resource?: unknown; Principal?: unknown; Condition?: unknown };

/** A value or a list of values as a list. */
export const asArray = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);

/** A resource of a synthesized template. */
export type Resource = {
  Type: string;
  Properties?: Record<string, unknown>;
  Metadata?: Record<string, unknown>;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
};

/** Every resource of `type` in `template`: [logical id, resource]. */
export function resourcesOf(template: Template, type: string): [string, Resource][] {
  return Object.entries(template.findResources(type)) as [string, Resource][];
}

/** The EventBridge Scheduler schedules whose target is the function `functionId` (logical id). */
export function schedulesOf(template: Template, functionId: string): [string, Resource][] {
  return resourcesOf(template, 'AWS::Scheduler::Schedule').filter(
    ([, schedule]) =>
      JSON.stringify((schedule.Properties?.Target as { Arn: unknown }).Arn) === JSON.stringify({ 'Fn::GetAtt': [functionId, 'Arn'] }),
  );
}
/** Functions of aws-cdk-lib (S3 notifications, AwsCustomResource, the provider framework): not ours. */
export const isCdkProvided = (logicalId: string): boolean =>
  /^(BucketNotificationsHandler|AWS679f53fac002430cb0da5b7982bd2287|SearchIndexSetupProviderframework)/.test(logicalId);

/** Our functions of a template, by handler module (each function's description is its entry): [logical id, resource]. */
export function functionsByEntry(template: Template): Map<string, [string, Resource]> {
  return new Map(
    resourcesOf(template, 'AWS::Lambda::Function')
      .filter(([id]) => !isCdkProvided(id))
      .map(([id, fn]) => [fn.Properties?.Description as string, [id, fn]]),
  );
}

/** Every statement of the IAM policies and the roles' inline policies of `template`: [policy or role id, statement]. */
export function statementsOf(template: Template): [string, Statement][] {
  const statements: [string, Statement][] = [];
  for (const [id, policy] of resourcesOf(template, 'AWS::IAM::Policy')) {
    for (const statement of (policy.Properties?.PolicyDocument as { Statement: Statement[] }).Statement) statements.push([id, statement]);
  }
  for (const [id, role] of resourcesOf(template, 'AWS::IAM::Role')) {
    for (const inline of (role.Properties?.Policies as { PolicyDocument: { Statement: Statement[] } }[] | undefined) ?? []) {
      for (const statement of inline.PolicyDocument.Statement) statements.push([id, statement]);
    }
  }
  return statements;
}

/**
 * The IAM policies of `template` attached to the execution role of `fn` (its own role, or one imported from the
 * stateful stack): [policy id, policy].
 */
export function rolePoliciesOf(template: Template, fn: Resource): [string, Resource][] {
  const role = fn.Properties?.Role as { 'Fn::GetAtt'?: [string, string]; 'Fn::ImportValue'?: string };
  const key = role['Fn::GetAtt']?.[0] ?? (role['Fn::ImportValue'] as string);
  return resourcesOf(template, 'AWS::IAM::Policy').filter(([, policy]) => JSON.stringify(policy.Properties?.Roles).includes(key));
}

/** Whether a resource policy denies every request made without TLS. */
export function deniesInsecureTransport(document: unknown): boolean {
  return (document as { Statement: (Statement & { Condition?: { Bool?: Record<string, string> } })[] }).Statement.some(
    (statement) => statement.Effect === 'Deny' && statement.Condition?.Bool?.['aws:SecureTransport'] === 'false',
  );
}

/**
 * Turns an `Fn::Join` into a string, `{{Logical}}` for a Ref and `{{Logical.Attribute}}` for a GetAtt, so that JSON
 * built by CloudFormation (the OpenSearch access policy) can be parsed.
 */
export function flattenJoin(value: unknown): string {
  if (typeof value === 'string') return value;
  const object = value as Record<string, unknown>;
  if ('Fn::Join' in object) {
    const [separator, parts] = object['Fn::Join'] as [string, unknown[]];
    return parts.map(flattenJoin).join(separator);
  }
  if ('Ref' in object) return `{{${object.Ref as string}}}`;
  if ('Fn::GetAtt' in object) return `{{${(object['Fn::GetAtt'] as string[]).join('.')}}}`;
  return JSON.stringify(object);
}

/**
 * Checks the authorizers against `routes` (what the stack was built from): user routes behind their API's bearer
 * authorizer (a Lambda REQUEST authorizer with simple responses, cached 300 s per Authorization header, running the
 * bearer authorizer's function, which trusts the pool's issuer with the app client as audience and the device issuer),
 * without authorization scopes (the function checks them); device routes (DEVICE_SCOPE) behind their API's device
 * JWT authorizer (issuer `{auth_url}/device`, audience `{base_url}`) with the route's scope; public routes without.
 */
export function checkAuthorizers(stateful: Template, stateless: Template, routes: readonly RouteDefinition[]): void {
  const [poolId] = resourcesOf(stateful, 'AWS::Cognito::UserPool')[0] as [string, Resource];
  const [clientId] = resourcesOf(stateful, 'AWS::Cognito::UserPoolClient')[0] as [string, Resource];
  const apis = resourcesOf(stateless, 'AWS::ApiGatewayV2::Api');
  const apiIdOf = (api: string) =>
    apis.find(([id]) => id.startsWith({ main: 'MainApi', upload: 'UploadApi', auth: 'AuthApi' }[api] as string))?.[0];
  const authorizers = resourcesOf(stateless, 'AWS::ApiGatewayV2::Authorizer');
  const kindOf = (authorizer: Resource) => (authorizer.Properties?.AuthorizerType === 'REQUEST' ? 'user' : 'device');
  const deviceIssuer = new RegExp(
    `^https://\\{\\{${apiIdOf('auth')}\\}\\}\\.execute-api\\.\\{\\{AWS::Region\\}\\}\\.\\{\\{AWS::URLSuffix\\}\\}/device$`,
  );
  const mainAudience = new RegExp(`^https://\\{\\{${apiIdOf('main')}\\}\\}\\.execute-api\\.`);
  // One authorizer per API and kind of caller that API has routes for.
  const expected = new Set(
    routes
      .filter((route) => route.scope !== null)
      .map((route) => `${apiIdOf(route.api)} ${route.scope === DEVICE_SCOPE ? 'device' : 'user'}`),
  );
  expect(
    authorizers.map(([, authorizer]) => `${(authorizer.Properties?.ApiId as { Ref: string }).Ref} ${kindOf(authorizer)}`).sort(),
  ).toEqual([...expected].sort());
  const functions = resourcesOf(stateless, 'AWS::Lambda::Function');
  for (const [id, authorizer] of authorizers) {
    expect(authorizer.Properties?.IdentitySource, id).toEqual(['$request.header.Authorization']);
    if (kindOf(authorizer) === 'user') {
      expect(authorizer.Properties, id).toMatchObject({
        AuthorizerPayloadFormatVersion: '2.0',
        EnableSimpleResponses: true,
        AuthorizerResultTtlInSeconds: 300,
      });
      const functionId = /\{\{([A-Za-z0-9]+)\.Arn\}\}/.exec(flattenJoin(authorizer.Properties?.AuthorizerUri))?.[1];
      const [, fn] = functions.find(([candidate]) => candidate === functionId) as [string, Resource];
      const variables = (fn.Properties?.Environment as { Variables: Record<string, unknown> }).Variables;
      // https://cognito-idp.<region>.amazonaws.com/<pool id>: the stack's region and the stateful stack's pool id, nothing literal.
      expect(flattenJoin(variables.JWT_ISSUER), id).toMatch(
        /^https:\/\/cognito-idp\.\{\{AWS::Region\}\}\.amazonaws\.com\/\{"Fn::ImportValue":"[^"]+"\}$/,
      );
      expect(JSON.stringify(variables.JWT_ISSUER), id).toContain(poolId);
      expect(JSON.stringify(variables.JWT_AUDIENCE), id).toContain(clientId);
      expect(flattenJoin(variables.DEVICE_TOKEN_ISSUER), id).toMatch(deviceIssuer);
      expect(flattenJoin(variables.DEVICE_TOKEN_AUDIENCE), id).toMatch(mainAudience);
      continue;
    }
    expect(authorizer.Properties?.AuthorizerType, id).toBe('JWT');
    const { Issuer, Audience } = authorizer.Properties?.JwtConfiguration as { Issuer: unknown; Audience: unknown[] };
    expect(Audience, id).toHaveLength(1);
    expect(flattenJoin(Issuer), id).toMatch(deviceIssuer);
    expect(flattenJoin(Audience[0]), id).toMatch(mainAudience);
  }
  const stackRoutes = resourcesOf(stateless, 'AWS::ApiGatewayV2::Route');
  for (const definition of routes) {
    const apiId = apiIdOf(definition.api);
    const [, route] = stackRoutes.find(
      ([, candidate]) =>
        candidate.Properties?.RouteKey === `${definition.method} ${definition.path}` &&
        (candidate.Properties?.ApiId as { Ref: string } | undefined)?.Ref === apiId,
    ) as [string, Resource];
    if (definition.scope === null) {
      expect(route.Properties?.AuthorizationType ?? 'NONE', definition.id).toBe('NONE');
      expect(route.Properties?.AuthorizerId, definition.id).toBeUndefined();
      expect(route.Properties?.AuthorizationScopes, definition.id).toBeUndefined();
      continue;
    }
    const authorizerId = (route.Properties?.AuthorizerId as { Ref: string } | undefined)?.Ref;
    const authorizer = authorizers.find(([id]) => id === authorizerId)?.[1] as Resource;
    expect((authorizer.Properties?.ApiId as { Ref: string } | undefined)?.Ref, definition.id).toBe(apiId);
    if (definition.scope === DEVICE_SCOPE) {
      expect(route.Properties, definition.id).toMatchObject({ AuthorizationType: 'JWT', AuthorizationScopes: [definition.scope] });
      expect(kindOf(authorizer), definition.id).toBe('device');
    } else {
      expect(route.Properties?.AuthorizationType, definition.id).toBe('CUSTOM');
      expect(route.Properties?.AuthorizationScopes, definition.id).toBeUndefined();
      expect(kindOf(authorizer), definition.id).toBe('user');
    }
  }
}

/** The function serving the token route on AWS (its `onAws`). */
export const TOKEN_FUNCTION_ENTRY = (authToken.onAws as { entry: string }).entry;

/** The logical table name behind each construct id prefix (StatefulStack). */
export const TABLE_ID_PREFIX: Record<TableName, string> = {
  companies: 'CompaniesTable',
  devices: 'DevicesTable',
  scenarios: 'ScenariosTable',
  presence: 'PresenceTable',
  rollouts: 'RolloutsTable',
  commands: 'CommandsTable',
  webhooks: 'WebhooksTable',
  alerts: 'AlertsTable',
  deployments: 'DeploymentsTable',
  idempotency: 'IdempotencyTable',
  clientFailures: 'ClientFailuresTable',
  audit: 'AuditTable',
  apiClients: 'ApiClientsTable',
};

/** Handler modules deployed as functions of the stateless stack. */
export const STATELESS_ENTRIES = [
  ...new Set(ROUTES.filter((route) => route.api !== 'auth').map((route) => route.entry)),
  TOKEN_FUNCTION_ENTRY,
  SEARCH_INDEXER_ENTRY,
  DEPLOYMENT_CHANGES_ENTRY,
  CONTINUOUS_ROLLOUTS_ENTRY,
  ADMINISTRATIVE_CHANGES_ENTRY,
  ARCHIVE_UPLOADED.entry,
  SEARCH_REINDEX_ENTRY,
  SEARCH_INDEX_SETUP_ENTRY,
  UPLOAD_SWEEPER.entry,
  DEVICE_ISSUER_ENTRY,
  HEARTBEAT_SWEEPER.entry,
  ROLLOUT_WORKER.entry,
  ROLLOUT_SWEEPER.entry,
  commandChanges.entry,
  commandExpirySweeper.entry,
  rolloutChanges.entry,
  alertChanges.entry,
  alertSweeper.entry,
  webhookFanout.entry,
  webhookDeliveries.entry,
  webhookRetrySweeper.entry,
  bearerAuthorizer.entry,
];

/** DynamoDB actions as the grants list them (grantsOf: sorted): of a table read, written, read and written, or of single items. */
export const READ = [...DYNAMODB_READ_ACTIONS].sort();
export const WRITE = [...DYNAMODB_WRITE_ACTIONS].sort();
export const READ_WRITE = [...new Set([...DYNAMODB_READ_ACTIONS, ...DYNAMODB_WRITE_ACTIONS])].sort();
export const ITEM = [...DYNAMODB_ITEM_ACTIONS].sort();

/** The construct id prefix of a table of the stateful stack (`rollouts` → `RolloutsTable`). */
export const tableId = (name: TableName): string => TABLE_ID_PREFIX[name];

/** The GSIs of a table (TABLES). */
export const indexesOf = (name: TableName): string[] =>
  ((TABLES[name] as { globalSecondaryIndexes?: readonly { indexName: string }[] }).globalSecondaryIndexes ?? []).map(
    (index) => index.indexName,
  );

/** Reads of a table and each of its indexes, by resource name (grantsOf). */
export const tableReads = (name: TableName): Record<string, string[]> =>
  Object.fromEntries([tableId(name), ...indexesOf(name).map((index) => `${tableId(name)}/index/${index}`)].map((id) => [id, READ]));

/**
 * A policy resource by the construct it names: `RolloutsTable`, `RolloutsTable/index/sweep` (an export of the
 * stateful stack), `RolloutWorkQueue`, `RolloutWorkerFunctionLogs` (a resource of this stack), or `*`; anything else
 * (a stream ARN, the event bus) as flattenJoin writes it.
 */
export function resourceName(resource: unknown): string {
  return flattenJoin(resource)
    .replace(/\{"Fn::ImportValue":"[^"]*ExportsOutputFnGetAtt([A-Za-z]+?)[0-9A-F]{8}Arn[0-9A-F]{8}"\}/g, '$1')
    .replace(/\{\{([A-Za-z]+?)[0-9A-F]{8}\.Arn\}\}/g, '$1');
}

/** Every action the role of `fn` is allowed, by resource name (resourceName), each list sorted. */
export function grantsOf(template: Template, fn: Resource): Record<string, string[]> {
  const grants: Record<string, Set<string>> = {};
  for (const [, policy] of rolePoliciesOf(template, fn)) {
    for (const statement of (policy.Properties?.PolicyDocument as { Statement: Statement[] }).Statement) {
      expect(statement.Effect).toBe('Allow');
      for (const resource of asArray(statement.Resource)) {
        const name = resourceName(resource);
        grants[name] ??= new Set();
        for (const action of asArray(statement.Action)) grants[name].add(action);
      }
    }
  }
  return Object.fromEntries(Object.entries(grants).map(([name, actions]) => [name, [...actions].sort()]));
}

/** What every function's role has: X-Ray (no resource-level permissions) and its own log group. */
export const baseGrants = (functionId: string): Record<string, string[]> => ({
  '*': ['xray:PutTelemetryRecords', 'xray:PutTraceSegments'],
  [`${functionId.replace(/[0-9A-F]{8}$/, '')}Logs`]: ['logs:CreateLogStream', 'logs:PutLogEvents'],
});

/** What Lambda itself adds to every function's environment at run time (absent from the template). */
export const LAMBDA_PROVIDED: Readonly<Record<string, string>> = { [ENV.awsRegion]: 'eu-west-1' };

/** What the rollout queue's URL resolves to once deployed (a Ref to a queue is its URL). */
export const DEPLOYED_QUEUE_URL =
  'https://sqs.eu-west-1.amazonaws.com/123456789012/DeviceScenarioService-test-Stateless-RolloutWorkQueue-AbC123';

/** What the device token key's ARN resolves to once deployed. */
export const DEPLOYED_KEY_ARN = 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';

/** What a reference to the user pool's id resolves to once deployed (`<region>_<id>`). */
export const DEPLOYED_USER_POOL_ID = 'eu-west-1_AbC123xyz';

/** What Secrets Manager generates for the cursor secret (64 letters and digits, its GenerateSecretString). */
export const GENERATED_CURSOR_SECRET = `${'Ab3'.repeat(21)}x`;

/**
 * A value a template's variable plausibly takes once deployed: literals as they are, each CloudFormation token (Ref,
 * GetAtt, ImportValue) as a lowercase name (valid as a table, bucket or host name), a dynamic reference to a secret as
 * what Secrets Manager generates for the cursor key.
 * @throws Error on an intrinsic function a function environment is not expected to hold.
 */
export function deployedValue(value: unknown): string {
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
export function acknowledgmentsOf(root: IConstruct): { path: string; id: string; reason: string }[] {
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
export function runNag(app: App): { violations: string[]; used: Set<string> } {
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

/**
 * The access of each function on AWS, by handler module, read from the definitions: a route's (an auth route's
 * `onAws` function's), and each function definition's.
 */
export function accessByEntry(definitions: ServiceDefinitions = SERVICE): Map<string, FunctionAccess> {
  const access = new Map<string, FunctionAccess>();
  for (const route of definitions.routes) {
    if (route.onAws?.kind === 'cognito-jwks') continue;
    if (route.onAws?.kind === 'function') access.set(route.onAws.entry, route.onAws.access);
    else if (route.access !== undefined) access.set(route.entry, route.access);
  }
  for (const definition of definitions.functions) access.set(definition.entry, definition.access);
  return access;
}

/** The functions whose access names `search`, by handler module, with their level. */
export const SEARCH_CLIENTS: Readonly<Record<string, SearchAccess>> = Object.fromEntries(
  [...accessByEntry()].flatMap(([entry, access]) => (access.search === undefined ? [] : [[entry, access.search]])),
);

/** The index setup's timeout (its definition's). */
export const SEARCH_INDEX_SETUP_TIMEOUT = Duration.seconds(searchIndexSetup.access.timeoutSeconds as number);

/** The stage the feature tests share, its two templates, and lookups of its functions. */
export interface ServiceTemplates {
  app: App;
  stateful: Template;
  stateless: Template;
  /** The stateless stack's functions by handler module (functionsByEntry). */
  ours: Map<string, [string, Resource]>;
  statefulFunctions: Map<string, [string, Resource]>;
  /** The JSON of every policy attached to the execution role of `entry`'s function (own or imported role). */
  policyOf: (entry: string) => string;
  /** The logical id of the policy attached to `entry`'s function role (see policyOf). */
  policyIdOf: (entry: string) => string;
}

/** A stage of the service's own routes and functions (quickStage), with the lookups of ServiceTemplates. */
export function serviceTemplates(): ServiceTemplates {
  const { app, stateful, stateless } = quickStage();
  const ours = functionsByEntry(stateless);
  const policies = (entry: string) => rolePoliciesOf(stateless, (ours.get(entry) as [string, Resource])[1]);
  return {
    app,
    stateful,
    stateless,
    ours,
    statefulFunctions: functionsByEntry(stateful),
    policyOf: (entry) => {
      expect(policies(entry), entry).toHaveLength(1);
      return JSON.stringify(policies(entry).map(([, policy]) => policy.Properties?.PolicyDocument));
    },
    policyIdOf: (entry) => (policies(entry)[0] as [string, Resource])[0],
  };
}

/** Every route API Gateway serves (functions/contract/routes.ts). */
export { AWS_ROUTES };
