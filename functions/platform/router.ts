/**
 * The one dispatch of a function that serves several routes (routes of `functions/contract/routes/` sharing an
 * `entry`): by the event's `routeKey`, `${method} ${path}` of the route definition, as API Gateway's HTTP API sets it
 * in a payload v2 event and the local gateway (functions/local/http-gateway.ts) sets it alike.
 *
 * Why ours and not Powertools' event handler (`Router`, `app.resolve(event, context)`): API Gateway has already
 * matched the path by the time the function runs, and says which route it matched in `routeKey`, so a lookup is all
 * the dispatch there is. Powertools' router matches paths again with its own rules, answers its own errors and
 * responses, and would wrap (or replace) each route's middy chain (`routeHandler`: its scope check, validation,
 * problem+json, observability), which is where those belong here. Nor is it installed: the registry offers it up to
 * 2.35.0, behind the installed Powertools 2.36.0 whose packages move together.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { type RouteDefinition, routeKeyOf } from '../contract/route.js';
import { httpStack } from './http.js';

/** A Lambda handler of the HTTP API's payload v2: what routeHandler builds for one route. */
export type HttpHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

/** A route and the handler that serves it (routeHandler(route, …)). */
export type RouteEntry = readonly [route: RouteDefinition, handler: HttpHandler];

/** The handler of a function serving several routes, and those routes (in the order given). */
export type RouteDispatcher = HttpHandler & { readonly routes: readonly RouteDefinition[] };

/** An event whose route key names no route of the function: a wiring mistake (a route added to an entry without its handler). */
export class UnknownRouteKeyError extends Error {
  constructor(readonly routeKey: string) {
    super(`No route of this function has the route key '${routeKey}'; the function serves it without a handler.`);
    this.name = 'UnknownRouteKeyError';
  }
}

/** Logged and counted as this route id when a request's route key names no route of the function. */
const UNKNOWN_ROUTE_ID = 'UnknownRouteKey';

/**
 * The handler of a function serving the routes of `entries`: it hands each event to the handler of the route whose
 * route key (routeKeyOf) is the event's `routeKey`, so each route keeps its own middy chain. An event with any other
 * route key goes through the HTTP stack (httpStack) as an UnknownRouteKeyError: logged once as an error naming the
 * route key, answered with problem+json's generic 500.
 * @throws Error at build (the module's load) when two entries have the same route key.
 */
export function routeDispatcher(entries: readonly RouteEntry[]): RouteDispatcher {
  const byKey = new Map<string, HttpHandler>();
  for (const [route, handler] of entries) {
    const key = routeKeyOf(route);
    if (byKey.has(key)) throw new Error(`Route key '${key}' is given twice to one dispatcher.`);
    byKey.set(key, handler);
  }
  const unknown = httpStack(UNKNOWN_ROUTE_ID, []).handler(async (event: APIGatewayProxyEventV2) => {
    throw new UnknownRouteKeyError(event.routeKey);
  }) as unknown as HttpHandler;
  const dispatch: HttpHandler = (event, context) => (byKey.get(event.routeKey) ?? unknown)(event, context);
  return Object.assign(dispatch, { routes: entries.map(([route]) => route) });
}
