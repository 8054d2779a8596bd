/**
 * API clients administration over the local runtime, every answer checked against the OpenAPI document: root creates
 * an operator client for acme and sees its secret once (never in a read or the listing); a company admin of acme
 * (invited by root) creates one for acme and is refused globex's; a viewer and an operator are refused; a rotation
 * answers a new secret and the previous one's end; a client is disabled, enabled and deleted; the 51st client of a
 * company is refused; each change is in the audit log with its actor and no secret.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { expectOk } from '../../client/index.js';
import { call, clientFor, expectError, useLocalService } from './harness.js';

const local = useLocalService({ users: ['root', 'alice', 'olivia'] });
const as = (token: string) => clientFor(local.service, token).main;
const root = () => as(local.tokens.root);
const NEW_PASSWORD = 'Acme-clients-2026!';
const SECRET = /^[A-Za-z0-9_-]{43}$/;
const CLIENT_ID = /^api_[0-9A-HJKMNP-TV-Z]{26}$/;
let carol: string;

const client = (clientId: string) => ({ params: { path: { clientId } } });
const clientUrl = (clientId: string, suffix = '') => `${local.service.api}/admin/api-clients/${clientId}${suffix}`;

beforeAll(async () => {
  const invited = expectOk(
    await root().POST('/admin/users', {
      body: { username: 'carol', email: 'carol@acme.example', role: 'company-admin', companies: ['acme'] },
    }),
  );
  const auth = clientFor(local.service).auth;
  const password = invited.temporaryPassword as string;
  carol = expectOk(await auth.POST('/token', { body: { username: 'carol', password, new_password: NEW_PASSWORD } })).access_token;
}, 60_000);

/** The audit entries of one client, newest first, as root reads them. */
async function auditOf(clientId: string) {
  const audit = expectOk(await root().GET('/admin/audit', { params: { query: { company: 'acme', limit: 1000 } } }));
  return audit.items.filter((entry) => entry.target.kind === 'api-client' && entry.target.id === clientId);
}

describe('API clients administration', () => {
  it('creates a client with its secret shown once, then reads, lists, rotates, disables, enables and deletes it', async () => {
    const created = await root().POST('/admin/api-clients', { body: { name: 'Store back office', company: 'acme', role: 'operator' } });
    expect(created.response.status).toBe(201);
    expect(created.response.headers.get('cache-control')).toBe('no-store');
    const made = expectOk(created);
    expect(made).toMatchObject({ name: 'Store back office', company: 'acme', role: 'operator', enabled: true, createdBy: 'root' });
    expect(made.clientId).toMatch(CLIENT_ID);
    expect(made.clientSecret).toMatch(SECRET);
    expect(created.response.headers.get('location')).toBe(`/admin/api-clients/${made.clientId}`);

    const { clientSecret, ...withoutSecret } = made;
    expect(expectOk(await root().GET('/admin/api-clients/{clientId}', client(made.clientId)))).toEqual(withoutSecret);
    const listed = expectOk(await root().GET('/admin/api-clients', { params: { query: { company: 'acme' } } }));
    expect(listed.items).toContainEqual(withoutSecret);
    expect(JSON.stringify(listed)).not.toContain(clientSecret);

    const before = Date.now();
    const rotated = await root().POST('/admin/api-clients/{clientId}/secret', client(made.clientId));
    expect(rotated.response.headers.get('cache-control')).toBe('no-store');
    const newSecret = expectOk(rotated);
    expect(newSecret.clientSecret).toMatch(SECRET);
    expect(newSecret.clientSecret).not.toBe(clientSecret);
    const overlapEnds = Date.parse(newSecret.previousSecretExpiresAt ?? '');
    expect(overlapEnds - before).toBeGreaterThanOrEqual(24 * 3_600_000 - 1_000);
    expect(overlapEnds - Date.now()).toBeLessThanOrEqual(24 * 3_600_000);
    const short = expectOk(
      await root().POST('/admin/api-clients/{clientId}/secret', { ...client(made.clientId), body: { previousSecretValidSeconds: 60 } }),
    );
    expect(Date.parse(short.previousSecretExpiresAt ?? '') - Date.now()).toBeLessThanOrEqual(60_000);
    const atOnce = expectOk(
      await root().POST('/admin/api-clients/{clientId}/secret', { ...client(made.clientId), body: { previousSecretValidSeconds: 0 } }),
    );
    expect(atOnce).not.toHaveProperty('previousSecretExpiresAt');
    const tooLong = await call(clientUrl(made.clientId, '/secret'), {
      token: local.tokens.root,
      json: { previousSecretValidSeconds: 86_401 },
    });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.errors).toEqual([expect.objectContaining({ path: '/previousSecretValidSeconds' })]);

    const disabled = expectOk(await root().PATCH('/admin/api-clients/{clientId}', { ...client(made.clientId), body: { enabled: false } }));
    expect(disabled.enabled).toBe(false);
    expect(disabled.updated > made.updated).toBe(true);
    const enabled = expectOk(
      await root().PATCH('/admin/api-clients/{clientId}', { ...client(made.clientId), body: { enabled: true, name: 'Back office' } }),
    );
    expect(enabled).toMatchObject({ enabled: true, name: 'Back office' });

    const deleted = await root().DELETE('/admin/api-clients/{clientId}', client(made.clientId));
    expect(deleted.response.status).toBe(204);
    expectError(await root().GET('/admin/api-clients/{clientId}', client(made.clientId)), 404);
    expectError(await root().DELETE('/admin/api-clients/{clientId}', client(made.clientId)), 404);

    const entries = await auditOf(made.clientId);
    expect(entries.map((entry) => [entry.action, entry.actor])).toEqual([
      ['api-client.deleted', 'root'],
      ['api-client.updated', 'root'],
      ['api-client.updated', 'root'],
      ['api-client.secret-rotated', 'root'],
      ['api-client.secret-rotated', 'root'],
      ['api-client.secret-rotated', 'root'],
      ['api-client.created', 'root'],
    ]);
    expect(entries[2]).toMatchObject({ before: { enabled: true }, after: { enabled: false } });
    const text = JSON.stringify(entries);
    for (const secret of [clientSecret, newSecret.clientSecret, short.clientSecret, atOnce.clientSecret])
      expect(text).not.toContain(secret);
    expect(text).not.toMatch(/scrypt|secretHash/);
  });

  it("lets a company admin manage their company's clients only, and refuses viewers and operators", async () => {
    const ours = await as(carol).POST('/admin/api-clients', { body: { name: 'CI pipeline', company: 'acme', role: 'viewer' } });
    expect(ours.response.status).toBe(201);
    const made = expectOk(ours);
    expect(made.createdBy).toBe('carol');
    const refused = expectError(
      await as(carol).POST('/admin/api-clients', { body: { name: 'ERP', company: 'globex', role: 'viewer' } }),
      403,
    );
    expect(refused.detail).toContain("'globex'");
    const globex = expectOk(await root().POST('/admin/api-clients', { body: { name: 'Globex ERP', company: 'globex', role: 'operator' } }));
    // Another company's client reads as unknown, whatever is asked of it.
    expectError(await as(carol).GET('/admin/api-clients/{clientId}', client(globex.clientId)), 404);
    expectError(await as(carol).PATCH('/admin/api-clients/{clientId}', { ...client(globex.clientId), body: { enabled: false } }), 404);
    expectError(await as(carol).POST('/admin/api-clients/{clientId}/secret', client(globex.clientId)), 404);
    expectError(await as(carol).DELETE('/admin/api-clients/{clientId}', client(globex.clientId)), 404);
    expectError(await as(carol).GET('/admin/api-clients', { params: { query: { company: 'globex' } } }), 403);
    const mine = expectOk(await as(carol).GET('/admin/api-clients'));
    expect(mine.items.map((item) => item.company)).not.toContain('globex');
    expect(mine.items.map((item) => item.clientId)).toContain(made.clientId);
    expect(expectOk(await root().GET('/admin/api-clients/{clientId}', client(globex.clientId))).enabled).toBe(true);

    for (const token of [local.tokens.olivia, local.tokens.alice]) {
      expectError(await as(token).POST('/admin/api-clients', { body: { name: 'Mine', company: 'acme', role: 'viewer' } }), 403);
      expectError(await as(token).GET('/admin/api-clients', { params: { query: { company: 'acme' } } }), 403);
    }
    const unknown = expectError(await root().POST('/admin/api-clients', { body: { name: 'X', company: 'nowhere', role: 'viewer' } }), 400);
    expect(unknown.detail).toContain("'nowhere'");
    expect((await auditOf(made.clientId)).map((entry) => [entry.action, entry.actor])).toEqual([['api-client.created', 'carol']]);
  });

  it('refuses the 51st client of a company, and makes room when one is deleted', async () => {
    expect(
      (await root().POST('/admin/companies', { body: { id: 'initech', name: 'Initech', quotaBytes: 1_000_000 } })).response.status,
    ).toBe(201);
    const made: string[] = [];
    for (let index = 0; index < 50; index += 1) {
      made.push(
        expectOk(await root().POST('/admin/api-clients', { body: { name: `client ${index}`, company: 'initech', role: 'viewer' } }))
          .clientId,
      );
    }
    const full = expectError(
      await root().POST('/admin/api-clients', { body: { name: 'one more', company: 'initech', role: 'viewer' } }),
      409,
    );
    expect(full.detail).toContain('50');
    const first = expectOk(await root().GET('/admin/api-clients', { params: { query: { company: 'initech', limit: 30 } } }));
    const rest = expectOk(
      await root().GET('/admin/api-clients', { params: { query: { company: 'initech', limit: 30, cursor: first.nextCursor ?? '' } } }),
    );
    expect([...first.items, ...rest.items].map((item) => item.clientId)).toEqual(made);
    expect(rest.nextCursor).toBeNull();
    expect((await root().DELETE('/admin/api-clients/{clientId}', client(made[0] as string))).response.status).toBe(204);
    expect((await root().POST('/admin/api-clients', { body: { name: 'fits', company: 'initech', role: 'viewer' } })).response.status).toBe(
      201,
    );
  }, 120_000);
});
