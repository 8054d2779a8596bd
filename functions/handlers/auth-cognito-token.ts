import { authToken } from '../contract/routes/service.js';
import { UnauthorizedError } from '../core/shared/errors.js';
import { cognitoIdentityProvider } from '../platform/composition/cognito.js';
import { routeHandler } from '../platform/http.js';
import { grantDeviceToken, tokenResponse } from '../platform/token-grant.js';

/**
 * A user's sign-in on Cognito: its access token (the pre-token-generation trigger gave it the user's scopes and
 * `companies`) and lifetime, seconds.
 * @throws UnauthorizedError (401) for wrong credentials, an unknown, unconfirmed or reset user, or a pending challenge;
 *   BadRequestError (400) when Cognito refuses the parameters; ServiceUnavailableError (503) when Cognito throttles.
 */
async function signIn(username: string, password: string): Promise<{ accessToken: string; expiresInSeconds: number }> {
  const token = await cognitoIdentityProvider().issueToken(username, password);
  if (token === undefined) throw new UnauthorizedError('The username or password is wrong.', null);
  return token;
}

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
      ? await signIn(body.username, body.password)
      : await grantDeviceToken(body, event.headers.authorization, event.requestContext?.http?.sourceIp),
  ),
);
