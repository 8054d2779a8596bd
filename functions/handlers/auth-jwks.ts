import { authJwks } from '../contract/routes/service.js';
import { identityProvider } from '../platform/composition/identity.js';
import { jsonResponse, routeHandler } from '../platform/http.js';

/** GET {auth_url}/.well-known/jwks.json: the issuer's public keys. */
export const handler = routeHandler(authJwks, async () =>
  jsonResponse(200, (await identityProvider()).jwks(), {
    'cache-control': 'public, max-age=300',
    'content-type': 'application/jwk-set+json',
  }),
);
