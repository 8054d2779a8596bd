/**
 * The identity provider on AWS: Cognito signs users in (USER_PASSWORD_AUTH on the app client) and applies its own
 * protections; the access token it answers is the one API Gateway's JWT authorizer verifies.
 */
import { InitiateAuthCommand, type InitiateAuthCommandOutput } from '@aws-sdk/client-cognito-identity-provider';
import type { IdentityProvider } from '../../core/access/ports.js';
import { BadRequestError, ServiceUnavailableError, UnauthorizedError } from '../../core/shared/errors.js';

/** Cognito errors that mean "these credentials do not sign in": one 401, whatever the reason (logged, never shown). */
const REFUSED_SIGN_IN = new Set([
  'NotAuthorizedException',
  'UserNotFoundException',
  'UserNotConfirmedException',
  'PasswordResetRequiredException',
]);

/** Cognito throttling: the client should retry. */
const THROTTLED = new Set(['TooManyRequestsException', 'LimitExceededException', 'TooManyFailedAttemptsException']);

/**
 * A Cognito sign-in's answer: the access token (its `client_id` is the app client id, its `scope` and `companies`
 * claims come from the pre-token-generation trigger) and its lifetime, seconds.
 */
export interface IssuedToken {
  accessToken: string;
  expiresInSeconds: number;
}

/** The part of the Cognito client the sign-in uses (a CognitoIdentityProviderClient, or a fake in tests). */
export interface InitiateAuthClient {
  send(command: InitiateAuthCommand): Promise<InitiateAuthCommandOutput>;
}

/** Where the adapter reports why a sign-in was refused or needs a challenge (the service's logger). */
export interface SignInLog {
  info(message: string, attributes: Record<string, unknown>): void;
}

/** IdentityProvider over Cognito's InitiateAuth. */
export class CognitoIdentityProvider implements IdentityProvider {
  /**
   * @param client the Cognito client (traced by the composition root).
   * @param clientId the app client (COGNITO_CLIENT_ID), read on each sign-in.
   * @param log where refusals and challenges are reported (never shown to the caller).
   */
  constructor(
    private readonly client: InitiateAuthClient,
    private readonly clientId: () => string,
    private readonly log: SignInLog,
  ) {}

  /**
   * Signs `username` in with `USER_PASSWORD_AUTH` on the app client and returns its access token: the token the
   * pre-token-generation trigger gave the user's scopes and `companies`, which API Gateway's JWT authorizer verifies
   * (issuer, `client_id` as audience, expiry, the route's scope) before any function runs.
   * @returns undefined for wrong credentials, an unknown, unconfirmed or reset user.
   * @throws UnauthorizedError (401) when the user has a challenge to complete first.
   * @throws BadRequestError (400) when Cognito refuses the parameters.
   * @throws ServiceUnavailableError (503, Retry-After) when Cognito throttles.
   */
  async issueToken(username: string, password: string): Promise<IssuedToken | undefined> {
    const clientId = this.clientId();
    let output: InitiateAuthCommandOutput;
    try {
      output = await this.client.send(
        new InitiateAuthCommand({
          ClientId: clientId,
          AuthFlow: 'USER_PASSWORD_AUTH',
          AuthParameters: { USERNAME: username, PASSWORD: password },
        }),
      );
    } catch (error) {
      const name = (error as { name?: string }).name ?? '';
      if (REFUSED_SIGN_IN.has(name)) {
        this.log.info('Sign-in refused', { reason: name });
        return undefined;
      }
      if (name === 'InvalidParameterException') throw new BadRequestError(`The sign-in request was refused: ${(error as Error).message}`);
      if (THROTTLED.has(name)) throw new ServiceUnavailableError('Too many sign-in requests; retry shortly.', 5);
      throw error;
    }
    if (output.ChallengeName !== undefined) {
      this.log.info('Sign-in needs a challenge', { challenge: output.ChallengeName });
      throw new UnauthorizedError(
        `The user must complete the ${output.ChallengeName} challenge first; an administrator can set a permanent password ` +
          '(aws cognito-idp admin-set-user-password --permanent).',
        null,
      );
    }
    const accessToken = output.AuthenticationResult?.AccessToken;
    if (accessToken === undefined) throw new Error('Cognito answered InitiateAuth without an access token.');
    // ExpiresIn is the access token's lifetime (the app client's accessTokenValidity).
    return { accessToken, expiresInSeconds: output.AuthenticationResult?.ExpiresIn ?? 3600 };
  }
}
