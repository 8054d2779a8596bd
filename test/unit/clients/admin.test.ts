/**
 * API clients administration (functions/core/clients/admin.ts) on the DynamoDB store and DynamoDB Local: the secret
 * shown once and kept as a hash, the bounds of a company administrator, the listing's indexes and cursors, rotation
 * with and without an overlap, the per-company limit, and the audit entry of each change.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CursorCodec } from '../../../functions/adapters/aws/cursor-codec.js';
import { DynamoDbApiClientStore } from '../../../functions/adapters/aws/dynamodb-api-client-store.js';
import { ROLES, type Role } from '../../../functions/core/access/roles.js';
import type { AuditEntry } from '../../../functions/core/audit/ports.js';
import {
  type ApiClientAdminPorts,
  createApiClient,
  deleteApiClient,
  getApiClient,
  listApiClients,
  rotateApiClientSecret,
  updateApiClient,
} from '../../../functions/core/clients/admin.js';
import { MAX_API_CLIENTS_PER_COMPANY } from '../../../functions/core/clients/model.js';
import { verifyDeviceSecret } from '../../../functions/core/devices/tokens.js';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError } from '../../../functions/core/shared/errors.js';
import type { Principal } from '../../../functions/core/shared/principal.js';
import { LOCAL_TABLES } from '../../../functions/local/local-environment.js';
import { callersDirectory } from '../../support/administrators.js';
import { useLocalTables } from '../../support/local-tables.js';

const tables = useLocalTables('dss-api-clients-');

const START = Date.parse('2026-12-01T10:00:00.000Z');

const principal = (username: string, role: Role, companies: string[]): Principal => ({
  subject: username,
  username,
  companies,
  scopes: new Set(ROLES[role]),
});

const root = principal('root', 'platform-admin', []);

let store: DynamoDbApiClientStore;
let audit: AuditEntry[];
let clock: number;
let ports: ApiClientAdminPorts;
let directory: ReturnType<typeof callersDirectory>;
/** Each test has companies of its own, so that listings and counts start empty. */
let acme: string;
let globex: string;
let run = 0;

/** A company administrator of the test's acme. */
const acmeAdmin = () => principal('erin', 'company-admin', [acme]);

beforeAll(() => {
  store = new DynamoDbApiClientStore(tables(), LOCAL_TABLES.apiClients, new CursorCodec(() => Buffer.alloc(32, 5)));
});

beforeEach(() => {
  run += 1;
  acme = `acme-${run}`;
  globex = `globex-${run}`;
  audit = [];
  clock = START;
  directory = callersDirectory({
    root: { role: 'platform-admin' },
    erin: { role: 'company-admin', companies: [acme, globex] },
    vic: { role: 'viewer', companies: [acme] },
  });
  ports = {
    clients: store,
    users: directory,
    companies: { get: async (id) => ([acme, globex].includes(id) ? { id, name: id, quotaBytes: 1, usedBytes: 0 } : undefined) },
    audit: {
      record: async (entry) => {
        audit.push(structuredClone(entry));
      },
      list: async () => ({ items: [], nextCursor: null }),
    },
    now: () => new Date(clock),
  };
});

describe('creating a client', () => {
  it('answers the secret once, keeps only its hash, and audits the creation without either', async () => {
    const created = await createApiClient(ports, root, { name: 'Back office', company: acme, role: 'operator' });
    expect(created).toEqual({
      clientId: expect.stringMatching(/^api_[0-9A-HJKMNP-TV-Z]{26}$/),
      name: 'Back office',
      company: acme,
      role: 'operator',
      enabled: true,
      created: new Date(START).toISOString(),
      createdBy: 'root',
      updated: new Date(START).toISOString(),
      clientSecret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    const stored = await store.get(created.clientId);
    expect(await verifyDeviceSecret(created.clientSecret, stored?.secretHash ?? '')).toBe(true);
    const { Item } = await tables().send(new GetCommand({ TableName: LOCAL_TABLES.apiClients, Key: { clientId: created.clientId } }));
    expect(JSON.stringify(Item)).not.toContain(created.clientSecret);
    expect(await getApiClient(ports, root, created.clientId)).not.toHaveProperty('clientSecret');
    expect(await getApiClient(ports, root, created.clientId)).not.toHaveProperty('secretHash');
    expect(audit).toEqual([
      expect.objectContaining({
        actor: 'root',
        action: 'api-client.created',
        target: { kind: 'api-client', id: created.clientId },
        companies: [acme],
        after: { name: 'Back office', company: acme, role: 'operator', enabled: true },
      }),
    ]);
  });

  it('lets a company administrator create one for their company only, and refuses an unknown company by name', async () => {
    const own = await createApiClient(ports, acmeAdmin(), { name: 'CI', company: acme, role: 'viewer' });
    expect(own.createdBy).toBe('erin');
    await expect(createApiClient(ports, acmeAdmin(), { name: 'CI', company: globex, role: 'viewer' })).rejects.toThrow(ForbiddenError);
    await expect(createApiClient(ports, root, { name: 'CI', company: 'nowhere', role: 'viewer' })).rejects.toThrow(
      /^There is no company 'nowhere'; create it first/,
    );
    await expect(createApiClient(ports, principal('vic', 'viewer', [acme]), { name: 'CI', company: acme, role: 'viewer' })).rejects.toThrow(
      ForbiddenError,
    );
    expect(audit.map((entry) => entry.action)).toEqual(['api-client.created']);
  });

  it('refuses an administrator disabled or demoted since their token was issued', async () => {
    const created = await createApiClient(ports, acmeAdmin(), { name: 'CI', company: acme, role: 'viewer' });
    directory.callers.erin = { role: 'operator', companies: [acme] };
    await expect(createApiClient(ports, acmeAdmin(), { name: 'Backdoor', company: acme, role: 'operator' })).rejects.toThrow(
      /Your role is now operator/,
    );
    await expect(listApiClients(ports, acmeAdmin(), { limit: 10 })).rejects.toThrow(ForbiddenError);
    directory.callers.erin = { role: 'company-admin', companies: [acme], enabled: false };
    await expect(rotateApiClientSecret(ports, acmeAdmin(), created.clientId)).rejects.toThrow(/disabled or deleted/);
    expect(audit.map((entry) => entry.action)).toEqual(['api-client.created']);
  });

  it(`refuses the ${MAX_API_CLIENTS_PER_COMPANY + 1}st client of a company, and counts a deleted one out`, async () => {
    const made = [];
    for (let index = 0; index < MAX_API_CLIENTS_PER_COMPANY; index += 1) {
      made.push(await createApiClient(ports, root, { name: `client ${index}`, company: acme, role: 'viewer' }));
    }
    await expect(createApiClient(ports, root, { name: 'one more', company: acme, role: 'viewer' })).rejects.toThrow(ConflictError);
    await createApiClient(ports, root, { name: 'another company', company: globex, role: 'viewer' });
    await deleteApiClient(ports, root, made[0]?.clientId ?? '');
    await expect(createApiClient(ports, root, { name: 'now it fits', company: acme, role: 'viewer' })).resolves.toMatchObject({
      company: acme,
    });
  }, 60_000);
});

describe('listing clients', () => {
  it("pages a company's clients in creation order, every client for a platform admin, and never a count item", async () => {
    const ids: string[] = [];
    for (const company of [acme, globex, acme, acme]) {
      clock += 1_000;
      ids.push((await createApiClient(ports, root, { name: 'c', company, role: 'viewer' })).clientId);
    }
    const first = await listApiClients(ports, root, { company: acme, limit: 2 });
    expect(first.items.map((item) => item.clientId)).toEqual([ids[0], ids[2]]);
    expect(first.items[0]).not.toHaveProperty('secretHash');
    const second = await listApiClients(ports, root, { company: acme, limit: 2, cursor: first.nextCursor ?? '' });
    expect(second).toEqual({ items: [expect.objectContaining({ clientId: ids[3] })], nextCursor: null });
    // A company admin naming no company lists their one company's.
    expect((await listApiClients(ports, acmeAdmin(), { limit: 10 })).items.map((item) => item.clientId)).toEqual([ids[0], ids[2], ids[3]]);
    const everyone = [];
    let cursor: string | undefined;
    do {
      const page = await listApiClients(ports, root, { limit: 100, ...(cursor === undefined ? {} : { cursor }) });
      everyone.push(...page.items);
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
    expect(everyone.filter((item) => [acme, globex].includes(item.company)).map((item) => item.clientId)).toEqual(ids);
    expect(everyone.every((item) => item.clientId.startsWith('api_'))).toBe(true);
  });

  it("refuses a company admin another company's listing, and a cursor of another listing", async () => {
    await expect(listApiClients(ports, acmeAdmin(), { company: globex, limit: 10 })).rejects.toThrow(ForbiddenError);
    const several = principal('erin', 'company-admin', [acme, globex]);
    await expect(listApiClients(ports, several, { limit: 10 })).rejects.toThrow(BadRequestError);
    for (let index = 0; index < 2; index += 1) await createApiClient(ports, root, { name: 'c', company: acme, role: 'viewer' });
    const { nextCursor } = await listApiClients(ports, root, { company: acme, limit: 1 });
    await expect(listApiClients(ports, root, { company: globex, limit: 1, cursor: nextCursor ?? '' })).rejects.toThrow(BadRequestError);
  });
});

describe('changing a client', () => {
  it("hides another company's client from a company admin as an unknown one", async () => {
    const theirs = await createApiClient(ports, root, { name: 'Globex ERP', company: globex, role: 'operator' });
    for (const attempt of [
      () => getApiClient(ports, acmeAdmin(), theirs.clientId),
      () => updateApiClient(ports, acmeAdmin(), theirs.clientId, { enabled: false }),
      () => rotateApiClientSecret(ports, acmeAdmin(), theirs.clientId),
      () => deleteApiClient(ports, acmeAdmin(), theirs.clientId),
      () => getApiClient(ports, root, 'api_01JAAAAAAAAAAAAAAAAAAAAAAA'),
      () => getApiClient(ports, root, 'not-a-client'),
    ]) {
      await expect(attempt()).rejects.toThrow(NotFoundError);
    }
    expect(await getApiClient(ports, root, theirs.clientId)).toMatchObject({ enabled: true });
    expect(audit.map((entry) => entry.action)).toEqual(['api-client.created']);
  });

  it('renames, demotes and disables, then enables again, each audited with the values before and after', async () => {
    const created = await createApiClient(ports, acmeAdmin(), { name: 'CI', company: acme, role: 'operator' });
    clock += 60_000;
    const changed = await updateApiClient(ports, acmeAdmin(), created.clientId, { name: 'CI pipeline', role: 'viewer', enabled: false });
    expect(changed).toMatchObject({ name: 'CI pipeline', role: 'viewer', enabled: false, updated: new Date(clock).toISOString() });
    expect(await getApiClient(ports, root, created.clientId)).toEqual(changed);
    const enabled = await updateApiClient(ports, acmeAdmin(), created.clientId, { enabled: true });
    expect(enabled.enabled).toBe(true);
    // The same clock: `updated` still moves, so that a compare-and-set sees the change.
    expect(Date.parse(enabled.updated)).toBeGreaterThan(Date.parse(changed.updated));
    expect(audit.slice(1)).toEqual([
      expect.objectContaining({
        actor: 'erin',
        action: 'api-client.updated',
        before: { name: 'CI', company: acme, role: 'operator', enabled: true },
        after: { name: 'CI pipeline', company: acme, role: 'viewer', enabled: false },
      }),
      expect.objectContaining({ action: 'api-client.updated', after: expect.objectContaining({ enabled: true }) }),
    ]);
    await expect(updateApiClient(ports, acmeAdmin(), created.clientId, {})).rejects.toThrow(BadRequestError);
  });

  it('rotates the secret: the previous one kept until the overlap ends, or dropped at once with 0', async () => {
    const created = await createApiClient(ports, root, { name: 'ERP', company: acme, role: 'operator' });
    clock += 1_000;
    const rotated = await rotateApiClientSecret(ports, root, created.clientId, 3_600);
    expect(rotated.clientSecret).not.toBe(created.clientSecret);
    expect(rotated.previousSecretExpiresAt).toBe(new Date(clock + 3_600_000).toISOString());
    let stored = await store.get(created.clientId);
    expect(await verifyDeviceSecret(rotated.clientSecret, stored?.secretHash ?? '')).toBe(true);
    expect(await verifyDeviceSecret(created.clientSecret, stored?.previousSecretHash ?? '')).toBe(true);
    const byDefault = await rotateApiClientSecret(ports, root, created.clientId);
    expect(byDefault.previousSecretExpiresAt).toBe(new Date(clock + 86_400_000).toISOString());
    stored = await store.get(created.clientId);
    // Only the last two secrets: the first one is gone.
    expect(await verifyDeviceSecret(created.clientSecret, stored?.previousSecretHash ?? '')).toBe(false);
    const atOnce = await rotateApiClientSecret(ports, root, created.clientId, 0);
    expect(atOnce).not.toHaveProperty('previousSecretExpiresAt');
    expect(await store.get(created.clientId)).not.toHaveProperty('previousSecretHash');
    const rotations = audit.filter((entry) => entry.action === 'api-client.secret-rotated');
    expect(rotations).toHaveLength(3);
    expect(rotations[0]?.after).toEqual({
      name: 'ERP',
      company: acme,
      role: 'operator',
      enabled: true,
      previousSecretExpiresAt: rotated.previousSecretExpiresAt,
    });
    for (const secret of [created.clientSecret, rotated.clientSecret, byDefault.clientSecret, atOnce.clientSecret]) {
      expect(JSON.stringify(audit)).not.toContain(secret);
    }
    expect(JSON.stringify(audit)).not.toContain('scrypt$');
  });

  it('deletes a client for good: read, changed or deleted again it is unknown', async () => {
    const created = await createApiClient(ports, acmeAdmin(), { name: 'Old', company: acme, role: 'viewer' });
    await deleteApiClient(ports, acmeAdmin(), created.clientId);
    await expect(getApiClient(ports, acmeAdmin(), created.clientId)).rejects.toThrow(NotFoundError);
    await expect(deleteApiClient(ports, acmeAdmin(), created.clientId)).rejects.toThrow(NotFoundError);
    expect(audit.at(-1)).toMatchObject({
      actor: 'erin',
      action: 'api-client.deleted',
      before: { name: 'Old', company: acme, role: 'viewer', enabled: true },
    });
    expect(audit.at(-1)).not.toHaveProperty('after');
  });
});

describe('the store', () => {
  it('sets lastUsedAt at most once per interval, and never on a deleted client', async () => {
    const created = await createApiClient(ports, root, { name: 'Used', company: acme, role: 'viewer' });
    await store.touch(created.clientId, '2026-12-01T10:01:00.000Z', '2026-12-01T10:00:00.000Z');
    await store.touch(created.clientId, '2026-12-01T10:01:30.000Z', '2026-12-01T10:00:30.000Z');
    expect((await store.get(created.clientId))?.lastUsedAt).toBe('2026-12-01T10:01:00.000Z');
    await store.touch(created.clientId, '2026-12-01T10:02:10.000Z', '2026-12-01T10:01:10.000Z');
    expect((await getApiClient(ports, root, created.clientId)).lastUsedAt).toBe('2026-12-01T10:02:10.000Z');
    await deleteApiClient(ports, root, created.clientId);
    await store.touch(created.clientId, '2026-12-01T10:05:00.000Z', '2026-12-01T10:04:00.000Z');
    expect(await store.get(created.clientId)).toBeUndefined();
  });

  it('refuses a replace of a client changed meanwhile', async () => {
    const created = await createApiClient(ports, root, { name: 'Raced', company: acme, role: 'viewer' });
    const stored = await store.get(created.clientId);
    if (stored === undefined) throw new Error('not stored');
    expect(await store.replace({ ...stored, name: 'first', updated: '2026-12-01T11:00:00.000Z' }, stored.updated)).toBe(true);
    expect(await store.replace({ ...stored, name: 'second', updated: '2026-12-01T11:00:01.000Z' }, stored.updated)).toBe(false);
    expect((await store.get(created.clientId))?.name).toBe('first');
  });

  it('keeps a lastUsedAt written between the read and the change of a client', async () => {
    const created = await createApiClient(ports, root, { name: 'Busy', company: acme, role: 'operator' });
    const stored = await store.get(created.clientId);
    if (stored === undefined) throw new Error('not stored');
    await store.touch(created.clientId, '2026-12-01T10:03:00.000Z', '2026-12-01T10:02:00.000Z');
    expect(await store.replace({ ...stored, enabled: false, updated: '2026-12-01T10:03:01.000Z' }, stored.updated)).toBe(true);
    expect(await store.get(created.clientId)).toMatchObject({ enabled: false, lastUsedAt: '2026-12-01T10:03:00.000Z' });
  });
});
