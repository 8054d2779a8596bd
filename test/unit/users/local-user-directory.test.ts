/**
 * The local user directory (functions/adapters/embedded/local-user-directory.ts) on users.json in a temporary folder:
 * every change is in the file when it answers (a reopened store reads it), temporary passwords meet the policy and
 * sign in, disabling, deleting and resetting drop the refresh tokens, listing pages in username order, and the users
 * of an older data folder (no role, email or times) are shown with the role their scopes make; usernames are
 * case-insensitive.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { verifyPassword } from '../../../functions/adapters/embedded/local-identity-provider.js';
import { LocalUserDirectory, TEMPORARY_PASSWORD_LENGTH, userViewOf } from '../../../functions/adapters/embedded/local-user-directory.js';
import { type LocalUser, LocalUserStore } from '../../../functions/adapters/embedded/local-user-store.js';
import { missingFromPassword, randomPassword } from '../../../functions/core/access/password-policy.js';
import { scopeClaimOf } from '../../../functions/core/access/roles.js';

const T0 = new Date('2026-11-27T12:00:00.000Z');
const T1 = new Date('2026-11-27T12:05:00.000Z');

let folder: string;
let path: string;
let clock: Date;

/** A directory on a store freshly read from users.json. */
async function open(): Promise<LocalUserDirectory> {
  return new LocalUserDirectory(await LocalUserStore.open(path), () => clock);
}

async function file(): Promise<LocalUser[]> {
  return JSON.parse(await readFile(path, 'utf8')) as LocalUser[];
}

/** A user of a data folder written before administration: what the demo seeding writes. */
const legacy = (username: string, scope: string, companies: string[]): LocalUser => ({
  username,
  passwordHash: 'scrypt$16384$8$1$AAAA$AAAA',
  companies,
  scope,
});

beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), 'local-user-directory-'));
  path = join(folder, 'users.json');
  clock = T0;
  await writeFile(
    path,
    JSON.stringify([
      legacy('root', scopeClaimOf('platform-admin'), []),
      legacy('olivia', scopeClaimOf('viewer'), ['acme', 'globex']),
      legacy('alice', scopeClaimOf('operator'), ['acme']),
    ]),
  );
});

afterEach(() => rm(folder, { recursive: true, force: true }));

describe('a temporary password (randomPassword)', () => {
  it('is random and meets the policy: a lowercase and an uppercase letter, a digit and a symbol', () => {
    const passwords = Array.from({ length: 200 }, () => randomPassword(TEMPORARY_PASSWORD_LENGTH));
    expect(new Set(passwords).size).toBe(200);
    for (const password of passwords) {
      expect(password).toHaveLength(TEMPORARY_PASSWORD_LENGTH);
      // The same check the token endpoint makes of a new password.
      expect(missingFromPassword(password), password).toEqual([]);
    }
  });
});

describe('LocalUserDirectory', () => {
  it('shows the users of an older data folder with the role their scopes make, no email and no times', async () => {
    const users = await open();
    expect(await users.get('olivia')).toEqual({
      username: 'olivia',
      email: '',
      role: 'viewer',
      companies: ['acme', 'globex'],
      enabled: true,
      status: 'CONFIRMED',
      createdAt: '1970-01-01T00:00:00.000Z',
      updatedAt: '1970-01-01T00:00:00.000Z',
    });
    expect(userViewOf(legacy('odd', 'devices:read search:read', ['acme'])).role).toBe('viewer');
    expect(await users.countActivePlatformAdmins()).toBe(1);
    expect(await users.countInCompany('acme')).toBe(2);
    expect(await users.countInCompany('globex')).toBe(1);
    expect(await users.countInCompany('initech')).toBe(0);
  });

  it('creates a user written through to users.json, whose temporary password signs in and must be changed', async () => {
    const users = await open();
    const created = await users.create({ username: 'frank', email: 'frank@example.com', role: 'operator', companies: ['initech'] });
    expect(created?.user).toEqual({
      username: 'frank',
      email: 'frank@example.com',
      role: 'operator',
      companies: ['initech'],
      enabled: true,
      status: 'FORCE_CHANGE_PASSWORD',
      createdAt: T0.toISOString(),
      updatedAt: T0.toISOString(),
    });
    const stored = (await file()).find((user) => user.username === 'frank');
    expect(stored).toMatchObject({ scope: scopeClaimOf('operator'), role: 'operator', mustChangePassword: true, refreshTokens: [] });
    expect(await verifyPassword(created?.temporaryPassword as string, stored?.passwordHash as string)).toBe(true);
    expect(JSON.stringify(await file())).not.toContain(created?.temporaryPassword);
    // A taken username: nothing written.
    expect(await users.create({ username: 'frank', email: 'other@example.com', role: 'viewer', companies: ['acme'] })).toBeUndefined();
    expect(await (await open()).get('frank')).toEqual(created?.user);
  });

  it('changes role (and with it the scope), companies and enabled; disabling drops the refresh tokens', async () => {
    await writeFile(
      path,
      JSON.stringify([{ ...legacy('alice', scopeClaimOf('operator'), ['acme']), refreshTokens: [{ sha256: 'ab', expiresAt: 1 }] }]),
    );
    const fresh = await open();
    clock = T1;
    expect(await fresh.update('alice', { role: 'company-admin', companies: ['acme', 'globex'] })).toMatchObject({
      role: 'company-admin',
      companies: ['acme', 'globex'],
      updatedAt: T1.toISOString(),
    });
    expect((await file())[0]).toMatchObject({ scope: scopeClaimOf('company-admin'), refreshTokens: [{ sha256: 'ab' }] });
    expect(await fresh.update('alice', { enabled: false })).toMatchObject({ enabled: false });
    expect((await file())[0]).toMatchObject({ enabled: false, refreshTokens: [] });
    expect(await (await open()).get('alice')).toMatchObject({ enabled: false, role: 'company-admin' });
    expect(await fresh.update('nobody', { enabled: false })).toBeUndefined();
  });

  it('takes usernames in any case, as the user pool does: one user, keeping the case it was created with', async () => {
    const users = await open();
    expect(await users.create({ username: 'Frank', email: 'frank@example.com', role: 'viewer', companies: ['acme'] })).toBeDefined();
    // A taken username, but for case: refused, nothing written.
    expect(await users.create({ username: 'frank', email: 'other@example.com', role: 'operator', companies: ['acme'] })).toBeUndefined();
    expect((await file()).filter((user) => user.username.toLowerCase() === 'frank')).toHaveLength(1);
    expect(await users.update('FRANK', { role: 'operator' })).toMatchObject({ username: 'Frank', role: 'operator' });
    expect(await (await open()).get('frank')).toMatchObject({ username: 'Frank', role: 'operator' });
    expect(await users.delete('fRaNk')).toBe(true);
    expect(await users.get('Frank')).toBeUndefined();
  });

  it('refuses to open a users.json holding two usernames that differ only in case, naming them', async () => {
    await writeFile(path, JSON.stringify([legacy('alice', '', ['acme']), legacy('Alice', '', ['acme'])]));
    await expect(LocalUserStore.open(path)).rejects.toThrow(/'alice' and 'Alice', one username but for case/);
  });

  it('deletes a user from the file, and says whether there was one', async () => {
    const users = await open();
    expect(await users.delete('alice')).toBe(true);
    expect(await users.delete('alice')).toBe(false);
    expect((await file()).map((user) => user.username)).toEqual(['root', 'olivia']);
    expect(await (await open()).get('alice')).toBeUndefined();
  });

  it('resets a password: a new temporary one, to be changed, and no refresh token left', async () => {
    await writeFile(
      path,
      JSON.stringify([{ ...legacy('alice', scopeClaimOf('operator'), ['acme']), refreshTokens: [{ sha256: 'ab', expiresAt: 1 }] }]),
    );
    const users = await open();
    const reset = await users.resetPassword('alice');
    const [stored] = await file();
    expect(stored).toMatchObject({ mustChangePassword: true, refreshTokens: [] });
    expect(await verifyPassword(reset?.temporaryPassword as string, stored?.passwordHash as string)).toBe(true);
    expect((await users.get('alice'))?.status).toBe('FORCE_CHANGE_PASSWORD');
    expect(await users.resetPassword('nobody')).toBeUndefined();
  });

  it('lists in username order, by company, continuing after the last username of a page', async () => {
    const users = await open();
    const first = await users.list({}, 2, undefined);
    expect(first.items.map((user) => user.username)).toEqual(['alice', 'olivia']);
    expect(first.nextCursor).toBe('olivia');
    const second = await users.list({}, 2, first.nextCursor);
    expect(second).toMatchObject({ items: [{ username: 'root' }], nextCursor: undefined });
    expect((await users.list({}, 3, undefined)).nextCursor).toBeUndefined();
    const acme = await users.list({ company: 'acme' }, 1, undefined);
    expect(acme).toMatchObject({ items: [{ username: 'alice' }], nextCursor: 'alice' });
    expect(await users.list({ company: 'acme' }, 1, 'alice')).toMatchObject({ items: [{ username: 'olivia' }], nextCursor: undefined });
  });
});
