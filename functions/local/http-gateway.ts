import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { CORS_ALLOWED_HEADERS, CORS_ALLOWED_METHODS, CORS_EXPOSED_HEADERS, CORS_MAX_AGE_SECONDS } from '../contract/cors.js';
import { problemTypeOf } from '../contract/problem-kinds.js';
import { routeKeyOf } from '../contract/route.js';
import { type ApiName, matchRoute, type RouteDefinition } from '../contract/routes.js';
import { DomainError, ServiceUnavailableError } from '../core/shared/errors.js';
import { authorize, type Scope } from '../core/shared/principal.js';
import { type JwtAuthorizerContext, verifyBearerToken } from '../platform/auth.js';
import { recordTokenFailure } from '../platform/observability.js';
import { problemHeadersOf, problemOf } from '../platform/problem.js';
import { type AdmissionClock, AdmissionGate, type AdmissionLimits } from './admission.js';
import { loadHandler } from './handler-module.js';

/** API Gateway HTTP API's payload limit, bytes; larger requests get 413 before any handler runs. */
export const MAX_PAYLOAD_BYTES = 10 * 1024 * 1024;
/** Lambda's synchronous invocation payload limit, bytes: the serialized event (base64 body included) must fit. */
export const MAX_LAMBDA_EVENT_BYTES = 6 * 1024 * 1024;

type LambdaHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2 | string | object>;

const TEXT_CONTENT_TYPE = /^(text\/|application\/([a-z.+-]*\+)?(json|xml)|application\/x-www-form-urlencoded)/i;

/**
 * Builds the API Gateway HTTP API (payload format 2.0) event for a request, as API Gateway does: lower-case
 * headers with repeats comma-joined, cookies split out, repeated query parameters comma-joined in
 * `queryStringParameters` (the raw string is kept), binary bodies base64-encoded, and, for a route behind the JWT
 * authorizer, the verified token's context in `requestContext.authorizer.jwt`.
 */
export function toApiGatewayEvent(
  request: IncomingMessage,
  body: Buffer,
  route: RouteDefinition,
  pathParameters: Record<string, string>,
  jwt?: JwtAuthorizerContext,
): APIGatewayProxyEventV2 {
  const url = new URL(request.url ?? '/', 'http://localhost');
  const headers: Record<string, string> = {};
  for (let index = 0; index < request.rawHeaders.length; index += 2) {
    const name = (request.rawHeaders[index] as string).toLowerCase();
    const value = request.rawHeaders[index + 1] as string;
    headers[name] = headers[name] === undefined ? value : `${headers[name]},${value}`;
  }
  const cookies = headers.cookie?.split(/;\s*/).filter((cookie) => cookie !== '');
  delete headers.cookie;
  const query: Record<string, string> = {};
  for (const [name, value] of url.searchParams) query[name] = query[name] === undefined ? value : `${query[name]},${value}`;
  const contentType = headers['content-type'] ?? '';
  const isText = body.length === 0 || TEXT_CONTENT_TYPE.test(contentType);
  const now = new Date();
  return {
    version: '2.0',
    routeKey: routeKeyOf(route),
    rawPath: url.pathname,
    rawQueryString: url.search.replace(/^\?/, ''),
    ...(cookies === undefined || cookies.length === 0 ? {} : { cookies }),
    headers,
    ...(Object.keys(query).length === 0 ? {} : { queryStringParameters: query }),
    ...(Object.keys(pathParameters).length === 0 ? {} : { pathParameters }),
    requestContext: {
      accountId: 'local',
      apiId: route.api,
      domainName: headers.host ?? '127.0.0.1',
      domainPrefix: '127',
      http: {
        method: request.method ?? 'GET',
        path: url.pathname,
        protocol: `HTTP/${request.httpVersion}`,
        sourceIp: request.socket.remoteAddress ?? '127.0.0.1',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey: routeKeyOf(route),
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
      // API Gateway's shape for a JWT authorizer (payload-v2 events of a route with an authorizer only).
      ...(jwt === undefined
        ? {}
        : { authorizer: { jwt: { claims: { ...jwt.claims }, scopes: jwt.scopes === null ? null : [...jwt.scopes] } } }),
    },
    ...(body.length === 0 ? {} : { body: isText ? body.toString('utf8') : body.toString('base64') }),
    isBase64Encoded: body.length > 0 && !isText,
  };
}

/**
 * Whether the event exceeds MAX_LAMBDA_EVENT_BYTES once serialized, without serializing a small body: the rest of
 * the event is measured exactly, and a text body grows at most 6× in JSON (`\u0000`); only when that bound is over
 * the limit is the whole event serialized.
 */
function exceedsLambdaEventLimit(event: APIGatewayProxyEventV2): boolean {
  const body = event.body ?? '';
  const rest = Buffer.byteLength(JSON.stringify({ ...event, body: '' }));
  if (rest + Buffer.byteLength(body) * 6 <= MAX_LAMBDA_EVENT_BYTES) return false;
  return Buffer.byteLength(JSON.stringify(event)) > MAX_LAMBDA_EVENT_BYTES;
}

function lambdaContext(route: RouteDefinition, requestId: string): Context {
  const deadline = Date.now() + 29_000;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: route.id,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${route.id}`,
    memoryLimitInMB: '1024',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${route.id}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

function problemBody(status: number, title: string, detail: string): string {
  return JSON.stringify({
    type: problemTypeOf(title),
    title,
    status,
    detail,
  });
}

function writeProblem(response: ServerResponse, status: number, title: string, detail: string, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/problem+json', ...headers });
  response.end(problemBody(status, title, detail));
}

/** How each address is named in the docs and the OpenAPI document, for "served by another address" answers. */
const ADDRESS_NAMES: Record<ApiName, string> = {
  main: 'main address (base_url)',
  upload: 'upload address (scenario_upload_url)',
  auth: 'auth address (auth_url)',
};

/**
 * Answers a request the HTTP parser refused before any route ran (Node's `clientError`): headers above Node's
 * `maxHeaderSize` (16 KiB by default) get 431, a request that did not arrive in time 408, any other malformed
 * request 400, each with a problem+json body and the connection closed, instead of Node's bare status line.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  // A reset connection cannot be answered; neither can one whose response is already under way.
  if (error.code === 'ECONNRESET' || !socket.writable || (socket as Duplex & { _httpMessage?: unknown })._httpMessage != null) {
    socket.destroy();
    return;
  }
  const [status, title, detail] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [
          431,
          'Request Header Fields Too Large',
          'The request headers exceed the 16 KiB this address accepts; send a shorter Authorization token or fewer cookies.',
        ]
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', 'The request did not arrive in time; send it again.']
        : [
            400,
            'Bad Request',
            `The request is not valid HTTP/1.1 (${error.code ?? 'parse error'}); check the request line, the headers and the body framing.`,
          ];
  const body = problemBody(status, title, detail);
  socket.end(
    `HTTP/1.1 ${status} ${title}\r\ncontent-type: application/problem+json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

/** The request being served, as seen from any asynchronous continuation of its handler (see guardUncaughtErrors). */
const invocations = new AsyncLocalStorage<(error: unknown) => void>();

/**
 * Keeps one faulty request from stopping the process: an error nothing caught (an `error` event without a listener,
 * a throw in a timer) raised while a request is being served answers that request with 500 and is logged; the
 * listeners keep serving. An uncaught error outside any request still ends the process, as Node does by default
 * (exit code 1, `exit` listeners run). Install once per process; the local runtime does.
 */
export function guardUncaughtErrors(log: (message: string) => void): void {
  process.on('uncaughtException', (error) => {
    const fail = invocations.getStore();
    if (fail !== undefined) {
      fail(error);
      return;
    }
    process.stderr.write(`Uncaught error: ${error.stack ?? String(error)}\n`);
    log('Stopping after an uncaught error outside any request.');
    process.exit(1);
  });
}

/** Writes a Lambda result back as API Gateway does, including its auto-formatting of plain values. */
function writeResult(response: ServerResponse, result: APIGatewayProxyStructuredResultV2 | string | object): void {
  const structured =
    typeof result === 'object' && result !== null && 'statusCode' in result
      ? (result as APIGatewayProxyStructuredResultV2)
      : {
          statusCode: 200,
          headers: { 'content-type': 'application/json' },
          body: typeof result === 'string' ? result : JSON.stringify(result),
        };
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(structured.headers ?? {})) headers[name.toLowerCase()] = String(value);
  if (structured.cookies !== undefined && structured.cookies.length > 0) headers['set-cookie'] = structured.cookies;
  const body =
    structured.body === undefined ? Buffer.alloc(0) : Buffer.from(structured.body, structured.isBase64Encoded ? 'base64' : 'utf8');
  headers['content-length'] = String(body.length);
  response.writeHead(structured.statusCode ?? 200, headers);
  response.end(body);
}

/** Writes a DomainError as problem+json with its headers (`WWW-Authenticate`, `Retry-After`), as the handlers' error middleware does. */
function writeDomainError(response: ServerResponse, error: DomainError, instance: string): void {
  const { type, title, status, detail, ...extensions } = problemOf(error);
  const body = JSON.stringify({ type, title, status, detail, instance, ...extensions });
  response.writeHead(status, {
    'content-type': 'application/problem+json',
    'content-length': String(Buffer.byteLength(body)),
    ...problemHeadersOf(error),
  });
  response.end(body);
}

/**
 * What API Gateway's JWT authorizer does on AWS for a route with authorization scopes, before the function runs:
 * verifies the bearer token (verifyBearerToken: signature against the issuer's JWKS, issuer, audience, expiry) and
 * checks that it holds `scope`. A refused request is answered here, 401 with `WWW-Authenticate: Bearer` or 403, as
 * problem+json (API Gateway's own bodies are `{"message": …}`), and resolves undefined; a refused token (401) is
 * counted (TokenFailures, recordTokenFailure), as API Gateway's access logs count it on AWS. Otherwise resolves the
 * authorizer context the event carries to the handler.
 */
async function authorizeBearer(
  request: IncomingMessage,
  response: ServerResponse,
  scope: Scope,
  instance: string,
): Promise<JwtAuthorizerContext | undefined> {
  try {
    const verified = await verifyBearerToken(request.headers.authorization);
    authorize(verified.principal, scope);
    return verified.jwt;
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    recordTokenFailure(error);
    writeDomainError(response, error, instance);
    return undefined;
  }
}

/**
 * Reads the request body. Past MAX_PAYLOAD_BYTES answers 413 at once (closing the connection) and resolves undefined,
 * as does a request the client abandons before its end.
 */
function readBody(request: IncomingMessage, response: ServerResponse): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_PAYLOAD_BYTES) {
        if (!refused) {
          refused = true;
          response.setHeader('connection', 'close');
          writeProblem(response, 413, 'Payload Too Large', `Requests to this address are limited to ${MAX_PAYLOAD_BYTES} bytes.`);
          resolve(undefined);
        }
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => {
      if (!refused) resolve(Buffer.concat(chunks));
    });
    // After `end` this changes nothing (a promise settles once).
    request.on('close', () => resolve(undefined));
  });
}

/** The admission bounds of an address (AdmissionGate), and optionally the timers its waits use (tests). */
export type AdmissionOptions = AdmissionLimits & { clock?: AdmissionClock };

/** Seconds a refused request is told to wait (`Retry-After`, RFC 9110 §10.2.3): the wait bound, at least 1 s. */
export function admissionRetryAfterSeconds(limits: AdmissionLimits): number {
  return Math.max(1, Math.ceil(limits.maxWaitMs / 1000));
}

/**
 * An HTTP server for one API address that turns each request into an API Gateway v2 event, invokes the route's exported
 * Lambda handler and writes the result back. It holds no endpoint logic. In API Gateway's order: unmatched paths get
 * 404 (naming the address that serves the route, when another one does), wrong methods 405 with `Allow`; then, with
 * `admission`, a request that gets no place (AdmissionGate: `maxInFlight` served at once, `maxQueued` waiting, each at
 * most `maxWaitMs`, or `overloadWaitMs` under sustained overload) is answered 503 problem+json with `Retry-After`
 * (admissionRetryAfterSeconds) without reading its body or invoking anything (the place is held until the answer is
 * written); then, on a route with a scope, the JWT authorizer's part (authorizeBearer: 401 or 403 without reading the
 * body nor invoking the handler, else `requestContext.authorizer.jwt` as API Gateway sets it); then bodies above
 * MAX_PAYLOAD_BYTES or events above MAX_LAMBDA_EVENT_BYTES get 413, as API Gateway and Lambda would. Requests Node's
 * HTTP parser refuses get 431 (headers too large) or 400 with a problem+json body. A handler that throws or fails
 * asynchronously answers 500 (with guardUncaughtErrors installed); the server keeps serving.
 * @param root repository root, to resolve each route's `entry`.
 * @param addresses `http://127.0.0.1:<port>` of the other addresses, named in "served by another address" answers.
 * @param admission bounds of the work admitted at once; none: every request is served at once.
 * @throws RangeError when `admission` holds a bound out of range (AdmissionGate).
 */
export function createApiServer(
  api: ApiName,
  routes: readonly RouteDefinition[],
  root: string,
  onError: (error: unknown) => void,
  addresses: Partial<Record<ApiName, string>> = {},
  admission?: AdmissionOptions,
  corsOrigins: readonly string[] = [],
): Server {
  const gate = admission === undefined ? undefined : new AdmissionGate(admission, admission.clock);
  const address: GatewayAddress = { api, routes, root, addresses, gate, busy: () => busyError(api, admission), corsOrigins };
  const server = createServer((request, response) => {
    // A client that goes away mid-request makes these streams emit `error`; nothing is left to answer.
    request.on('error', () => undefined);
    response.on('error', () => undefined);
    const fail = (error: unknown) => {
      onError(error);
      if (!response.headersSent) writeProblem(response, 500, 'Internal Server Error', 'The local runtime failed to invoke the handler.');
      else response.end();
    };
    invocations.run(fail, () => {
      serveRequest(address, request, response).catch(fail);
    });
  });
  server.on('clientError', answerClientError);
  return server;
}

/** What serving a request on one address needs (createApiServer's arguments and its admission gate). */
interface GatewayAddress {
  api: ApiName;
  routes: readonly RouteDefinition[];
  /** Repository root, to resolve each route's `entry`. */
  root: string;
  /** `http://127.0.0.1:<port>` of the other addresses. */
  addresses: Partial<Record<ApiName, string>>;
  /** Undefined: every request is served at once. */
  gate: AdmissionGate | undefined;
  /** The 503 of a request the gate gives no place. */
  busy(): ServiceUnavailableError;
  /** Browser origins answered with CORS headers (functions/contract/cors.ts); none: no CORS. */
  corsOrigins: readonly string[];
}

/**
 * CORS, as API Gateway's configuration does it: a request from an allowed origin gets `Access-Control-Allow-Origin`
 * and the exposed headers on whatever it is answered; a preflight (OPTIONS with `Access-Control-Request-Method`) is
 * answered 204 here, with the allowed methods and headers when its origin is allowed and without them (the browser
 * then refuses the request) when not.
 * @returns true when the request was a preflight and is answered
 */
function answerCors(address: GatewayAddress, request: IncomingMessage, response: ServerResponse): boolean {
  const origin = request.headers.origin;
  const allowed = origin !== undefined && address.corsOrigins.includes(origin);
  if (allowed) {
    response.setHeader('access-control-allow-origin', origin);
    response.setHeader('access-control-expose-headers', CORS_EXPOSED_HEADERS.join(', '));
  }
  if (address.corsOrigins.length > 0) response.setHeader('vary', 'Origin');
  if (request.method !== 'OPTIONS' || request.headers['access-control-request-method'] === undefined || origin === undefined) return false;
  if (allowed) {
    response.setHeader('access-control-allow-methods', CORS_ALLOWED_METHODS.join(', '));
    response.setHeader('access-control-allow-headers', CORS_ALLOWED_HEADERS.join(', '));
    response.setHeader('access-control-max-age', String(CORS_MAX_AGE_SECONDS));
  }
  response.writeHead(204).end();
  return true;
}

/** The 503 answered when `api`'s gate admits no more, naming its bounds and the wait (admissionRetryAfterSeconds). */
function busyError(api: ApiName, admission: AdmissionOptions | undefined): ServiceUnavailableError {
  const seconds = admission === undefined ? 1 : admissionRetryAfterSeconds(admission);
  return new ServiceUnavailableError(
    `The ${ADDRESS_NAMES[api]} is serving as many requests as it admits (${admission?.maxInFlight} at once, ${admission?.maxQueued} more waiting${admission?.maxPerSource === undefined ? '' : `, ${admission.maxPerSource} of one client address`}); this one was not processed. Retry after ${seconds} s.`,
    seconds,
  );
}

/** Serves one request in API Gateway's order: route, admission, then the route's handler (invokeRoute). */
async function serveRequest(address: GatewayAddress, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://localhost');
  const method = request.method ?? 'GET';
  if (answerCors(address, request, response)) return;
  const match = matchRoute(address.routes, address.api, method, url.pathname);
  // Answered without reading the body: Node discards what remains of it once the answer is written.
  if (match === undefined || 'methodNotAllowed' in match) return answerUnrouted(address, response, method, url.pathname, match);
  let release: (() => void) | undefined = () => undefined;
  if (address.gate !== undefined) {
    // A client that goes away while its request waits gives its place in the queue back.
    const gone = new AbortController();
    response.once('close', () => gone.abort());
    release = await address.gate.admit(gone.signal, request.socket.remoteAddress);
    if (release === undefined) return writeDomainError(response, address.busy(), url.pathname);
    // The place is given back once the answer is written, or once the handler settles if it never is (a
    // handler whose promise never settles after a 500 from guardUncaughtErrors holds no place).
    response.once('finish', release);
  }
  try {
    await invokeRoute(address.root, request, response, match, url.pathname);
  } finally {
    release();
  }
}

/**
 * Answers a request no route of this address takes: 404 naming the address that serves it when another one does,
 * else 404, or 405 with `Allow` when the path takes other methods here.
 */
function answerUnrouted(
  address: GatewayAddress,
  response: ServerResponse,
  method: string,
  pathname: string,
  match: { methodNotAllowed: true; allowedMethods: string[] } | undefined,
): void {
  const { api, routes, addresses } = address;
  const elsewhere = (['main', 'upload', 'auth'] as const)
    .filter((other) => other !== api)
    .map((other) => ({ other, found: matchRoute(routes, other, method, pathname) }))
    .find(({ found }) => found !== undefined && 'route' in found);
  if (elsewhere !== undefined && elsewhere.found !== undefined && 'route' in elsewhere.found) {
    const served = addresses[elsewhere.other];
    writeProblem(
      response,
      404,
      'Not Found',
      `${method} ${elsewhere.found.route.path} is served by the ${ADDRESS_NAMES[elsewhere.other]}${served === undefined ? '' : `, ${served}`}, not by the ${ADDRESS_NAMES[api]}; send the request there.`,
    );
    return;
  }
  if (match === undefined) {
    writeProblem(response, 404, 'Not Found', `No route for ${method} ${pathname} on this address.`);
    return;
  }
  writeProblem(
    response,
    405,
    'Method Not Allowed',
    `${method} is not allowed on ${pathname}; allowed: ${match.allowedMethods.join(', ')}.`,
    {
      allow: match.allowedMethods.join(', '),
    },
  );
}

/**
 * Invokes an admitted request's route: the JWT authorizer's part on a route with a scope, the body (413 above
 * MAX_PAYLOAD_BYTES), the event (413 above MAX_LAMBDA_EVENT_BYTES), then the handler, whose result is written back.
 */
async function invokeRoute(
  root: string,
  request: IncomingMessage,
  response: ServerResponse,
  match: { route: RouteDefinition; pathParameters: Record<string, string> },
  pathname: string,
): Promise<void> {
  // Public routes (scope null, or none declared) have no authorizer, as on AWS.
  let jwt: JwtAuthorizerContext | undefined;
  if (match.route.scope != null) {
    jwt = await authorizeBearer(request, response, match.route.scope, pathname);
    if (jwt === undefined) return;
  }
  const body = await readBody(request, response);
  if (body === undefined) return;
  const event = toApiGatewayEvent(request, body, match.route, match.pathParameters, jwt);
  if (exceedsLambdaEventLimit(event)) {
    return writeProblem(
      response,
      413,
      'Payload Too Large',
      `The request exceeds the ${MAX_LAMBDA_EVENT_BYTES}-byte Lambda invocation payload limit (binary bodies count base64-encoded); use a presigned upload slot for large archives.`,
    );
  }
  const handler = await loadHandler<LambdaHandler>(root, match.route.entry);
  const result = await handler(event, lambdaContext(match.route, event.requestContext.requestId));
  // A response already given (500 after an uncaught error of this invocation) is not written twice.
  if (!response.headersSent) writeResult(response, result);
}
