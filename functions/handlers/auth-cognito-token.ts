import {
  CognitoIdentityProviderClient,
  InitiateAuthCommand,
  type InitiateAuthCommandOutput,
} from '@aws-sdk/client-cognito-identity-provider';
import { BadRequestError, ServiceUnavailableError, UnauthorizedError } from '../core/errors.js';
import { authToken } from '../contract/routes/service.js';
import { cognitoClientId } from '../platform/config.js';
import { routeHandler } from '../platform/http.js';
import { grantDeviceToken, tokenResponse } from '../platform/token-grant.js';
import { logger } from '../platform/logger.js';
import { traced } from '../platform/observability.js';

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
 * The token answer of the local endpoint: the Cognito access token (its `client_id` is the app client id, its `scope`
 * and `companies` claims come from the pre-token-generation trigger) and its lifetime.
 */
export interface IssuedToken {
  accessToken: string;
  expiresInSeconds: number;
}

/** The part of the Cognito client the token endpoint uses (tests pass a fake). */
export interface InitiateAuthClient {
  send(command: InitiateAuthCommand): Promise<InitiateAuthCommandOutput>;
}

/**
 * Signs `username` in with `USER_PASSWORD_AUTH` on the app client `clientId` and returns its access token: the token
 * the pre-token-generation trigger gave the user's scopes and `companies`, which API Gateway's JWT authorizer verifies
 * (issuer, `client_id` as audience, expiry, the route's scope) before any function runs.
 * @throws UnauthorizedError (401) for wrong credentials, an unknown, unconfirmed or reset user, or a pending challenge.
 * @throws BadRequestError (400) when Cognito refuses the parameters.
 * @throws ServiceUnavailableError (503, Retry-After) when Cognito throttles.
 */
export async function signInWithCognito(
  client: InitiateAuthClient,
  clientId: string,
  username: string,
  password: string,
): Promise<IssuedToken> {
  let output: InitiateAuthCommandOutput;
  try {
    output = await client.send(
      new InitiateAuthCommand({
        ClientId: clientId,
        AuthFlow: 'USER_PASSWORD_AUTH',
        AuthParameters: { USERNAME: username, PASSWORD: password },
      }),
    );
  } catch (error) {
    const name = (error as { name?: string }).name ?? '';
    if (REFUSED_SIGN_IN.has(name)) {
      logger.info('Sign-in refused', { reason: name });
      throw new UnauthorizedError('The username or password is wrong.', null);
    }
    if (name === 'InvalidParameterException') throw new BadRequestError(`The sign-in request was refused: ${(error as Error).message}`);
    if (THROTTLED.has(name)) throw new ServiceUnavailableError('Too many sign-in requests; retry shortly.', 5);
    throw error;
  }
  if (output.ChallengeName !== undefined) {
    logger.info('Sign-in needs a challenge', { challenge: output.ChallengeName });
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

const cognito = traced(new CognitoIdentityProviderClient({}));

/**
 * POST {auth_url}/token on AWS, with the local endpoint's contract (functions/handlers/auth-token.ts): a user's
 * `{ username, password }` signs in on the Cognito app client COGNITO_CLIENT_ID (401 problem+json on bad
 * credentials); a device's client credentials grant (form or HTTP Basic) is checked against the devices table and
 * signed with the KMS key DEVICE_TOKEN_KEY_ARN (RFC 6749 §5.2 refusals). Either way
 * `{ access_token, token_type: "Bearer", expires_in }`, never cached.
 */
export const handler = routeHandler(authToken, async ({ body }, _context, event) =>
  tokenResponse(
    'username' in body
      ? await signInWithCognito(cognito, cognitoClientId(), body.username, body.password)
      : await grantDeviceToken(body, event.headers.authorization, event.requestContext?.http?.sourceIp),
  ),
);
