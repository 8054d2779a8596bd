/**
 * An API client's client credentials grant and the check of its live tokens, on fakes of the client store and the
 * signer, with the real secret hashing, limits of secret checks and an injected clock.
 */
import { describe, expect, it } from 'vitest';
import { BoundedVerificationGate } from '../../../functions/adapters/verification-gate.js';
import { DEFAULT_CLIENT_FAILURE_POLICY } from '../../../functions/core/access/client-failures.js';
import { ROLES } from '../../../functions/core/access/roles.js';
import type { StoredApiClient } from '../../../functions/core/clients/model.js';
import { ApiClientSessions } from '../../../functions/core/clients/sessions.js';
import {
  type ClientTokenClaims,
  type ClientTokenRequest,
  grantedScopes,
  issueClientToken,
} from '../../../functions/core/clients/tokens.js';
import { hashDeviceSecret } from '../../../functions/core/devices/tokens.js';
import { OAuthError, UnauthorizedError } from '../../../functions/core/shared/errors.js';
import type { Principal } from '../../../functions/core/shared/principal.js';
import { InMemoryClientFailureStore } from '../../support/client-failures.js';

const CLIENT_ID = 'api_01JEX0000000000000000000AB';
const T0 = Date.parse('2026-12-06T10:00:00.000Z');
const SECRET = 'current-secret-0123456789abcdefghijklmnopqrstu';
const PREVIOUS = 'previous-secret-0123456789abcdefghijklmnopqrs';

/** A client store of one client, recording its reads and `lastUsedAt` writes. */
async function world(overrides: Partial<StoredApiClient> = {}) {
  let clock = T0;
  let client: StoredApiClient | undefined = {
    clientId: CLIENT_ID,
    name: 'Back office',
    company: 'acme',
    role: 'operator',
    enabled: true,
    created: new Date(T0).toISOString(),
    createdBy: 'root',
    updated: new Date(T0).toISOString(),
    secretHash: await hashDeviceSecret(SECRET),
    ...overrides,
  };
  const reads: string[] = [];
  const touches: string[] = [];
  const clients = {
    get: async (id: string) => {
      reads.push(id);
      return id === client?.clientId ? { ...client } : undefined;
    },
    touch: async (id: string, at: string, olderThan: string) => {
      if (client === undefined || id !== client.clientId) return;
      if (client.lastUsedAt !== undefined && client.lastUsedAt >= olderThan) return;
      touches.push(at);
      client = { ...client, lastUsedAt: at };
    },
  };
  const signed: ClientTokenClaims[] = [];
  const dependencies = {
    clients,
    signer: { sign: async (claims: ClientTokenClaims) => `token-${signed.push(claims)}` },
    failures: new InMemoryClientFailureStore(),
    gate: new BoundedVerificationGate(),
    policy: DEFAULT_CLIENT_FAILURE_POLICY,
    now: () => clock,
  };
  return {
    dependencies,
    clients,
    signed,
    reads,
    touches,
    advance: (ms: number) => {
      clock += ms;
    },
    now: () => clock,
    change: (next: Partial<StoredApiClient> | undefined) => {
      client = next === undefined || client === undefined ? undefined : { ...client, ...next };
    },
  };
}

const request = (secret: string, scope?: string): ClientTokenRequest => ({
  grantType: 'client_credentials',
  clientId: CLIENT_ID,
  clientSecret: secret,
  method: 'client_secret_basic',
  source: '203.0.113.7',
  ...(scope === undefined ? {} : { scope }),
});

async function refusal(promise: Promise<unknown>): Promise<OAuthError> {
  const error = await promise.catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(OAuthError);
  return error as OAuthError;
}

describe('the client credentials grant of an API client', () => {
  it("signs a token for its company with its role's scopes, and records its use", async () => {
    const { dependencies, signed, touches } = await world();
    const token = await issueClientToken(dependencies, request(SECRET), 900);
    expect(token).toEqual({ accessToken: 'token-1', expiresInSeconds: 900, scope: ROLES.operator.join(' ') });
    expect(signed).toEqual([
      { sub: CLIENT_ID, username: `client:${CLIENT_ID}`, companies: ['acme'], scope: ROLES.operator.join(' '), client_id: CLIENT_ID },
    ]);
    expect(touches).toEqual([new Date(T0).toISOString()]);
  });

  it('narrows the scopes on request and refuses one the role does not hold (invalid_scope)', async () => {
    const { dependencies, signed } = await world({ role: 'viewer' });
    expect((await issueClientToken(dependencies, request(SECRET, 'search:read devices:read'), 900)).scope).toBe('search:read devices:read');
    const refused = await refusal(issueClientToken(dependencies, request(SECRET, 'search:read deployments:write'), 900));
    expect(refused.code).toBe('invalid_scope');
    expect(refused.message).toContain("'deployments:write'");
    expect(signed).toHaveLength(1);
    expect(grantedScopes({ role: 'operator' }, '  ')).toBe(ROLES.operator.join(' '));
  });

  it('refuses a wrong secret, an unknown client, a disabled one and a device-shaped id alike (invalid_client)', async () => {
    const { dependencies, change } = await world();
    expect((await refusal(issueClientToken(dependencies, request('wrong'), 900))).code).toBe('invalid_client');
    expect(
      (await refusal(issueClientToken(dependencies, { ...request(SECRET), clientId: 'api_01JEX0000000000000000000ZZ' }, 900))).code,
    ).toBe('invalid_client');
    expect((await refusal(issueClientToken(dependencies, { ...request(SECRET), clientId: 'acme~kiosk-1' }, 900))).viaBasic).toBe(true);
    change({ enabled: false });
    expect((await refusal(issueClientToken(dependencies, request(SECRET), 900))).code).toBe('invalid_client');
  });

  it('takes the previous secret until previousSecretExpiresAt, and only the new one after', async () => {
    const { dependencies, advance } = await world({
      previousSecretHash: await hashDeviceSecret(PREVIOUS),
      previousSecretExpiresAt: new Date(T0 + 60_000).toISOString(),
    });
    await expect(issueClientToken(dependencies, request(PREVIOUS), 900)).resolves.toMatchObject({ accessToken: 'token-1' });
    await expect(issueClientToken(dependencies, request(SECRET), 900)).resolves.toMatchObject({ accessToken: 'token-2' });
    advance(60_000);
    expect((await refusal(issueClientToken(dependencies, request(PREVIOUS), 900))).code).toBe('invalid_client');
    await expect(issueClientToken(dependencies, request(SECRET), 900)).resolves.toMatchObject({ accessToken: 'token-3' });
  });

  it('writes lastUsedAt once a minute however many tokens it issues, and checks two hashes whatever is stored', async () => {
    const { dependencies, touches, advance } = await world();
    let hashes = 0;
    const counted = {
      ...dependencies,
      verify: async (secret: string, stored: string) => ++hashes > 0 && stored !== '' && secret === SECRET,
    };
    await issueClientToken(dependencies, request(SECRET), 900);
    advance(30_000);
    await issueClientToken(dependencies, request(SECRET), 900);
    expect(touches).toHaveLength(1);
    await issueClientToken(counted, request('wrong'), 900).catch(() => undefined);
    await issueClientToken(counted, { ...request('wrong'), clientId: 'api_01JEX0000000000000000000ZZ' }, 900).catch(() => undefined);
    expect(hashes).toBe(4);
  });

  it('blocks a client id after the failed attempts the policy allows, the right secret too', async () => {
    const { dependencies } = await world();
    for (let attempt = 0; attempt < DEFAULT_CLIENT_FAILURE_POLICY.limit; attempt += 1)
      await refusal(issueClientToken(dependencies, request('wrong'), 900));
    const blocked = await refusal(issueClientToken(dependencies, request(SECRET), 900));
    expect(blocked.code).toBe('temporarily_unavailable');
    expect(blocked.retry?.cause).toBe('too-many-attempts');
  });
});

describe("an API client's live tokens", () => {
  const principal = (scopes: readonly string[] = ROLES.operator, issuedAt = new Date(T0).toISOString()): Principal => ({
    subject: CLIENT_ID,
    username: `client:${CLIENT_ID}`,
    companies: ['acme'],
    scopes: new Set(scopes),
    apiClient: { clientId: CLIENT_ID, issuedAt },
  });

  it('work while the client grants them, read at most once per 30 s, and stop within 30 s of a disable', async () => {
    const { clients, reads, change, advance, now } = await world();
    const sessions = new ApiClientSessions(clients, now);
    await sessions.check(principal());
    await sessions.check(principal());
    expect(reads).toHaveLength(1);
    change({ enabled: false });
    advance(29_999);
    await sessions.check(principal());
    advance(1);
    await expect(sessions.check(principal())).rejects.toBeInstanceOf(UnauthorizedError);
    expect(reads).toHaveLength(2);
  });

  it('stop when the client is deleted or its role no longer holds a scope of the token', async () => {
    const lowered = await world();
    const sessions = new ApiClientSessions(lowered.clients, lowered.now);
    lowered.change({ role: 'viewer' });
    await expect(sessions.check(principal())).rejects.toThrow(/request a new token/);
    await expect(sessions.check(principal(ROLES.viewer))).resolves.toBeUndefined();
    const deleted = await world();
    deleted.change(undefined);
    await expect(new ApiClientSessions(deleted.clients, deleted.now).check(principal())).rejects.toBeInstanceOf(UnauthorizedError);
  });

  it('stay ended once the client ended its tokens (a disable, a rotation without overlap), even when enabled again', async () => {
    const { clients, change, advance, now } = await world();
    const sessions = new ApiClientSessions(clients, now);
    await sessions.check(principal());
    advance(5_000);
    change({ enabled: true, tokensNotBefore: new Date(now()).toISOString() });
    advance(30_000);
    await expect(sessions.check(principal())).rejects.toThrow(/ended its tokens/);
    // A token issued after the cut (the next second, as `iat` counts) works.
    await expect(sessions.check(principal(ROLES.operator, new Date(T0 + 6_000).toISOString()))).resolves.toBeUndefined();
  });

  it('do not fail a request when its lastUsedAt cannot be written', async () => {
    const { clients, now } = await world();
    const failing = { ...clients, touch: async () => Promise.reject(new Error('ProvisionedThroughputExceededException')) };
    await expect(new ApiClientSessions(failing, now).check(principal())).resolves.toBeUndefined();
  });

  it('write lastUsedAt at most once a minute, and pass a user token without reading anything', async () => {
    const { clients, reads, touches, advance, now } = await world();
    const sessions = new ApiClientSessions(clients, now);
    await sessions.check(principal());
    advance(40_000);
    await sessions.check(principal());
    advance(21_000);
    await sessions.check(principal());
    expect(touches).toEqual([new Date(T0).toISOString(), new Date(T0 + 61_000).toISOString()]);
    const before = reads.length;
    await sessions.check({ subject: 'alice', companies: ['acme'], scopes: new Set(ROLES.operator) });
    expect(reads).toHaveLength(before);
  });
});
