import { authToken } from '../contract/routes/service.js';
import { signInWithProvider } from '../core/access/user-tokens.js';
import { cognitoIdentityProvider } from '../platform/composition/cognito.js';
import { routeHandler } from '../platform/http.js';
import { grantClientCredentials, refreshResponse, tokenFunction, tokenRequestOf, tokenResponse } from '../platform/token-grant.js';

/**
 * POST {auth_url}/token on AWS, with the local endpoint's contract (functions/handlers/auth-token.ts): a user's
 * `{ username, password, new_password? }` signs in on the Cognito app client COGNITO_CLIENT_ID (401 problem+json on
 * bad credentials or with the `new_password_required` challenge, 400 for a new password outside the policy, 503 when
 * Cognito throttles); a refresh (form or JSON) is Cognito's REFRESH_TOKEN_AUTH (400 `invalid_grant` when refused); a
 * device's client credentials grant (form or HTTP Basic) is checked against the devices table and signed with the KMS
 * key DEVICE_TOKEN_KEY_ARN (RFC 6749 §5.2 refusals). Either way `{ access_token, token_type: "Bearer", expires_in }`,
 * never cached.
 */
const token = routeHandler(authToken, async ({ body }, _context, event) => {
  const request = tokenRequestOf(body);
  if (request.kind === 'client-credentials')
    return tokenResponse(await grantClientCredentials(request.body, event.headers.authorization, event.requestContext?.http?.sourceIp));
  if (request.kind === 'refresh') return refreshResponse(cognitoIdentityProvider(), request.body);
  const { username, password, new_password } = request.body;
  return tokenResponse(
    await signInWithProvider(cognitoIdentityProvider(), {
      username,
      password,
      ...(new_password === undefined ? {} : { newPassword: new_password }),
    }),
  );
});

/**
 * The authentication address's two function routes on AWS: POST {auth_url}/token (above) and POST {auth_url}/revoke,
 * Cognito's RevokeToken on the app client (503 when Cognito throttles).
 */
export const handler = tokenFunction(token, cognitoIdentityProvider);
