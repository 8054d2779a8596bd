import { authOpenIdConfiguration, authServerMetadata } from '../contract/routes/discovery.js';
import { ROLES } from '../core/access/roles.js';
import { authConfig } from '../platform/config.js';
import { jsonResponse, routeHandler } from '../platform/http.js';
import { routeDispatcher } from '../platform/router.js';

/** How long clients may keep the document, seconds (it changes only with a new deployment). */
const CACHE_CONTROL = 'public, max-age=3600';

/**
 * The local issuer's metadata (`{auth_url}`, JWT_ISSUER: it signs users', devices' and API clients' tokens). Its
 * scopes are those an API client can be given (its role's), the one kind of client this grant is for besides devices.
 */
function serverMetadata(): Record<string, unknown> {
  const { issuer, jwksUrl } = authConfig();
  const authUrl = issuer.replace(/\/+$/, '');
  return {
    issuer,
    token_endpoint: `${authUrl}/token`,
    jwks_uri: jwksUrl,
    revocation_endpoint: `${authUrl}/revoke`,
    grant_types_supported: ['client_credentials', 'refresh_token'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    revocation_endpoint_auth_methods_supported: ['none'],
    scopes_supported: [...ROLES.operator],
    response_types_supported: ['token'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: ['ES256'],
  };
}

/**
 * GET {auth_url}/.well-known/oauth-authorization-server (RFC 8414) and GET {auth_url}/.well-known/openid-configuration
 * (the same document) of the local runtime: one function.
 */
export const handler = routeDispatcher(
  [authServerMetadata, authOpenIdConfiguration].map((route) => [
    route,
    routeHandler(route, async () => jsonResponse(200, serverMetadata(), { 'cache-control': CACHE_CONTROL })),
  ]),
);
