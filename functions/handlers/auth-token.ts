import { authToken } from '../contract/routes/service.js';
import { UnauthorizedError } from '../core/errors.js';
import { identityProvider } from '../platform/composition.js';
import { jsonResponse, routeHandler } from '../platform/http.js';

/**
 * POST {auth_url}/token with `{ username, password }` → `{ access_token, token_type: "Bearer", expires_in }`
 * (docs/contract.md); 401 problem+json on bad credentials, 400 on a malformed body.
 */
export const handler = routeHandler(authToken, async ({ body }) => {
  const token = await (await identityProvider()).issueToken(body.username, body.password);
  if (token === undefined) throw new UnauthorizedError('The username or password is wrong.', null);
  return jsonResponse(
    200,
    { access_token: token.accessToken, token_type: 'Bearer', expires_in: token.expiresInSeconds },
    { 'cache-control': 'no-store' },
  );
});
