/**
 * End-to-end: failed client authentications against one local service (`bin/local.ts`) whose window is 3 seconds
 * (CLIENT_FAILURE_WINDOW_SECONDS; the limit is the default 5). After 5 wrong secrets from an address a client id
 * answers 429 with Retry-After, also to the right secret, until the window closes; the same client from another
 * address (127.0.0.2, the same host through another loopback address) and another client from the same address are
 * not affected. A user's wrong passwords are counted the same way (problem+json answers). An over-long client id is
 * one answer by form and by HTTP Basic.
 */
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { expectOk } from '../../client/index.js';
import { expectDocumented } from './contract.js';
import { answerOf, clientFor, DEMO_PASSWORDS, deviceTokenRequest, eventually, type JsonResult, useLocalService } from './harness.js';

const WINDOW_SECONDS = 3;
const LIMIT = 5;

const local = useLocalService({ users: ['alice'], environment: { CLIENT_FAILURE_WINDOW_SECONDS: String(WINDOW_SECONDS) } });

/** Registers `deviceId` in acme and gives it credentials. */
async function deviceWithCredentials(deviceId: string): Promise<{ clientId: string; clientSecret: string }> {
  const dss = clientFor(local.service, local.tokens.alice);
  const path = { params: { path: { companyId: 'acme', deviceId } } };
  expectOk(await dss.main.PUT('/companies/{companyId}/resources/devices/{deviceId}', { ...path, body: { serial: `S-${deviceId}` } }));
  return expectOk(await dss.main.POST('/companies/{companyId}/resources/devices/{deviceId}/credentials', path));
}

/** A client credentials request in the form, from 127.0.0.1, as the status, headers and body. */
async function formToken(clientId: string, clientSecret: string): Promise<JsonResult> {
  return answerOf(await deviceTokenRequest(local.service, clientId, clientSecret));
}

/**
 * POST {auth}/token with `body` and `headers`, sent from the local address `from` (the source the gateway sees), its
 * answer checked against the document.
 */
function tokenFrom(from: string, body: string, headers: Record<string, string> = {}): Promise<JsonResult> {
  const url = new URL(`${local.service.auth}/token`);
  return new Promise((done, fail) => {
    const outgoing = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        localAddress: from,
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          text += chunk;
        });
        response.on('end', async () => {
          const answer = {
            status: response.statusCode ?? 0,
            headers: new Headers(Object.entries(response.headers).map(([name, value]) => [name, String(value)])),
            body: text === '' ? undefined : JSON.parse(text),
          };
          try {
            await expectDocumented('AuthToken', answer);
            done(answer);
          } catch (error) {
            fail(error);
          }
        });
      },
    );
    outgoing.on('error', fail);
    outgoing.end(body);
  });
}

const form = (clientId: string, clientSecret: string) =>
  new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }).toString();

describe('failed client authentications', () => {
  it('answers 429 with Retry-After after 5 wrong secrets, to the right secret too, until the window closes; nobody else is blocked', async () => {
    const kiosk = await deviceWithCredentials('e2e-limits-1');
    const neighbour = await deviceWithCredentials('e2e-limits-2');
    for (let attempt = 1; attempt <= LIMIT; attempt += 1) {
      const wrong = await formToken(kiosk.clientId, `wrong-${attempt}`);
      expect([wrong.status, wrong.body.error]).toEqual([401, 'invalid_client']);
    }
    const blocked = await formToken(kiosk.clientId, 'wrong-again');
    expect([blocked.status, blocked.body.error]).toEqual([429, 'temporarily_unavailable']);
    expect(blocked.headers.get('content-type')).toMatch(/^application\/json/);
    const retryAfter = Number(blocked.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(WINDOW_SECONDS);
    const blockedAt = Date.now();

    // The right secret from the same address waits for the window as well: checking it would cost the hash the
    // count is there to spare.
    const rightButBlocked = await formToken(kiosk.clientId, kiosk.clientSecret);
    expect([rightButBlocked.status, rightButBlocked.body.error]).toEqual([429, 'temporarily_unavailable']);
    // The same device from another address, and another device from this one, get their tokens.
    const elsewhere = await tokenFrom('127.0.0.2', form(kiosk.clientId, kiosk.clientSecret));
    expect(elsewhere.status).toBe(200);
    expect((await formToken(neighbour.clientId, neighbour.clientSecret)).status).toBe(200);

    // Once the window closes (Retry-After, as the client is told), the right secret works from this address again.
    let after: JsonResult | undefined;
    await eventually(
      async () => {
        after = await formToken(kiosk.clientId, kiosk.clientSecret);
        return after.status !== 429;
      },
      'the failure window to close',
      (retryAfter + 2) * 1000 - (Date.now() - blockedAt),
      250,
    );
    expect(after?.status).toBe(200);
    expect(Date.now() - blockedAt).toBeGreaterThanOrEqual((retryAfter - 1) * 1000);
    expect(after?.body).toMatchObject({ token_type: 'Bearer' });
  });

  it("counts a user's wrong passwords per address the same way: 429 problem+json with Retry-After, to the right password too", async () => {
    const json = { 'content-type': 'application/json' };
    const signIn = (from: string, password: string) => tokenFrom(from, JSON.stringify({ username: 'bob', password }), json);
    for (let attempt = 1; attempt <= LIMIT; attempt += 1) {
      const wrong = await signIn('127.0.0.3', `wrong-${attempt}`);
      expect([wrong.status, wrong.headers.get('content-type')]).toEqual([401, 'application/problem+json']);
    }
    const blocked = await signIn('127.0.0.3', DEMO_PASSWORDS.bob);
    expect([blocked.status, blocked.headers.get('content-type'), blocked.body.title]).toEqual([
      429,
      'application/problem+json',
      'Too Many Requests',
    ]);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(blocked.headers.get('retry-after'))).toBeLessThanOrEqual(WINDOW_SECONDS);
    expect((await signIn('127.0.0.4', DEMO_PASSWORDS.bob)).status).toBe(200);
  });

  it('answers an over-long client_id 401 invalid_client by form and by HTTP Basic alike', async () => {
    const longId = `acme~${'k'.repeat(300)}`;
    const byForm = await tokenFrom('127.0.0.1', form(longId, 'secret'));
    const basic = Buffer.from(`${encodeURIComponent(longId)}:secret`).toString('base64');
    const byBasic = await tokenFrom('127.0.0.1', 'grant_type=client_credentials', { authorization: `Basic ${basic}` });
    expect([byForm.status, byForm.body.error]).toEqual([401, 'invalid_client']);
    expect([byBasic.status, byBasic.body.error]).toEqual([401, 'invalid_client']);
    expect(byBasic.headers.get('www-authenticate')).toBe('Basic realm="device"');
  });
});
