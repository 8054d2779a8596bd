/**
 * The local issuer's sign-ins and refreshes (functions/adapters/embedded/local-identity-provider.ts) through the
 * token endpoint's use cases (functions/core/access/user-tokens.ts), on a temporary users.json: the new-password
 * challenge and its completion, a password change, refresh tokens (current role and companies, refused at once for a
 * disabled or deleted user, expired after 30 days by an injected clock, the newest 20 kept), their revocation, and a
 * password change ending the user's other sessions.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeJwt } from 'jose';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hashPassword, LocalIdentityProvider, USERS_FILE } from '../../../functions/adapters/embedded/local-identity-provider.js';
import type { LocalUser } from '../../../functions/adapters/embedded/local-user-store.js';
import { BoundedVerificationGate } from '../../../functions/adapters/verification-gate.js';
import { DEFAULT_CLIENT_FAILURE_POLICY } from '../../../functions/core/access/client-failures.js';
import { refreshUserToken, revokeUserToken, signInUser } from '../../../functions/core/access/user-tokens.js';
import { DomainError, OAuthError } from '../../../functions/core/shared/errors.js';
import { problemOf } from '../../../functions/platform/problem.js';
import { InMemoryClientFailureStore } from '../../support/client-failures.js';

const T0 = Date.parse('2026-01-02T03:04:05.000Z');
const DAY_MS = 86_400_000;

let directory: string;
let provider: LocalIdentityProvider;
let now: number;

/** users.json with alice (a platform operator of acme) and bob (invited: must set a new password). */
async function usersFile(): Promise<LocalUser[]> {
  return [
    {
      username: 'alice',
      passwordHash: await hashPassword('Alice-pass-1'),
      companies: ['acme'],
      scope: '',
      role: 'operator',
    },
    {
      username: 'bob',
      passwordHash: await hashPassword('Temporary-pass-1'),
      companies: ['acme'],
      scope: '',
      role: 'viewer',
      mustChangePassword: true,
    },
  ];
}

beforeEach(async () => {
  now = T0;
  directory = await mkdtemp(join(tmpdir(), 'dss-local-identity-'));
  await writeFile(join(directory, USERS_FILE), JSON.stringify(await usersFile()));
  provider = await LocalIdentityProvider.fromDirectory(directory, { issuer: 'https://issuer.test', audience: 'dss', now: () => now });
});

afterEach(() => rm(directory, { recursive: true, force: true }));

const dependencies = () => ({
  identity: provider,
  gate: new BoundedVerificationGate(),
  failures: new InMemoryClientFailureStore(),
  policy: DEFAULT_CLIENT_FAILURE_POLICY,
});

/** A sign-in's tokens, or its problem (status, type, challenge, detail) as the token endpoint answers it. */
async function signIn(username: string, password: string, newPassword?: string) {
  try {
    return await signInUser(dependencies(), {
      username,
      password,
      ...(newPassword === undefined ? {} : { newPassword }),
      source: '198.51.100.7',
    });
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    return { problem: problemOf(error) };
  }
}

/** A refresh's access token claims, or the OAuth error code. */
async function refresh(refreshToken: string) {
  try {
    const token = await refreshUserToken(provider, refreshToken);
    return { claims: decodeJwt(token.accessToken), expiresIn: token.expiresInSeconds };
  } catch (error) {
    if (!(error instanceof OAuthError)) throw error;
    return { error: error.code };
  }
}

/** The user as users.json holds it on disk. */
async function stored(username: string): Promise<LocalUser | undefined> {
  const users = JSON.parse(await readFile(join(directory, USERS_FILE), 'utf8')) as LocalUser[];
  return users.find((user) => user.username === username);
}

describe('the local sign-in', () => {
  it('answers the access token (900 s by default) and a refresh token, kept as its SHA-256 only', async () => {
    const tokens = await signIn('alice', 'Alice-pass-1');
    if (!('refreshToken' in tokens)) throw new Error(JSON.stringify(tokens));
    expect(tokens.expiresInSeconds).toBe(900);
    expect(decodeJwt(tokens.accessToken)).toMatchObject({ sub: 'alice', companies: ['acme'] });
    expect(tokens.refreshToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const held = (await stored('alice'))?.refreshTokens ?? [];
    expect(held).toHaveLength(1);
    expect(held[0]?.expiresAt).toBe(T0 + 30 * DAY_MS);
    expect(JSON.stringify(held)).not.toContain(tokens.refreshToken);
  });

  it('gives a user who must set a new password the challenge, changing nothing, until they send one', async () => {
    const challenged = await signIn('bob', 'Temporary-pass-1');
    expect(challenged).toMatchObject({
      problem: {
        status: 401,
        type: 'https://device-scenario-service.dev/problems/new-password-required',
        challenge: 'new_password_required',
      },
    });
    expect(JSON.stringify(challenged)).toMatch(/new_password.*at least 12 and at most 256 characters/);
    expect(await stored('bob')).toMatchObject({ mustChangePassword: true });
    expect((await stored('bob'))?.refreshTokens).toBeUndefined();
    // A wrong password gets no challenge: it says nothing about the account.
    expect(await signIn('bob', 'Wrong-pass-1')).toMatchObject({ problem: { status: 401, title: 'Unauthorized' } });
  });

  it('sets the new password that answers the challenge, clears the flag, and signs in with it from then on', async () => {
    const tokens = await signIn('bob', 'Temporary-pass-1', 'Fresh-start-2');
    expect(tokens).toHaveProperty('refreshToken');
    expect((await stored('bob'))?.mustChangePassword).toBeUndefined();
    expect(await signIn('bob', 'Temporary-pass-1')).toMatchObject({ problem: { status: 401 } });
    expect(await signIn('bob', 'Fresh-start-2')).toHaveProperty('accessToken');
  });

  it('refuses a new password outside the policy with a 400 stating it, and changes nothing', async () => {
    const before = await stored('bob');
    const refused = await signIn('bob', 'Temporary-pass-1', 'fresh');
    expect(refused).toMatchObject({ problem: { status: 400, errors: [{ path: '/new_password' }] } });
    expect(JSON.stringify(refused)).toMatch(/does not meet the password policy: at least 12/);
    expect(await stored('bob')).toEqual(before);
  });

  it('changes the password of a user without a challenge who sends new_password', async () => {
    expect(await signIn('alice', 'Alice-pass-1', 'Alice-pass-2')).toHaveProperty('accessToken');
    expect(await signIn('alice', 'Alice-pass-1')).toMatchObject({ problem: { status: 401 } });
    expect(await signIn('alice', 'Alice-pass-2')).toHaveProperty('accessToken');
  });

  it('takes the username in any case, signing in as the stored user', async () => {
    const tokens = await signIn('ALICE', 'Alice-pass-1');
    if (!('accessToken' in tokens)) throw new Error(JSON.stringify(tokens));
    expect(decodeJwt(tokens.accessToken)).toMatchObject({ sub: 'alice', username: 'alice' });
  });

  it('refuses a disabled user like a wrong password', async () => {
    await provider.users.update('alice', (user) => user && { ...user, enabled: false });
    expect(await signIn('alice', 'Alice-pass-1')).toMatchObject({
      problem: { status: 401, title: 'Unauthorized', detail: 'The username or password is wrong.' },
    });
  });
});

describe('the local refresh', () => {
  /** Alice's refresh token from a sign-in. */
  async function aliceRefreshToken(): Promise<string> {
    const tokens = await signIn('alice', 'Alice-pass-1');
    if (!('refreshToken' in tokens)) throw new Error(JSON.stringify(tokens));
    return tokens.refreshToken;
  }

  it("answers a new access token carrying the user's role and companies as they are now", async () => {
    const refreshToken = await aliceRefreshToken();
    expect(await refresh(refreshToken)).toMatchObject({ claims: { sub: 'alice', companies: ['acme'] }, expiresIn: 900 });
    await provider.users.update('alice', (user) => user && { ...user, companies: ['acme', 'globex'], role: 'company-admin' });
    const renewed = await refresh(refreshToken);
    expect(renewed).toMatchObject({ claims: { companies: ['acme', 'globex'] } });
    expect(String(renewed.claims?.scope)).toContain('users:write');
  });

  it('refuses at once, invalid_grant, once the user is disabled or deleted', async () => {
    const refreshToken = await aliceRefreshToken();
    await provider.users.update('alice', (user) => user && { ...user, enabled: false });
    expect(await refresh(refreshToken)).toEqual({ error: 'invalid_grant' });
    await provider.users.update('alice', () => 'delete');
    expect(await refresh(refreshToken)).toEqual({ error: 'invalid_grant' });
  });

  it('refuses an unknown refresh token', async () => {
    await aliceRefreshToken();
    expect(await refresh('A'.repeat(43))).toEqual({ error: 'invalid_grant' });
  });

  it('refuses a refresh token 30 days after its sign-in, not before', async () => {
    const refreshToken = await aliceRefreshToken();
    now = T0 + 30 * DAY_MS - 1;
    expect(await refresh(refreshToken)).toHaveProperty('claims');
    now = T0 + 30 * DAY_MS;
    expect(await refresh(refreshToken)).toEqual({ error: 'invalid_grant' });
  });

  it("keeps a user's newest 20 refresh tokens: a 21st sign-in ends the oldest", async () => {
    const tokens: string[] = [];
    for (let signInNumber = 0; signInNumber < 21; signInNumber += 1) {
      tokens.push(await aliceRefreshToken());
      now += 1_000;
    }
    expect((await stored('alice'))?.refreshTokens).toHaveLength(20);
    expect(await refresh(tokens[0] as string)).toEqual({ error: 'invalid_grant' });
    expect(await refresh(tokens[1] as string)).toHaveProperty('claims');
    expect(await refresh(tokens[20] as string)).toHaveProperty('claims');
  });
});

describe('the local revocation', () => {
  /** What the revocation endpoint's use case answers: nothing, or the OAuth error code. */
  async function revoke(token: string) {
    try {
      await revokeUserToken(provider, token);
      return 'revoked';
    } catch (error) {
      if (!(error instanceof OAuthError)) throw error;
      return error.code;
    }
  }

  it("forgets the revoked refresh token in users.json and keeps the user's others", async () => {
    const first = await signIn('alice', 'Alice-pass-1');
    const second = await signIn('alice', 'Alice-pass-1');
    if (!('refreshToken' in first) || !('refreshToken' in second)) throw new Error('no sign-in');
    expect(await revoke(first.refreshToken)).toBe('revoked');
    expect((await stored('alice'))?.refreshTokens).toHaveLength(1);
    expect(await refresh(first.refreshToken)).toEqual({ error: 'invalid_grant' });
    expect(await refresh(second.refreshToken)).toHaveProperty('claims');
    // Again, or a token never issued: no error (RFC 7009 §2.2).
    expect(await revoke(first.refreshToken)).toBe('revoked');
    expect(await revoke('A'.repeat(43))).toBe('revoked');
  });

  it('refuses an access token this issuer signed with unsupported_token_type, and takes other dotted strings as unknown tokens', async () => {
    const tokens = await signIn('alice', 'Alice-pass-1');
    if (!('accessToken' in tokens)) throw new Error('no sign-in');
    expect(await revoke(tokens.accessToken)).toBe('unsupported_token_type');
    expect(await revoke('a.b.c')).toBe('revoked');
    const [header, payload] = tokens.accessToken.split('.');
    expect(await revoke(`${header}.${payload}.${'A'.repeat(86)}`)).toBe('revoked');
    expect(await refresh(tokens.refreshToken)).toHaveProperty('claims');
  });

  it("ends the user's other sessions when they change their password, keeping the changing sign-in's", async () => {
    const other = await signIn('alice', 'Alice-pass-1');
    const changing = await signIn('alice', 'Alice-pass-1', 'Alice-pass-2!');
    if (!('refreshToken' in other) || !('refreshToken' in changing)) throw new Error('no sign-in');
    expect(await refresh(other.refreshToken)).toEqual({ error: 'invalid_grant' });
    expect(await refresh(changing.refreshToken)).toHaveProperty('claims');
    expect((await stored('alice'))?.refreshTokens).toHaveLength(1);
  });
});
