/** Ports of access control: the failed-attempt counts, the verification gate and the user identity provider. */

/**
 * The answer of ClientFailureStore.reserve: the attempt may be verified (`reserved`, with the key's count in its
 * window, this attempt included), or not (the window is at its limit until `windowEndsAt`).
 */
export type ClientAttemptReservation =
  | { reserved: true /** Attempts in the open window, this one included. */; attempts: number /** Epoch ms. */; windowEndsAt: number }
  | { reserved: false /** When the key may try again, epoch ms. */; windowEndsAt: number };

/**
 * Attempts per key (a client id or username from one source: clientFailureKey, userFailureKey) that did not end in a
 * success, counted in a window that a key's first attempt opens and that closes `windowMs` later, whatever happens in
 * between: a count only ever ends by time or by `clear`, never later. Shared by every process and function instance
 * (the clientFailures table, whose items expire by DynamoDB TTL), so that its bound holds across all of them.
 */
export interface ClientFailureStore {
  /**
   * Reserves one verification for `key` at `now` (epoch ms), atomically against every other process: opens a window
   * of `policy.windowMs` counting 1 when none is open (none yet, or the last one closed), else adds 1 to the open
   * window while its count is below `policy.limit`, else refuses. So at most `policy.limit` verifications of a key
   * happen per window, however many attempts arrive at once and wherever. One conditional write (two when a closed
   * window is replaced). Writers that keep replacing a closed window under it for a few rounds get a refusal ending
   * a second later: the key is that busy.
   * @throws ServiceUnavailableError (with retryAfterSeconds) when the store cannot be used (missing, access denied); a
   *   throttled or unreachable store throws the client's own error, which the platform answers 503 as well.
   */
  reserve(key: string, now: number, policy: { limit: number; windowMs: number }): Promise<ClientAttemptReservation>;
  /** Forgets the key's count (the client authenticated). One delete. */
  clear(key: string): Promise<void>;
  /**
   * Gives back one attempt reserve counted (its check could not be made: a backend failed), so that an outage does
   * not leave a device blocked once it is over. One conditional update, a no-op when the count is 0 or gone.
   */
  release(key: string): Promise<void>;
}

/** Runs a secret's hash in a verification slot of the process (VerificationPass.verify with its priority set). */
export type HashSlot = <T>(hash: () => Promise<T>) => Promise<T>;

/**
 * Admission and ordering of the secret verifications of one process (the hash runs on a small shared thread pool):
 * how many attempts may be under way, and which waits least. In-process only: it bounds this process's CPU, not a
 * key's attempts (ClientFailureStore does that, across processes).
 */
export interface VerificationGate {
  /**
   * Admits one authentication attempt from `source` (clientSourceOf) before any I/O, or answers undefined when too
   * many attempts of its class are under way (the caller answers at once that the service is busy). Every pass
   * admitted must be left (VerificationPass.leave) exactly once.
   */
  enter(source: string): VerificationPass | undefined;
}

/** One admitted attempt (VerificationGate.enter). */
export interface VerificationPass {
  /**
   * Runs `check` (the hash verification) once a verification slot of the process is free. Attempts from sources
   * without recent failures go first; `suspect` (e.g. the key has other attempts in its window) puts this one behind
   * them.
   */
  verify<T>(check: () => Promise<T>, suspect: boolean): Promise<T>;
  /** Ends the attempt; `failed` (a wrong secret or unknown client) makes its source suspect for a while. */
  leave(failed: boolean): void;
}

/** What a user's sign-in answers: an access token and its lifetime, and the refresh token that renews it. */
export interface UserTokens {
  /** The JWT to send as the bearer token. */
  accessToken: string;
  /** The access token's lifetime, seconds. */
  expiresInSeconds: number;
  /** Opaque: exchanged at the token endpoint for a new access token (refresh), until it expires or is revoked. */
  refreshToken: string;
}

/** A user's sign-in: username, password and, to set a new password (the challenge, or a change), the new one. */
export interface SignInRequest {
  username: string;
  password: string;
  /** Already checked against the password policy (functions/core/access/password-policy.ts). */
  newPassword?: string;
}

/**
 * How a sign-in ended: `signed-in` (with `newPassword` given, the password was set first); `new-password-required`
 * (the password is right but the user must set a new one, and `newPassword` was not given: nothing changed);
 * `refused` (wrong password, unknown or disabled user: one answer for all).
 */
export type SignInOutcome = { outcome: 'signed-in'; tokens: UserTokens } | { outcome: 'new-password-required' } | { outcome: 'refused' };

/** Signs users in and renews their access tokens (the local issuer; on AWS Cognito). */
export interface IdentityProvider {
  /**
   * Checks the user's password and, on success, issues tokens; with `newPassword`, sets it as the user's password
   * first (completing the new-password challenge, or changing the password). The password's hash runs through `slot`
   * (the process's verification gate), so that it shares the CPU bound of every secret check.
   * @param slot runs the hash; @default runs it at once
   * @throws BadRequestError (functions/core/access/password-policy.ts) when the provider refuses the new password.
   * @throws ServiceUnavailableError when the provider cannot be used now (throttled).
   */
  signIn(request: SignInRequest, slot?: HashSlot): Promise<SignInOutcome>;
  /**
   * A new access token for `refreshToken`, carrying the user's role and companies as they are now; undefined when the
   * refresh token is unknown, expired or revoked, or its user disabled or deleted (refused at once, whatever the
   * access tokens still live).
   * @throws ServiceUnavailableError when the provider cannot be used now (throttled).
   */
  refresh(refreshToken: string): Promise<{ accessToken: string; expiresInSeconds: number } | undefined>;
  /**
   * Revokes `refreshToken` (RFC 7009), so that it renews nothing from now on; the access tokens it renewed live out
   * their lifetime. A token the provider does not know (unknown, expired, already revoked) is no error.
   * @returns `unsupported` when the token is one the provider does not revoke (an access token), else `revoked`.
   * @throws ServiceUnavailableError when the provider cannot be used now (throttled).
   */
  revoke(refreshToken: string): Promise<'revoked' | 'unsupported'>;
}
