/**
 * A grant a function needs but cannot get fails the synth, with the reason: a route without access, an auth route
 * that does not say how AWS serves it, an archive key pattern nobody explained, and a search or device key user
 * whose role the stateful stack's resource policies do not name (or a named role no function uses). Fixture routes
 * are passed to the stacks beside the service's own.
 */
import { App } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import type { RouteDefinition } from '../../functions/contract/route.js';
import { readServiceSettings } from '../../lib/settings.js';
import { type ServiceDefinitions, statefulResources } from '../../lib/stage.js';
import { StatefulStack } from '../../lib/stateful-stack.js';
import { StatelessStack } from '../../lib/stateless-stack.js';
import { CONTEXT, quickStage, SERVICE } from './template-helpers.js';

/** A main API route of the fixture handler with `overrides`. */
const fixtureRoute = (overrides: Partial<RouteDefinition>): RouteDefinition => ({
  id: 'FixtureRoute',
  api: 'main',
  method: 'GET',
  path: '/fixture',
  scope: 'search:read',
  entry: 'test/infra/fixtures/device-route.ts',
  ...overrides,
});

/** The service's definitions with `route` added. */
const withRoute = (route: RouteDefinition): ServiceDefinitions => ({ ...SERVICE, routes: [...SERVICE.routes, route] });

/**
 * Builds the stateful stack from `statefulDefinitions` and the stateless one from `statelessDefinitions`, wired as
 * lib/stage.ts wires them (bundling skipped).
 */
function mismatchedStage(statefulDefinitions: ServiceDefinitions, statelessDefinitions: ServiceDefinitions): void {
  const app = new App({ context: { ...CONTEXT, 'aws:cdk:bundling-stacks': [] }, builtinCloudFormationValidation: false });
  const settings = readServiceSettings(app.node);
  const stateful = new StatefulStack(app, 'Stateful', { settings, ...statefulDefinitions });
  new StatelessStack(app, 'Stateless', {
    settings,
    ...statelessDefinitions,
    ...statefulResources(stateful, statelessDefinitions.functions),
  });
}

describe('a missing grant fails the synth', () => {
  it('for a route that declares no access', () => {
    expect(() => quickStage({}, withRoute(fixtureRoute({})))).toThrow(/Route FixtureRoute declares no access/);
  });

  it('for an auth route that does not say how AWS serves it', () => {
    const route = fixtureRoute({ api: 'auth', scope: null, access: { storage: false } });
    expect(() => quickStage({}, withRoute(route))).toThrow(/Auth route 'FixtureRoute' does not say how it is served on AWS/);
  });

  it('for routes of one handler module that declare different access', () => {
    const first = fixtureRoute({ access: { storage: false } });
    const second = fixtureRoute({ id: 'FixtureRouteToo', path: '/fixture-too', access: { storage: true } });
    expect(() => quickStage({}, { ...SERVICE, routes: [...SERVICE.routes, first, second] })).toThrow(/declare different access/);
  });

  it('for an archive key pattern without a reason', () => {
    const route = fixtureRoute({ access: { storage: true, bucket: { 'elsewhere/*': ['get'] } } });
    expect(() => quickStage({}, withRoute(route))).toThrow(/no OBJECT_PATTERN_REASONS entry for 'elsewhere\/\*'/);
  });

  it('for a search client the domain’s access policy does not name', () => {
    const route = fixtureRoute({ access: { storage: false, search: 'search' } });
    expect(() => mismatchedStage(SERVICE, withRoute(route))).toThrow(
      /No role of the stateful stack for 'test\/infra\/fixtures\/device-route.ts'/,
    );
  });

  it('for a device key user the key policy does not name', () => {
    const route = fixtureRoute({ access: { storage: false, deviceKey: 'publicKey' } });
    expect(() => mismatchedStage(SERVICE, withRoute(route))).toThrow(/No role of the stateful stack for .*device key 'publicKey'/);
  });

  it('for a role the domain’s access policy names but no function of the stateless stack uses', () => {
    const route = fixtureRoute({ access: { storage: false, search: 'search' } });
    expect(() => mismatchedStage(withRoute(route), SERVICE)).toThrow(
      /The search domain names a role for 'test\/infra\/fixtures\/device-route.ts'/,
    );
  });
});
