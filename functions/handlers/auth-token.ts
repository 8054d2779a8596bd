import { authToken } from '../contract/routes/service.js';
import { signInUser } from '../core/access/user-tokens.js';
import { clientAuthentication, identityProvider } from '../platform/composition/identity.js';
import { routeHandler } from '../platform/http.js';
import { grantClientCredentials, refreshResponse, tokenFunction, tokenRequestOf, tokenResponse } from '../platform/token-grant.js';

/**
 * POST {auth_url}/token (docs/contract.md, "Tokens"), locally. A user: JSON `{ username, password, new_password? }`,
 * checked within the limits of secret checks (counted per username and address, hashed through the process's gate),
 * answered with an access token and a refresh token; refusals as problem+json (400 for a new password outside the
 * policy, 401 on bad credentials or with the `new_password_required` challenge, 429 or 503 with Retry-After). A
 * refresh (form or JSON, RFC 6749 §6): a new access token, or 400 `invalid_grant`. A device: the client credentials
 * grant (form, client authentication in the form or with HTTP Basic). Refused OAuth requests as RFC 6749 §5.2
 * `{ error, error_description }` (400 invalid_request, invalid_grant or unsupported_grant_type, 401 invalid_client,
 * 429 or 503 temporarily_unavailable). Either way `{ access_token, token_type: "Bearer", expires_in }`, never cached.
 */
const token = routeHandler(authToken, async ({ body }, _context, event) => {
  const sourceIp = event.requestContext?.http?.sourceIp;
  const request = tokenRequestOf(body);
  if (request.kind === 'client-credentials')
    return tokenResponse(await grantClientCredentials(request.body, event.headers.authorization, sourceIp));
  const identity = await identityProvider();
  if (request.kind === 'refresh') return refreshResponse(identity, request.body);
  const { username, password, new_password } = request.body;
  return tokenResponse(
    await signInUser(
      { identity, ...clientAuthentication() },
      { username, password, ...(new_password === undefined ? {} : { newPassword: new_password }), source: sourceIp },
    ),
  );
});

/**
 * The local authentication address's two POST routes, one function: POST {auth_url}/token (above) and
 * POST {auth_url}/revoke (RFC 7009: the refresh token is forgotten).
 */
export const handler = tokenFunction(token, identityProvider);
