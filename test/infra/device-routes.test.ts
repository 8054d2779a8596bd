/**
 * The stateless stack built with a device route beside the service's routes (a fixture, whatever device routes this
 * branch defines):
 * the route gets the device issuer's JWT authorizer and the device route throttle, user routes keep the bearer
 * authorizer, and the route's function gets the device settings and only its declared tables.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { FUNCTIONS } from '../../functions/contract/functions.js';
import type { RouteDefinition } from '../../functions/contract/route.js';
import { DEVICE_ISSUER_ROUTES } from '../../functions/contract/routes/device-issuer.js';
import { ROUTES } from '../../functions/contract/routes.js';
import { DEVICE_SCOPE } from '../../functions/core/shared/principal.js';
import { REPO_ROOT } from '../../lib/service-function.js';
import { readServiceSettings } from '../../lib/settings.js';
import { createStage } from '../../lib/stage.js';
import { DEVICE_ROUTE_THROTTLE } from '../../lib/stateless-stack.js';
import { checkAuthorizers, flattenedTemplate, type Resource, resourcesOf } from './template-helpers.js';

/** A device route, passed to the stack beside the service's own routes. */
const FIXTURE_ROUTE: RouteDefinition = {
  id: 'FixtureDeviceReport',
  api: 'main',
  method: 'PUT',
  path: '/device/fixture-report',
  scope: 'device',
  entry: 'test/infra/fixtures/device-route.ts',
  access: { storage: true, tables: { presence: 'RW', devices: 'R' } },
};

/** The routes of the stack under test: the service's, and the fixture. */
const ROUTES_WITH_FIXTURE = [...ROUTES, FIXTURE_ROUTE];

const CONTEXT = (JSON.parse(readFileSync(join(REPO_ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> }).context;

describe('a device route on AWS', () => {
  const app = new App({
    context: { ...CONTEXT, stage: 'test', deviceHeartbeatSeconds: 120, 'aws:cdk:bundling-stacks': [] },
    builtinCloudFormationValidation: false,
  });
  const stage = createStage(app, readServiceSettings(app.node), {
    routes: [...ROUTES_WITH_FIXTURE, ...DEVICE_ISSUER_ROUTES],
    functions: FUNCTIONS,
  });
  const stateful = Template.fromStack(stage.stateful);
  // With its nested stacks, where the route functions live (lib/constructs/http-apis.ts).
  const stateless = flattenedTemplate(stage.stateless);

  it('is behind the device issuer’s authorizer with the device scope; user routes keep the bearer authorizer', () => {
    expect(FIXTURE_ROUTE.scope).toBe(DEVICE_SCOPE);
    checkAuthorizers(stateful, stateless, [...ROUTES_WITH_FIXTURE, ...DEVICE_ISSUER_ROUTES]);
    // The main API has both authorizers; the device one serves device routes only.
    const main = resourcesOf(stateless, 'AWS::ApiGatewayV2::Api').find(([id]) => id.startsWith('MainApi'))?.[0];
    const mainAuthorizers = resourcesOf(stateless, 'AWS::ApiGatewayV2::Authorizer').filter(
      ([, authorizer]) => (authorizer.Properties?.ApiId as { Ref: string }).Ref === main,
    );
    expect(mainAuthorizers.map(([, authorizer]) => authorizer.Properties?.Name).sort()).toEqual(['BearerAuthorizer', 'DeviceAccessToken']);
    const deviceAuthorizerId = mainAuthorizers.find(([, authorizer]) => authorizer.Properties?.Name === 'DeviceAccessToken')?.[0];
    const behindDevice = resourcesOf(stateless, 'AWS::ApiGatewayV2::Route')
      .filter(([, route]) => (route.Properties?.AuthorizerId as { Ref: string } | undefined)?.Ref === deviceAuthorizerId)
      .map(([, route]) => route.Properties?.RouteKey);
    expect(behindDevice).toEqual(
      ROUTES_WITH_FIXTURE.filter((route) => route.scope === DEVICE_SCOPE).map((route) => `${route.method} ${route.path}`),
    );
  });

  it('is throttled per route for a fleet, above the user-facing default of the stage', () => {
    const main = resourcesOf(stateless, 'AWS::ApiGatewayV2::Api').find(([id]) => id.startsWith('MainApi'))?.[0];
    const [, stageResource] = resourcesOf(stateless, 'AWS::ApiGatewayV2::Stage').find(
      ([, candidate]) => (candidate.Properties?.ApiId as { Ref: string }).Ref === main,
    ) as [string, Resource];
    const settings = stageResource.Properties?.RouteSettings as Record<string, unknown>;
    expect(settings[`${FIXTURE_ROUTE.method} ${FIXTURE_ROUTE.path}`]).toEqual({
      ThrottlingRateLimit: DEVICE_ROUTE_THROTTLE.rateLimit,
      ThrottlingBurstLimit: DEVICE_ROUTE_THROTTLE.burstLimit,
    });
    expect(Object.keys(settings)).toEqual(
      ROUTES_WITH_FIXTURE.filter((route) => route.scope === DEVICE_SCOPE).map((route) => `${route.method} ${route.path}`),
    );
  });

  it('runs a function with the device settings of the context and only the tables its route declares', () => {
    const [, fn] = resourcesOf(stateless, 'AWS::Lambda::Function').find(
      ([, candidate]) => candidate.Properties?.Description === FIXTURE_ROUTE.entry,
    ) as [string, Resource];
    const variables = (fn.Properties?.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(variables).toMatchObject({ DEVICE_HEARTBEAT_SECONDS: '120', DEVICE_TOKEN_LIFETIME_SECONDS: '900' });
    expect(variables.DEVICE_TOKEN_KEY_ARN).toBeUndefined();
  });
});
