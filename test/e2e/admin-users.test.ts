/**
 * Users administration end to end over `npm start` (bin/local.ts): the demo's platform administrator `root` invites
 * users into a new company, lists, reads and changes them, and makes alice company-admin of acme; alice then
 * administers acme's users only (the other companies' answer 403 or 404, and she grants nothing above her role);
 * a viewer is refused every admin route; hostile input is 400 problem+json and changes nothing; the last platform
 * admin cannot be demoted, disabled or deleted (409); disabling keeps a user from signing in; each change is in the
 * audit log (`GET /admin/audit`); `dss admin users` does the same from the command line. Every answer is checked against the OpenAPI document (clientFor, call).
 */
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../functions/core/audit/ports.js';
import { type DssUser, dssJson, dssUser, runDss } from './cli-runner.js';
import { expectProblem, expectViolation, MiB } from './failure-paths.js';
import { call, clientFor, DEMO_PASSWORDS, eventually, expectError, tokenFor, useLocalService } from './harness.js';

const local = useLocalService({ users: ['root', 'alice', 'olivia'] });

const root = () => clientFor(local.service, local.tokens.root).main;

/** Every user as root lists them, username → user, following every page. */
async function allUsers(): Promise<Map<string, unknown>> {
  const found = new Map<string, unknown>();
  let cursor: string | undefined;
  do {
    const { data, error } = await root().GET('/admin/users', {
      params: { query: { limit: 2, ...(cursor === undefined ? {} : { cursor }) } },
    });
    expect(error).toBeUndefined();
    for (const user of data?.items ?? []) {
      expect(found.has(user.username), user.username).toBe(false);
      found.set(user.username, user);
    }
    cursor = data?.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return found;
}

/** The answer of the token endpoint for a demo user's password. */
function signIn(username: keyof typeof DEMO_PASSWORDS) {
  return clientFor(local.service).auth.POST('/token', { body: { username, password: DEMO_PASSWORDS[username] } });
}

/** alice's token once root has made her company-admin of acme (a token carries the role it was issued with). */
let aliceAdmin: string;
const alice = () => clientFor(local.service, aliceAdmin).main;

describe('users administration', () => {
  it('lets root invite an operator and a viewer into a new company, list them, get them and count them', async () => {
    expect(
      (await root().POST('/admin/companies', { body: { id: 'initech', name: 'Initech', quotaBytes: 10 * MiB } })).response.status,
    ).toBe(201);
    const ivy = await root().POST('/admin/users', {
      body: { username: 'ivy', email: 'ivy@initech.example', role: 'operator', companies: ['initech'] },
    });
    expect(ivy.response.status).toBe(201);
    expect(ivy.response.headers.get('location')).toBe('/admin/users/ivy');
    // The answer holds the temporary password: no cache may keep it.
    expect(ivy.response.headers.get('cache-control')).toBe('no-store');
    expect(ivy.data?.user).toEqual({
      username: 'ivy',
      email: 'ivy@initech.example',
      role: 'operator',
      companies: ['initech'],
      enabled: true,
      status: 'FORCE_CHANGE_PASSWORD',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    // Locally the temporary password is answered, once: it meets the password policy.
    expect(ivy.data?.temporaryPassword).toMatch(/^(?=.*[a-z])(?=.*[A-Z])(?=.*[0-9])(?=.*[^A-Za-z0-9]).{8,}$/);
    const vic = await root().POST('/admin/users', {
      body: { username: 'vic.tor@initech', email: 'victor@initech.example', role: 'viewer', companies: ['initech'] },
    });
    expect(vic.response.headers.get('location')).toBe('/admin/users/vic.tor%40initech');

    const listed = await root().GET('/admin/users', { params: { query: { company: 'initech' } } });
    expect(listed.data).toEqual({ items: [ivy.data?.user, vic.data?.user], nextCursor: null });
    const users = await allUsers();
    expect([...users.keys()]).toEqual(['alice', 'bob', 'ivy', 'olivia', 'root', 'vic.tor@initech']);
    expect(users.get('root')).toMatchObject({ role: 'platform-admin', companies: [], enabled: true, status: 'CONFIRMED' });
    expect((await root().GET('/admin/users/{username}', { params: { path: { username: 'vic.tor@initech' } } })).data).toEqual(
      vic.data?.user,
    );
    expectError(await root().GET('/admin/users/{username}', { params: { path: { username: 'nobody' } } }), 404);
    const initech = await root().GET('/admin/companies/{companyId}', { params: { path: { companyId: 'initech' } } });
    expect(initech.data?.userCount).toBe(2);
    expectError(
      await root().POST('/admin/users', { body: { username: 'ivy', email: 'other@example.com', role: 'viewer', companies: ['acme'] } }),
      409,
    );
  });

  it('lets root make alice company-admin of acme; she then administers the users of acme within her role', async () => {
    const promoted = await root().PATCH('/admin/users/{username}', {
      params: { path: { username: 'alice' } },
      body: { role: 'company-admin' },
    });
    expect(promoted.data).toMatchObject({ username: 'alice', role: 'company-admin', companies: ['acme'] });
    aliceAdmin = await tokenFor(local.service, 'alice');

    const amy = await alice().POST('/admin/users', {
      body: { username: 'amy', email: 'amy@acme.example', role: 'viewer', companies: ['acme'] },
    });
    expect(amy.response.status).toBe(201);
    // olivia also holds globex: she is not alice's to administer.
    const acme = await alice().GET('/admin/users', { params: { query: { company: 'acme' } } });
    expect(acme.data?.items.map((user) => user.username)).toEqual(['alice', 'amy']);
    const operator = await alice().PATCH('/admin/users/{username}', { params: { path: { username: 'amy' } }, body: { role: 'operator' } });
    expect(operator.data).toMatchObject({ role: 'operator', companies: ['acme'] });
  });

  it("refuses alice initech's users (403 listing, 404 reading and changing), platform-admin grants and her own escalation", async () => {
    const before = await allUsers();
    expectProblem(await alice().GET('/admin/users', { params: { query: { company: 'initech' } } }), 403, /initech/);
    expectProblem(await alice().GET('/admin/users', {}), 400, /acme/);
    expectError(await alice().GET('/admin/users/{username}', { params: { path: { username: 'ivy' } } }), 404);
    expectError(await alice().GET('/admin/users/{username}', { params: { path: { username: 'olivia' } } }), 404);
    expectError(await alice().PATCH('/admin/users/{username}', { params: { path: { username: 'ivy' } }, body: { enabled: false } }), 404);
    expectError(await alice().DELETE('/admin/users/{username}', { params: { path: { username: 'ivy' } } }), 404);
    expectError(await alice().POST('/admin/users/{username}/reset-password', { params: { path: { username: 'root' } } }), 404);
    expectProblem(
      await alice().POST('/admin/users', {
        body: { username: 'pam', email: 'pam@acme.example', role: 'platform-admin', companies: ['acme'] },
      }),
      403,
      /never platform-admin/,
    );
    expectError(
      await alice().POST('/admin/users', {
        body: { username: 'pam', email: 'pam@acme.example', role: 'viewer', companies: ['acme', 'initech'] },
      }),
      403,
    );
    expectError(
      await alice().PATCH('/admin/users/{username}', { params: { path: { username: 'alice' } }, body: { role: 'platform-admin' } }),
      403,
    );
    expectError(
      await alice().PATCH('/admin/users/{username}', { params: { path: { username: 'alice' } }, body: { companies: ['acme', 'globex'] } }),
      403,
    );
    expectError(
      await alice().PATCH('/admin/users/{username}', { params: { path: { username: 'amy' } }, body: { companies: ['initech'] } }),
      403,
    );
    expectProblem(await alice().DELETE('/admin/users/{username}', { params: { path: { username: 'alice' } } }), 409, /yourself/);
    expect(await allUsers()).toEqual(before);
  });

  it('refuses a viewer every admin route with 403 problem+json', async () => {
    const before = await allUsers();
    const olivia = clientFor(local.service, local.tokens.olivia).main;
    const path = { params: { path: { username: 'olivia' } } };
    expectError(
      await olivia.POST('/admin/users', { body: { username: 'x', email: 'x@example.com', role: 'viewer', companies: ['acme'] } }),
      403,
    );
    expectError(await olivia.GET('/admin/users', { params: { query: { company: 'acme' } } }), 403);
    expectError(await olivia.GET('/admin/users/{username}', path), 403);
    expectError(await olivia.PATCH('/admin/users/{username}', { ...path, body: { role: 'platform-admin' } }), 403);
    expectError(await olivia.DELETE('/admin/users/{username}', path), 403);
    expectError(await olivia.POST('/admin/users/{username}/reset-password', path), 403);
    expectError(await olivia.GET('/admin/companies', {}), 403);
    expectError(await olivia.GET('/admin/companies/{companyId}', { params: { path: { companyId: 'acme' } } }), 403);
    expect(await allUsers()).toEqual(before);
  });

  it('answers hostile input 400 problem+json naming what is wrong, and changes nothing', async () => {
    const before = await allUsers();
    const invite = (body: unknown) => call(`${local.service.api}/admin/users`, { token: local.tokens.root, json: body });
    const valid = { username: 'zed', email: 'zed@example.com', role: 'viewer', companies: ['acme'] };
    for (const username of ['bad name', '-zed', 'zed/../root', 'x'.repeat(129), '']) {
      expectViolation(expectProblem(await invite({ ...valid, username }), 400), '/username');
    }
    expectViolation(
      expectProblem(await invite({ ...valid, role: 'admin' }), 400),
      '/role',
      /viewer, operator, company-admin, platform-admin/,
    );
    expectViolation(expectProblem(await invite({ ...valid, email: 'not-an-email' }), 400), '/email');
    expectViolation(expectProblem(await invite({ ...valid, companies: ['acme', 'hooli'] }), 400, /'hooli'/), '/companies/1');
    expectProblem(await invite({ ...valid, companies: [] }), 400, /at least one/);
    expectViolation(expectProblem(await invite({ ...valid, password: 'Secret-1' }), 400), '/password');
    expectProblem(await call(`${local.service.api}/admin/users/bad%20name`, { token: local.tokens.root }), 400, /username/);
    expectProblem(
      await call(`${local.service.api}/admin/users/ivy`, { method: 'PATCH', token: local.tokens.root, json: { role: 'root' } }),
      400,
    );
    expectProblem(await call(`${local.service.api}/admin/users/ivy`, { method: 'PATCH', token: local.tokens.root, json: {} }), 400);
    expectProblem(
      await call(`${local.service.api}/admin/users/ivy`, { method: 'PATCH', token: local.tokens.root, json: { companies: ['hooli'] } }),
      400,
      /hooli/,
    );
    expectProblem(
      await call(`${local.service.api}/admin/users`, {
        token: local.tokens.root,
        body: JSON.stringify(valid),
        headers: { 'content-type': 'application/json; charset=utf-16' },
      }),
      415,
    );
    expect(await allUsers()).toEqual(before);
  });

  it('keeps root, the only platform admin: root cannot demote, disable or delete themselves (409)', async () => {
    const before = await allUsers();
    const path = { params: { path: { username: 'root' } } };
    expectProblem(
      await root().PATCH('/admin/users/{username}', { ...path, body: { role: 'company-admin', companies: ['acme'] } }),
      409,
      /cannot change the role of yourself/,
    );
    expectError(await root().PATCH('/admin/users/{username}', { ...path, body: { enabled: false } }), 409);
    expectError(await root().DELETE('/admin/users/{username}', path), 409);
    expect(await allUsers()).toEqual(before);
  });

  it('disables (no sign-in), enables, resets a password and deletes users', async () => {
    const bob = { params: { path: { username: 'bob' } } };
    expect((await root().PATCH('/admin/users/{username}', { ...bob, body: { enabled: false } })).data).toMatchObject({ enabled: false });
    expect((await signIn('bob')).response.status).toBe(401);
    expectProblem(await root().POST('/admin/users/{username}/reset-password', bob), 409, /enable them first/);
    expect((await root().PATCH('/admin/users/{username}', { ...bob, body: { enabled: true } })).data).toMatchObject({ enabled: true });
    expect((await signIn('bob')).response.status).toBe(200);

    const ivy = { params: { path: { username: 'ivy' } } };
    const reset = await root().POST('/admin/users/{username}/reset-password', ivy);
    expect(reset.response.status).toBe(200);
    expect(reset.data?.temporaryPassword).toMatch(/^.{16}$/);
    expect(reset.response.headers.get('cache-control')).toBe('no-store');
    expect((await root().GET('/admin/users/{username}', ivy)).data?.status).toBe('FORCE_CHANGE_PASSWORD');

    const deleted = await root().DELETE('/admin/users/{username}', ivy);
    expect(deleted.response.status).toBe(204);
    expectError(await root().GET('/admin/users/{username}', ivy), 404);
    expectError(await root().DELETE('/admin/users/{username}', ivy), 404);
    const initech = await root().GET('/admin/companies/{companyId}', { params: { path: { companyId: 'initech' } } });
    expect(initech.data?.userCount).toBe(1);
    expect(await alice().DELETE('/admin/users/{username}', { params: { path: { username: 'amy' } } })).toMatchObject({
      response: { status: 204 },
    });
  });

  it('recorded each change in the audit log with the user before and after, nothing refused, never a password', async () => {
    // The actor listing reads an index: an entry shows there within about a second.
    let byAlice: AuditEntry[] = [];
    await eventually(async () => {
      const { data } = await root().GET('/admin/audit', { params: { query: { actor: 'alice' } } });
      byAlice = data?.items ?? [];
      return byAlice.length === 3;
    }, "alice's three changes in the audit log");
    // Newest first: she invited amy, made her an operator, and deleted her; everything she was refused left no entry.
    expect(byAlice.map((entry) => [entry.action, entry.target.id])).toEqual([
      ['user.deleted', 'amy'],
      ['user.updated', 'amy'],
      ['user.invited', 'amy'],
    ]);
    expect(byAlice[1]).toMatchObject({ companies: ['acme'], before: { role: 'viewer' }, after: { role: 'operator' } });
    // alice, company admin of acme, reads her company's entries: root making her one is there too.
    const acme = await alice().GET('/admin/audit', { params: { query: { company: 'acme' } } });
    expect(acme.data?.items.map((entry) => `${entry.actor} ${entry.action} ${entry.target.id}`)).toContain('root user.updated alice');
    const initech = (await root().GET('/admin/audit', { params: { query: { company: 'initech', limit: 100 } } })).data?.items ?? [];
    expect(initech.map((entry) => `${entry.action} ${entry.target.id}`)).toEqual(
      expect.arrayContaining(['user.invited ivy', 'user.invited vic.tor@initech', 'user.password-reset ivy', 'user.deleted ivy']),
    );
    const bob = ((await root().GET('/admin/audit', { params: { query: { company: 'globex', limit: 100 } } })).data?.items ?? []).filter(
      (entry) => entry.target.id === 'bob',
    );
    expect(bob.map((entry) => entry.after?.enabled)).toEqual([true, false]);
    expect(JSON.stringify(initech)).not.toMatch(/passwordHash|temporaryPassword|scrypt/);
  });

  it("holds a platform admin's disable against a company admin: enabling, resetting and deleting are 403 naming root", async () => {
    const henry = { params: { path: { username: 'henry' } } };
    expect(
      (await root().POST('/admin/users', { body: { username: 'henry', email: 'henry@acme.example', role: 'viewer', companies: ['acme'] } }))
        .response.status,
    ).toBe(201);
    const disabled = await root().PATCH('/admin/users/{username}', { ...henry, body: { enabled: false } });
    expect(disabled.data).toMatchObject({ enabled: false, disabledBy: { username: 'root', role: 'platform-admin' } });

    // alice, company admin of acme, administers henry otherwise (she reads him), but cannot undo root's decision.
    expect((await alice().GET('/admin/users/{username}', henry)).data).toMatchObject({ disabledBy: { username: 'root' } });
    const refusal = /disabled by platform administrator 'root'/;
    expectProblem(await alice().PATCH('/admin/users/{username}', { ...henry, body: { enabled: true } }), 403, refusal);
    expectProblem(await alice().POST('/admin/users/{username}/reset-password', henry), 403, refusal);
    expectProblem(await alice().DELETE('/admin/users/{username}', henry), 403, refusal);
    expect((await root().GET('/admin/users/{username}', henry)).data).toMatchObject({ enabled: false });

    // Who disabled whom is in the audit log.
    let entry: AuditEntry | undefined;
    await eventually(async () => {
      const { data } = await root().GET('/admin/audit', { params: { query: { actor: 'root', limit: 10 } } });
      entry = data?.items.find((item) => item.target.id === 'henry' && item.action === 'user.updated');
      return entry !== undefined;
    }, "root's disable of henry in the audit log");
    expect(entry).toMatchObject({
      actor: 'root',
      before: { enabled: true },
      after: { enabled: false, disabledBy: { username: 'root', role: 'platform-admin' } },
    });
  });

  it("checks administration reads against the user as they are now: alice's company-admin token reads nothing once she is an operator", async () => {
    expect((await alice().GET('/admin/users', { params: { query: { company: 'acme' } } })).response.status).toBe(200);
    expect((await alice().GET('/admin/audit', { params: { query: { company: 'acme' } } })).response.status).toBe(200);
    const demoted = await root().PATCH('/admin/users/{username}', { params: { path: { username: 'alice' } }, body: { role: 'operator' } });
    expect(demoted.data).toMatchObject({ role: 'operator' });
    // The same access token, still within its 15 minutes.
    const demotion = /Your role is now operator/;
    expectProblem(await alice().GET('/admin/users', { params: { query: { company: 'acme' } } }), 403, demotion);
    expectProblem(await alice().GET('/admin/users/{username}', { params: { path: { username: 'henry' } } }), 403, demotion);
    expectProblem(await alice().GET('/admin/audit', { params: { query: { company: 'acme' } } }), 403, demotion);
  });

  describe('dss admin users', () => {
    let user: DssUser;
    const asRoot = () => ({ environment: { DSS_TOKEN: local.tokens.root } });
    beforeAll(async () => {
      user = await dssUser(local.service);
    });
    afterAll(() => rm(user.configDirectory, { recursive: true, force: true }));

    it('invites (printing the temporary password once), lists, shows, changes, disables, enables, resets and deletes', async () => {
      const invited = await runDss(
        user,
        ['admin', 'users', 'invite', 'quinn', '--email', 'quinn@example.com', '--role', 'operator', '--companies', 'initech'],
        asRoot(),
      );
      expect(invited.code, invited.stderr).toBe(0);
      expect(invited.stdout.match(/Temporary password: \S{16}/g)).toHaveLength(1);
      expect(invited.stderr).toMatch(/Shown this once/);

      const listed = await dssJson(user, ['admin', 'users', 'list', '--company', 'initech', '--all', '--limit', '1'], asRoot());
      expect(listed.items.map((item: { username: string }) => item.username)).toEqual(['quinn', 'vic.tor@initech']);
      expect(listed.nextCursor).toBeNull();
      expect(await dssJson(user, ['admin', 'users', 'get', 'quinn'], asRoot())).toMatchObject({
        role: 'operator',
        status: 'FORCE_CHANGE_PASSWORD',
      });
      expect(
        await dssJson(user, ['admin', 'users', 'update', 'quinn', '--role', 'viewer', '--companies', 'initech,acme'], asRoot()),
      ).toMatchObject({
        role: 'viewer',
        companies: ['initech', 'acme'],
      });
      expect(await dssJson(user, ['admin', 'users', 'disable', 'quinn'], asRoot())).toMatchObject({ enabled: false });
      expect((await runDss(user, ['admin', 'users', 'get', 'quinn'], asRoot())).stdout).toMatch(/disabledBy\s*│ root \(platform-admin\)/);
      expect(await dssJson(user, ['admin', 'users', 'enable', 'quinn'], asRoot())).toMatchObject({ enabled: true });
      const reset = await runDss(user, ['admin', 'users', 'reset-password', 'quinn'], asRoot());
      expect(reset.code, reset.stderr).toBe(0);
      expect(reset.stdout).toMatch(/^Temporary password: \S{16}\n$/);
      const table = await runDss(user, ['admin', 'users', 'list'], asRoot());
      expect(table.stdout).toMatch(/quinn\s*│\s*viewer/);
      expect((await runDss(user, ['admin', 'users', 'delete', 'quinn'], asRoot())).stdout).toMatch(/Deleted user quinn/);
    });

    it('fails with the problem (1) and on bad usage (2)', async () => {
      const missing = await runDss(user, ['admin', 'users', 'get', 'quinn'], asRoot());
      expect(missing.code).toBe(1);
      expect(missing.stderr).toMatch(/error: 404/);
      expect((await runDss(user, ['admin', 'users', 'invite', 'x', '--email', 'x@example.com', '--role', 'admin'], asRoot())).code).toBe(2);
      expect((await runDss(user, ['admin', 'users', 'update', 'bob'], asRoot())).code).toBe(2);
      const viewer = await runDss(user, ['admin', 'users', 'list', '--company', 'acme'], {
        environment: { DSS_TOKEN: local.tokens.olivia },
      });
      expect(viewer.code).toBe(1);
      expect(viewer.stderr).toMatch(/error: 403 Forbidden/);
    });
  });
});
