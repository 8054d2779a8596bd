/**
 * What a route's handler does with a request before its use case runs, for unit tests of use cases: the query string
 * or the JSON body validated by the route definition's schemas (400/413 thrown as the handler stack would).
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { RouteDefinition, RouteInput } from '../../functions/contract/route.js';
import { routeInput } from '../../functions/platform/http.js';

/** An API Gateway event for `route` with this query string, JSON body and path parameters. */
function eventOf(pairs: readonly [string, string][], body: unknown, pathParameters: Record<string, string>): APIGatewayProxyEventV2 {
  return {
    rawQueryString: new URLSearchParams(pairs as [string, string][]).toString(),
    pathParameters,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  } as unknown as APIGatewayProxyEventV2;
}

/** The query of `route` validated from these (name, value) pairs, repeats kept. @throws BadRequestError as the route does. */
export function queryOf<T extends RouteDefinition>(
  route: T,
  pairs: readonly [string, string][],
  pathParameters: Record<string, string> = { companyId: 'acme' },
): RouteInput<T>['query'] {
  return routeInput(route, eventOf(pairs, undefined, pathParameters)).query;
}

/** The JSON body of `route` validated from `body`. @throws BadRequestError (400) or PayloadTooLargeError (413) as the route does. */
export function bodyOf<T extends RouteDefinition>(
  route: T,
  body: unknown,
  pathParameters: Record<string, string> = { companyId: 'acme' },
): RouteInput<T>['body'] {
  return routeInput(route, eventOf([], body, pathParameters)).body;
}

/**
 * The JSON body of `route` validated from its text as sent (for bodies JSON.stringify cannot make, e.g. nested
 * thousands of levels deep). @throws BadRequestError (400) or PayloadTooLargeError (413) as the route does.
 */
export function bodyOfText<T extends RouteDefinition>(
  route: T,
  text: string,
  pathParameters: Record<string, string> = { companyId: 'acme' },
): RouteInput<T>['body'] {
  const event = { rawQueryString: '', pathParameters, headers: { 'content-type': 'application/json' }, body: text };
  return routeInput(route, event as unknown as APIGatewayProxyEventV2).body;
}

/** A public route for tests of the handler stack itself (no token, no input). */
export const TEST_ROUTE = {
  id: 'StackTest',
  api: 'main',
  method: 'GET',
  path: '/stack-test',
  scope: null,
  entry: 'test',
} as const satisfies RouteDefinition;
