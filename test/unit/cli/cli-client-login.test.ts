/**
 * A client's `dss login` (cli/client-login.ts): an API client's token asked with HTTP Basic client authentication
 * (its id and secret form-urlencoded, then base64), a device's with its credentials in the form; and the note a
 * command gives once a client's stored token has expired (its secret is never stored, so nothing renews it).
 */
import { describe, expect, it } from 'vitest';
import { basicAuthorization, clientCredentialsToken, expiredClientLogin, isApiClientId } from '../../../cli/client-login.js';
import { dssProgram } from '../../../cli/main.js';
import { ApiError, createDssClient } from '../../../client/index.js';

const API_CLIENT = 'api_01JPA2B4D6F8H0K2M4P6R8T0W2';

/** A token endpoint that records each request and answers `answer`. */
function tokenEndpoint(answer: { status: number; body: unknown }) {
  const seen: { url: string; authorization: string | null; contentType: string | null; body: string }[] = [];
  const fetch = async (input: Request | string | URL, init?: RequestInit): Promise<Response> => {
    const request = input instanceof Request ? input : new Request(input, init);
    seen.push({
      url: request.url,
      authorization: request.headers.get('authorization'),
      contentType: request.headers.get('content-type'),
      body: await request.text(),
    });
    return new Response(JSON.stringify(answer.body), { status: answer.status, headers: { 'content-type': 'application/json' } });
  };
  const auth = createDssClient({
    baseUrl: 'http://main.test',
    uploadUrl: 'http://upload.test',
    authUrl: 'http://auth.test',
    fetch: fetch as typeof globalThis.fetch,
  }).auth;
  return { auth, seen };
}

describe("a client's dss login", () => {
  it('tells an API client id from a device id', () => {
    expect(isApiClientId(API_CLIENT)).toBe(true);
    expect(isApiClientId('acme~kiosk-1')).toBe(false);
  });

  it('builds the Basic credential of RFC 6749 §2.3.1: each half form-urlencoded, then base64', () => {
    const header = basicAuthorization(API_CLIENT, 'a b:c+d/é');
    expect(header.startsWith('Basic ')).toBe(true);
    const decoded = Buffer.from(header.slice('Basic '.length), 'base64').toString('utf8');
    expect(decoded).toBe(`${API_CLIENT}:a+b%3Ac%2Bd%2F%C3%A9`);
    const [id, secret] = decoded.split(':').map((half) => decodeURIComponent(half.replace(/\+/g, ' ')));
    expect([id, secret]).toEqual([API_CLIENT, 'a b:c+d/é']);
  });

  it("asks an API client's token with HTTP Basic and only the grant in the form", async () => {
    const { auth, seen } = tokenEndpoint({ status: 200, body: { access_token: 'jwt', token_type: 'Bearer', expires_in: 900 } });
    const token = await clientCredentialsToken(auth, API_CLIENT, 'the-secret');
    expect(token).toMatchObject({ access_token: 'jwt', expires_in: 900 });
    expect(seen).toHaveLength(1);
    expect(seen[0]?.url).toBe('http://auth.test/token');
    expect(seen[0]?.contentType).toBe('application/x-www-form-urlencoded');
    expect(seen[0]?.authorization).toBe(basicAuthorization(API_CLIENT, 'the-secret'));
    expect(Object.fromEntries(new URLSearchParams(seen[0]?.body))).toEqual({ grant_type: 'client_credentials' });
  });

  it("asks a device's token with its credentials in the form, as before", async () => {
    const { auth, seen } = tokenEndpoint({ status: 200, body: { access_token: 'jwt', token_type: 'Bearer', expires_in: 3600 } });
    await clientCredentialsToken(auth, 'acme~kiosk-1', 'device-secret');
    expect(seen[0]?.authorization).toBeNull();
    expect(Object.fromEntries(new URLSearchParams(seen[0]?.body))).toEqual({
      grant_type: 'client_credentials',
      client_id: 'acme~kiosk-1',
      client_secret: 'device-secret',
    });
  });

  it("fails with the service's OAuth error when the client is refused", async () => {
    const { auth } = tokenEndpoint({ status: 401, body: { error: 'invalid_client', error_description: 'The client is disabled.' } });
    const refused = clientCredentialsToken(auth, API_CLIENT, 'wrong');
    await expect(refused).rejects.toBeInstanceOf(ApiError);
    await expect(refused).rejects.toThrow(/disabled/);
  });

  it("says to log in again, naming how, once a client's stored token has expired; never for a user's login", () => {
    const expiresAt = '2026-03-01T10:15:00.000Z';
    const at = (iso: string) => Date.parse(iso);
    const apiLogin = { subject: `client:${API_CLIENT}`, expiresAt };
    expect(expiredClientLogin(apiLogin, at('2026-03-01T10:14:59.000Z'))).toBeUndefined();
    const message = expiredClientLogin(apiLogin, at('2026-03-01T10:15:00.000Z'));
    expect(message).toContain(`expired at ${expiresAt}`);
    expect(message).toContain(`dss login --client-id ${API_CLIENT} --client-secret-stdin`);
    expect(expiredClientLogin({ subject: 'client:acme~kiosk-1', expiresAt }, at('2026-03-01T11:00:00.000Z'))).toContain(
      'dss login --client-id acme~kiosk-1 --client-secret',
    );
    // A user's login is renewed by its refresh token instead.
    expect(expiredClientLogin({ subject: 'alice', expiresAt, refreshToken: 'r' }, at('2026-03-01T11:00:00.000Z'))).toBeUndefined();
    expect(expiredClientLogin({ subject: 'alice', expiresAt }, at('2026-03-01T11:00:00.000Z'))).toBeUndefined();
  });

  it('offers --client-secret-stdin on dss login', () => {
    const login = dssProgram().commands.find((command) => command.name() === 'login');
    expect(login?.options.map((option) => option.long)).toEqual(expect.arrayContaining(['--client-id', '--client-secret-stdin']));
  });
});
