/**
 * Users administration's use cases (functions/core/users/admin.ts) on the local user directory in a temporary folder:
 * what a platform admin and a company admin may do, the bounds refused with nothing changed (403, the 404 that does
 * not reveal, 400 for unknown companies, 409 for the last platform admin and oneself), the signed cursors of the
 * listing, and the audit entry each change records.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CursorCodec } from '../../../functions/adapters/aws/cursor-codec.js';
import { LocalUserDirectory } from '../../../functions/adapters/embedded/local-user-directory.js';
import { type LocalUser, LocalUserStore } from '../../../functions/adapters/embedded/local-user-store.js';
import { ROLES, type Role, scopeClaimOf } from '../../../functions/core/access/roles.js';
import type { AuditEntry } from '../../../functions/core/audit/ports.js';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError } from '../../../functions/core/shared/errors.js';
import type { Principal } from '../../../functions/core/shared/principal.js';
import {
  deleteUser,
  getUser,
  inviteUser,
  listUsers,
  resetUserPassword,
  type UserAdminPorts,
  updateUser,
} from '../../../functions/core/users/admin.js';
import type { User } from '../../../functions/core/users/ports.js';

const AT = '2026-11-27T12:00:00.000Z';

const localUser = (username: string, role: Role, companies: string[]): LocalUser => ({
  username,
  passwordHash: 'scrypt$16384$8$1$AAAA$AAAA',
  companies,
  scope: scopeClaimOf(role),
  role,
  email: `${username}@example.com`,
  enabled: true,
  createdAt: AT,
  updatedAt: AT,
  refreshTokens: [{ sha256: 'ab'.repeat(32), expiresAt: Date.now() + 60_000 }],
});

const principal = (username: string, role: Role, companies: string[]): Principal => ({
  subject: username,
  username,
  companies,
  scopes: new Set(ROLES[role]),
});

const root = principal('root', 'platform-admin', []);
/** alice administers acme. */
const alice = principal('alice', 'company-admin', ['acme']);
const operator = principal('bob', 'operator', ['globex']);

let directory: string;
let users: LocalUserDirectory;
let audit: AuditEntry[];
let ports: UserAdminPorts;

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'users-admin-'));
  const path = join(directory, 'users.json');
  await writeFile(
    path,
    JSON.stringify([
      localUser('root', 'platform-admin', []),
      localUser('alice', 'company-admin', ['acme']),
      localUser('bob', 'operator', ['globex']),
      localUser('carol', 'operator', ['acme', 'globex']),
      localUser('dave', 'viewer', ['acme']),
      localUser('erin', 'company-admin', ['acme']),
    ]),
  );
  users = new LocalUserDirectory(await LocalUserStore.open(path), () => new Date(AT));
  audit = [];
  ports = {
    users,
    companies: {
      getMany: async (ids) =>
        ids.filter((id) => ['acme', 'globex', 'initech'].includes(id)).map((id) => ({ id, name: id, quotaBytes: 1, usedBytes: 0 })),
    },
    audit: {
      record: async (entry) => {
        audit.push(structuredClone(entry));
      },
      list: async () => ({ items: [], nextCursor: null }),
    },
    cursors: new CursorCodec(() => Buffer.alloc(32, 7)),
    now: () => new Date(AT),
  };
});

afterEach(() => rm(directory, { recursive: true, force: true }));

/** Every user, as root lists them. */
async function everyone(): Promise<User[]> {
  return (await listUsers(ports, root, { limit: 1000 })).items;
}

describe('inviting', () => {
  it('creates the user with a temporary password to change, and records who invited whom, never the password', async () => {
    const invited = await inviteUser(ports, root, {
      username: 'frank',
      email: 'frank@example.com',
      role: 'operator',
      companies: ['initech'],
    });
    expect(invited.user).toEqual({
      username: 'frank',
      email: 'frank@example.com',
      role: 'operator',
      companies: ['initech'],
      enabled: true,
      status: 'FORCE_CHANGE_PASSWORD',
      createdAt: AT,
      updatedAt: AT,
    });
    expect(invited.temporaryPassword).toMatch(/^.{16}$/);
    expect(await getUser(ports, root, 'frank')).toEqual(invited.user);
    expect(audit).toEqual([
      {
        id: expect.stringMatching(/^[0-9A-HJKMNP-TV-Z]{26}$/),
        at: AT,
        actor: 'root',
        action: 'user.invited',
        target: { kind: 'user', id: 'frank' },
        companies: ['initech'],
        after: invited.user,
      },
    ]);
    expect(JSON.stringify(audit)).not.toContain(invited.temporaryPassword);
    expect(JSON.stringify(audit)).not.toMatch(/scrypt|passwordHash|temporaryPassword/);
  });

  it('refuses a taken username (409) without touching the user', async () => {
    const before = await getUser(ports, root, 'bob');
    await expect(inviteUser(ports, root, { username: 'bob', email: 'x@example.com', role: 'viewer', companies: ['acme'] })).rejects.toThrow(
      ConflictError,
    );
    expect(await getUser(ports, root, 'bob')).toEqual(before);
    expect(audit).toEqual([]);
  });

  it('lets a company admin invite into their companies up to their own role, and nothing more', async () => {
    expect(
      (await inviteUser(ports, alice, { username: 'gina', email: 'g@example.com', role: 'operator', companies: ['acme'] })).user.role,
    ).toBe('operator');
    expect(
      (await inviteUser(ports, alice, { username: 'hank', email: 'h@example.com', role: 'company-admin', companies: ['acme'] })).user.role,
    ).toBe('company-admin');
    const refused = [
      { username: 'ivan', email: 'i@example.com', role: 'platform-admin' as const, companies: ['acme'] },
      { username: 'ivan', email: 'i@example.com', role: 'platform-admin' as const, companies: [] },
      { username: 'ivan', email: 'i@example.com', role: 'viewer' as const, companies: ['globex'] },
      { username: 'ivan', email: 'i@example.com', role: 'viewer' as const, companies: ['acme', 'globex'] },
    ];
    for (const user of refused) await expect(inviteUser(ports, alice, user), JSON.stringify(user)).rejects.toThrow(ForbiddenError);
    // An operator's token has no users:write.
    await expect(
      inviteUser(ports, operator, { username: 'ivan', email: 'i@example.com', role: 'viewer', companies: ['globex'] }),
    ).rejects.toThrow(/users:write/);
    expect(await users.get('ivan')).toBeUndefined();
    expect(audit.map((entry) => entry.target.id)).toEqual(['gina', 'hank']);
  });

  it('refuses an unknown company naming it, and a role other than platform-admin without a company (400)', async () => {
    const unknown = inviteUser(ports, root, { username: 'ivan', email: 'i@example.com', role: 'viewer', companies: ['acme', 'hooli'] });
    await expect(unknown).rejects.toThrow(BadRequestError);
    await expect(unknown).rejects.toThrow(/'hooli'/);
    await expect(unknown).rejects.toMatchObject({ violations: [{ path: '/companies/1' }] });
    await expect(inviteUser(ports, root, { username: 'ivan', email: 'i@example.com', role: 'operator', companies: [] })).rejects.toThrow(
      /at least one/,
    );
    expect(await users.get('ivan')).toBeUndefined();
    const admin = await inviteUser(ports, root, { username: 'pat', email: 'p@example.com', role: 'platform-admin', companies: [] });
    expect(admin.user).toMatchObject({ role: 'platform-admin', companies: [] });
  });
});

describe('listing and reading', () => {
  it('pages every user once in username order with signed cursors, and refuses a forged or another listing’s cursor', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await listUsers(ports, root, { limit: 2, ...(cursor === undefined ? {} : { cursor }) });
      seen.push(...page.items.map((user) => user.username));
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
    expect(seen).toEqual(['alice', 'bob', 'carol', 'dave', 'erin', 'root']);
    const first = await listUsers(ports, root, { limit: 2 });
    const forged = `${Buffer.from(JSON.stringify({ after: 'carol' })).toString('base64url')}.AAAAAAAAAAAAAAAAAAAAAA`;
    await expect(listUsers(ports, root, { limit: 2, cursor: forged })).rejects.toThrow(BadRequestError);
    await expect(listUsers(ports, root, { limit: 2, company: 'acme', cursor: first.nextCursor as string })).rejects.toThrow(
      BadRequestError,
    );
    expect((await listUsers(ports, root, { limit: 10, company: 'globex' })).items.map((user) => user.username)).toEqual(['bob', 'carol']);
  });

  it("shows a company admin only their company's users within their bounds, and requires them to name one of theirs", async () => {
    const acme = await listUsers(ports, alice, { limit: 10, company: 'acme' });
    // carol also holds globex, root is a platform admin: alice administers neither.
    expect(acme.items.map((user) => user.username)).toEqual(['alice', 'dave', 'erin']);
    await expect(listUsers(ports, alice, { limit: 10 })).rejects.toThrow(BadRequestError);
    await expect(listUsers(ports, alice, { limit: 10 })).rejects.toThrow(/acme/);
    await expect(listUsers(ports, alice, { limit: 10, company: 'globex' })).rejects.toThrow(ForbiddenError);
    await expect(listUsers(ports, operator, { limit: 10, company: 'globex' })).rejects.toThrow(/users:read/);
  });

  it('answers 404, not 403, for a user outside a company admin’s bounds', async () => {
    expect((await getUser(ports, alice, 'dave')).role).toBe('viewer');
    for (const username of ['bob', 'carol', 'root', 'nobody', 'bad name']) {
      await expect(getUser(ports, alice, username), username).rejects.toThrow(NotFoundError);
    }
    expect((await getUser(ports, root, 'carol')).companies).toEqual(['acme', 'globex']);
  });
});

describe('changing', () => {
  it('changes role, companies and enabled within the bounds, recording before and after', async () => {
    const changed = await updateUser(ports, alice, 'dave', { role: 'operator' });
    expect(changed).toMatchObject({ username: 'dave', role: 'operator', companies: ['acme'] });
    expect(audit).toEqual([
      expect.objectContaining({
        actor: 'alice',
        action: 'user.updated',
        target: { kind: 'user', id: 'dave' },
        companies: ['acme'],
        before: expect.objectContaining({ role: 'viewer' }),
        after: expect.objectContaining({ role: 'operator' }),
      }),
    ]);
    const moved = await updateUser(ports, root, 'carol', { companies: ['initech'], role: 'company-admin' });
    expect(moved).toMatchObject({ role: 'company-admin', companies: ['initech'] });
    expect(audit[1]?.companies).toEqual(['acme', 'globex', 'initech']);
    expect(await updateUser(ports, alice, 'erin', { enabled: false })).toMatchObject({ enabled: false });
  });

  it("refuses a company admin's grant above their bounds, and escalating themselves (403), changing nothing", async () => {
    const before = await everyone();
    await expect(updateUser(ports, alice, 'dave', { role: 'platform-admin' })).rejects.toThrow(ForbiddenError);
    await expect(updateUser(ports, alice, 'dave', { companies: ['acme', 'globex'] })).rejects.toThrow(/'globex' is not one of yours/);
    await expect(updateUser(ports, alice, 'alice', { role: 'platform-admin' })).rejects.toThrow(ForbiddenError);
    await expect(updateUser(ports, alice, 'alice', { companies: ['acme', 'globex'] })).rejects.toThrow(ForbiddenError);
    // Outside her bounds before the change: not revealed.
    await expect(updateUser(ports, alice, 'carol', { companies: ['acme'] })).rejects.toThrow(NotFoundError);
    await expect(updateUser(ports, alice, 'root', { enabled: false })).rejects.toThrow(NotFoundError);
    await expect(updateUser(ports, root, 'dave', { companies: ['hooli'] })).rejects.toThrow(/'hooli'/);
    await expect(updateUser(ports, root, 'dave', { companies: [] })).rejects.toThrow(BadRequestError);
    await expect(updateUser(ports, root, 'dave', {})).rejects.toThrow(BadRequestError);
    expect(await everyone()).toEqual(before);
    expect(audit).toEqual([]);
  });

  it('keeps the last active platform admin (409): an invited one who never signed in does not count', async () => {
    // pat is a platform admin who has not set a password yet: root stays the last active one.
    await inviteUser(ports, root, { username: 'pat', email: 'pat@example.com', role: 'platform-admin', companies: [] });
    const pat = principal('pat', 'platform-admin', []);
    const before = await everyone();
    await expect(updateUser(ports, pat, 'root', { role: 'company-admin', companies: ['acme'] })).rejects.toThrow(ConflictError);
    await expect(updateUser(ports, pat, 'root', { enabled: false })).rejects.toThrow(/last active platform administrator/);
    await expect(deleteUser(ports, pat, 'root')).rejects.toThrow(/make another user platform-admin/);
    expect(await everyone()).toEqual(before);
    // erin has a password of her own: once she is platform-admin, root may go.
    await updateUser(ports, root, 'erin', { role: 'platform-admin' });
    expect(await updateUser(ports, pat, 'root', { role: 'operator', companies: ['acme'] })).toMatchObject({ role: 'operator' });
  });

  it('refuses an admin changing their own role or enabled flag, or deleting themselves (409)', async () => {
    await expect(updateUser(ports, alice, 'alice', { enabled: false })).rejects.toThrow(ConflictError);
    await expect(deleteUser(ports, alice, 'alice')).rejects.toThrow(/cannot delete yourself/);
    await expect(updateUser(ports, alice, 'alice', { role: 'operator' })).rejects.toThrow(/cannot change the role of yourself/);
    await updateUser(ports, root, 'erin', { role: 'platform-admin' });
    await expect(updateUser(ports, root, 'root', { enabled: false })).rejects.toThrow(/cannot enable or disable yourself/);
    expect((await getUser(ports, root, 'alice')).enabled).toBe(true);
    // Their own companies, within their bounds, are theirs to change.
    expect(await updateUser(ports, root, 'root', { companies: ['acme'] })).toMatchObject({ companies: ['acme'] });
  });

  it('refuses the writes of a token whose user has since been disabled, demoted or deleted (nothing changed)', async () => {
    // alice's token says company-admin of acme; root disables her: that token administers no more.
    await updateUser(ports, root, 'alice', { enabled: false });
    await expect(updateUser(ports, alice, 'alice', { enabled: true })).rejects.toThrow(/disabled or deleted/);
    await expect(
      inviteUser(ports, alice, { username: 'mallory', email: 'm@example.com', role: 'viewer', companies: ['acme'] }),
    ).rejects.toThrow(ForbiddenError);
    // Enabled again as an operator: the old company-admin token still writes nothing.
    await updateUser(ports, root, 'alice', { enabled: true, role: 'operator' });
    await expect(updateUser(ports, alice, 'dave', { enabled: false })).rejects.toThrow(/users:write/);
    // Deleted: she cannot invite herself back.
    await deleteUser(ports, root, 'alice');
    await expect(
      inviteUser(ports, alice, { username: 'alice', email: 'alice@example.com', role: 'company-admin', companies: ['acme'] }),
    ).rejects.toThrow(ForbiddenError);
    expect(await users.get('alice')).toBeUndefined();
    expect(await users.get('mallory')).toBeUndefined();
    expect((await users.get('dave'))?.enabled).toBe(true);
  });
});

describe("a platform administrator's disable", () => {
  it('holds against a company admin: enabling, resetting and deleting are 403 naming who disabled them, nothing changed', async () => {
    const disabled = await updateUser(ports, root, 'dave', { enabled: false });
    expect(disabled).toMatchObject({ enabled: false, disabledBy: { username: 'root', role: 'platform-admin' } });
    // Who disabled whom is in the audit: the entry's actor and target, and the user after the change.
    expect(audit.at(-1)).toMatchObject({
      actor: 'root',
      action: 'user.updated',
      target: { kind: 'user', id: 'dave' },
      before: { enabled: true },
      after: { enabled: false, disabledBy: { username: 'root', role: 'platform-admin' } },
    });
    expect(audit.at(-1)?.before).not.toHaveProperty('disabledBy');
    const before = await everyone();
    const entries = audit.length;
    await expect(updateUser(ports, alice, 'dave', { enabled: true })).rejects.toThrow(ForbiddenError);
    await expect(updateUser(ports, alice, 'dave', { enabled: true })).rejects.toThrow(
      /'dave' was disabled by platform administrator 'root': only a platform administrator can enable them again/,
    );
    await expect(resetUserPassword(ports, alice, 'dave')).rejects.toThrow(
      /disabled by platform administrator 'root'.*reset their password/,
    );
    await expect(deleteUser(ports, alice, 'dave')).rejects.toThrow(/disabled by platform administrator 'root'.*delete them/);
    // Disabling again does not take the decision over.
    await updateUser(ports, alice, 'dave', { enabled: false });
    expect(await everyone()).toEqual(before);
    expect(audit.slice(entries).map((entry) => entry.after)).toEqual([
      expect.objectContaining({ disabledBy: { username: 'root', role: 'platform-admin' } }),
    ]);
    // Changing what the user holds stays the company admin's.
    expect(await updateUser(ports, alice, 'dave', { role: 'operator' })).toMatchObject({ enabled: false, role: 'operator' });
    // A platform admin enables them; then the company admin's rights are whole again.
    const enabled = await updateUser(ports, root, 'dave', { enabled: true });
    expect(enabled.enabled).toBe(true);
    expect(enabled).not.toHaveProperty('disabledBy');
    expect((await resetUserPassword(ports, alice, 'dave')).temporaryPassword).toMatch(/^.{16}$/);
  });

  it("is a company admin's own disable otherwise: another company admin may enable the user again", async () => {
    expect(await updateUser(ports, alice, 'dave', { enabled: false })).toMatchObject({
      disabledBy: { username: 'alice', role: 'company-admin' },
    });
    const erin = principal('erin', 'company-admin', ['acme']);
    expect(await updateUser(ports, erin, 'dave', { enabled: true })).toMatchObject({ enabled: true });
    // A platform admin disabling a user a company admin disabled makes it theirs.
    await updateUser(ports, alice, 'dave', { enabled: false });
    expect(await updateUser(ports, root, 'dave', { enabled: false })).toMatchObject({
      disabledBy: { username: 'root', role: 'platform-admin' },
    });
    await expect(updateUser(ports, erin, 'dave', { enabled: true })).rejects.toThrow(/platform administrator 'root'/);
  });

  it('records the role the caller acts with: a company-admin token of a user since made platform-admin disables as a company admin', async () => {
    await updateUser(ports, root, 'alice', { role: 'platform-admin', companies: ['acme'] });
    expect(await updateUser(ports, alice, 'dave', { enabled: false })).toMatchObject({
      disabledBy: { username: 'alice', role: 'company-admin' },
    });
    const erin = principal('erin', 'company-admin', ['acme']);
    expect(await updateUser(ports, erin, 'dave', { enabled: true })).toMatchObject({ enabled: true });
  });

  it('is kept in users.json across a restart of the directory', async () => {
    await updateUser(ports, root, 'dave', { enabled: false });
    const reopened = new LocalUserDirectory(await LocalUserStore.open(join(directory, 'users.json')));
    expect(await reopened.get('dave')).toMatchObject({ enabled: false, disabledBy: { username: 'root', role: 'platform-admin' } });
  });
});

describe('reading', () => {
  it("reads with the caller as they are now: a demoted or disabled administrator's earlier token lists and reads nothing", async () => {
    expect((await listUsers(ports, alice, { limit: 10, company: 'acme' })).items.length).toBeGreaterThan(0);
    await updateUser(ports, root, 'alice', { role: 'operator' });
    await expect(listUsers(ports, alice, { limit: 10, company: 'acme' })).rejects.toThrow(
      /Your role is now operator, which does not grant 'users:read'/,
    );
    await expect(getUser(ports, alice, 'dave')).rejects.toThrow(ForbiddenError);
    await updateUser(ports, root, 'alice', { role: 'company-admin', companies: ['globex'] });
    await expect(listUsers(ports, alice, { limit: 10, company: 'acme' })).rejects.toThrow(/company 'acme'/);
    await expect(getUser(ports, alice, 'dave')).rejects.toThrow(NotFoundError);
    await updateUser(ports, root, 'alice', { companies: ['acme'], enabled: false });
    await expect(getUser(ports, alice, 'dave')).rejects.toThrow(/disabled or deleted/);
  });
});

describe('deleting and resetting', () => {
  it('deletes a user within the bounds, recording them as they were', async () => {
    const dave = await getUser(ports, root, 'dave');
    await deleteUser(ports, alice, 'dave');
    expect(await users.get('dave')).toBeUndefined();
    expect(audit).toEqual([expect.objectContaining({ action: 'user.deleted', actor: 'alice', before: dave, companies: ['acme'] })]);
    expect(audit[0]).not.toHaveProperty('after');
    await expect(deleteUser(ports, alice, 'dave')).rejects.toThrow(NotFoundError);
    await expect(deleteUser(ports, alice, 'bob')).rejects.toThrow(NotFoundError);
    expect(await users.get('bob')).toBeDefined();
  });

  it('resets a password to a new temporary one, the user then having to change it, and refuses a disabled user (409)', async () => {
    const reset = await resetUserPassword(ports, alice, 'dave');
    expect(reset.temporaryPassword).toMatch(/^.{16}$/);
    expect((await getUser(ports, root, 'dave')).status).toBe('FORCE_CHANGE_PASSWORD');
    expect(audit).toEqual([
      expect.objectContaining({
        action: 'user.password-reset',
        before: expect.objectContaining({ status: 'CONFIRMED' }),
        after: expect.objectContaining({ status: 'FORCE_CHANGE_PASSWORD' }),
      }),
    ]);
    expect(JSON.stringify(audit)).not.toContain(reset.temporaryPassword);
    await expect(resetUserPassword(ports, alice, 'carol')).rejects.toThrow(NotFoundError);
    // A disabled user is enabled before a reset (Cognito refuses to set a disabled user's password).
    await updateUser(ports, alice, 'erin', { enabled: false });
    await expect(resetUserPassword(ports, alice, 'erin')).rejects.toThrow(/enable them first/);
    expect((await getUser(ports, root, 'erin')).status).toBe('CONFIRMED');
    await expect(resetUserPassword(ports, operator, 'bob')).rejects.toThrow(ForbiddenError);
  });
});
