/**
 * The identity provider on AWS: Cognito signs users in (USER_PASSWORD_AUTH on the app client), completes the
 * new-password challenge (RespondToAuthChallenge), changes a password (ChangePassword with the user's access token,
 * then GlobalSignOut to end the user's other sessions and a sign-in with the new password), renews access tokens
 * (REFRESH_TOKEN_AUTH) and revokes refresh tokens (RevokeToken), applying its own protections; the access token it
 * answers is the one API Gateway's JWT authorizer verifies.
 */
import {
  ChangePasswordCommand,
  type CognitoIdentityProviderClient,
  GlobalSignOutCommand,
  InitiateAuthCommand,
  type InitiateAuthCommandOutput,
  RespondToAuthChallengeCommand,
  RevokeTokenCommand,
} from '@aws-sdk/client-cognito-identity-provider';
import { passwordPolicyError } from '../../core/access/password-policy.js';
import type { IdentityProvider, SignInOutcome, SignInRequest, UserTokens } from '../../core/access/ports.js';
import { ACCESS_TOKEN_LIFETIME_SECONDS } from '../../core/access/user-tokens.js';
import { BadRequestError, ServiceUnavailableError, UnauthorizedError } from '../../core/shared/errors.js';

/** Cognito errors that mean "these credentials do not sign in": one 401, whatever the reason (logged, never shown). */
const REFUSED_SIGN_IN = new Set([
  'NotAuthorizedException',
  'UserNotFoundException',
  'UserNotConfirmedException',
  'PasswordResetRequiredException',
]);

/**
 * Cognito errors that mean "this refresh token renews nothing": unknown, expired or revoked token, disabled or deleted
 * user (Cognito answers NotAuthorizedException for most of them), a malformed token.
 */
const REFUSED_REFRESH = new Set([...REFUSED_SIGN_IN, 'InvalidParameterException']);

/**
 * Cognito errors of RevokeToken that mean "this token revokes nothing": not a refresh token of this app client, or
 * malformed. RFC 7009 §2.2 answers them as a success.
 */
const UNKNOWN_TO_REVOKE = new Set(['UnauthorizedException', 'InvalidParameterException', 'NotAuthorizedException']);

/** Cognito throttling: the client should retry. */
const THROTTLED = new Set(['TooManyRequestsException', 'LimitExceededException', 'TooManyFailedAttemptsException']);

/**
 * How long a password change waits between ending the user's sessions (GlobalSignOut) and signing in with the new
 * password, ms: past the whole second the sign-out was recorded in, with a margin for the clocks' difference.
 */
export const SIGN_OUT_SETTLE_MS = 1_100;

/** Retry-After (s) of a sign-in or refresh Cognito throttled. */
const THROTTLED_RETRY_AFTER_SECONDS = 5;

/** The detail of a throttled sign-in: the same request may be sent again. */
const THROTTLED_SIGN_IN = 'Too many sign-in requests; retry shortly.';

/** The part of the Cognito client the adapter uses (a CognitoIdentityProviderClient, or a mock of it in tests). */
export type CognitoSignInClient = Pick<CognitoIdentityProviderClient, 'send'>;

/** Where the adapter reports why a sign-in was refused or needs a challenge (the service's logger). */
export interface SignInLog {
  info(message: string, attributes: Record<string, unknown>): void;
}

/** The name of a thrown Cognito error ('' for anything else). */
function nameOf(error: unknown): string {
  return (error as { name?: string }).name ?? '';
}

/**
 * IdentityProvider over Cognito's InitiateAuth, RespondToAuthChallenge, ChangePassword, GlobalSignOut and RevokeToken:
 * public APIs of the app client, authorized by the user's password or tokens (no IAM grant).
 */
export class CognitoSignIn implements IdentityProvider {
  /**
   * @param client the Cognito client (traced by the composition root).
   * @param clientId the app client (COGNITO_CLIENT_ID), read on each call.
   * @param log where refusals and challenges are reported (never shown to the caller).
   * @param pause waits `ms` milliseconds (a timer; tests inject their own).
   */
  constructor(
    private readonly client: CognitoSignInClient,
    private readonly clientId: () => string,
    private readonly log: SignInLog,
    private readonly pause: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  ) {}

  /**
   * Signs `username` in with `USER_PASSWORD_AUTH` on the app client: its access token (the pre-token-generation
   * trigger gave it the user's scopes and `companies`; API Gateway's JWT authorizer verifies it), lifetime and refresh
   * token. `NEW_PASSWORD_REQUIRED` (an invited or reset user) is the `new-password-required` outcome without
   * `newPassword`, and answered with it (RespondToAuthChallenge, the challenge's Session) otherwise: an invited or
   * reset user has no other session to end. `newPassword` without a challenge changes the password (changePassword):
   * the user's other sessions end, and the tokens answered are those of a sign-in with the new password.
   * @returns `refused` for wrong credentials, an unknown, disabled, unconfirmed or reset user, or an expired session;
   *   also when the user is disabled, deleted or reset while their password changes.
   * @throws BadRequestError (400): the new password refused by the pool's policy (passwordPolicyError), or other
   *   parameters Cognito refuses.
   * @throws UnauthorizedError (401) when the user has another challenge to complete first (e.g. MFA).
   * @throws ServiceUnavailableError (503, Retry-After) when Cognito throttles; after a password change, its detail
   *   says the password is changed (the same request would now be refused).
   */
  async signIn(request: SignInRequest): Promise<SignInOutcome> {
    const ClientId = this.clientId();
    let output = await this.call('Sign-in', () =>
      this.client.send(
        new InitiateAuthCommand({
          ClientId,
          AuthFlow: 'USER_PASSWORD_AUTH',
          AuthParameters: { USERNAME: request.username, PASSWORD: request.password },
        }),
      ),
    );
    if (output === undefined) return { outcome: 'refused' };
    if (output.ChallengeName === 'NEW_PASSWORD_REQUIRED') {
      this.log.info('Sign-in needs a new password', { completed: request.newPassword !== undefined });
      if (request.newPassword === undefined) return { outcome: 'new-password-required' };
      const NEW_PASSWORD = request.newPassword;
      // The challenge names the user as the pool knows them (usernames are case-insensitive: not always as typed).
      const USERNAME = output.ChallengeParameters?.USER_ID_FOR_SRP ?? request.username;
      const Session = output.Session;
      output = await this.call('New password', () =>
        this.client.send(
          new RespondToAuthChallengeCommand({
            ClientId,
            ChallengeName: 'NEW_PASSWORD_REQUIRED',
            Session,
            ChallengeResponses: { USERNAME, NEW_PASSWORD },
          }),
        ),
      );
      if (output === undefined) return { outcome: 'refused' };
      return { outcome: 'signed-in', tokens: this.tokensOf(output) };
    }
    const tokens = this.tokensOf(output);
    if (request.newPassword === undefined) return { outcome: 'signed-in', tokens };
    return this.changePassword(ClientId, { ...request, newPassword: request.newPassword }, tokens.accessToken);
  }

  /**
   * Changes the password of a user signed in with `accessToken` (ChangePassword), then ends every session of the user
   * (GlobalSignOut with that token: Cognito revokes all their refresh tokens, this sign-in's too, as a new password
   * does locally) and signs in with the new password (USER_PASSWORD_AUTH), whose tokens it answers. In this order so
   * that every session opened with the old password, however late, ends too; the new sign-in waits SIGN_OUT_SETTLE_MS
   * after the sign-out, lest its tokens fall in the revoked second.
   * @throws UnauthorizedError saying the password was changed, when a step after the change is refused (the user
   *   disabled, deleted or reset meanwhile); otherwise as signIn.
   */
  private async changePassword(
    ClientId: string,
    request: SignInRequest & { newPassword: string },
    AccessToken: string,
  ): Promise<SignInOutcome> {
    const changed = await this.call('Password change', () =>
      this.client.send(
        new ChangePasswordCommand({ AccessToken, PreviousPassword: request.password, ProposedPassword: request.newPassword }),
      ),
    );
    if (changed === undefined) return { outcome: 'refused' };
    // From here the old password is refused: a throttled step says what to do instead of "retry".
    const signedOut = await this.call(
      'Sign-out of the other sessions',
      () => this.client.send(new GlobalSignOutCommand({ AccessToken })),
      'The password was changed, but too many requests kept your other sessions from being ended; sign in with the new password, and change it again to end them.',
    );
    if (signedOut === undefined) return this.refusedAfterChange();
    // Cognito revokes by the second: tokens issued within the second of a global sign-out are reported to come back
    // revoked, so the new sign-in waits until that second is surely over, by Cognito's clock too.
    await this.pause(SIGN_OUT_SETTLE_MS);
    const output = await this.call(
      'Sign-in with the new password',
      () =>
        this.client.send(
          new InitiateAuthCommand({
            ClientId,
            AuthFlow: 'USER_PASSWORD_AUTH',
            AuthParameters: { USERNAME: request.username, PASSWORD: request.newPassword },
          }),
        ),
      'The password was changed and your other sessions ended, but too many sign-in requests are under way; sign in with the new password shortly.',
    );
    if (output === undefined) return this.refusedAfterChange();
    return { outcome: 'signed-in', tokens: this.tokensOf(output) };
  }

  /**
   * A refusal after the password was changed (the user disabled, deleted or reset meanwhile): not "the password is
   * wrong", which would send the user back to the old one.
   * @throws UnauthorizedError (401) always.
   */
  private refusedAfterChange(): never {
    throw new UnauthorizedError(
      'Your password was changed, but signing in with it was refused; sign in with the new password, and ask an administrator if that is refused too.',
      null,
    );
  }

  /**
   * Renews an access token with `REFRESH_TOKEN_AUTH`: the pre-token-generation trigger runs again, so the token carries
   * the user's attributes as they are now.
   * @returns undefined when Cognito refuses the refresh token (unknown, expired, revoked; the user disabled or deleted).
   * @throws ServiceUnavailableError (503, Retry-After) when Cognito throttles.
   */
  async refresh(refreshToken: string): Promise<{ accessToken: string; expiresInSeconds: number } | undefined> {
    let output: InitiateAuthCommandOutput;
    try {
      output = await this.client.send(
        new InitiateAuthCommand({
          ClientId: this.clientId(),
          AuthFlow: 'REFRESH_TOKEN_AUTH',
          AuthParameters: { REFRESH_TOKEN: refreshToken },
        }),
      );
    } catch (error) {
      const name = nameOf(error);
      if (REFUSED_REFRESH.has(name)) {
        this.log.info('Refresh refused', { reason: name });
        return undefined;
      }
      if (THROTTLED.has(name)) throw new ServiceUnavailableError('Too many token requests; retry shortly.', THROTTLED_RETRY_AFTER_SECONDS);
      throw error;
    }
    const accessToken = output.AuthenticationResult?.AccessToken;
    if (accessToken === undefined)
      throw new Error(`Cognito answered REFRESH_TOKEN_AUTH without an access token (${output.ChallengeName}).`);
    return { accessToken, expiresInSeconds: output.AuthenticationResult?.ExpiresIn ?? ACCESS_TOKEN_LIFETIME_SECONDS };
  }

  /**
   * Revokes a refresh token with RevokeToken on the app client (token revocation is enabled on it, lib/identity.ts):
   * Cognito refuses it from then on, and so do the access tokens it issued, for Cognito's own APIs only (API Gateway
   * verifies them by signature until they expire).
   * @returns `unsupported` for an access or ID token (UnsupportedTokenTypeException), `revoked` otherwise, also for a
   *   token Cognito does not know (RFC 7009 §2.2).
   * @throws ServiceUnavailableError (503, Retry-After) when Cognito throttles; anything else as thrown.
   */
  async revoke(refreshToken: string): Promise<'revoked' | 'unsupported'> {
    try {
      await this.client.send(new RevokeTokenCommand({ ClientId: this.clientId(), Token: refreshToken }));
    } catch (error) {
      const name = nameOf(error);
      if (name === 'UnsupportedTokenTypeException') return 'unsupported';
      if (UNKNOWN_TO_REVOKE.has(name)) {
        this.log.info('Revocation of an unknown token', { reason: name });
        return 'revoked';
      }
      if (THROTTLED.has(name)) throw new ServiceUnavailableError('Too many token requests; retry shortly.', THROTTLED_RETRY_AFTER_SECONDS);
      throw error;
    }
    return 'revoked';
  }

  /**
   * Runs one Cognito call of a sign-in (`step` names it in the log).
   * @param throttled the detail of the ServiceUnavailableError when Cognito throttles the call.
   * @returns its output, or undefined when Cognito refuses the credentials (REFUSED_SIGN_IN).
   * @throws BadRequestError for a password the pool's policy refuses, or parameters Cognito refuses;
   *   ServiceUnavailableError when it throttles; anything else as thrown.
   */
  private async call<T>(step: string, send: () => Promise<T>, throttled = THROTTLED_SIGN_IN): Promise<T | undefined> {
    try {
      return await send();
    } catch (error) {
      const name = nameOf(error);
      if (REFUSED_SIGN_IN.has(name)) {
        this.log.info(`${step} refused`, { reason: name });
        return undefined;
      }
      if (name === 'InvalidPasswordException') throw passwordPolicyError();
      if (name === 'InvalidParameterException') throw new BadRequestError(`The sign-in request was refused: ${(error as Error).message}`);
      if (THROTTLED.has(name)) throw new ServiceUnavailableError(throttled, THROTTLED_RETRY_AFTER_SECONDS);
      throw error;
    }
  }

  /**
   * The tokens of a completed sign-in.
   * @throws UnauthorizedError when Cognito asks for another challenge (MFA, ...), which this endpoint cannot complete.
   */
  private tokensOf(output: {
    ChallengeName?: string;
    AuthenticationResult?: InitiateAuthCommandOutput['AuthenticationResult'];
  }): UserTokens {
    if (output.ChallengeName !== undefined) {
      this.log.info('Sign-in needs a challenge', { challenge: output.ChallengeName });
      throw new UnauthorizedError(
        `The user must complete the ${output.ChallengeName} challenge first, which this endpoint does not offer; ask an administrator.`,
        null,
      );
    }
    const result = output.AuthenticationResult;
    if (result?.AccessToken === undefined || result.RefreshToken === undefined)
      throw new Error('Cognito answered a sign-in without an access token or refresh token.');
    // ExpiresIn is the access token's lifetime (the app client's accessTokenValidity).
    return {
      accessToken: result.AccessToken,
      expiresInSeconds: result.ExpiresIn ?? ACCESS_TOKEN_LIFETIME_SECONDS,
      refreshToken: result.RefreshToken,
    };
  }
}
