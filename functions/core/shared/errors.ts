/**
 * Typed domain errors: each says what went wrong (its `kind`, a human `detail` as the message, and the facts a
 * caller needs: the violations, the figures, when to retry). How an error is answered over HTTP (status, title,
 * headers, the problem+json body and its cap on `errors`) is decided in one place, functions/platform/problem.ts;
 * anything that is not a DomainError is unexpected there.
 */

/** One violation: `path` locates it (JSON pointer-ish, archive path or parameter name). */
export interface ProblemViolation {
  path: string;
  message: string;
}

/** What went wrong, one per error class. */
export type DomainErrorKind =
  | 'bad-request'
  | 'unauthorized'
  | 'new-password-required'
  | 'forbidden'
  | 'not-found'
  | 'conflict'
  | 'quota-exceeded'
  | 'payload-too-large'
  | 'unsupported-media-type'
  | 'invalid-archive'
  | 'unprocessable-request'
  | 'too-many-requests'
  | 'service-unavailable'
  | 'upload-not-completed'
  | 'oauth';

/** Base class: the `kind` of failure, and `detail` (the message) saying what it was. */
export abstract class DomainError extends Error {
  abstract readonly kind: DomainErrorKind;

  constructor(detail: string) {
    super(detail);
    this.name = new.target.name;
  }
}

/** The request is malformed (bad JSON, missing field, unknown parameter); `violations` lists each one (maybe none). */
export class BadRequestError extends DomainError {
  readonly kind = 'bad-request';
  constructor(
    detail: string,
    readonly violations: ProblemViolation[] = [],
  ) {
    super(detail);
  }
}

/**
 * The caller is not authenticated: a bearer token is missing, malformed, expired or untrusted. `bearerError` is the
 * OAuth bearer error code it amounts to (`invalid_token`, `invalid_request`), or null when no token was sent at all.
 */
export class UnauthorizedError extends DomainError {
  readonly kind = 'unauthorized';
  constructor(
    detail: string,
    readonly bearerError: 'invalid_token' | 'invalid_request' | null = 'invalid_token',
  ) {
    super(detail);
  }
}

/**
 * A user's password is right, but the user must set a new one before signing in (invited, or their password was
 * reset): the sign-in is to be sent again with a new password (the `new_password_required` challenge).
 */
export class NewPasswordRequiredError extends DomainError {
  readonly kind = 'new-password-required';
  /** The challenge's name, as the token endpoint's answer carries it. */
  readonly challenge = 'new_password_required';

  /**
   * @param detail what to send, with the policy.
   * @param passwordPolicy the password policy in words (`at least 12 and at most 256 characters, with …`), for a form
   *   to show before the user types the new password.
   */
  constructor(
    detail: string,
    readonly passwordPolicy: string,
  ) {
    super(detail);
  }
}

/** Authenticated, but the token lacks the company or the scope. */
export class ForbiddenError extends DomainError {
  readonly kind = 'forbidden';
}

/** The addressed resource does not exist (or belongs to a company the caller cannot see). */
export class NotFoundError extends DomainError {
  readonly kind = 'not-found';
}

/** The resource already exists and is immutable (e.g. a scenario version), or the request is already under way. */
export class ConflictError extends DomainError {
  readonly kind = 'conflict';
}

/** Storing the archive would exceed the company's storage quota; the figures are bytes. */
export class QuotaExceededError extends DomainError {
  readonly kind = 'quota-exceeded';
  /** The company's quota, bytes. */
  readonly quotaBytes: number;
  /** Bytes of archives the company stores now. */
  readonly usedBytes: number;
  /** Size of the archive refused, bytes. */
  readonly archiveBytes: number;
  constructor(detail: string, figures: { quotaBytes: number; usedBytes: number; archiveBytes: number }) {
    super(detail);
    this.quotaBytes = figures.quotaBytes;
    this.usedBytes = figures.usedBytes;
    this.archiveBytes = figures.archiveBytes;
  }
}

/** The request body is larger than the address accepts (API Gateway's payload limit). */
export class PayloadTooLargeError extends DomainError {
  readonly kind = 'payload-too-large';
}

/** The body is in an encoding the service does not read (a JSON body declared in another charset than UTF-8). */
export class UnsupportedMediaTypeError extends DomainError {
  readonly kind = 'unsupported-media-type';
}

/** The archive is invalid; `violations` lists every violation with its path. */
export class InvalidArchiveError extends DomainError {
  readonly kind = 'invalid-archive';
  constructor(
    detail: string,
    readonly violations: ProblemViolation[],
  ) {
    super(detail);
  }
}

/** The request is well-formed but cannot be processed as sent (e.g. an Idempotency-Key reused with another body). */
export class UnprocessableRequestError extends DomainError {
  readonly kind = 'unprocessable-request';
}

/**
 * This caller made too many failed attempts (a user's sign-ins from one address); it may try again after
 * `retryAfterSeconds` (whole seconds).
 */
export class TooManyRequestsError extends DomainError {
  readonly kind = 'too-many-requests';
  constructor(
    detail: string,
    readonly retryAfterSeconds: number,
  ) {
    super(detail);
  }
}

/** A backend (e.g. the search engine) is unavailable; worth retrying after `retryAfterSeconds` (whole seconds). */
export class ServiceUnavailableError extends DomainError {
  readonly kind = 'service-unavailable';
  constructor(
    detail: string,
    readonly retryAfterSeconds = 5,
  ) {
    super(detail);
  }
}

/**
 * A presigned upload that never completed, only ever the `problem` of a REJECTED upload slot. `reason` is
 * `expired` (no archive arrived before the slot's `expiresAt`) or `interrupted` (an archive arrived but its
 * validation never completed); in both cases nothing was stored and the uploaded object was deleted.
 */
export class UploadNotCompletedError extends DomainError {
  readonly kind = 'upload-not-completed';
  constructor(
    detail: string,
    readonly reason: 'expired' | 'interrupted',
  ) {
    super(detail);
  }
}

/**
 * The error codes of an OAuth 2.0 token or revocation request this service answers: RFC 6749 §5.2's,
 * `unsupported_token_type` (RFC 7009 §2.2.1: a token of a type the server does not revoke), and
 * `temporarily_unavailable` (RFC 6749 §4.1.2.1, the registered code for a server that cannot answer now; §5.2 has
 * none) for the refusals that ask the client to retry later.
 */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unsupported_grant_type'
  | 'unsupported_token_type'
  | 'invalid_scope'
  | 'temporarily_unavailable';

/**
 * Why a token request is refused for now (OAuthError.retryLater): `too-many-attempts` (this client's failed attempts
 * reached their limit) or `busy` (the service has too many secrets to check at once).
 */
export type OAuthRetryCause = 'too-many-attempts' | 'busy';

/**
 * A refused OAuth 2.0 token request (client credentials or refresh token grant), answered the way OAuth clients read it
 * (`error`, `error_description`) rather than as a problem. `invalid_client`: the client did not authenticate;
 * `invalid_grant`: the refresh token is unknown, expired or revoked, or its user disabled or gone; `viaBasic`: it
 * tried with HTTP Basic. `retry`: the refusal is temporary (OAuthError.retryLater).
 */
export class OAuthError extends DomainError {
  readonly kind = 'oauth';
  constructor(
    readonly code: OAuthErrorCode,
    detail: string,
    readonly viaBasic = false,
    readonly retry?: { cause: OAuthRetryCause; afterSeconds: number },
  ) {
    super(detail);
  }

  /**
   * `temporarily_unavailable`, to be retried after `afterSeconds` rounded up to whole seconds (at least 1):
   * `too-many-attempts` when this client sent too many (its failed attempts), `busy` when the service has too many
   * to check (its verification queue is full).
   */
  static retryLater(cause: OAuthRetryCause, detail: string, afterSeconds: number): OAuthError {
    return new OAuthError('temporarily_unavailable', detail, false, { cause, afterSeconds: Math.max(1, Math.ceil(afterSeconds)) });
  }
}

/** Whether `error` says the service itself cannot do it now (a backend down, too busy): worth retrying unchanged. */
export function isServiceFailure(error: DomainError): boolean {
  return error instanceof ServiceUnavailableError || (error instanceof OAuthError && error.retry?.cause === 'busy');
}
