import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import {
  IdempotencyAlreadyInProgressError,
  IdempotencyPersistenceLayerError,
  IdempotencyValidationError,
} from '@aws-lambda-powertools/idempotency';
import {
  ConflictError,
  DomainError,
  OAuthError,
  ServiceUnavailableError,
  UnauthorizedError,
  UnprocessableRequestError,
} from '../core/errors.js';
import { logger } from './logger.js';

/** An RFC 9457 problem body. */
export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  [extension: string]: unknown;
}

/** Builds an `application/problem+json` API Gateway result. */
export function problemResponse(body: ProblemBody, headers: Record<string, string> = {}): APIGatewayProxyStructuredResultV2 {
  return {
    statusCode: body.status,
    headers: { 'content-type': 'application/problem+json', ...headers },
    body: JSON.stringify(body),
  };
}

/** Retry-After (s) when a backend cannot be reached or fails on its side: long enough for a restart to take hold. */
export const UNREACHABLE_RETRY_AFTER_SECONDS = 5;
/** Retry-After (s) when a backend throttles: the SDK has already backed off, so a short pause is enough. */
export const THROTTLED_RETRY_AFTER_SECONDS = 2;

/** Node system error codes of a connection that could not be made or was lost (not file-system or bug codes). */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'EAI_AGAIN',
  'ENOTFOUND',
  'ERR_SOCKET_CONNECTION_TIMEOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
]);
/** AWS error names meaning "too many requests" (DynamoDB, S3, API Gateway-fronted services, generic). */
const THROTTLING_NAMES = new Set([
  'ThrottlingException',
  'Throttling',
  'ThrottledException',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'SlowDown',
  'TooManyRequestsException',
  'RequestThrottled',
  'RequestThrottledException',
]);
/** AWS error names of a failure on the service's side. */
const SERVER_FAULT_NAMES = new Set([
  'InternalServerError',
  'InternalFailure',
  'InternalError',
  'ServiceUnavailable',
  'ServiceUnavailableException',
]);

type AwsLikeError = {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  cause?: unknown;
  errors?: unknown;
  $fault?: unknown;
  $metadata?: { httpStatusCode?: number };
  $retryable?: { throttling?: boolean };
  CancellationReasons?: { Code?: string }[];
};

/**
 * Classifies an error of an AWS SDK v3 client (DynamoDB, S3) or of the network under it: 'throttled', 'unreachable'
 * (no connection, connection lost, timed out) or 'failing' (a 5xx of the service), else undefined. Looks through
 * `cause` chains and AggregateErrors, since libraries (e.g. Powertools idempotency) wrap the SDK's error.
 */
export function classifyBackendError(error: unknown, depth = 0): 'throttled' | 'unreachable' | 'failing' | undefined {
  if (error === null || typeof error !== 'object' || depth > 5 || error instanceof DomainError) return undefined;
  const candidate = error as AwsLikeError;
  const name = typeof candidate.name === 'string' ? candidate.name : '';
  const code = typeof candidate.code === 'string' ? candidate.code : '';
  const status = candidate.$metadata?.httpStatusCode;
  if (THROTTLING_NAMES.has(name) || THROTTLING_NAMES.has(code) || candidate.$retryable?.throttling === true || status === 429)
    return 'throttled';
  // A transaction cancelled because one of its items was throttled.
  if (name === 'TransactionCanceledException' && candidate.CancellationReasons?.some((reason) => reason.Code === 'ThrottlingError'))
    return 'throttled';
  if (SERVER_FAULT_NAMES.has(name) || candidate.$fault === 'server' || (status !== undefined && status >= 500)) return 'failing';
  // Network failures never got an HTTP answer: no status code, a system error code, a timeout or a dropped socket.
  if (status === undefined) {
    if (
      NETWORK_CODES.has(code) ||
      name === 'TimeoutError' ||
      (typeof candidate.message === 'string' && /socket hang up/i.test(candidate.message))
    ) {
      return 'unreachable';
    }
  }
  for (const inner of [candidate.cause, ...(Array.isArray(candidate.errors) ? candidate.errors : [])]) {
    const verdict = classifyBackendError(inner, depth + 1);
    if (verdict !== undefined) return verdict;
  }
  return undefined;
}

/** Turns any thrown value into a DomainError, or undefined when it is unexpected (→ 500). */
function toDomainError(error: unknown): DomainError | undefined {
  if (error instanceof DomainError) return error;
  // Checked before the backend classification, which would see the network error it wraps. Raised before the handler
  // runs (the idempotency middleware swallows the later ones), so nothing was changed. A stored response that cannot
  // be read back (by name: importing the DynamoDB adapter here would bundle it into every function) is no outage: it
  // stays a 500.
  if (error instanceof IdempotencyPersistenceLayerError && (error.cause as Error | undefined)?.name !== 'StoredResponseUnreadableError') {
    return new ServiceUnavailableError(
      'The Idempotency-Key store cannot be reached; nothing was changed. Retry shortly with the same Idempotency-Key.',
    );
  }
  switch (classifyBackendError(error)) {
    case 'throttled':
      return new ServiceUnavailableError(
        `The service's storage is receiving too many requests right now; retry after ${THROTTLED_RETRY_AFTER_SECONDS} seconds (Retry-After).`,
        THROTTLED_RETRY_AFTER_SECONDS,
      );
    case 'unreachable':
    case 'failing':
      return new ServiceUnavailableError(
        `A backend of the service (database or archive storage) cannot be reached right now; retry after ${UNREACHABLE_RETRY_AFTER_SECONDS} seconds (Retry-After).`,
        UNREACHABLE_RETRY_AFTER_SECONDS,
      );
    default:
      break;
  }
  if (error instanceof IdempotencyValidationError) {
    return new UnprocessableRequestError(
      'This Idempotency-Key was already used with a different request; use a new key for a new request.',
    );
  }
  if (error instanceof IdempotencyAlreadyInProgressError) {
    return new ConflictError('A request with this Idempotency-Key is still being processed; retry in a moment to get its response.');
  }
  return undefined;
}

/**
 * middy `onError` middleware (register it first so it runs last): maps DomainErrors (and Powertools idempotency
 * errors) to RFC 9457 problem+json, and a backend (DynamoDB, S3) that is unreachable, failing or throttling to 503
 * with Retry-After (classifyBackendError), logged once as a warning; logs anything else once as an error and answers
 * a generic 500 without internals.
 */
export function problemJsonErrors(): MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2> {
  return {
    onError: async (request) => {
      const error = toDomainError(request.error);
      const instance = request.event?.rawPath;
      if (error === undefined) {
        logger.error('Unhandled error', { error: request.error as Error, path: instance });
        request.response = problemResponse({
          type: 'https://device-scenario-service.dev/problems/internal-server-error',
          title: 'Internal Server Error',
          status: 500,
          detail: 'An unexpected error occurred; it has been logged.',
          ...(instance === undefined ? {} : { instance }),
        });
        return;
      }
      // A backend failure is logged with the SDK's own error (name, code, request id), once, as a warning: it is not a bug.
      if (error.status >= 500)
        logger.warn('Request failed', { error: error === request.error ? error : (request.error as Error), path: instance });
      if (error instanceof OAuthError) {
        request.response = oauthErrorResponse(error);
        return;
      }
      // toProblem caps the `errors` list (MAX_PROBLEM_ERRORS) for every problem kind.
      const { type, title, status, detail, ...extensions } = error.toProblem();
      request.response = problemResponse(
        { type, title, status, detail, ...(instance === undefined ? {} : { instance }), ...extensions },
        error instanceof UnauthorizedError ? { ...error.headers } : error.headers,
      );
    },
  };
}

/** The realm of the Basic challenge a device's refused client authentication gets. */
export const DEVICE_BASIC_REALM = 'device';

/**
 * A refused token request as RFC 6749 §5.2 has it: `application/json` `{ error, error_description }`, never cached,
 * on a 401 of a client that authenticated with HTTP Basic a `WWW-Authenticate: Basic realm="device"` challenge, and
 * on a 429 or 503 its `Retry-After` (seconds).
 */
export function oauthErrorResponse(error: OAuthError): APIGatewayProxyStructuredResultV2 {
  return {
    statusCode: error.status,
    headers: {
      'content-type': 'application/json',
      'cache-control': 'no-store',
      ...(error.status === 401 && error.viaBasic ? { 'WWW-Authenticate': `Basic realm="${DEVICE_BASIC_REALM}"` } : {}),
      // Retry-After of a 429 or 503 (OAuthError.retryLater).
      ...error.headers,
    },
    body: JSON.stringify({ error: error.code, error_description: error.message }),
  };
}
