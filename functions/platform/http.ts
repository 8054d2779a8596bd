import middy from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type { z } from 'zod';
import { parameterObject } from '../contract/parameters.js';
import type { RouteDefinition, RouteInput } from '../contract/route.js';
import {
  BadRequestError,
  PayloadTooLargeError,
  type ProblemViolation,
  UnauthorizedError,
  UnsupportedMediaTypeError,
} from '../core/shared/errors.js';
import { MAX_JSON_DEPTH, tooDeepMember } from '../core/shared/json-depth.js';
import { STORABLE_NUMBER_RULE, unstorableNumber } from '../core/shared/json-numbers.js';
import { authorize, type Principal, type Scope } from '../core/shared/principal.js';
import { type JwtAuthorizerContext, principalFromJwt } from './auth.js';
import { powertoolsMiddlewares, requestObservability } from './observability.js';
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
 * middy middleware: puts the caller on `context.principal`, read from the authorizer's context (see principalFromJwt):
 * `event.requestContext.authorizer.jwt` (API Gateway's JWT authorizer on device routes, the local gateway locally) or
 * `event.requestContext.authorizer.lambda` (the claims the bearer authorizer hands user routes on AWS,
 * functions/handlers/bearer-authorizer.ts). The token was verified before the function ran; a bad token never reaches
 * the function. Because API Gateway caches the bearer authorizer's answer per token (up to 300 s), a token whose `exp`
 * has passed is refused here.
 * An API client's token is checked against its client (ApiClientSessions: enabled, same company, a role holding the
 * token's scopes), read at most every 30 s per process.
 * @throws UnauthorizedError (401, `WWW-Authenticate: Bearer`) when the event carries no authorizer context (the
 *   function was invoked without the authorizer), the token has expired, lacks `sub` or `companies`, or its API client
 *   no longer grants it.
 */
export function bearerAuthentication(): HttpMiddleware {
  return {
    before: async (request) => {
      const { authorizer } = request.event.requestContext as {
        authorizer?: { jwt?: JwtAuthorizerContext | null; lambda?: Readonly<Record<string, unknown>> | null } | null;
      };
      const jwt = authorizer?.jwt ?? (authorizer?.lambda ? { claims: authorizer.lambda, scopes: null } : undefined);
      if (jwt === undefined || jwt === null) {
        throw new UnauthorizedError(
          'No verified token reached this operation; send an Authorization: Bearer <token> header to the API address.',
          null,
        );
      }
      // The bearer authorizer only hands on tokens with `exp`, and its cached answer may outlive the token.
      const expiresAt = Number(jwt.claims.exp);
      if (authorizer?.jwt == null && !Number.isFinite(expiresAt)) throw new UnauthorizedError('The token has no expiry ("exp").');
      if (Number.isFinite(expiresAt) && expiresAt * 1000 <= Date.now())
        throw new UnauthorizedError('The token has expired; request a new one.');
      const principal = principalFromJwt(jwt);
      // An API client's token stops with its client (disabled, deleted, a lower role) within the recheck time.
      if (principal.apiClient !== undefined)
        await (await import('./composition/api-client-sessions.js')).apiClientSessions().check(principal);
      (request.context as AuthenticatedContext).principal = principal;
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

/**
 * The middy chain every HTTP answer goes through, logged and counted as `routeId`: observability, problem+json errors
 * (an unexpected error: logged once, a generic 500), header normalization, then `middlewares` in order.
 */
export function httpStack(routeId: string, middlewares: HttpMiddleware[]) {
  // Tracing, Lambda context logging and the metrics flush outermost, then the request's log fields and summary (its
  // after/onError see problem+json's answer); problem+json before the rest so that its onError runs after theirs
  // (middy's onion order), then header normalization.
  let chain = middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>({ timeoutEarlyInMillis: 0 })
    .use(powertoolsMiddlewares())
    .use(requestObservability(routeId))
    .use(problemJsonErrors())
    .use(httpHeaderNormalizer());
  for (const middleware of middlewares) chain = chain.use(middleware);
  return chain;
}

/** The function of a route: its validated input, the Lambda context (with the caller on scoped routes), the raw event. */
export type RouteFunction<T extends RouteDefinition> = (
  input: RouteInput<T>,
  context: AuthenticatedContext,
  event: APIGatewayProxyEventV2,
) => Promise<APIGatewayProxyStructuredResultV2>;

/**
 * The Lambda handler of a route definition: problem+json errors, header normalization, then for a scoped route the
 * bearer authentication and the check of its scope and company (403 before any body is read), then `middlewares` in
 * order (a body parser, idempotency), then the route's input validated by its schemas (400 naming every bad field)
 * and handed to `fn`.
 */
export function routeHandler<T extends RouteDefinition>(route: T, fn: RouteFunction<T>, ...middlewares: HttpMiddleware[]) {
  const access = route.scope === null ? [] : [bearerAuthentication(), authorization(route.scope, route.companyParameter)];
  return httpStack(route.id, [...access, ...middlewares]).handler(((event: APIGatewayProxyEventV2, context: AuthenticatedContext) =>
    fn(routeInput(route, event), context, event)) as unknown as RouteHandler<Context>);
}

/**
 * The query string as a route's query schema receives it: a parameter given once → its value, a repeated one → its
 * values in order.
 */
export function queryObject(event: APIGatewayProxyEventV2): Record<string, string | string[]> {
  return parameterObject(queryPairs(event));
}

/**
 * Validates the path parameters, the query string and the JSON body of `event` against `route`'s schemas.
 * Multipart bodies are left to the route's parser middleware and passed as parsed.
 * @throws BadRequestError (400) naming every bad parameter or body field at once; PayloadTooLargeError (413) when the
 * body's `tooLarge` check says so.
 */
export function routeInput<T extends RouteDefinition>(route: T, event: APIGatewayProxyEventV2): RouteInput<T> {
  const { params, query, body } = route.request ?? {};
  const violations: ProblemViolation[] = [];
  const input: Record<string, unknown> = { params: {}, query: {}, body: undefined };
  if (params !== undefined) {
    const raw: Record<string, string> = {};
    for (const name of Object.keys(event.pathParameters ?? {})) raw[name] = pathParameter(event, name);
    input.params = validated(params, raw, 'param', violations);
  }
  const rawQuery = queryObject(event);
  if (query !== undefined) input.query = validated(query, rawQuery, 'query', violations);
  else if (Object.keys(rawQuery).length > 0) {
    for (const name of Object.keys(rawQuery))
      violations.push({ path: name, message: `Unknown parameter '${name}'. This operation takes none.` });
  }
  if (body?.kind === 'json' && body.form !== undefined && isFormBody(event)) {
    const formViolations: ProblemViolation[] = [];
    input.body = validated(body.form.schema, formBody(event, formViolations), 'form', formViolations);
    if (formViolations.length > 0 && body.form.invalid !== undefined) throw body.form.invalid(formViolations);
    violations.push(...formViolations);
  } else if (body?.kind === 'json') {
    const raw = jsonBody(event, body.form === undefined ? [] : [FORM_MEDIA_TYPE]);
    const tooLarge = body.tooLarge?.(raw);
    if (tooLarge !== undefined) throw new PayloadTooLargeError(tooLarge);
    input.body = validated(body.schema, raw, 'body', violations);
  } else if (body !== undefined) input.body = event.body;
  if (violations.length > 0) {
    const names = [...new Set(violations.map((violation) => violation.path))];
    const bodyOnly = violations.every((violation) => violation.path.startsWith('/'));
    const parametersOnly = violations.every((violation) => !violation.path.startsWith('/'));
    const detail = bodyOnly
      ? ((body?.kind === 'json' ? body.invalidDetail : undefined) ??
        `The request body is invalid at ${names.join(', ')}; correct it and send it again.`)
      : parametersOnly
        ? `The request has ${violations.length} invalid parameter(s): ${names.join(', ')}.`
        : `The request has ${violations.length} invalid parameter(s) or body member(s): ${names.join(', ')}.`;
    throw new BadRequestError(detail, violations);
  }
  return input as RouteInput<T>;
}

/** The member names of an object schema, through pipes (transforms) and refinements. */
function shapeKeys(schema: z.ZodType): string[] {
  const shape = (schema as unknown as { shape?: Record<string, unknown> }).shape;
  if (shape !== undefined) return Object.keys(shape);
  const inner = (schema as unknown as { _zod: { def: { in?: z.ZodType } } })._zod.def.in;
  return inner === undefined ? [] : shapeKeys(inner);
}

/**
 * Parses `raw` with `schema`, appending each issue to `violations`: parameters by name (in the order the request gave
 * them), body fields as JSON pointers.
 */
function validated(schema: z.ZodType, raw: unknown, part: 'param' | 'query' | 'form' | 'body', violations: ProblemViolation[]): unknown {
  const result = schema.safeParse(raw);
  if (result.success) return result.data;
  const found: ProblemViolation[] = [];
  for (const issue of result.error.issues) {
    if (issue.code === 'unrecognized_keys') {
      const allowed = shapeKeys(schema);
      for (const key of issue.keys) {
        found.push({
          path: part === 'body' ? `/${[...issue.path, key].join('/')}` : key,
          message: `Unknown ${part === 'body' ? 'member' : 'parameter'} '${key}'. Allowed: ${allowed.join(', ') || 'none'}.`,
        });
      }
      continue;
    }
    // A repeated query parameter's values are an array: its violations are the parameter's.
    const path = part === 'body' ? `/${issue.path.join('/')}` : String(issue.path[0] ?? '');
    found.push({ path, message: issue.message });
  }
  if (part !== 'body' && raw !== null && typeof raw === 'object') {
    const order = Object.keys(raw);
    found.sort((left, right) => rank(order, left.path) - rank(order, right.path));
  }
  violations.push(...found);
  return undefined;
}

function rank(order: string[], name: string): number {
  const index = order.indexOf(name);
  return index === -1 ? order.length : index;
}

/** A JSON response with `content-type: application/json`. */
export function jsonResponse(statusCode: number, body: unknown, headers: Record<string, string> = {}): APIGatewayProxyStructuredResultV2 {
  return { statusCode, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) };
}

/** Every (name, value) pair of the query string, repeats kept, in order (API Gateway joins repeats with commas). */
export function queryPairs(event: APIGatewayProxyEventV2): [string, string][] {
  return [...new URLSearchParams(event.rawQueryString ?? '').entries()];
}

/** A path parameter that the route guarantees, URL-decoded. @throws BadRequestError when absent. */
export function pathParameter(event: APIGatewayProxyEventV2, name: string): string {
  const value = event.pathParameters?.[name];
  if (value === undefined || value === '') throw new BadRequestError(`Path parameter '${name}' is required.`);
  try {
    return decodeURIComponent(value);
  } catch {
    throw new BadRequestError(`Path parameter '${name}' is not valid percent-encoding.`, [
      { path: name, message: 'malformed percent-encoding' },
    ]);
  }
}

/** The media type of a form body. */
const FORM_MEDIA_TYPE = 'application/x-www-form-urlencoded';

/** Whether the request body is declared `application/x-www-form-urlencoded`. */
function isFormBody(event: APIGatewayProxyEventV2): boolean {
  return (event.headers?.['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() === FORM_MEDIA_TYPE;
}

/** The request body as text (API Gateway base64-encodes bodies it does not take for text). */
function bodyText(event: APIGatewayProxyEventV2): string {
  return event.isBase64Encoded ? Buffer.from(event.body ?? '', 'base64').toString('utf8') : (event.body ?? '');
}

/**
 * The members of an `application/x-www-form-urlencoded` body, each given once; a repeated member is appended to
 * `violations` by name (RFC 6749 §3.2 forbids repeating a parameter) and its first value kept.
 */
function formBody(event: APIGatewayProxyEventV2, violations: ProblemViolation[]): Record<string, string> {
  const members: Record<string, string> = Object.create(null);
  for (const [name, value] of new URLSearchParams(bodyText(event))) {
    if (name in members) violations.push({ path: name, message: `'${name}' may be given only once.` });
    else members[name] = value;
  }
  return members;
}

/** Charsets a JSON body may declare: UTF-8 (RFC 8259 §8.1), under either spelling, and its subset US-ASCII. */
const JSON_CHARSETS = new Set(['utf-8', 'utf8', 'us-ascii']);

/**
 * The `charset` parameter of a Content-Type header (RFC 9110 §8.3: case-insensitive, optionally quoted), lower-cased,
 * or undefined when there is none.
 */
export function declaredCharset(contentType: string): string | undefined {
  for (const parameter of contentType.split(';').slice(1)) {
    const [name, ...value] = parameter.split('=');
    if (name?.trim().toLowerCase() !== 'charset') continue;
    const charset = value.join('=').trim().toLowerCase();
    return charset.startsWith('"') && charset.endsWith('"') ? charset.slice(1, -1) : charset;
  }
  return undefined;
}

/**
 * Parses a JSON request body, after checking on its text that it nests at most MAX_JSON_DEPTH levels (tooDeepMember),
 * so that nothing recursive downstream (the size check, the schema, the use case, the store) sees a deeper one; then
 * checks that each of its numbers can be stored (unstorableNumber).
 * @param alsoAccepted other media types the route accepts, named in the 400 of a wrong content type.
 * @throws UnsupportedMediaTypeError (415) when the content type declares a charset other than UTF-8 (the body would be
 *   read as UTF-8 whatever it says, and garbled).
 * @throws BadRequestError (400) when the content type is not JSON, the body nests deeper than MAX_JSON_DEPTH levels
 *   (`errors` names the first member too deep as a JSON pointer), the body is not valid JSON, or a number in it is
 *   one DynamoDB cannot store (unstorableNumber: not finite, or a magnitude below 1e-130 or from 1e126). `-0` is read
 *   as 0.
 */
export function jsonBody(event: APIGatewayProxyEventV2, alsoAccepted: readonly string[] = []): unknown {
  const contentType = event.headers?.['content-type'] ?? '';
  if (!/^application\/([a-z.+-]*\+)?json\b/i.test(contentType)) {
    const accepted = ['application/json', ...alsoAccepted].join(' or ');
    throw new BadRequestError(`The request body must be ${accepted}; got '${contentType || 'no content type'}'.`);
  }
  const charset = declaredCharset(contentType);
  if (charset !== undefined && !JSON_CHARSETS.has(charset)) {
    throw new UnsupportedMediaTypeError(
      `The body is declared as ${charset.slice(0, 64)}; JSON is read as UTF-8 only. Send it encoded as UTF-8, with no charset or charset=utf-8. Nothing was processed.`,
    );
  }
  const text = bodyText(event);
  const tooDeep = tooDeepMember(text);
  if (tooDeep !== undefined) {
    throw new BadRequestError(
      `The request body nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep, first at ${tooDeep}; send it with at most ${MAX_JSON_DEPTH} levels (the body itself is level 1).`,
      [{ path: tooDeep, message: `nested more than ${MAX_JSON_DEPTH} levels deep` }],
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new BadRequestError(`The request body is not valid JSON: ${(error as Error).message}.`, [
      { path: '', message: 'not valid JSON' },
    ]);
  }
  const unstorable = unstorableNumber(parsed);
  if (unstorable !== undefined) {
    throw new BadRequestError(
      `The request body has a number that cannot be stored at ${unstorable.pointer || 'its root'} (${unstorable.value}). ${STORABLE_NUMBER_RULE}`,
      [{ path: unstorable.pointer, message: STORABLE_NUMBER_RULE }],
    );
  }
  return parsed;
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
