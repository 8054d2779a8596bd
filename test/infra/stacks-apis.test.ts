/**
 * The three HTTP APIs built from the routes: integrations, authorizers, throttling, the OpenAPI servers, token
 * failures counted from the access logs. Built by lib/stage.ts exactly as bin/app.ts builds them, with bundling
 * skipped (template-helpers.ts).
 */
import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { CORS_ALLOWED_HEADERS, CORS_ALLOWED_METHODS, CORS_EXPOSED_HEADERS, CORS_MAX_AGE_SECONDS } from '../../functions/contract/cors.js';
import { ROUTES } from '../../functions/contract/routes.js';
import { DEFAULT_METRICS_NAMESPACE, METRIC } from '../../functions/platform/observability.js';
import { THROTTLE } from '../../lib/constructs/http-apis.js';
import { DEFAULT_SETTINGS } from '../../lib/settings.js';
import {
  AWS_ROUTES,
  checkAuthorizers,
  flattenJoin,
  type Resource,
  resourcesOf,
  type ServiceTemplates,
  serviceTemplates,
  TOKEN_FUNCTION_ENTRY,
} from './template-helpers.js';

describe('stacks, apis (bundling skipped)', () => {
  let stateful: ServiceTemplates['stateful'];
  let stateless: ServiceTemplates['stateless'];
  let ours: ServiceTemplates['ours'];

  beforeAll(() => {
    ({ stateful, stateless, ours } = serviceTemplates());
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
        // The revocation is served by the token route's function (the same onAws).
        const entry = definition.id === 'AuthToken' || definition.id === 'AuthRevoke' ? TOKEN_FUNCTION_ENTRY : definition.entry;
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

  it("allows by default the main API's origin on the upload and auth APIs (the operator console signs in and uploads from it), no CORS on the main API", () => {
    const apis = resourcesOf(stateless, 'AWS::ApiGatewayV2::Api');
    const apiOf = (prefix: string) => apis.find(([id]) => id.startsWith(prefix)) as [string, Resource];
    const [mainId, main] = apiOf('MainApi');
    // The console's page and its API calls share the main API's origin: nothing to allow there.
    expect(main.Properties?.CorsConfiguration).toBeUndefined();
    for (const prefix of ['UploadApi', 'AuthApi']) {
      const cors = apiOf(prefix)[1].Properties?.CorsConfiguration as Record<string, unknown> | undefined;
      expect(cors, prefix).toEqual({
        AllowOrigins: [expect.anything()],
        AllowMethods: [...CORS_ALLOWED_METHODS],
        AllowHeaders: [...CORS_ALLOWED_HEADERS],
        ExposeHeaders: [...CORS_EXPOSED_HEADERS],
        MaxAge: CORS_MAX_AGE_SECONDS,
      });
      const [origin] = cors?.AllowOrigins as unknown[];
      expect(origin, prefix).toHaveProperty('Fn::Join');
      expect(flattenJoin(origin), prefix).toBe(`https://{{${mainId}}}.execute-api.{{AWS::Region}}.{{AWS::URLSuffix}}`);
    }
  });

  it("puts the bearer authorizer (user pool and device issuer) on user routes and the device issuer's JWT authorizer with the route's scope on device routes, none on public routes", () => {
    checkAuthorizers(stateful, stateless, AWS_ROUTES);
    expect(
      AWS_ROUTES.filter((route) => route.scope === null)
        .map((route) => route.id)
        .sort(),
    ).toEqual([
      'ApiReference',
      'ApiReferenceScript',
      'AuthJwks',
      'AuthRevoke',
      'AuthToken',
      'ConsoleAsset',
      'ConsolePage',
      'DeviceIssuerDiscovery',
      'DeviceIssuerJwks',
      'OpenApiDocument',
    ]);
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
});
