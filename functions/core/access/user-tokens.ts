/**
 * A user's sign-in and refresh at the token endpoint (docs/contract.md, "Tokens"). Locally the password's hash is a
 * secret check like a device's (functions/core/access/client-failures.ts), counted per username and source and hashed
 * through the process's gate; on AWS, Cognito signs users in and applies its own protections instead. Either way a new
 * password is checked against the policy before anything else, a user who must set one gets the
 * `new_password_required` challenge, and a refused refresh is `invalid_grant`.
 */

import {
  NewPasswordRequiredError,
  OAuthError,
  ServiceUnavailableError,
  TooManyRequestsError,
  UnauthorizedError,
} from '../shared/errors.js';
import { type CheckLimits, type CheckRefusals, clientSourceOf, limitedCheck, userFailureKey } from './client-failures.js';
import { checkNewPassword, PASSWORD_POLICY_TEXT } from './password-policy.js';
import type { IdentityProvider, SignInOutcome, SignInRequest, UserTokens } from './ports.js';

/**
 * Lifetime of a user's access token, seconds: 15 minutes, so that a change of role, companies or a disabled user takes
 * hold within that time (the refresh that follows reads the user as they are). Locally TOKEN_LIFETIME_SECONDS' default,
 * on AWS the app client's accessTokenValidity.
 */
export const ACCESS_TOKEN_LIFETIME_SECONDS = 900;

/** Lifetime of a refresh token, days: locally, and the app client's refreshTokenValidity on AWS. */
export const REFRESH_TOKEN_LIFETIME_DAYS = 30;

/** What a local sign-in uses: the issuer that checks passwords and signs, and the limits of secret checks. */
export interface UserTokenDependencies extends CheckLimits {
  identity: IdentityProvider;
}

/** A sign-in's refusals before a hash: problem+json, as every answer to the user form. */
const USER_REFUSALS: CheckRefusals = {
  busy: (seconds) =>
    new ServiceUnavailableError(`Too many sign-ins are being checked right now; retry after ${seconds} second(s).`, seconds),
  blocked: (seconds) =>
    new TooManyRequestsError(
      `Too many failed sign-ins for this user from this address; retry after ${seconds} second(s), with the right password.`,
      seconds,
    ),
};

/** The 401 of a refused sign-in: one answer for a wrong password, an unknown user and a disabled one. */
const refused = () => new UnauthorizedError('The username or password is wrong.', null);

/** The tokens of a sign-in's outcome. @throws NewPasswordRequiredError or UnauthorizedError for the other outcomes. */
function tokensOf(outcome: SignInOutcome): UserTokens {
  if (outcome.outcome === 'signed-in') return outcome.tokens;
  if (outcome.outcome === 'new-password-required') {
    throw new NewPasswordRequiredError(
      'Set a new password: send the same JSON with `new_password` added, and the answer is your tokens. ' +
        `The new password must have ${PASSWORD_POLICY_TEXT}.`,
      PASSWORD_POLICY_TEXT,
    );
  }
  throw refused();
}

/** `request` without the members the provider does not take, its new password checked against the policy. */
function checkedSignIn(request: SignInRequest): SignInRequest {
  if (request.newPassword === undefined) return { username: request.username, password: request.password };
  checkNewPassword(request.newPassword);
  return { username: request.username, password: request.password, newPassword: request.newPassword };
}

/**
 * Signs `username` in with `password` locally, from `source` (the peer's address, clientSourceOf), within the limits
 * of secret checks (limitedCheck): at most `policy.limit` password hashes per username and source per window, across
 * every process; a right password clears the count (a challenge answered too: the password was right). With
 * `newPassword`, it becomes the user's password: completing the new-password challenge, or changing the password.
 * @returns the access token, its lifetime (seconds) and a refresh token.
 * @throws BadRequestError (400) when `newPassword` does not meet the password policy, before any hash or count.
 * @throws NewPasswordRequiredError (401, `challenge: "new_password_required"`) when the password is right but the user
 *   must set a new one and gave none.
 * @throws UnauthorizedError for a wrong password, an unknown or a disabled user (one answer for all).
 * @throws TooManyRequestsError (retryAfterSeconds: until the window closes) when this username has
 *   `policy.limit` attempts without a success from this source in its window, whatever the password.
 * @throws ServiceUnavailableError (with retryAfterSeconds) when the process's gate admits no more attempts, or the store of
 *   attempts cannot be used.
 */
export async function signInUser(dependencies: UserTokenDependencies, request: SignInRequest & { source?: string }): Promise<UserTokens> {
  const signIn = checkedSignIn(request);
  const source = clientSourceOf(request.source);
  let outcome: SignInOutcome = { outcome: 'refused' };
  await limitedCheck(dependencies, { key: userFailureKey(request.username, source), source }, USER_REFUSALS, async (slot) => {
    outcome = await dependencies.identity.signIn(signIn, slot);
    return outcome.outcome !== 'refused';
  });
  return tokensOf(outcome);
}

/**
 * Signs a user in on an identity provider that bounds attempts itself (Cognito): as signInUser, without the local
 * limits of secret checks.
 * @throws as signInUser, but never TooManyRequestsError; ServiceUnavailableError when the provider throttles.
 */
export async function signInWithProvider(identity: IdentityProvider, request: SignInRequest): Promise<UserTokens> {
  return tokensOf(await identity.signIn(checkedSignIn(request)));
}

/**
 * Exchanges a refresh token for a new access token (RFC 6749 §6) carrying the user's role and companies as they are
 * now. No new refresh token: the one given stays valid until it expires.
 * @returns the access token and its lifetime, seconds.
 * @throws OAuthError `invalid_grant` (400, RFC 6749 §5.2) when the refresh token is unknown, expired or revoked, or its
 *   user is disabled or deleted.
 * @throws ServiceUnavailableError when the provider cannot be used now.
 */
export async function refreshUserToken(
  identity: IdentityProvider,
  refreshToken: string,
): Promise<{ accessToken: string; expiresInSeconds: number }> {
  const token = await identity.refresh(refreshToken);
  if (token === undefined) {
    throw new OAuthError(
      'invalid_grant',
      'The refresh token is unknown, expired or revoked, or its user is disabled or deleted; sign in again with your username and password.',
    );
  }
  return token;
}

/**
 * Revokes a user's refresh token (RFC 7009 §2): it renews nothing from then on, wherever it is held (sign-out). The
 * access tokens it renewed stay valid until they expire (ACCESS_TOKEN_LIFETIME_SECONDS at most): API Gateway and the
 * local runtime verify them by signature alone. An unknown, expired or already revoked token is no error (§2.2), so
 * that revoking twice, or after the user was deleted, succeeds alike.
 * @throws OAuthError `unsupported_token_type` (400, RFC 7009 §2.2.1) for an access token, which only expiry ends.
 * @throws ServiceUnavailableError when the provider cannot be used now.
 */
export async function revokeUserToken(identity: IdentityProvider, token: string): Promise<void> {
  if ((await identity.revoke(token)) === 'unsupported') {
    throw new OAuthError(
      'unsupported_token_type',
      `Only refresh tokens are revoked; an access token stops working when it expires (at most ${ACCESS_TOKEN_LIFETIME_SECONDS / 60} minutes): forget it.`,
    );
  }
}
