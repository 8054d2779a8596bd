/**
 * The router of the functions that serve several routes (functions/platform/router.ts): each event reaches the
 * handler of the route its `routeKey` names, through that route's own middy chain, and a route key the function does
 * not serve is a logged 500 problem.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type RouteDefinition, routeKeyOf } from '../../../functions/contract/route.js';
import { jsonResponse, routeHandler } from '../../../functions/platform/http.js';
import { logger } from '../../../functions/platform/logger.js';
import { routeDispatcher } from '../../../functions/platform/router.js';
import { httpApiEvent } from '../../support/http-event.js';
import { lambdaContext } from '../../support/lambda-context.js';
import { withJwtAuthorizer } from '../access/jwt-authorizer.js';

vi.hoisted(() => {
  process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
});

afterEach(() => {
  vi.restoreAllMocks();
});

const listThings = {
  id: 'ThingsList',
  api: 'main',
  method: 'GET',
  path: '/things',
  scope: null,
  entry: 'functions/handlers/things.ts',
} as const satisfies RouteDefinition;

const getThing = {
  id: 'ThingGet',
  api: 'main',
  method: 'GET',
  path: '/things/{thingId}',
  scope: 'deployments:read',
  entry: 'functions/handlers/things.ts',
} as const satisfies RouteDefinition;

const deleteThing = { ...getThing, id: 'ThingDelete', method: 'DELETE', scope: null } as const satisfies RouteDefinition;

/** A payload v2 event of `routeKey` for `rawPath`, with these path parameters. */
const event = (routeKey: string, rawPath: string, pathParameters?: Record<string, string>): APIGatewayProxyEventV2 =>
  httpApiEvent(routeKey, rawPath, pathParameters === undefined ? {} : { pathParameters });

const things = routeDispatcher([
  [listThings, routeHandler(listThings, async () => jsonResponse(200, { served: 'list' }))],
  [getThing, routeHandler(getThing, async (_input, { principal }) => jsonResponse(200, { served: 'get', caller: principal.subject }))],
  [deleteThing, routeHandler(deleteThing, async () => ({ statusCode: 204 }))],
]);

function json(response: APIGatewayProxyStructuredResultV2): Record<string, unknown> {
  return JSON.parse(response.body ?? '{}') as Record<string, unknown>;
}

describe('routeDispatcher', () => {
  it("gives each event to the handler of the route its routeKey names, whatever the path's parameters", async () => {
    expect(json(await things(event('GET /things', '/things'), lambdaContext()))).toEqual({ served: 'list' });
    const deleted = await things(event('DELETE /things/{thingId}', '/things/t1', { thingId: 't1' }), lambdaContext());
    expect(deleted.statusCode).toBe(204);
    const got = await things(
      withJwtAuthorizer(event('GET /things/{thingId}', '/things/t1', { thingId: 't1' }), {
        sub: 'alice',
        companies: ['acme'],
        scope: 'deployments:read',
      }),
      lambdaContext(),
    );
    expect(got.statusCode, got.body).toBe(200);
    expect(json(got)).toEqual({ served: 'get', caller: 'alice' });
  });

  it("runs each route through its own chain: the scoped route asks for a token, its neighbours on the same path don't", async () => {
    const unauthenticated = await things(event('GET /things/{thingId}', '/things/t1', { thingId: 't1' }), lambdaContext());
    expect(unauthenticated.statusCode).toBe(401);
    expect(unauthenticated.headers?.['content-type']).toBe('application/problem+json');
    const deleted = await things(event('DELETE /things/{thingId}', '/things/t1', { thingId: 't1' }), lambdaContext());
    expect(deleted.statusCode).toBe(204);
  });

  it('answers a route key it does not serve with a generic 500 problem, logged once as an error naming the route key', async () => {
    const failed = vi.spyOn(logger, 'error');
    const response = await things(event('PATCH /things/{thingId}', '/things/t1', { thingId: 't1' }), lambdaContext());
    expect(response.statusCode).toBe(500);
    expect(response.headers?.['content-type']).toBe('application/problem+json');
    expect(json(response)).toMatchObject({
      status: 500,
      title: 'Internal Server Error',
      detail: 'An unexpected error occurred; it has been logged.',
      instance: '/things/t1',
    });
    expect(response.body).not.toContain('PATCH');
    expect(failed).toHaveBeenCalledTimes(1);
    const [, extra] = failed.mock.calls[0] as [string, { error?: Error }];
    expect(extra.error?.message).toContain("'PATCH /things/{thingId}'");
  });

  it('lists the routes it serves, in the order given', () => {
    expect(things.routes).toEqual([listThings, getThing, deleteThing]);
  });

  it('refuses, when built, two routes with one route key (the second could never be reached)', () => {
    const handler = routeHandler(listThings, async () => jsonResponse(200, {}));
    expect(() =>
      routeDispatcher([
        [listThings, handler],
        [{ ...listThings, id: 'ThingsListAgain' }, handler],
      ]),
    ).toThrow("Route key 'GET /things' is given twice");
  });

  it("keys a route as API Gateway's payload v2 routeKey: method, one space, path template", () => {
    expect(routeKeyOf(getThing)).toBe('GET /things/{thingId}');
  });
});
