import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { type ApiName, matchRoute, type RouteDefinition } from '../../lib/routes.js';

/** API Gateway HTTP API's payload limit, bytes; larger requests get 413 before any handler runs. */
export const MAX_PAYLOAD_BYTES = 10 * 1024 * 1024;
/** Lambda's synchronous invocation payload limit, bytes: the serialized event (base64 body included) must fit. */
export const MAX_LAMBDA_EVENT_BYTES = 6 * 1024 * 1024;

type LambdaHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2 | string | object>;

const TEXT_CONTENT_TYPE = /^(text\/|application\/([a-z.+-]*\+)?(json|xml)|application\/x-www-form-urlencoded)/i;

/** Loads (once) the `handler` export of a route's module: the very function Lambda runs. */
const handlers = new Map<string, Promise<LambdaHandler>>();
function loadHandler(root: string, entry: string): Promise<LambdaHandler> {
  let loaded = handlers.get(entry);
  if (loaded === undefined) {
    loaded = import(pathToFileURL(resolve(root, entry)).href).then((module: { handler?: LambdaHandler }) => {
      if (typeof module.handler !== 'function') throw new Error(`${entry} exports no handler.`);
      return module.handler;
    });
    handlers.set(entry, loaded);
  }
  return loaded;
}

/**
 * Builds the API Gateway HTTP API (payload format 2.0) event for a request, as API Gateway does: lower-case
 * headers with repeats comma-joined, cookies split out, repeated query parameters comma-joined in
 * `queryStringParameters` (the raw string is kept), binary bodies base64-encoded.
 */
export function toApiGatewayEvent(
  request: IncomingMessage,
  body: Buffer,
  route: RouteDefinition,
  pathParameters: Record<string, string>,
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
    routeKey: `${route.method} ${route.path}`,
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
      routeKey: `${route.method} ${route.path}`,
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
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

function writeProblem(response: ServerResponse, status: number, title: string, detail: string): void {
  response.writeHead(status, { 'content-type': 'application/problem+json' });
  response.end(JSON.stringify({ type: `https://device-scenario-service.dev/problems/${title.toLowerCase().replaceAll(' ', '-')}`, title, status, detail }));
}

/** Writes a Lambda result back as API Gateway does, including its auto-formatting of plain values. */
function writeResult(response: ServerResponse, result: APIGatewayProxyStructuredResultV2 | string | object): void {
  const structured = typeof result === 'object' && result !== null && 'statusCode' in result
    ? (result as APIGatewayProxyStructuredResultV2)
    : { statusCode: 200, headers: { 'content-type': 'application/json' }, body: typeof result === 'string' ? result : JSON.stringify(result) };
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(structured.headers ?? {})) headers[name.toLowerCase()] = String(value);
  if (structured.cookies !== undefined && structured.cookies.length > 0) headers['set-cookie'] = structured.cookies;
  const body = structured.body === undefined ? Buffer.alloc(0) : Buffer.from(structured.body, structured.isBase64Encoded ? 'base64' : 'utf8');
  headers['content-length'] = String(body.length);
  response.writeHead(structured.statusCode ?? 200, headers);
  response.end(body);
}

/**
 * An HTTP server for one API address that turns each request into an API Gateway v2 event, invokes the route's
 * exported Lambda handler and writes the result back. It holds no endpoint logic: unmatched paths get 404, wrong
 * methods 405, bodies above MAX_PAYLOAD_BYTES or events above MAX_LAMBDA_EVENT_BYTES 413, as API Gateway and Lambda would.
 * @param root repository root, to resolve each route's `entry`.
 */
export function createApiServer(api: ApiName, routes: readonly RouteDefinition[], root: string, onError: (error: unknown) => void): Server {
  return createServer((request, response) => {
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
        }
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => {
      if (refused) return;
      void (async () => {
        const url = new URL(request.url ?? '/', 'http://localhost');
        const match = matchRoute(routes, api, request.method ?? 'GET', url.pathname);
        if (match === undefined) return writeProblem(response, 404, 'Not Found', `No route for ${request.method} ${url.pathname} on this address.`);
        if ('methodNotAllowed' in match) return writeProblem(response, 405, 'Method Not Allowed', `${request.method} is not allowed on ${url.pathname}.`);
        const event = toApiGatewayEvent(request, Buffer.concat(chunks), match.route, match.pathParameters);
        if (exceedsLambdaEventLimit(event)) {
          return writeProblem(response, 413, 'Payload Too Large', `The request exceeds the ${MAX_LAMBDA_EVENT_BYTES}-byte Lambda invocation payload limit (binary bodies count base64-encoded); use a presigned upload slot for large archives.`);
        }
        const handler = await loadHandler(root, match.route.entry);
        writeResult(response, await handler(event, lambdaContext(match.route, event.requestContext.requestId)));
      })().catch((error: unknown) => {
        onError(error);
        if (!response.headersSent) writeProblem(response, 500, 'Internal Server Error', 'The local runtime failed to invoke the handler.');
        else response.end();
      });
    });
  });
}
