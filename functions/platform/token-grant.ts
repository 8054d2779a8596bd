/**
 * What the token endpoint does the same way locally (functions/handlers/auth-token.ts) and on AWS
 * (functions/handlers/auth-cognito-token.ts): the device's client credentials grant, and the token answer.
 */
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { RouteInput } from '../contract/route.js';
import type { authToken } from '../contract/routes/service.js';
import { issueDeviceToken } from '../core/devices/tokens.js';
import { clientAuthentication, deviceTokenSigner } from './composition/identity.js';
import { storage } from './composition/storage.js';
import { deviceConfig } from './config.js';
import { jsonResponse } from './http.js';

/** The form body of the client credentials grant (the token route's non-JSON body). */
export type ClientCredentialsForm = Exclude<RouteInput<typeof authToken>['body'], { username: string }>;

/**
 * Issues a device token for the grant's form, `Authorization` header (HTTP Basic client authentication) and the
 * caller's address (`sourceIp`, whose failed attempts are counted per client id), checked against the devices table
 * and signed by deviceTokenSigner() (the local issuer's key, or KMS on AWS), valid DEVICE_TOKEN_LIFETIME_SECONDS.
 * @throws OAuthError (RFC 6749 §5.2: 400 invalid_request or unsupported_grant_type, 401 invalid_client; 429 or 503
 *   temporarily_unavailable with Retry-After).
 */
export async function grantDeviceToken(
  form: ClientCredentialsForm,
  authorization: string | undefined,
  sourceIp: string | undefined,
): Promise<{ accessToken: string; expiresInSeconds: number }> {
  return issueDeviceToken(
    { devices: storage().devices, signer: await deviceTokenSigner(), ...clientAuthentication() },
    { grantType: form.grant_type, clientId: form.client_id, clientSecret: form.client_secret, authorization, source: sourceIp },
    deviceConfig().tokenLifetimeSeconds,
  );
}

/** The 200 answer of the token endpoint: `{ access_token, token_type: "Bearer", expires_in }` (seconds), never cached. */
export function tokenResponse(token: { accessToken: string; expiresInSeconds: number }): APIGatewayProxyStructuredResultV2 {
  return jsonResponse(
    200,
    { access_token: token.accessToken, token_type: 'Bearer', expires_in: token.expiresInSeconds },
    { 'cache-control': 'no-store' },
  );
}
