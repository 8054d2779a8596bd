import { authToken } from '../contract/routes/service.js';
import { issueDeviceToken } from '../core/device-tokens.js';
import { UnauthorizedError } from '../core/errors.js';
import { deviceTokenSigner, identityProvider, services } from '../platform/composition.js';
import { deviceConfig } from '../platform/config.js';
import { jsonResponse, routeHandler } from '../platform/http.js';

/**
 * POST {auth_url}/token (docs/contract.md), locally. A user: JSON `{ username, password }`, 401 problem+json on bad
 * credentials. A device: the client credentials grant (form, client authentication in the form or with HTTP
 * Basic), refusals as RFC 6749 §5.2 `{ error, error_description }` (400 invalid_request or unsupported_grant_type,
 * 401 invalid_client). Either way `{ access_token, token_type: "Bearer", expires_in }`, never cached.
 */
export const handler = routeHandler(authToken, async ({ body }, _context, event) => {
  let token: { accessToken: string; expiresInSeconds: number } | undefined;
  if ('username' in body) {
    token = await (await identityProvider()).issueToken(body.username, body.password);
    if (token === undefined) throw new UnauthorizedError('The username or password is wrong.', null);
  } else {
    token = await issueDeviceToken(
      { devices: services().devices, signer: await deviceTokenSigner() },
      {
        grantType: body.grant_type,
        clientId: body.client_id,
        clientSecret: body.client_secret,
        authorization: event.headers.authorization,
      },
      deviceConfig().tokenLifetimeSeconds,
    );
  }
  return jsonResponse(
    200,
    { access_token: token.accessToken, token_type: 'Bearer', expires_in: token.expiresInSeconds },
    { 'cache-control': 'no-store' },
  );
});
