/**
 * What the token endpoint does the same way locally (functions/handlers/auth-token.ts) and on AWS
 * (functions/handlers/auth-cognito-token.ts): telling its requests apart, the device's client credentials grant, the
 * refresh, and the token answer.
 */
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { RouteInput } from '../contract/route.js';
import { authRevoke, authToken } from '../contract/routes/service.js';
import type { IdentityProvider } from '../core/access/ports.js';
import { refreshUserToken, revokeUserToken } from '../core/access/user-tokens.js';
import { isApiClientId } from '../core/clients/model.js';
import { issueClientToken } from '../core/clients/tokens.js';
import { checkClientCredentialsGrant, issueDeviceToken } from '../core/devices/tokens.js';
import { OAuthError } from '../core/shared/errors.js';
import { clientCredentialsOf } from './client-credentials.js';
import { clientAuthentication, deviceTokenSigner } from './composition/identity.js';
import { storage } from './composition/storage.js';
import { deviceConfig } from './config.js';
import { jsonResponse, routeHandler } from './http.js';
import { type HttpHandler, type RouteDispatcher, routeDispatcher } from './router.js';

/** Any body of the token route, JSON or form. */
type TokenBody = RouteInput<typeof authToken>['body'];

/** A user's sign-in (JSON). */
export type SignInBody = Extract<TokenBody, { username: string }>;

/** A refresh (JSON or form, RFC 6749 §6). */
export type RefreshBody = Extract<TokenBody, { refresh_token: string }>;

/** The form body of the client credentials grant. */
export type ClientCredentialsForm = Exclude<TokenBody, SignInBody | RefreshBody>;

/**
 * What a token request asks for: a user's sign-in, a refresh, or a device's client credentials grant.
 * @throws OAuthError `invalid_request` for a refresh without its `refresh_token` (the form's schema lets it through as
 *   a grant it then does not know).
 */
export function tokenRequestOf(
  body: TokenBody,
):
  | { kind: 'sign-in'; body: SignInBody }
  | { kind: 'refresh'; body: RefreshBody }
  | { kind: 'client-credentials'; body: ClientCredentialsForm } {
  if ('username' in body) return { kind: 'sign-in', body };
  if ('refresh_token' in body) return { kind: 'refresh', body };
  if (body.grant_type === 'refresh_token')
    throw new OAuthError('invalid_request', 'refresh_token: the refresh grant needs the refresh token, of 1 to 8,192 characters.');
  return { kind: 'client-credentials', body };
}

/**
 * The answer to a refresh: `{ access_token, token_type, expires_in }` from `identity`.
 * @throws OAuthError `invalid_grant` (400) when the refresh token is refused; ServiceUnavailableError as the provider.
 */
export async function refreshResponse(identity: IdentityProvider, body: RefreshBody): Promise<APIGatewayProxyStructuredResultV2> {
  return tokenResponse(await refreshUserToken(identity, body.refresh_token));
}

/**
 * The token function's handler: POST /revoke (RFC 7009, on `identity`: 200 without a body, never cached, whether the
 * token was revoked or was not one to revoke; 400 `unsupported_token_type` for an access token) and `token`
 * (POST /token). One function serves both, locally and on AWS, told apart by the event's `routeKey` (routeDispatcher).
 */
export function tokenFunction(token: HttpHandler, identity: () => IdentityProvider | Promise<IdentityProvider>): RouteDispatcher {
  const revoke = routeHandler(authRevoke, async ({ body }) => {
    await revokeUserToken(await identity(), body.token);
    return { statusCode: 200, headers: { 'cache-control': 'no-store' } };
  });
  return routeDispatcher([
    [authToken, token],
    [authRevoke, revoke],
  ]);
}

/**
 * The client credentials grant (RFC 6749 §4.4) for the form, `Authorization` header (HTTP Basic client authentication,
 * read by clientCredentialsOf) and the caller's address (`sourceIp`, whose failed attempts are counted per client id):
 * an API client's id (`api_…`) is checked against the apiClients table (issueClientToken), any other as a device's
 * against the devices table (issueDeviceToken); either token is signed by deviceTokenSigner() (the local issuer's key,
 * or KMS on AWS), valid DEVICE_TOKEN_LIFETIME_SECONDS (at most 15 minutes).
 * @throws OAuthError (RFC 6749 §5.2: 400 invalid_request, unsupported_grant_type or invalid_scope, 401 invalid_client;
 *   429 or 503 temporarily_unavailable, answered with Retry-After).
 */
export async function grantClientCredentials(
  form: ClientCredentialsForm,
  authorization: string | undefined,
  sourceIp: string | undefined,
): Promise<{ accessToken: string; expiresInSeconds: number; scope?: string }> {
  // The grant first, as the grant itself checks it: another grant is unsupported whatever its credentials look like.
  checkClientCredentialsGrant(form.grant_type);
  const credentials = clientCredentialsOf({ clientId: form.client_id, clientSecret: form.client_secret }, authorization);
  const request = { grantType: form.grant_type, ...credentials, source: sourceIp };
  const signer = await deviceTokenSigner();
  const lifetime = deviceConfig().tokenLifetimeSeconds;
  if (isApiClientId(credentials.clientId)) {
    const clients = (await import('./composition/api-clients.js')).apiClientStore();
    const scope = form.scope === undefined ? {} : { scope: form.scope };
    return issueClientToken({ clients, signer, ...clientAuthentication() }, { ...request, ...scope }, lifetime);
  }
  return issueDeviceToken({ devices: storage().devices, signer, ...clientAuthentication() }, request, lifetime);
}

/**
 * The 200 answer of the token endpoint: `{ access_token, token_type: "Bearer", expires_in }` (seconds), with
 * `refresh_token` when there is one (a user's sign-in), never cached.
 */
export function tokenResponse(token: {
  accessToken: string;
  expiresInSeconds: number;
  refreshToken?: string;
  scope?: string;
}): APIGatewayProxyStructuredResultV2 {
  return jsonResponse(
    200,
    {
      access_token: token.accessToken,
      token_type: 'Bearer',
      expires_in: token.expiresInSeconds,
      ...(token.refreshToken === undefined ? {} : { refresh_token: token.refreshToken }),
      ...(token.scope === undefined ? {} : { scope: token.scope }),
    },
    { 'cache-control': 'no-store' },
  );
}
