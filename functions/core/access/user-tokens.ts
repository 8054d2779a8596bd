/**
 * A user's sign-in with username and password at the token endpoint, as the local issuer runs it: the password's
 * hash is a secret check like a device's (functions/core/access/client-failures.ts), counted per username and source and
 * hashed through the process's gate. On AWS, Cognito signs users in and applies its own protections instead.
 */

import { ServiceUnavailableError, TooManyRequestsError, UnauthorizedError } from '../shared/errors.js';
import { type CheckLimits, type CheckRefusals, clientSourceOf, limitedCheck, userFailureKey } from './client-failures.js';
import type { IdentityProvider } from './ports.js';

/** What a sign-in uses: the issuer that checks passwords and signs, and the limits of secret checks. */
export interface UserTokenDependencies extends CheckLimits {
  identity: IdentityProvider;
}

/** A sign-in's refusals before a hash: problem+json, as every answer to the user form. */
const USER_REFUSALS: CheckRefusals = {
  busy: (seconds) =>
    new ServiceUnavailableError(`Too many sign-ins are being checked right now; retry after ${seconds} second(s) (Retry-After).`, seconds),
  blocked: (seconds) =>
    new TooManyRequestsError(
      `Too many failed sign-ins for this user from this address; retry after ${seconds} second(s) (Retry-After), with the right password.`,
      seconds,
    ),
};

/**
 * Signs `username` in with `password`, from `source` (the peer's address, clientSourceOf), within the limits of
 * secret checks (limitedCheck): at most `policy.limit` password hashes per username and source per window, across
 * every process; a success clears the count.
 * @returns the issuer's token and its lifetime, seconds.
 * @throws UnauthorizedError for a wrong password or an unknown user (one answer for both).
 * @throws TooManyRequestsError (retryAfterSeconds: until the window closes) when this username has
 *   `policy.limit` attempts without a success from this source in its window, whatever the password.
 * @throws ServiceUnavailableError (with retryAfterSeconds) when the process's gate admits no more attempts, or the store of
 *   attempts cannot be used.
 */
export async function issueUserToken(
  dependencies: UserTokenDependencies,
  request: { username: string; password: string; source?: string },
): Promise<{ accessToken: string; expiresInSeconds: number }> {
  const source = clientSourceOf(request.source);
  let token: { accessToken: string; expiresInSeconds: number } | undefined;
  await limitedCheck(dependencies, { key: userFailureKey(request.username, source), source }, USER_REFUSALS, async (slot) => {
    token = await dependencies.identity.issueToken(request.username, request.password, slot);
    return token !== undefined;
  });
  if (token === undefined) throw new UnauthorizedError('The username or password is wrong.', null);
  return token;
}
