import { identityProvider } from '../platform/composition.js';
import { jsonResponse, publicHttpHandler } from '../platform/http.js';

/** GET {auth_url}/.well-known/jwks.json: the issuer's public keys. */
export const handler = publicHttpHandler(async () =>
  jsonResponse(200, (await identityProvider()).jwks(), { 'cache-control': 'public, max-age=300', 'content-type': 'application/jwk-set+json' }),
);
