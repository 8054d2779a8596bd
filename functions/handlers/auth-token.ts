import { authToken } from '../contract/routes/service.js';
import { issueUserToken } from '../core/access/user-tokens.js';
import { clientAuthentication, identityProvider } from '../platform/composition/identity.js';
import { routeHandler } from '../platform/http.js';
import { grantDeviceToken, tokenResponse } from '../platform/token-grant.js';

/**
 * POST {auth_url}/token (docs/contract.md), locally. A user: JSON `{ username, password }`, checked within the limits
 * of secret checks (counted per username and address, hashed through the process's gate), refusals as problem+json
 * (401 on bad credentials, 429 or 503 with Retry-After). A device: the client credentials grant (form, client
 * authentication in the form or with HTTP Basic), refusals as RFC 6749 §5.2 `{ error, error_description }` (400
 * invalid_request or unsupported_grant_type, 401 invalid_client, 429 or 503 temporarily_unavailable). Either way
 * `{ access_token, token_type: "Bearer", expires_in }`, never cached.
 */
export const handler = routeHandler(authToken, async ({ body }, _context, event) => {
  const sourceIp = event.requestContext?.http?.sourceIp;
  if (!('username' in body)) return tokenResponse(await grantDeviceToken(body, event.headers.authorization, sourceIp));
  const identity = await identityProvider();
  return tokenResponse(
    await issueUserToken({ identity, ...clientAuthentication() }, { username: body.username, password: body.password, source: sourceIp }),
  );
});
