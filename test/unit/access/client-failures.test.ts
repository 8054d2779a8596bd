/**
 * Failed client authentications (functions/core/devices/tokens.ts, functions/core/access/client-failures.ts): per client id and source, a
 * key at its limit answers 429 until its window closes, without a hash; another source or another client is not
 * affected; a success clears the count; the verification gate answers 503 when full. An injected clock and a counting
 * verifier, no timing.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { BoundedVerificationGate } from '../../../functions/adapters/verification-gate.js';
import { clientSourceOf, DEFAULT_CLIENT_FAILURE_POLICY } from '../../../functions/core/access/client-failures.js';
import type { StoredDevice } from '../../../functions/core/devices/model.js';
import { type ClientCredentialsRequest, issueDeviceToken, newDeviceCredential } from '../../../functions/core/devices/tokens.js';
import { OAuthError } from '../../../functions/core/shared/errors.js';
import { oauthErrorResponse } from '../../../functions/platform/problem.js';
import { InMemoryClientFailureStore } from '../../support/client-failures.js';

const T0 = Date.parse('2026-01-02T03:04:05.000Z');
const DEVICE_ADDRESS = '198.51.100.7';
const ATTACKER_ADDRESS = '203.0.113.9';

let secret: string;
let devices: StoredDevice[];

beforeAll(async () => {
  devices = [];
  for (const id of ['kiosk-1', 'kiosk-2']) {
    const issued = await newDeviceCredential(`01JCRED${id.toUpperCase().replace('-', '')}00000000000`, '2026-01-01T00:00:00.000Z');
    secret = issued.secret;
    devices.push({
      id,
      company: 'acme',
      serial: id,
      created: '2026-01-01T00:00:00.000Z',
      updated: '2026-01-01T00:00:00.000Z',
      connection: { state: 'UNKNOWN' },
      credential: { ...issued.credential, secretHash: `hash-of-${id}` },
    });
  }
});

/** The grant with fakes: a clock that tests move, a verifier that counts hashes ("hash-of-<id>" matches SECRET). */
function world(gate = new BoundedVerificationGate()) {
  let now = T0;
  const hashes: string[] = [];
  const reads: string[] = [];
  const failures = new InMemoryClientFailureStore();
  const dependencies = {
    devices: {
      get: async (company: string, deviceId: string) => {
        reads.push(deviceId);
        return devices.find((device) => device.company === company && device.id === deviceId);
      },
    },
    signer: { sign: async () => 'token' },
    failures,
    gate,
    policy: DEFAULT_CLIENT_FAILURE_POLICY,
    now: () => now,
    verify: async (candidate: string, stored: string) => {
      hashes.push(stored);
      return candidate === secret && stored.startsWith('hash-of-');
    },
  };
  /** The status, OAuth error and Retry-After the token endpoint would answer. */
  const ask = async (deviceId: string, candidate: string, source: string, extra: Partial<ClientCredentialsRequest> = {}) => {
    try {
      await issueDeviceToken(
        dependencies,
        { grantType: 'client_credentials', clientId: `acme~${deviceId}`, clientSecret: candidate, source, ...extra },
        900,
      );
      return { status: 200 };
    } catch (error) {
      if (!(error instanceof OAuthError)) throw error;
      const response = oauthErrorResponse(error);
      const retryAfter = response.headers?.['Retry-After'];
      return {
        status: response.statusCode,
        error: JSON.parse(response.body as string).error as string,
        ...(retryAfter === undefined ? {} : { retryAfter: Number(retryAfter) }),
      };
    }
  };
  return { dependencies, failures, hashes, reads, ask, advance: (ms: number) => (now += ms) };
}

describe('failed client authentications', () => {
  it('answers 429 with Retry-After (seconds to the end of the window) after 5 failures, with no read of the device and no hash', async () => {
    const w = world();
    for (let attempt = 1; attempt <= 5; attempt += 1) {
      expect(await w.ask('kiosk-1', `wrong-${attempt}`, ATTACKER_ADDRESS)).toEqual({ status: 401, error: 'invalid_client' });
      w.advance(10_000);
    }
    expect(w.hashes).toHaveLength(5);
    // The window opened at the first failure (T0) and lasts 300 s; 50 s have passed.
    expect(await w.ask('kiosk-1', 'wrong-6', ATTACKER_ADDRESS)).toEqual({ status: 429, error: 'temporarily_unavailable', retryAfter: 250 });
    expect(w.hashes).toHaveLength(5);
    expect(w.reads).toHaveLength(5);
  });

  it('keeps refusing the right secret from that address until the window closes, then accepts it and forgets the failures', async () => {
    const w = world();
    for (let attempt = 1; attempt <= 5; attempt += 1) await w.ask('kiosk-1', 'wrong', ATTACKER_ADDRESS);
    w.advance(299_000);
    expect(await w.ask('kiosk-1', secret, ATTACKER_ADDRESS)).toEqual({ status: 429, error: 'temporarily_unavailable', retryAfter: 1 });
    w.advance(1_000);
    expect(await w.ask('kiosk-1', secret, ATTACKER_ADDRESS)).toEqual({ status: 200 });
    // A new failure opens a new window: the old count is gone.
    expect((await w.ask('kiosk-1', 'wrong', ATTACKER_ADDRESS)).status).toBe(401);
    expect([...w.failures.counts.values()].map((count) => count.failures)).toEqual([1]);
  });

  it('never blocks the same client on another address, nor another client on the same address', async () => {
    const w = world();
    for (let attempt = 1; attempt <= 8; attempt += 1) await w.ask('kiosk-1', 'wrong', ATTACKER_ADDRESS);
    expect((await w.ask('kiosk-1', secret, ATTACKER_ADDRESS)).status).toBe(429);
    expect(await w.ask('kiosk-1', secret, DEVICE_ADDRESS)).toEqual({ status: 200 });
    expect(await w.ask('kiosk-2', secret, ATTACKER_ADDRESS)).toEqual({ status: 200 });
  });

  it('counts an IPv6 source by its /64, so a host cannot step around its count by changing addresses', async () => {
    const w = world();
    for (let attempt = 1; attempt <= 5; attempt += 1) await w.ask('kiosk-1', 'wrong', `2001:db8:1:2::${attempt}`);
    expect((await w.ask('kiosk-1', secret, '2001:db8:1:2:ffff:ffff:ffff:ffff')).status).toBe(429);
    expect((await w.ask('kiosk-1', secret, '2001:db8:1:3::1')).status).toBe(200);
    expect(clientSourceOf('2001:DB8:0001:0002:0:0:0:1')).toBe('2001:db8:1:2::/64');
    expect(clientSourceOf('::ffff:127.0.0.1')).toBe('127.0.0.1');
    expect(clientSourceOf('::1')).toBe('0:0:0:0::/64');
    expect(clientSourceOf(undefined)).toBe('unknown');
  });

  it('clears the count on a success: failures before it do not add up with failures after it', async () => {
    const w = world();
    for (let attempt = 1; attempt <= 4; attempt += 1) await w.ask('kiosk-1', 'wrong', DEVICE_ADDRESS);
    expect((await w.ask('kiosk-1', secret, DEVICE_ADDRESS)).status).toBe(200);
    for (let attempt = 1; attempt <= 4; attempt += 1) expect((await w.ask('kiosk-1', 'wrong', DEVICE_ADDRESS)).status).toBe(401);
    expect((await w.ask('kiosk-1', secret, DEVICE_ADDRESS)).status).toBe(200);
  });

  it('counts unknown clients too (the answer tells nothing about which devices exist), and hashes the decoy for them', async () => {
    const w = world();
    for (let attempt = 1; attempt <= 5; attempt += 1) {
      expect(await w.ask('kiosk-404', secret, ATTACKER_ADDRESS)).toEqual({ status: 401, error: 'invalid_client' });
    }
    expect(w.hashes.every((stored) => stored.startsWith('scrypt$'))).toBe(true);
    expect((await w.ask('kiosk-404', secret, ATTACKER_ADDRESS)).status).toBe(429);
  });

  it('lets at most 5 of many simultaneous attempts of one key reach the hash; the others answer 429 at once', async () => {
    const w = world();
    const answers = await Promise.all(Array.from({ length: 12 }, () => w.ask('kiosk-1', 'wrong', ATTACKER_ADDRESS)));
    expect(w.hashes).toHaveLength(5);
    expect(answers.filter((answer) => answer.status === 401)).toHaveLength(5);
    expect(answers.filter((answer) => answer.status === 429)).toHaveLength(7);
  });

  it.each([
    ['blocked (429)', 'blocked'],
    ['refused (401)', 'wrong'],
    ['failing on the store', 'store'],
    ['failing on the device read', 'read'],
    ['failing in the hash', 'hash'],
  ] as const)('lets each of 20 attempts in a row %s leave the gate, so devices still get their tokens', async (_name, exit) => {
    // A gate that admits 2 attempts of each class: an attempt that never left would refuse the third with 503.
    const w = world(new BoundedVerificationGate({ maxAdmitted: { trusted: 2, suspect: 2 } }));
    if (exit === 'blocked') for (let attempt = 0; attempt < 5; attempt += 1) await w.ask('kiosk-1', 'wrong', ATTACKER_ADDRESS);
    const failing = new Error(`${exit} failed`);
    const { dependencies } = w;
    const restore = { ...dependencies, devices: { ...dependencies.devices } };
    if (exit === 'store') dependencies.failures.reserve = async () => Promise.reject(failing);
    if (exit === 'read') dependencies.devices.get = async () => Promise.reject(failing);
    if (exit === 'hash') dependencies.verify = async () => Promise.reject(failing);
    const expected = { blocked: 429, wrong: 401, store: 'failed', read: 'failed', hash: 'failed' }[exit];
    for (let attempt = 0; attempt < 20; attempt += 1) {
      // One client id blocked, or a new one each time: every attempt counts, so one key would be blocked after 5.
      const deviceId = exit === 'blocked' ? 'kiosk-1' : `kiosk-x${attempt}`;
      const answer = await w
        .ask(deviceId, 'wrong', ATTACKER_ADDRESS)
        .catch((error: Error) => ({ status: error === failing ? 'failed' : error.message }));
      expect(answer.status).toBe(expected);
    }
    Object.assign(dependencies, restore);
    dependencies.failures.reserve = InMemoryClientFailureStore.prototype.reserve;
    // A device on its own address, and one behind the address the attempts came from (a shop's router).
    expect(await w.ask('kiosk-2', secret, DEVICE_ADDRESS)).toEqual({ status: 200 });
    expect(await w.ask('kiosk-2', secret, ATTACKER_ADDRESS)).toEqual({ status: 200 });
  });

  it('gives back the attempts whose check a backend failure stopped, so a device retrying through an outage is not blocked after it', async () => {
    const w = world();
    const get = w.dependencies.devices.get;
    w.dependencies.devices.get = async () => Promise.reject(new Error('devices table unavailable'));
    for (let attempt = 0; attempt < 8; attempt += 1) {
      await expect(w.ask('kiosk-1', secret, DEVICE_ADDRESS)).rejects.toThrow('devices table unavailable');
    }
    w.dependencies.devices.get = get;
    expect(await w.ask('kiosk-1', secret, DEVICE_ADDRESS)).toEqual({ status: 200 });
    // A wrong secret still counts: the limit is of failed checks, not of outages.
    for (let attempt = 0; attempt < 5; attempt += 1) expect((await w.ask('kiosk-1', 'wrong', DEVICE_ADDRESS)).status).toBe(401);
    expect((await w.ask('kiosk-1', secret, DEVICE_ADDRESS)).status).toBe(429);
  });

  it('answers 503 with Retry-After before any read when the gate admits no more attempts', async () => {
    const gate = new BoundedVerificationGate({ maxAdmitted: { trusted: 0, suspect: 0 } });
    const w = world(gate);
    expect(await w.ask('kiosk-1', secret, DEVICE_ADDRESS)).toEqual({ status: 503, error: 'temporarily_unavailable', retryAfter: 1 });
    expect([w.reads, w.hashes, w.failures.calls]).toEqual([[], [], []]);
  });
});
