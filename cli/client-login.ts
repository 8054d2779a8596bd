/**
 * A client's `dss login`: the OAuth 2.0 client credentials grant (RFC 6749 §4.4) of a device or of an API client.
 * An API client (`api_…`) authenticates with HTTP Basic (RFC 6749 §2.3.1, `client_secret_basic`), a device in the
 * form as before. The secret is never stored: the stored login has no refresh token, so once its token expires the
 * next command says to log in again.
 */
import { type DssClient, expectOk, requestClientCredentialsToken } from '../client/index.js';
import { API_CLIENT_ID_PREFIX } from '../functions/core/clients/model.js';

/** A value form-urlencoded as RFC 6749 §2.3.1 asks for each half of the Basic credential (a space as `+`). */
function formEncoded(value: string): string {
  return new URLSearchParams([['', value]]).toString().slice(1);
}

/** The `Authorization` header of HTTP Basic client authentication: `Basic base64(urlencode(id) ":" urlencode(secret))`. */
export function basicAuthorization(clientId: string, clientSecret: string): string {
  return `Basic ${Buffer.from(`${formEncoded(clientId)}:${formEncoded(clientSecret)}`, 'utf8').toString('base64')}`;
}

/** Whether a client id is an API client's (`api_…`) rather than a device's (`{company}~{device}`). */
export function isApiClientId(clientId: string): boolean {
  return clientId.startsWith(API_CLIENT_ID_PREFIX);
}

/**
 * Asks `{auth_url}/token` for an access token with the client credentials grant: an API client's with HTTP Basic,
 * a device's with its id and secret in the form.
 * @returns the token (no refresh token)
 * @throws ApiError with the service's OAuth error (401 `invalid_client`: unknown client, wrong secret, disabled)
 */
export async function clientCredentialsToken(
  auth: DssClient['auth'],
  clientId: string,
  clientSecret: string,
): Promise<{ access_token: string; expires_in: number }> {
  if (!isApiClientId(clientId)) return expectOk(await requestClientCredentialsToken(auth, clientId, clientSecret));
  return expectOk(
    await auth.POST('/token', {
      body: { grant_type: 'client_credentials' },
      bodySerializer: (body) => new URLSearchParams(body as Record<string, string>).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuthorization(clientId, clientSecret) },
    }),
  ) as { access_token: string; expires_in: number };
}

/**
 * What the next command says when the stored login is a client's (no refresh token) and its token has expired at
 * `now` (epoch ms): to log in again, naming how. Undefined while it is valid, and for a user's login (renewed by its
 * refresh token).
 */
export function expiredClientLogin(login: { subject: string; expiresAt: string; refreshToken?: string }, now: number): string | undefined {
  if (login.refreshToken !== undefined || !login.subject.startsWith('client:')) return undefined;
  const expiresAt = Date.parse(login.expiresAt);
  if (!Number.isFinite(expiresAt) || expiresAt > now) return undefined;
  const clientId = login.subject.slice('client:'.length);
  const how = isApiClientId(clientId) ? `--client-id ${clientId} --client-secret-stdin` : `--client-id ${clientId} --client-secret …`;
  return `The stored token of ${login.subject} expired at ${login.expiresAt}, and a client's login is not renewed (its secret is not stored): log in again with dss login ${how}.`;
}
