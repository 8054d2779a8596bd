/**
 * How the OpenSearch adapters reach OpenSearch: a small port (one request in, status and parsed body out) so the
 * adapters are unit-tested with fakes, its implementation over the official client `@opensearch-project/opensearch`
 * (SigV4-signed for Amazon OpenSearch Service, plain for a local OpenSearch), and the mapping of answers and
 * connection failures to the domain's errors (503 with Retry-After when the backend is unavailable).
 */
import { EventEmitter } from 'node:events';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
// The client's parts, not its `Client`: the Client carries every API method of OpenSearch (about 200 KB minified, a
// fifth of a function bundle), and the adapters only call `transport.request`.
import type * as OpenSearchClient from '@opensearch-project/opensearch';
import { AwsSigv4Signer } from '@opensearch-project/opensearch/aws';
import ConnectionModule from '@opensearch-project/opensearch/lib/Connection.js';
import * as errors from '@opensearch-project/opensearch/lib/errors.js';
import { ConnectionPool } from '@opensearch-project/opensearch/lib/pool/index.js';
import SerializerModule from '@opensearch-project/opensearch/lib/Serializer.js';
import TransportModule from '@opensearch-project/opensearch/lib/Transport.js';

// Each of these modules is `module.exports = TheClass`, which their typings declare as a default export.
const Connection = ConnectionModule as unknown as typeof OpenSearchClient.Connection;
const Serializer = SerializerModule as unknown as typeof OpenSearchClient.Serializer;
const Transport = TransportModule as unknown as typeof OpenSearchClient.Transport;
type Transport = OpenSearchClient.Transport;
type ApiResponse = OpenSearchClient.ApiResponse;

import { ServiceUnavailableError } from '../../core/shared/errors.js';

/** One HTTP request to OpenSearch. A string body is sent as NDJSON (`_bulk`), anything else as JSON. */
export interface OpenSearchRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'HEAD';
  /** Path with an optional query string, e.g. `/resources/_search` or `/resources/_bulk?require_alias=true`. */
  path: string;
  body?: unknown;
}

/** OpenSearch's answer, whatever its status: status code and parsed JSON body (undefined when empty). */
export interface OpenSearchResponse {
  statusCode: number;
  body: unknown;
  /** `Retry-After` in seconds when the server sent one. */
  retryAfterSeconds?: number;
}

/**
 * The smallest client the adapters need. Resolves with every HTTP answer (4xx and 5xx included); rejects only when
 * OpenSearch cannot be reached (connection refused, DNS, timeout, no credentials to sign with).
 */
export interface OpenSearchTransport {
  request(request: OpenSearchRequest): Promise<OpenSearchResponse>;
}

/** The part of the official client this transport uses (the client's Transport, or a fake in tests). */
export interface OpenSearchClientLike {
  transport: Pick<Transport, 'request'>;
}

/** OpenSearchTransport over the official client's `transport.request` (its retries, timeouts and signing apply). */
export class OpenSearchClientTransport implements OpenSearchTransport {
  constructor(private readonly client: OpenSearchClientLike) {}

  async request(request: OpenSearchRequest): Promise<OpenSearchResponse> {
    const separator = request.path.indexOf('?');
    const path = separator < 0 ? request.path : request.path.slice(0, separator);
    const querystring = separator < 0 ? undefined : request.path.slice(separator + 1);
    const body = request.body;
    try {
      const response = await this.client.transport.request({
        method: request.method,
        path,
        ...(querystring === undefined || querystring === '' ? {} : { querystring }),
        ...(typeof body === 'string' ? { bulkBody: body } : body === undefined ? {} : { body: body as Record<string, unknown> }),
      });
      return toResponse(response);
    } catch (error) {
      // The client turns every status >= 400 into a ResponseError; the adapters decide what a status means.
      if (error instanceof errors.ResponseError) return toResponse(error.meta);
      throw error;
    }
  }
}

function toResponse(response: Pick<ApiResponse, 'statusCode' | 'body' | 'headers'>): OpenSearchResponse {
  const retryAfter = Number(response.headers?.['retry-after']);
  const body = response.body === '' || typeof response.body === 'boolean' ? undefined : response.body;
  return {
    statusCode: response.statusCode ?? 0,
    body,
    ...(Number.isFinite(retryAfter) && retryAfter > 0 ? { retryAfterSeconds: retryAfter } : {}),
  };
}

/** Where and how to reach OpenSearch (functions/platform/config.ts reads them from the environment). */
export interface OpenSearchConnectionSettings {
  /** Endpoint, e.g. `https://search-xyz.eu-west-1.es.amazonaws.com` or `http://localhost:9200` (basic auth in the URL allowed). */
  url: string;
  /** `aws-sigv4`: sign every request (service `es`) with the credentials of `defaultProvider()`; `none`: plain requests. */
  auth: 'aws-sigv4' | 'none';
  /** Region of the domain; required with `aws-sigv4`. */
  region?: string;
  /** Time limit of one attempt, ms. @default 10000 */
  requestTimeoutMs?: number;
  /** Retries after a connection failure or a 502/503/504, on top of the first attempt. @default 1 */
  maxRetries?: number;
}

/**
 * Builds the official client's transport for `settings` as the client's `Client` does with these options (its
 * defaults: no sniffing, no compression, round-robin over one node, prototype-poisoning protection; basic auth from
 * the URL's user info): one node (a managed domain sits behind one endpoint), SigV4 signing (service `es`,
 * credentials from the default provider chain: the Lambda role in AWS) when `auth` is `aws-sigv4`.
 * @throws Error when `aws-sigv4` is asked without a region.
 */
export function createOpenSearchClient(settings: OpenSearchConnectionSettings): OpenSearchClientLike {
  const signing =
    settings.auth === 'aws-sigv4'
      ? AwsSigv4Signer({ region: requireRegion(settings.region), service: 'es', getCredentials: defaultProvider() })
      : undefined;
  const url = new URL(settings.url);
  const username = decodeURIComponent(url.username);
  const password = decodeURIComponent(url.password);
  const auth = username !== '' && password !== '' ? { username, password } : null;
  const events = new EventEmitter();
  const emit = events.emit.bind(events);
  const connectionPool = new ConnectionPool({
    pingTimeout: 3000,
    resurrectStrategy: 'ping',
    ssl: null,
    agent: null,
    proxy: null,
    Connection: signing?.Connection ?? Connection,
    auth,
    emit,
    sniffEnabled: false,
  } as unknown as ConstructorParameters<typeof ConnectionPool>[0]);
  connectionPool.addConnection(settings.url);
  const SignedTransport = (signing?.Transport ?? Transport) as typeof Transport;
  const transport = new SignedTransport({
    emit,
    connectionPool,
    serializer: new Serializer({ disablePrototypePoisoningProtection: false, enableLongNumeralSupport: false }),
    maxRetries: settings.maxRetries ?? 1,
    requestTimeout: settings.requestTimeoutMs ?? 10_000,
    sniffInterval: false,
    sniffOnStart: false,
    sniffOnConnectionFault: false,
    sniffEndpoint: '_nodes/_all/http',
    suggestCompression: false,
    compression: false,
    headers: process.env.OPENSEARCH_CLIENT_APIVERSIONING === 'true' ? { accept: 'application/vnd.opensearch+json; compatible-with=7' } : {},
    nodeFilter: null,
    nodeSelector: 'round-robin',
    generateRequestId: null,
    name: 'opensearch-js',
    opaqueIdPrefix: null,
    context: null,
    auth,
  } as unknown as ConstructorParameters<typeof Transport>[0]);
  return { transport };
}

function requireRegion(region: string | undefined): string {
  if (region === undefined || region === '') throw new Error('OPENSEARCH_AUTH=aws-sigv4 needs a region: set AWS_REGION.');
  return region;
}

/** OpenSearchTransport for `settings` over the official client. */
export function createOpenSearchTransport(settings: OpenSearchConnectionSettings): OpenSearchTransport {
  return new OpenSearchClientTransport(createOpenSearchClient(settings));
}

/** OpenSearch refused a request for a reason other than availability (a bug or a misconfiguration). */
export class OpenSearchRequestError extends Error {
  /**
   * @param statusCode HTTP status of the answer (4xx).
   * @param type OpenSearch's `error.type`, e.g. `index_not_found_exception`, `resource_already_exists_exception`.
   */
  constructor(
    readonly statusCode: number,
    readonly type: string | undefined,
    message: string,
  ) {
    super(message);
    this.name = 'OpenSearchRequestError';
  }
}

/** Default of the Retry-After announced when OpenSearch is unavailable and says nothing itself, seconds. */
export const DEFAULT_RETRY_AFTER_SECONDS = 5;

/**
 * Sends a request through `transport`.
 * @throws ServiceUnavailableError (503, Retry-After `retryAfterSeconds`) when OpenSearch cannot be reached.
 */
export async function sendRequest(
  transport: OpenSearchTransport,
  request: OpenSearchRequest,
  retryAfterSeconds: number,
): Promise<OpenSearchResponse> {
  try {
    return await transport.request(request);
  } catch (error) {
    throw new ServiceUnavailableError(
      `The search backend cannot be reached: ${error instanceof Error ? error.message : String(error)}.`,
      retryAfterSeconds,
    );
  }
}

/**
 * Checks an answer: 2xx passes; 429 and 5xx throw ServiceUnavailableError (Retry-After from the answer, else
 * `retryAfterSeconds`); any other status throws OpenSearchRequestError with OpenSearch's reason.
 * @param what the operation, for the error message (e.g. `POST /resources/_search`).
 */
export function expectSuccess(response: OpenSearchResponse, what: string, retryAfterSeconds: number): void {
  const { statusCode } = response;
  if (statusCode >= 200 && statusCode < 300) return;
  const error = (response.body as { error?: { type?: string; reason?: string } | string } | undefined)?.error;
  const type = typeof error === 'object' ? error.type : undefined;
  const reason = typeof error === 'string' ? error : error === undefined ? '' : `${error.type ?? ''}: ${error.reason ?? ''}`;
  if (statusCode === 429 || statusCode >= 500) {
    throw new ServiceUnavailableError(
      `The search backend is unavailable (${statusCode}${reason === '' ? '' : ` ${reason}`}).`,
      response.retryAfterSeconds ?? retryAfterSeconds,
    );
  }
  throw new OpenSearchRequestError(statusCode, type, `OpenSearch ${what} failed with ${statusCode}${reason === '' ? '' : `: ${reason}`}.`);
}

/** sendRequest then expectSuccess; returns the body of the 2xx answer. */
export async function callOpenSearch(
  transport: OpenSearchTransport,
  request: OpenSearchRequest,
  retryAfterSeconds: number,
): Promise<unknown> {
  const response = await sendRequest(transport, request, retryAfterSeconds);
  expectSuccess(response, `${request.method} ${request.path}`, retryAfterSeconds);
  return response.body;
}
