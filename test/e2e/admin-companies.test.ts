/**
 * Companies administration end to end over `npm start` (bin/local.ts): the demo's platform administrator `root`
 * creates, lists, reads and changes a company through the typed client (every answer checked against the OpenAPI
 * document) and through `dss admin companies`; an operator (alice) is refused every admin route and changes nothing;
 * hostile input is 400, an existing id 409; a quota lowered below a company's usage is accepted and reported, and
 * the company's uploads then answer 413.
 */
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DssUser, dssJson, dssUser, runDss } from './cli-runner.js';
import { expectProblem, MiB, validArchive } from './failure-paths.js';
import { call, clientFor, expectError, uploadArchive, useLocalService } from './harness.js';

const local = useLocalService({ users: ['root', 'alice'] });

const root = () => clientFor(local.service, local.tokens.root).main;
const alice = () => clientFor(local.service, local.tokens.alice).main;

/** Every company as root lists it, by id (following every page). */
async function allCompanies(): Promise<Map<string, unknown>> {
  const found = new Map<string, unknown>();
  let cursor: string | undefined;
  do {
    const { data, error } = await root().GET('/admin/companies', {
      params: { query: { limit: 1, ...(cursor === undefined ? {} : { cursor }) } },
    });
    expect(error).toBeUndefined();
    for (const company of data?.items ?? []) {
      expect(found.has(company.id), company.id).toBe(false);
      found.set(company.id, company);
    }
    cursor = data?.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return found;
}

describe('companies administration', () => {
  it('lets root create initech with a 10 MiB quota, list it, get it and change its name and quota', async () => {
    const created = await root().POST('/admin/companies', { body: { id: 'initech', name: 'Initech', quotaBytes: 10 * MiB } });
    expect(created.response.status).toBe(201);
    expect(created.response.headers.get('location')).toBe('/admin/companies/initech');
    expect(created.data).toEqual({ id: 'initech', name: 'Initech', quotaBytes: 10 * MiB, usedBytes: 0, overQuota: false });

    const companies = await allCompanies();
    expect([...companies.keys()].sort()).toEqual(['acme', 'globex', 'initech']);
    expect(companies.get('initech')).toEqual(created.data);

    const got = await root().GET('/admin/companies/{companyId}', { params: { path: { companyId: 'initech' } } });
    expect(got.data).toEqual({ ...created.data, deviceCount: 0, userCount: 0 });
    const acme = await root().GET('/admin/companies/{companyId}', { params: { path: { companyId: 'acme' } } });
    expect(acme.data?.deviceCount).toBeGreaterThanOrEqual(100);
    // The demo's alice (operator) and olivia (viewer) hold acme.
    expect(acme.data?.userCount).toBe(2);
    expect(acme.data?.usedBytes).toBeGreaterThan(0);

    const renamed = await root().PATCH('/admin/companies/{companyId}', {
      params: { path: { companyId: 'initech' } },
      body: { name: 'Initech Corp', quotaBytes: 20 * MiB },
    });
    expect(renamed.data).toEqual({ id: 'initech', name: 'Initech Corp', quotaBytes: 20 * MiB, usedBytes: 0, overQuota: false });
    expectError(await root().GET('/admin/companies/{companyId}', { params: { path: { companyId: 'nobody' } } }), 404);
    expectError(
      await root().PATCH('/admin/companies/{companyId}', { params: { path: { companyId: 'nobody' } }, body: { name: 'N' } }),
      404,
    );
  });

  it('refuses an operator every admin route with 403 problem+json, and changes nothing', async () => {
    const before = await allCompanies();
    expectError(await alice().POST('/admin/companies', { body: { id: 'hooli', name: 'Hooli', quotaBytes: MiB } }), 403);
    expectError(await alice().GET('/admin/companies', {}), 403);
    // Even for her own company: administration is not company-scoped.
    expectError(await alice().GET('/admin/companies/{companyId}', { params: { path: { companyId: 'acme' } } }), 403);
    const patched = await alice().PATCH('/admin/companies/{companyId}', {
      params: { path: { companyId: 'acme' } },
      body: { quotaBytes: 10 ** 12 },
    });
    expect(expectError(patched, 403).detail).toMatch(/companies:write/);
    expect(await allCompanies()).toEqual(before);
  });

  it('answers 400 for a company id out of pattern and 409 for an existing id, changing nothing', async () => {
    const before = await allCompanies();
    for (const id of ['bad id', '-dash', 'a#b', 'x'.repeat(129)]) {
      const problem = expectError(await root().POST('/admin/companies', { body: { id, name: 'Bad', quotaBytes: MiB } }), 400);
      expect(
        problem.errors?.map((error) => error.path),
        id,
      ).toEqual(['/id']);
    }
    expectProblem(await call(`${local.service.api}/admin/companies/bad%20id`, { token: local.tokens.root }), 400, /companyId/);
    expectProblem(
      await call(`${local.service.api}/admin/companies/a%23b`, { method: 'PATCH', token: local.tokens.root, json: { name: 'N' } }),
      400,
    );
    expectError(await root().POST('/admin/companies', { body: { id: 'initech', name: 'Again', quotaBytes: 1 } }), 409);
    // Beside `initech`, `INITECH` would be a second company differing by case alone: new ids are lower case.
    const upper = expectError(await root().POST('/admin/companies', { body: { id: 'INITECH', name: 'Shadow', quotaBytes: 1 } }), 400);
    expect(upper.errors).toEqual([{ path: '/id', message: expect.stringContaining('lower-case letters') }]);
    expect(upper.errors?.[0]?.message).toContain("Use 'initech'.");
    expectError(await root().POST('/admin/companies', { body: { id: 'x', name: 'X', quotaBytes: 2 * 1024 ** 4 } }), 400);
    expectError(await root().PATCH('/admin/companies/{companyId}', { params: { path: { companyId: 'initech' } }, body: {} }), 400);
    expect(await allCompanies()).toEqual(before);
  });

  it('accepts a quota below the usage, reports it, and the company then answers uploads 413 until it is raised', async () => {
    const acme = (await root().GET('/admin/companies/{companyId}', { params: { path: { companyId: 'acme' } } })).data;
    expect(acme).toBeDefined();
    const { usedBytes, quotaBytes } = acme as { usedBytes: number; quotaBytes: number };
    const lowered = await root().PATCH('/admin/companies/{companyId}', {
      params: { path: { companyId: 'acme' } },
      body: { quotaBytes: usedBytes - 1 },
    });
    expect(lowered.data).toMatchObject({ quotaBytes: usedBytes - 1, usedBytes, overQuota: true });
    const refused = await uploadArchive(local.service, local.tokens.alice, 'acme', await validArchive('admin-quota', '1.0.0'));
    expect(expectError(refused, 413)).toMatchObject({ quotaBytes: usedBytes - 1, usedBytes });
    const raised = await root().PATCH('/admin/companies/{companyId}', { params: { path: { companyId: 'acme' } }, body: { quotaBytes } });
    expect(raised.data).toMatchObject({ quotaBytes, usedBytes, overQuota: false });
    const stored = await uploadArchive(local.service, local.tokens.alice, 'acme', await validArchive('admin-quota', '1.0.0'));
    expect(stored.response.status).toBe(201);
  });

  describe('dss admin companies', () => {
    let user: DssUser;
    const asRoot = () => ({ environment: { DSS_TOKEN: local.tokens.root } });
    beforeAll(async () => {
      user = await dssUser(local.service);
    });
    afterAll(() => rm(user.configDirectory, { recursive: true, force: true }));

    it('creates, lists, shows and changes companies, as tables or JSON', async () => {
      const created = await dssJson(user, ['admin', 'companies', 'create', 'umbrella', '--name', 'Umbrella', '--quota', '5MiB'], asRoot());
      expect(created).toEqual({ id: 'umbrella', name: 'Umbrella', quotaBytes: 5 * MiB, usedBytes: 0, overQuota: false });
      const listed = await dssJson(user, ['admin', 'companies', 'list', '--all', '--limit', '2'], asRoot());
      expect(listed.items.map((company: { id: string }) => company.id).sort()).toEqual(['acme', 'globex', 'initech', 'umbrella']);
      expect(listed.nextCursor).toBeNull();
      expect(await dssJson(user, ['admin', 'companies', 'get', 'umbrella'], asRoot())).toMatchObject({ deviceCount: 0, usedBytes: 0 });
      const updated = await dssJson(
        user,
        ['admin', 'companies', 'update', 'umbrella', '--name', 'Umbrella Corp', '--quota', '0'],
        asRoot(),
      );
      expect(updated).toMatchObject({ name: 'Umbrella Corp', quotaBytes: 0, overQuota: false });

      const table = await runDss(user, ['admin', 'companies', 'list', '--all'], asRoot());
      expect(table.code, table.stderr).toBe(0);
      expect(table.stdout).toMatch(/Umbrella Corp/);
      const shown = await runDss(user, ['admin', 'companies', 'get', 'acme'], asRoot());
      expect(shown.code, shown.stderr).toBe(0);
      expect(shown.stdout).toMatch(/devices\s*│\s*\d+/);
      expect(shown.stdout).toMatch(/users\s*│\s*2/);
    });

    it('fails with the problem for an operator (1) and on bad usage (2)', async () => {
      const refused = await runDss(user, ['admin', 'companies', 'list'], { environment: { DSS_TOKEN: local.tokens.alice } });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/error: 403 Forbidden/);
      const exists = await runDss(user, ['admin', 'companies', 'create', 'umbrella', '--name', 'U', '--quota', '1'], asRoot());
      expect(exists.code).toBe(1);
      expect(exists.stderr).toMatch(/error: 409/);
      expect((await runDss(user, ['admin', 'companies', 'update', 'umbrella'], asRoot())).code).toBe(2);
      expect((await runDss(user, ['admin', 'companies', 'create', 'x', '--name', 'X', '--quota', '2TiB'], asRoot())).code).toBe(2);
    });
  });
});
