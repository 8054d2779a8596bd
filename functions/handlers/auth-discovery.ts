import { DEVICE_ISSUER_PATH } from '../contract/routes/device-issuer.js';
import { authOpenIdConfiguration, authServerMetadata } from '../contract/routes/discovery.js';
import { DEVICE_SCOPE, SCOPES } from '../core/shared/principal.js';
import { authConfig, deviceIssuerConfig } from '../platform/config.js';
import { jsonResponse, routeHandler } from '../platform/http.js';
import { routeDispatcher } from '../platform/router.js';

/** How long clients may keep the document, seconds (it changes only with a new deployment). */
const CACHE_CONTROL = 'public, max-age=3600';

/**
 * The metadata of the issuer of client tokens: locally the local issuer (`{auth_url}`, JWT_ISSUER); on AWS
 * (DEVICE_TOKEN_KEY_ARN set) the device issuer `{auth_url}/device`, whose KMS key signs devices' and API clients'
 * tokens.
 */
function serverMetadata(): Record<string, unknown> {
  const onAws = process.env.DEVICE_TOKEN_KEY_ARN !== undefined;
  const issuer = onAws ? deviceIssuerConfig().issuer : authConfig().issuer.replace(/\/+$/, '');
  const authUrl = onAws && issuer.endsWith(DEVICE_ISSUER_PATH) ? issuer.slice(0, -DEVICE_ISSUER_PATH.length) : issuer;
  return {
    issuer,
    token_endpoint: `${authUrl}/token`,
    jwks_uri: onAws ? `${issuer}/.well-known/jwks.json` : authConfig().jwksUrl,
    revocation_endpoint: `${authUrl}/revoke`,
    grant_types_supported: ['client_credentials', 'refresh_token'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    revocation_endpoint_auth_methods_supported: ['none'],
    scopes_supported: [...SCOPES, DEVICE_SCOPE],
    response_types_supported: ['token'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: ['ES256'],
  };
}

/**
 * GET {auth_url}/.well-known/oauth-authorization-server (RFC 8414) and GET {auth_url}/.well-known/openid-configuration
 * (the same document): one function.
 */
export const handler = routeDispatcher([
  [
    authServerMetadata,
    routeHandler(authServerMetadata, async () => jsonResponse(200, serverMetadata(), { 'cache-control': CACHE_CONTROL })),
  ],
  [
    authOpenIdConfiguration,
    routeHandler(authOpenIdConfiguration, async () => jsonResponse(200, serverMetadata(), { 'cache-control': CACHE_CONTROL })),
  ],
]);
