/**
 * Typed domain errors. The platform's error middleware maps each one to an
 * RFC 9457 `application/problem+json` response; anything else becomes a
 * generic 500 that is logged and never serialized.
 */

/** One violation inside a problem: `path` locates it (JSON pointer-ish, archive path or parameter name). */
export interface ProblemViolation {
  path: string;
  message: string;
}

/**
 * Most `errors` entries a problem body carries: a request with thousands of bad parameters (or an archive with
 * thousands of bad entries) gets the first ones, `errorCount` with the total and a detail saying the rest were omitted.
 */
export const MAX_PROBLEM_ERRORS = 20;

/** Base class: an HTTP status, a short title, a human `detail` and optional extension members. */
export abstract class DomainError extends Error {
  abstract readonly status: number;
  abstract readonly title: string;
  /** Extra members merged into the problem body (e.g. `errors`, `quotaBytes`). */
  readonly extensions: Record<string, unknown>;
  /** Extra response headers (e.g. `WWW-Authenticate`, `Retry-After`). */
  readonly headers: Record<string, string>;

  constructor(detail: string, extensions: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
    super(detail);
    this.name = new.target.name;
    this.extensions = extensions;
    this.headers = headers;
  }

  /**
   * The RFC 9457 body members of this error (without `instance`). An `errors` list longer than MAX_PROBLEM_ERRORS is
   * cut to its first MAX_PROBLEM_ERRORS entries, with `errorCount` (the total) and the omission stated in `detail`;
   * the error object itself keeps every violation.
   */
  toProblem(): { type: string; title: string; status: number; detail: string } & Record<string, unknown> {
    const problem = { type: this.type, title: this.title, status: this.status, detail: this.message, ...this.extensions };
    const errors = this.extensions.errors;
    if (!Array.isArray(errors) || errors.length <= MAX_PROBLEM_ERRORS) return problem;
    return {
      ...problem,
      detail: `${this.message} Only the first ${MAX_PROBLEM_ERRORS} of ${errors.length} errors are listed; ${errors.length - MAX_PROBLEM_ERRORS} more were omitted.`,
      errors: errors.slice(0, MAX_PROBLEM_ERRORS),
      errorCount: errors.length,
    };
  }

  /** Problem `type` URI: a stable, documented identifier per error kind. */
  get type(): string {
    return `https://device-scenario-service.dev/problems/${this.title.toLowerCase().replaceAll(' ', '-')}`;
  }
}

/** 400: the request is malformed (bad JSON, missing field, unknown parameter). Lists every violation. */
export class BadRequestError extends DomainError {
  readonly status = 400;
  readonly title = 'Bad Request';
  constructor(detail: string, errors: ProblemViolation[] = []) {
    super(detail, errors.length > 0 ? { errors } : {});
  }
}

/** 401: missing, malformed, expired or untrusted bearer token. Carries `WWW-Authenticate: Bearer`. */
export class UnauthorizedError extends DomainError {
  readonly status = 401;
  readonly title = 'Unauthorized';
  constructor(detail: string, bearerError: 'invalid_token' | 'invalid_request' | null = 'invalid_token') {
    super(
      detail,
      {},
      {
        'WWW-Authenticate':
          bearerError === null ? 'Bearer' : `Bearer error="${bearerError}", error_description="${detail.replaceAll('"', "'")}"`,
      },
    );
  }
}

/** 403: authenticated, but the token lacks the company or the scope. */
export class ForbiddenError extends DomainError {
  readonly status = 403;
  readonly title = 'Forbidden';
}

/** 404: the addressed resource does not exist (or belongs to a company the caller cannot see). */
export class NotFoundError extends DomainError {
  readonly status = 404;
  readonly title = 'Not Found';
}

/** 409: the resource already exists and is immutable (e.g. a scenario version). */
export class ConflictError extends DomainError {
  readonly status = 409;
  readonly title = 'Conflict';
}

/** 413: storing the archive would exceed the company's storage quota. */
export class QuotaExceededError extends DomainError {
  readonly status = 413;
  readonly title = 'Storage Quota Exceeded';
  constructor(detail: string, figures: { quotaBytes: number; usedBytes: number; archiveBytes: number }) {
    super(detail, figures);
  }
}

/** 413: the request body is larger than the address accepts (API Gateway's payload limit). */
export class PayloadTooLargeError extends DomainError {
  readonly status = 413;
  readonly title = 'Payload Too Large';
}

/** 415: the body is in an encoding the service does not read (a JSON body declared in another charset than UTF-8). */
export class UnsupportedMediaTypeError extends DomainError {
  readonly status = 415;
  readonly title = 'Unsupported Media Type';
}

/** 422: the archive is invalid; `errors` lists every violation with its path. */
export class InvalidArchiveError extends DomainError {
  readonly status = 422;
  readonly title = 'Invalid Scenario Archive';
  constructor(detail: string, errors: ProblemViolation[]) {
    super(detail, { errors });
  }
}

/** 422: the request is well-formed but cannot be processed as sent (e.g. an Idempotency-Key reused with another body). */
export class UnprocessableRequestError extends DomainError {
  readonly status = 422;
  readonly title = 'Unprocessable Request';
}

/**
 * 429: this caller made too many failed attempts (a user's sign-ins from one address); carries `Retry-After`, the
 * seconds until it may try again.
 */
export class TooManyRequestsError extends DomainError {
  readonly status = 429;
  readonly title = 'Too Many Requests';
  constructor(detail: string, retryAfterSeconds: number) {
    super(detail, {}, { 'Retry-After': String(retryAfterSeconds) });
  }
}

/** 503: a backend (e.g. the search engine) is unavailable; carries `Retry-After` in seconds. */
export class ServiceUnavailableError extends DomainError {
  readonly status = 503;
  readonly title = 'Service Unavailable';
  constructor(detail: string, retryAfterSeconds = 5) {
    super(detail, {}, { 'Retry-After': String(retryAfterSeconds) });
  }
}

/**
 * 410: a presigned upload that never completed, only ever the `problem` of a REJECTED upload slot. `reason` is
 * `expired` (no archive arrived before the slot's `expiresAt`) or `interrupted` (an archive arrived but its
 * validation never completed); in both cases nothing was stored and the uploaded object was deleted.
 */
export class UploadNotCompletedError extends DomainError {
  readonly status = 410;
  readonly title = 'Upload Not Completed';
  constructor(detail: string, reason: 'expired' | 'interrupted') {
    super(detail, { reason });
  }
}

/**
 * The error codes of an OAuth 2.0 token request this service answers: RFC 6749 §5.2's, and `temporarily_unavailable`
 * (RFC 6749 §4.1.2.1, the registered code for a server that cannot answer now; §5.2 has none) for the 429 and 503
 * that ask the client to retry later.
 */
export type OAuthErrorCode = 'invalid_request' | 'invalid_client' | 'unsupported_grant_type' | 'temporarily_unavailable';

/**
 * A refused OAuth 2.0 token request (client credentials grant): answered as RFC 6749 §5.2 asks, `application/json`
 * `{ "error", "error_description" }`, not as a problem: OAuth clients read `error`. `invalid_client` is 401 (the client
 * did not authenticate), `temporarily_unavailable` 429 or 503 with `Retry-After` (OAuthError.retryLater), the others
 * 400; `viaBasic` says the client authenticated with HTTP Basic, whose 401 carries a Basic challenge.
 */
export class OAuthError extends DomainError {
  readonly status: number;
  readonly title: string;
  constructor(
    readonly code: OAuthErrorCode,
    detail: string,
    readonly viaBasic = false,
    retry?: { status: 429 | 503; afterSeconds: number },
  ) {
    super(detail, {}, retry === undefined ? {} : { 'Retry-After': String(retry.afterSeconds) });
    this.status = retry?.status ?? (code === 'invalid_client' ? 401 : 400);
    this.title = { 400: 'Bad Request', 401: 'Unauthorized', 429: 'Too Many Requests', 503: 'Service Unavailable' }[this.status] ?? '';
  }

  /**
   * `temporarily_unavailable` with `Retry-After`: 429 when this client sent too many (its failed attempts), 503 when
   * the service has too many to check (its verification queue is full).
   * @param afterSeconds whole seconds, at least 1.
   */
  static retryLater(status: 429 | 503, detail: string, afterSeconds: number): OAuthError {
    return new OAuthError('temporarily_unavailable', detail, false, { status, afterSeconds: Math.max(1, Math.ceil(afterSeconds)) });
  }
}
