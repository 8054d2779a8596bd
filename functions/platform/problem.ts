import {
  IdempotencyAlreadyInProgressError,
  IdempotencyPersistenceLayerError,
  IdempotencyValidationError,
} from '@aws-lambda-powertools/idempotency';
import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { MAX_PROBLEM_ERRORS, OAUTH_TITLES, PROBLEM_KINDS, problemTypeOf } from '../contract/problem-kinds.js';
import { CommandNotAdvertisedError } from '../core/commands/commands.js';
import {
  BadRequestError,
  ConflictError,
  DomainError,
  type DomainErrorKind,
  InvalidArchiveError,
  NewPasswordRequiredError,
  OAuthError,
  QuotaExceededError,
  ServiceUnavailableError,
  TooManyRequestsError,
  UnauthorizedError,
  UnprocessableRequestError,
  UploadNotCompletedError,
} from '../core/shared/errors.js';
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

/**
 * The status of a refused token request: `temporarily_unavailable` 429 (the client's attempts) or 503 (the service
 * is busy), `invalid_client` 401 (the client did not authenticate), the others 400.
 */
function oauthStatusOf(error: OAuthError): number {
  if (error.retry !== undefined) return error.retry.cause === 'too-many-attempts' ? 429 : 503;
  return error.code === 'invalid_client' ? 401 : 400;
}

/** The HTTP status a domain error is answered with. */
export function statusOf(error: DomainError): number {
  return error instanceof OAuthError ? oauthStatusOf(error) : PROBLEM_KINDS[error.kind as Exclude<DomainErrorKind, 'oauth'>].status;
}

/** The problem `title` of a domain error: a short summary of its kind. */
export function titleOf(error: DomainError): string {
  return error instanceof OAuthError
    ? (OAUTH_TITLES[oauthStatusOf(error)] ?? '')
    : PROBLEM_KINDS[error.kind as Exclude<DomainErrorKind, 'oauth'>].title;
}

/** The problem `type` URI of a domain error: a stable, documented identifier per kind, derived from its title (problemTypeOf). */
export function problemTypeOfError(error: DomainError): string {
  return problemTypeOf(titleOf(error));
}

/**
 * The response headers a domain error carries: `WWW-Authenticate: Bearer` (with the bearer error and the detail, `"`
 * turned into `'`) on an UnauthorizedError, and plain `Bearer` on a sign-in's new-password challenge (a 401 names its
 * scheme), `Retry-After` (whole seconds) when the caller may retry later, else none.
 */
export function problemHeadersOf(error: DomainError): Record<string, string> {
  if (error instanceof NewPasswordRequiredError) return { 'WWW-Authenticate': 'Bearer' };
  if (error instanceof UnauthorizedError) {
    return {
      'WWW-Authenticate':
        error.bearerError === null
          ? 'Bearer'
          : `Bearer error="${error.bearerError}", error_description="${error.message.replaceAll('"', "'")}"`,
    };
  }
  if (error instanceof TooManyRequestsError || error instanceof ServiceUnavailableError)
    return { 'Retry-After': String(error.retryAfterSeconds) };
  if (error instanceof OAuthError && error.retry !== undefined) return { 'Retry-After': String(error.retry.afterSeconds) };
  return {};
}

/**
 * The members a problem body adds for a domain error: its violations (`errors`), quota figures, `reason`, or the
 * sign-in's `challenge`.
 */
function problemMembersOf(error: DomainError): Record<string, unknown> {
  if (error instanceof BadRequestError) return error.violations.length > 0 ? { errors: error.violations } : {};
  if (error instanceof InvalidArchiveError) return { errors: error.violations };
  if (error instanceof QuotaExceededError)
    return { quotaBytes: error.quotaBytes, usedBytes: error.usedBytes, archiveBytes: error.archiveBytes };
  if (error instanceof UploadNotCompletedError) return { reason: error.reason };
  if (error instanceof CommandNotAdvertisedError) return { cause: error.conflictCause };
  if (error instanceof NewPasswordRequiredError) return { challenge: error.challenge, passwordPolicy: error.passwordPolicy };
  return {};
}

/**
 * The RFC 9457 body of a domain error (without `instance`): `type`, `title`, `status`, `detail`, then its members.
 * An `errors` list longer than MAX_PROBLEM_ERRORS is cut to its first MAX_PROBLEM_ERRORS entries, with `errorCount`
 * (the total) and the omission stated in `detail`; the error itself keeps every violation.
 */
export function problemOf(error: DomainError): { type: string; title: string; status: number; detail: string } & Record<string, unknown> {
  const members = problemMembersOf(error);
  const problem = { type: problemTypeOfError(error), title: titleOf(error), status: statusOf(error), detail: error.message, ...members };
  const errors = members.errors;
  if (!Array.isArray(errors) || errors.length <= MAX_PROBLEM_ERRORS) return problem;
  return {
    ...problem,
    detail: `${error.message} Only the first ${MAX_PROBLEM_ERRORS} of ${errors.length} errors are listed; ${errors.length - MAX_PROBLEM_ERRORS} more were omitted.`,
    errors: errors.slice(0, MAX_PROBLEM_ERRORS),
    errorCount: errors.length,
  };
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

/** The title of the answer to an unexpected error (a 500, which no domain error kind has). */
const INTERNAL_SERVER_ERROR = 'Internal Server Error';

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
          type: problemTypeOf(INTERNAL_SERVER_ERROR),
          title: INTERNAL_SERVER_ERROR,
          status: 500,
          detail: 'An unexpected error occurred; it has been logged.',
          ...(instance === undefined ? {} : { instance }),
        });
        return;
      }
      // A backend failure is logged with the SDK's own error (name, code, request id), once, as a warning: it is not a bug.
      if (statusOf(error) >= 500)
        logger.warn('Request failed', { error: error === request.error ? error : (request.error as Error), path: instance });
      if (error instanceof OAuthError) {
        request.response = oauthErrorResponse(error);
        return;
      }
      // problemOf caps the `errors` list (MAX_PROBLEM_ERRORS) for every problem kind.
      const { type, title, status, detail, ...extensions } = problemOf(error);
      request.response = problemResponse(
        { type, title, status, detail, ...(instance === undefined ? {} : { instance }), ...extensions },
        problemHeadersOf(error),
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
    statusCode: oauthStatusOf(error),
    headers: {
      'content-type': 'application/json',
      'cache-control': 'no-store',
      ...(oauthStatusOf(error) === 401 && error.viaBasic ? { 'WWW-Authenticate': `Basic realm="${DEVICE_BASIC_REALM}"` } : {}),
      // Retry-After of a 429 or 503 (OAuthError.retryLater).
      ...problemHeadersOf(error),
    },
    body: JSON.stringify({ error: error.code, error_description: error.message }),
  };
}
