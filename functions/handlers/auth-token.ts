import { authToken } from '../contract/routes/service.js';
import { UnauthorizedError } from '../core/errors.js';
import { identityProvider } from '../platform/composition.js';
import { routeHandler } from '../platform/http.js';
import { grantDeviceToken, tokenResponse } from '../platform/token-grant.js';

/**
 * POST {auth_url}/token (docs/contract.md), locally. A user: JSON `{ username, password }`, 401 problem+json on bad
 * credentials. A device: the client credentials grant (form, client authentication in the form or with HTTP
 * Basic), refusals as RFC 6749 §5.2 `{ error, error_description }` (400 invalid_request or unsupported_grant_type,
 * 401 invalid_client). Either way `{ access_token, token_type: "Bearer", expires_in }`, never cached.
 */
export const handler = routeHandler(authToken, async ({ body }, _context, event) => {
  if (!('username' in body))
    return tokenResponse(await grantDeviceToken(body, event.headers.authorization, event.requestContext?.http?.sourceIp));
  const token = await (await identityProvider()).issueToken(body.username, body.password);
  if (token === undefined) throw new UnauthorizedError('The username or password is wrong.', null);
  return tokenResponse(token);
});
