/** Template helpers shared by the infrastructure tests. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { expect } from 'vitest';
import type { RouteDefinition } from '../../functions/contract/route.js';
import { DEVICE_SCOPE } from '../../functions/core/principal.js';
import { REPO_ROOT } from '../../lib/service-function.js';
import { readServiceSettings } from '../../lib/settings.js';
import { createStage, type ServiceStage } from '../../lib/stage.js';

/** The context of cdk.json (feature flags included) with the stage `test`, so that the tests build what `cdk synth` builds. */
export const CONTEXT: Record<string, unknown> = {
  ...(JSON.parse(readFileSync(join(REPO_ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> }).context,
  stage: 'test',
};

/**
 * Both stacks of a stage built by lib/stage.ts as bin/app.ts builds them, from CONTEXT and `context`, with bundling
 * skipped and without CloudFormation's built-in template validation (fast; cdk-nag can still run on `app`).
 */
export function quickStage(context: Record<string, unknown> = {}): {
  app: App;
  stage: ServiceStage;
  stateful: Template;
  stateless: Template;
} {
  const app = new App({ context: { ...CONTEXT, ...context, 'aws:cdk:bundling-stacks': [] }, builtinCloudFormationValidation: false });
  const stage = createStage(app, readServiceSettings(app.node));
  return { app, stage, stateful: Template.fromStack(stage.stateful), stateless: Template.fromStack(stage.stateless) };
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
 * Checks the JWT authorizers against `routes` (what the stack was built from): user routes behind their API's Cognito
 * authorizer (the pool's issuer, the app client as audience), device routes (DEVICE_SCOPE) behind their API's device
 * authorizer (issuer `{auth_url}/device`, audience `{base_url}`), each with the route's scope; public routes without.
 */
export function checkAuthorizers(stateful: Template, stateless: Template, routes: readonly RouteDefinition[]): void {
  const [poolId] = resourcesOf(stateful, 'AWS::Cognito::UserPool')[0] as [string, Resource];
  const [clientId] = resourcesOf(stateful, 'AWS::Cognito::UserPoolClient')[0] as [string, Resource];
  const apis = resourcesOf(stateless, 'AWS::ApiGatewayV2::Api');
  const apiIdOf = (api: string) =>
    apis.find(([id]) => id.startsWith({ main: 'MainApi', upload: 'UploadApi', auth: 'AuthApi' }[api] as string))?.[0];
  const authorizers = resourcesOf(stateless, 'AWS::ApiGatewayV2::Authorizer');
  const issuerOf = (authorizer: Resource) =>
    flattenJoin((authorizer.Properties?.JwtConfiguration as { Issuer: unknown } | undefined)?.Issuer);
  const cognitoIssuer = /^https:\/\/cognito-idp\.\{\{AWS::Region\}\}\.amazonaws\.com\/\{"Fn::ImportValue":"[^"]+"\}$/;
  const deviceIssuer = new RegExp(
    `^https://\\{\\{${apiIdOf('auth')}\\}\\}\\.execute-api\\.\\{\\{AWS::Region\\}\\}\\.\\{\\{AWS::URLSuffix\\}\\}/device$`,
  );
  // One authorizer per API and kind of caller that API has routes for.
  const expected = new Set(
    routes
      .filter((route) => route.scope !== null)
      .map((route) => `${apiIdOf(route.api)} ${route.scope === DEVICE_SCOPE ? 'device' : 'user'}`),
  );
  expect(
    authorizers
      .map(
        ([, authorizer]) =>
          `${(authorizer.Properties?.ApiId as { Ref: string }).Ref} ${cognitoIssuer.test(issuerOf(authorizer)) ? 'user' : 'device'}`,
      )
      .sort(),
  ).toEqual([...expected].sort());
  for (const [id, authorizer] of authorizers) {
    expect(authorizer.Properties, id).toMatchObject({ AuthorizerType: 'JWT', IdentitySource: ['$request.header.Authorization'] });
    const { Issuer, Audience } = authorizer.Properties?.JwtConfiguration as { Issuer: unknown; Audience: unknown[] };
    expect(Audience, id).toHaveLength(1);
    if (cognitoIssuer.test(issuerOf(authorizer))) {
      // https://cognito-idp.<region>.amazonaws.com/<pool id>: the stack's region and the stateful stack's pool id, nothing literal.
      expect(JSON.stringify(Issuer), id).toContain(poolId);
      expect(JSON.stringify(Audience), id).toContain(clientId);
    } else {
      expect(issuerOf(authorizer), id).toMatch(deviceIssuer);
      expect(flattenJoin(Audience[0]), id).toMatch(new RegExp(`^https://\\{\\{${apiIdOf('main')}\\}\\}\\.execute-api\\.`));
    }
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
    expect(route.Properties, definition.id).toMatchObject({ AuthorizationType: 'JWT', AuthorizationScopes: [definition.scope] });
    const authorizerId = (route.Properties?.AuthorizerId as { Ref: string } | undefined)?.Ref;
    const authorizer = authorizers.find(([id]) => id === authorizerId)?.[1] as Resource;
    expect((authorizer.Properties?.ApiId as { Ref: string } | undefined)?.Ref, definition.id).toBe(apiId);
    expect(issuerOf(authorizer), definition.id).toMatch(definition.scope === DEVICE_SCOPE ? deviceIssuer : cognitoIssuer);
  }
}
