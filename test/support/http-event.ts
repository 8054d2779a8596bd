/**
 * An API Gateway HTTP API (payload format 2.0) event as the gateway hands it to a function: the method and path of
 * `routeKey` (`GET /things/{thingId}`), the request's `rawPath`, and what a test adds.
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';

/** What a test sets of the event besides its route key and path. */
export interface HttpEventParts {
  headers?: Record<string, string>;
  pathParameters?: Record<string, string>;
  body?: string;
  /** The API's id, e.g. `main` or `auth`. @default 'main' */
  apiId?: string;
  /** The host the request was sent to (its first label is the domain prefix). @default 'localhost' */
  domainName?: string;
}

/** The payload v2 event of `routeKey` for `rawPath`, received now from 127.0.0.1. */
export function httpApiEvent(routeKey: string, rawPath: string, parts: HttpEventParts = {}): APIGatewayProxyEventV2 {
  const now = new Date();
  const method = routeKey.split(' ')[0] ?? 'GET';
  const apiId = parts.apiId ?? 'main';
  const domainName = parts.domainName ?? 'localhost';
  return {
    version: '2.0',
    routeKey,
    rawPath,
    rawQueryString: '',
    headers: parts.headers ?? {},
    ...(parts.pathParameters === undefined ? {} : { pathParameters: parts.pathParameters }),
    requestContext: {
      accountId: 'test',
      apiId,
      domainName,
      domainPrefix: domainName.split('.')[0] ?? domainName,
      http: { method, path: rawPath, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'vitest' },
      requestId: 'request-1',
      routeKey,
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    isBase64Encoded: false,
    ...(parts.body === undefined ? {} : { body: parts.body }),
  };
}
