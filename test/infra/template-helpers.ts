/** Template helpers shared by the infrastructure tests. */
import type { Template } from 'aws-cdk-lib/assertions';
import { expect } from 'vitest';
import type { RouteDefinition } from '../../functions/contract/route.js';
import { DEVICE_SCOPE } from '../../functions/core/principal.js';

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
