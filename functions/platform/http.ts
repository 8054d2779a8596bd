import middy from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { BadRequestError, type ProblemViolation, UnauthorizedError } from '../core/errors.js';
import { authorize, type Principal, type Scope } from '../core/principal.js';
import { type JwtAuthorizerContext, principalFromJwt } from './auth.js';
import { problemJsonErrors } from './problem.js';

/** Lambda context plus the verified caller (set by the authentication middleware). */
export type AuthenticatedContext = Context & { principal: Principal };

/** An API Gateway HTTP API (payload v2) route handler. */
export type RouteHandler<TContext extends Context = AuthenticatedContext> = (
  event: APIGatewayProxyEventV2,
  context: TContext,
) => Promise<APIGatewayProxyStructuredResultV2>;

/** A middy middleware of the HTTP handlers. */
export type HttpMiddleware = middy.MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>;

/**
 * middy middleware: puts the caller on `context.principal`, read from the JWT authorizer's context
 * (`event.requestContext.authorizer.jwt`, see principalFromJwt). The token was verified before the function ran, by
 * API Gateway's JWT authorizer on AWS and by the local gateway locally; a bad token never reaches the function.
 * @throws UnauthorizedError (401, `WWW-Authenticate: Bearer`) when the event carries no authorizer context (the
 *   function was invoked without the authorizer) or the token lacks `sub` or `companies`.
 */
export function bearerAuthentication(): HttpMiddleware {
  return {
    before: async (request) => {
      const { authorizer } = request.event.requestContext as { authorizer?: { jwt?: JwtAuthorizerContext | null } | null };
      const jwt = authorizer?.jwt;
      if (jwt === undefined || jwt === null) {
        throw new UnauthorizedError('No verified token reached this operation; send an Authorization: Bearer <token> header to the API address.', null);
      }
      (request.context as AuthenticatedContext).principal = principalFromJwt(jwt);
    },
  };
}

/**
 * middy middleware, registered after bearerAuthentication and before any body parser: checks that the caller holds
 * `scope` and, with `companyParameter`, that the company in that path parameter is one of the token's, so that a
 * caller without the right gets 403 before its body is read. The use cases keep their own checks.
 * @throws ForbiddenError (403) naming the missing scope or the company; BadRequestError (400) for a malformed company.
 */
export function authorization(scope: Scope, companyParameter?: string): HttpMiddleware {
  return {
    before: async (request) => {
      const { principal } = request.context as AuthenticatedContext;
      authorize(principal, scope, companyParameter === undefined ? undefined : pathParameter(request.event, companyParameter));
    },
  };
}

function stack(middlewares: HttpMiddleware[]) {
  // problem+json first so that its onError runs last (middy's onion order), then header normalization.
  let chain = middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>({ timeoutEarlyInMillis: 0 })
    .use(problemJsonErrors())
    .use(httpHeaderNormalizer());
  for (const middleware of middlewares) chain = chain.use(middleware);
  return chain;
}

/**
 * Wraps an authenticated route handler in the common middy stack: problem+json errors, header normalization,
 * bearer authentication, then `middlewares` in order (e.g. `authorization(...)`, then the multipart parser).
 */
export function httpHandler(handler: RouteHandler, ...middlewares: HttpMiddleware[]) {
  return stack([bearerAuthentication(), ...middlewares]).handler(handler as unknown as RouteHandler<Context>);
}

/** Like httpHandler, for the few routes that take no bearer token (token issuance, JWKS). */
export function publicHttpHandler(handler: RouteHandler<Context>, ...middlewares: HttpMiddleware[]) {
  return stack(middlewares).handler(handler);
}

/** A JSON response with `content-type: application/json`. */
export function jsonResponse(statusCode: number, body: unknown, headers: Record<string, string> = {}): APIGatewayProxyStructuredResultV2 {
  return { statusCode, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) };
}

/** Every (name, value) pair of the query string, repeats kept, in order (API Gateway joins repeats with commas). */
export function queryPairs(event: APIGatewayProxyEventV2): [string, string][] {
  return [...new URLSearchParams(event.rawQueryString ?? '').entries()];
}

/**
 * Returns the query parameters as a map of single values, refusing unknown or repeated ones.
 * @throws BadRequestError (400) naming each unknown or repeated parameter and the allowed ones.
 */
export function singleQueryParameters(event: APIGatewayProxyEventV2, allowed: readonly string[]): Map<string, string> {
  const values = new Map<string, string>();
  const errors: ProblemViolation[] = [];
  for (const [name, value] of queryPairs(event)) {
    if (!allowed.includes(name)) errors.push({ path: name, message: `Unknown parameter '${name}'. Allowed: ${allowed.join(', ') || 'none'}.` });
    else if (values.has(name)) errors.push({ path: name, message: `'${name}' may be given only once.` });
    else values.set(name, value);
  }
  if (errors.length > 0) throw new BadRequestError('The request has invalid query parameters.', errors);
  return values;
}

/** A path parameter that the route guarantees, URL-decoded. @throws BadRequestError when absent. */
export function pathParameter(event: APIGatewayProxyEventV2, name: string): string {
  const value = event.pathParameters?.[name];
  if (value === undefined || value === '') throw new BadRequestError(`Path parameter '${name}' is required.`);
  try {
    return decodeURIComponent(value);
  } catch {
    throw new BadRequestError(`Path parameter '${name}' is not valid percent-encoding.`, [{ path: name, message: 'malformed percent-encoding' }]);
  }
}

/**
 * Parses a JSON request body.
 * @throws BadRequestError (400) when the content type is not JSON or the body is not valid JSON.
 */
export function jsonBody(event: APIGatewayProxyEventV2): unknown {
  const contentType = event.headers?.['content-type'] ?? '';
  if (!/^application\/([a-z.+-]*\+)?json\b/i.test(contentType)) {
    throw new BadRequestError(`The request body must be application/json; got '${contentType || 'no content type'}'.`);
  }
  const text = event.isBase64Encoded ? Buffer.from(event.body ?? '', 'base64').toString('utf8') : (event.body ?? '');
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new BadRequestError(`The request body is not valid JSON: ${(error as Error).message}.`, [{ path: '', message: 'not valid JSON' }]);
  }
}

/**
 * Defers building a middleware until the first request, so that configuration it needs (e.g. a table name) is read
 * at invocation, not at module load. `before`, `after` and `onError` delegate to the built middleware.
 */
export function lazyMiddleware(build: () => HttpMiddleware): HttpMiddleware {
  let built: HttpMiddleware | undefined;
  const get = () => (built ??= build());
  return {
    before: async (request) => get().before?.(request),
    after: async (request) => get().after?.(request),
    onError: async (request) => get().onError?.(request),
  };
}
