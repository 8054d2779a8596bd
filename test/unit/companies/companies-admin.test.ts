/**
 * Companies administration (functions/core/companies/admin.ts) on the DynamoDB adapters and DynamoDB Local: create
 * (conditional), the paged Scan with signed cursors, the device count, the update, and the scope check that comes
 * before any of them.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { CursorCodec } from '../../../functions/adapters/aws/cursor-codec.js';
import { DynamoDbCompanyRepository } from '../../../functions/adapters/aws/dynamodb-company-repository.js';
import { DynamoDbDeviceCounter } from '../../../functions/adapters/aws/dynamodb-device-counter.js';
import { DynamoDbDeviceRepository } from '../../../functions/adapters/aws/dynamodb-device-repository.js';
import { ROLES } from '../../../functions/core/access/roles.js';
import { createCompany, getCompany, listCompanies, updateCompany } from '../../../functions/core/companies/admin.js';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError } from '../../../functions/core/shared/errors.js';
import type { Principal } from '../../../functions/core/shared/principal.js';
import { generateDemoDevices } from '../../../functions/local/demo-data.js';
import { LOCAL_TABLES } from '../../../functions/local/runtime.js';
import { useLocalTables } from '../../support/local-tables.js';

const localTables = useLocalTables('companies-admin-');

const root: Principal = { subject: 'root', companies: [], scopes: new Set(ROLES['platform-admin']) };
/** An operator of every company there is: companies in the token do not open administration. */
const operator: Principal = { subject: 'alice', companies: ['initech', 'umbrella'], scopes: new Set(ROLES.operator) };
/** Holds companies:read only. */
const reader: Principal = { subject: 'auditor', companies: [], scopes: new Set(['companies:read']) };

function ports() {
  const client = localTables();
  const companies = new DynamoDbCompanyRepository(client, LOCAL_TABLES, new CursorCodec(() => Buffer.alloc(32, 9)));
  // Two users hold c-1 (the user count is the directory's; functions/adapters/embedded tests count the local users).
  const users = { countInCompany: async (company: string) => (company === 'c-1' ? 2 : 0) };
  return { client, companies, devices: new DynamoDbDeviceCounter(client, LOCAL_TABLES), users };
}

async function stored(companyId: string) {
  const { Item } = await localTables().send(
    new GetCommand({ TableName: LOCAL_TABLES.companies, Key: { companyId }, ConsistentRead: true }),
  );
  return Item;
}

describe('companies administration', () => {
  it('creates a company with nothing stored, and refuses an existing id without overwriting it', async () => {
    const created = await createCompany(ports(), root, { id: 'initech', name: 'Initech', quotaBytes: 10 * 1024 * 1024 });
    expect(created).toEqual({ id: 'initech', name: 'Initech', quotaBytes: 10_485_760, usedBytes: 0, overQuota: false });
    await expect(createCompany(ports(), root, { id: 'initech', name: 'Other', quotaBytes: 1 })).rejects.toBeInstanceOf(ConflictError);
    expect(await stored('initech')).toEqual({ companyId: 'initech', name: 'Initech', quotaBytes: 10_485_760, usedBytes: 0 });
  });

  it('refuses every caller without the scope before touching the table', async () => {
    await expect(createCompany(ports(), operator, { id: 'umbrella', name: 'Umbrella', quotaBytes: 1 })).rejects.toBeInstanceOf(
      ForbiddenError,
    );
    await expect(createCompany(ports(), reader, { id: 'umbrella', name: 'Umbrella', quotaBytes: 1 })).rejects.toBeInstanceOf(
      ForbiddenError,
    );
    expect(await stored('umbrella')).toBeUndefined();
    await expect(listCompanies(ports(), operator, { limit: 10 })).rejects.toBeInstanceOf(ForbiddenError);
    await expect(getCompany(ports(), operator, 'initech')).rejects.toThrow(/companies:read/);
    await expect(updateCompany(ports(), operator, 'initech', { name: 'Taken over' })).rejects.toThrow(/companies:write/);
    await expect(updateCompany(ports(), reader, 'initech', { name: 'Taken over' })).rejects.toBeInstanceOf(ForbiddenError);
    expect((await stored('initech'))?.name).toBe('Initech');
  });

  it('pages every company once with signed cursors, and refuses a forged or altered cursor', async () => {
    for (const id of ['c-1', 'c-2', 'c-3', 'c-4']) await createCompany(ports(), root, { id, name: id.toUpperCase(), quotaBytes: 100 });
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await listCompanies(ports(), reader, { limit: 2, ...(cursor === undefined ? {} : { cursor }) });
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items.map((company) => company.id));
      cursor = page.nextCursor ?? undefined;
      pages += 1;
    } while (cursor !== undefined);
    expect(seen.sort()).toEqual(['c-1', 'c-2', 'c-3', 'c-4', 'initech']);
    expect(pages).toBe(3);
    const first = await listCompanies(ports(), root, { limit: 1 });
    const forged = `${Buffer.from(JSON.stringify({ companyId: 'c-3' })).toString('base64url')}.AAAAAAAAAAAAAAAAAAAAAA`;
    await expect(listCompanies(ports(), root, { limit: 1, cursor: forged })).rejects.toBeInstanceOf(BadRequestError);
    const altered = `A${(first.nextCursor as string).slice(1)}`;
    await expect(listCompanies(ports(), root, { limit: 1, cursor: altered })).rejects.toBeInstanceOf(BadRequestError);
  });

  it("counts the company's devices, not another company's, nor one being deleted, and gives its user count", async () => {
    const { client } = ports();
    const registry = new DynamoDbDeviceRepository(client, LOCAL_TABLES);
    await registry.put(generateDemoDevices({ id: 'c-1', prefix: 'CA' }, 25, 1));
    await registry.put(generateDemoDevices({ id: 'c-2', prefix: 'CB' }, 3, 2));
    await registry.markDeleting('c-1', 'c-1-kiosk-0001');
    expect(await getCompany(ports(), reader, 'c-1')).toEqual({
      id: 'c-1',
      name: 'C-1',
      quotaBytes: 100,
      usedBytes: 0,
      overQuota: false,
      deviceCount: 24,
      userCount: 2,
    });
    expect((await getCompany(ports(), root, 'initech')).deviceCount).toBe(0);
    await expect(getCompany(ports(), root, 'nobody')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('changes the name and the quota, keeps usedBytes, and reports a quota below it as overQuota', async () => {
    expect(await updateCompany(ports(), root, 'initech', { name: 'Initech Corp' })).toMatchObject({
      name: 'Initech Corp',
      quotaBytes: 10_485_760,
    });
    // What uploads have stored: administration never writes it.
    const { client } = ports();
    await new DynamoDbCompanyRepository(client, LOCAL_TABLES).put([
      { id: 'initech', name: 'Initech Corp', quotaBytes: 10_485_760, usedBytes: 5000 },
    ]);
    expect(await updateCompany(ports(), root, 'initech', { quotaBytes: 4000 })).toEqual({
      id: 'initech',
      name: 'Initech Corp',
      quotaBytes: 4000,
      usedBytes: 5000,
      overQuota: true,
    });
    expect(await updateCompany(ports(), root, 'initech', { name: 'Initech', quotaBytes: 5000 })).toMatchObject({ overQuota: false });
    expect(await stored('initech')).toEqual({ companyId: 'initech', name: 'Initech', quotaBytes: 5000, usedBytes: 5000 });
  });

  it('answers 404 for an unknown company and creates nothing', async () => {
    await expect(updateCompany(ports(), root, 'ghost', { quotaBytes: 1 })).rejects.toBeInstanceOf(NotFoundError);
    expect(await stored('ghost')).toBeUndefined();
  });
});
