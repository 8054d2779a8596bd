/**
 * The audit log end to end over `npm start` (bin/local.ts): root creates and changes a company, and `GET /admin/audit`
 * (through the typed client, every answer checked against the OpenAPI document) lists both changes newest first with
 * root as their actor and the values before and after, by company and by actor; an operator (alice) is refused; the
 * local bus's file gets an AdministrativeChange event per entry, its id the entry's; `dss admin audit list` prints them.
 */
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DssUser, dssJson, dssUser, runDss } from './cli-runner.js';
import { MiB } from './failure-paths.js';
import { clientFor, eventually, expectError, useLocalService } from './harness.js';

const local = useLocalService({ users: ['root', 'alice'] });

const root = () => clientFor(local.service, local.tokens.root).main;
const alice = () => clientFor(local.service, local.tokens.alice).main;

/** The AdministrativeChange events in the local bus's file, in order. */
async function administrativeChanges(): Promise<Record<string, unknown>[]> {
  const text = await readFile(join(local.settings.dataDirectory, 'events', 'events.jsonl'), 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((event) => event.type === 'AdministrativeChange');
}

describe('the audit log', () => {
  it("lists root's creation and change of a company, newest first, with the values before and after", async () => {
    expect(
      (await root().POST('/admin/companies', { body: { id: 'initech', name: 'Initech', quotaBytes: 10 * MiB } })).response.status,
    ).toBe(201);
    const patched = await root().PATCH('/admin/companies/{companyId}', {
      params: { path: { companyId: 'initech' } },
      body: { name: 'Initech Corp', quotaBytes: 20 * MiB },
    });
    expect(patched.response.status).toBe(200);

    const { data, error } = await root().GET('/admin/audit', {});
    expect(error).toBeUndefined();
    const [updated, created] = data?.items ?? [];
    expect(created).toMatchObject({
      actor: 'root',
      action: 'company.created',
      target: { kind: 'company', id: 'initech' },
      companies: ['initech'],
      after: { id: 'initech', name: 'Initech', quotaBytes: 10 * MiB },
    });
    expect(created?.before).toBeUndefined();
    expect(updated).toMatchObject({
      actor: 'root',
      action: 'company.updated',
      target: { kind: 'company', id: 'initech' },
      before: { id: 'initech', name: 'Initech', quotaBytes: 10 * MiB },
      after: { id: 'initech', name: 'Initech Corp', quotaBytes: 20 * MiB },
    });
  });

  it('filters by company and by actor, and pages with cursors', async () => {
    await root().POST('/admin/companies', { body: { id: 'hooli', name: 'Hooli', quotaBytes: MiB } });
    const byCompany = await root().GET('/admin/audit', { params: { query: { company: 'initech' } } });
    expect(byCompany.data?.items.map((entry) => entry.action)).toEqual(['company.updated', 'company.created']);
    const hooli = await root().GET('/admin/audit', { params: { query: { company: 'hooli' } } });
    expect(hooli.data?.items.map((entry) => [entry.action, entry.target.id])).toEqual([['company.created', 'hooli']]);
    // The actor listing reads an index: an entry shows there within moments of its change.
    await eventually(async () => {
      const byActor = await root().GET('/admin/audit', { params: { query: { actor: 'root' } } });
      return byActor.data?.items.length === 3;
    }, "root's three entries in the actor listing");
    const nobody = await root().GET('/admin/audit', { params: { query: { actor: 'nobody', company: 'initech' } } });
    expect(nobody.data).toEqual({ items: [], nextCursor: null });

    const first = await root().GET('/admin/audit', { params: { query: { company: 'initech', limit: 1 } } });
    expect(first.data?.items.map((entry) => entry.action)).toEqual(['company.updated']);
    const second = await root().GET('/admin/audit', {
      params: { query: { company: 'initech', limit: 1, cursor: first.data?.nextCursor as string } },
    });
    expect(second.data?.items.map((entry) => entry.action)).toEqual(['company.created']);
    expectError(
      await root().GET('/admin/audit', { params: { query: { company: 'hooli', cursor: first.data?.nextCursor as string } } }),
      400,
    );
  });

  it('refuses an operator, even for her own company', async () => {
    expect(expectError(await alice().GET('/admin/audit', {}), 403).detail).toMatch(/users:read/);
    expectError(await alice().GET('/admin/audit', { params: { query: { company: 'acme' } } }), 403);
  });

  it('emits an AdministrativeChange event per entry on the local bus, its id the entry id', async () => {
    const entries = (await root().GET('/admin/audit', {})).data?.items ?? [];
    expect(entries).toHaveLength(3);
    await eventually(async () => (await administrativeChanges()).length === 3, 'three AdministrativeChange events');
    const events = await administrativeChanges();
    expect(events).toEqual([...entries].reverse().map((entry) => ({ type: 'AdministrativeChange', ...entry })));
  });

  describe('dss admin audit list', () => {
    let user: DssUser;
    const asRoot = () => ({ environment: { DSS_TOKEN: local.tokens.root } });
    beforeAll(async () => {
      user = await dssUser(local.service);
    });
    afterAll(() => rm(user.configDirectory, { recursive: true, force: true }));

    it('prints the changes as a table or JSON, filtered, and refuses an operator', async () => {
      const listed = await dssJson(user, ['admin', 'audit', 'list', '--company', 'initech', '--actor', 'root'], asRoot());
      expect(listed.items.map((entry: { action: string }) => entry.action)).toEqual(['company.updated', 'company.created']);
      const table = await runDss(user, ['admin', 'audit', 'list', '--company', 'initech'], asRoot());
      expect(table.code, table.stderr).toBe(0);
      expect(table.stdout).toMatch(/company\.updated.*company initech.*name "Initech" → "Initech Corp"/);
      const refused = await runDss(user, ['admin', 'audit', 'list'], { environment: { DSS_TOKEN: local.tokens.alice } });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/403|users:read/);
    });
  });
});
