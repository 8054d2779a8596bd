/**
 * Companies administration (functions/core/companies/admin.ts) on the DynamoDB adapters and DynamoDB Local: create
 * (conditional), the paged Scan with signed cursors, the device count, the update, the scope check that comes
 * before any of them, and the audit entry each change writes in its own transaction (none for a refused change).
 */

import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { CursorCodec } from '../../../functions/adapters/aws/cursor-codec.js';
import { DynamoDbAuditLog } from '../../../functions/adapters/aws/dynamodb-audit-log.js';
import { DynamoDbCompanyRepository } from '../../../functions/adapters/aws/dynamodb-company-repository.js';
import { DynamoDbDeviceCounter } from '../../../functions/adapters/aws/dynamodb-device-counter.js';
import { DynamoDbDeviceRepository } from '../../../functions/adapters/aws/dynamodb-device-repository.js';
import { ROLES } from '../../../functions/core/access/roles.js';
import { createCompany, getCompany, listCompanies, updateCompany } from '../../../functions/core/companies/admin.js';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError } from '../../../functions/core/shared/errors.js';
import type { Principal } from '../../../functions/core/shared/principal.js';
import { generateDemoDevices } from '../../../functions/local/demo-fleet.js';
import { LOCAL_TABLES } from '../../../functions/local/runtime.js';
import { callersDirectory } from '../../support/administrators.js';
import { useLocalTables } from '../../support/local-tables.js';

const localTables = useLocalTables('companies-admin-');

const root: Principal = { subject: 'root', companies: [], scopes: new Set(ROLES['platform-admin']) };
/** An operator of every company there is: companies in the token do not open administration. */
const operator: Principal = { subject: 'alice', companies: ['initech', 'umbrella'], scopes: new Set(ROLES.operator) };
/** Holds companies:read only. */
const reader: Principal = { subject: 'auditor', companies: [], scopes: new Set(['companies:read']) };

const cursors = new CursorCodec(() => Buffer.alloc(32, 9));

/** The callers as the directory holds them now (every administration request is bounded by it). */
const callers = callersDirectory({
  root: { role: 'platform-admin' },
  alice: { role: 'operator', companies: ['initech', 'umbrella'] },
  auditor: { role: 'platform-admin' },
});

function ports(client: DynamoDBDocumentClient = localTables(), auditTable: string = LOCAL_TABLES.audit) {
  const companies = new DynamoDbCompanyRepository(client, LOCAL_TABLES, cursors, auditTable);
  // Two users hold c-1 (the user count is the directory's; test/unit/users counts the local users).
  const users = { ...callers, countInCompany: async (company: string) => (company === 'c-1' ? 2 : 0) };
  return { client, companies, devices: new DynamoDbDeviceCounter(client, LOCAL_TABLES), users };
}

/** The audit entries concerning `company`, newest first. */
async function entriesOf(company: string) {
  return (await new DynamoDbAuditLog(localTables(), LOCAL_TABLES.audit, cursors).list({ company }, 100, undefined)).items;
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

  it('refuses a new id that is not lower case (400 naming the id to use), and one that differs by case alone from an older company (409)', async () => {
    const refused = createCompany(ports(), root, { id: 'ACME-case', name: 'Shadow Acme', quotaBytes: 1 });
    await expect(refused).rejects.toBeInstanceOf(BadRequestError);
    await expect(refused).rejects.toThrow(/lower-case.*Use 'acme-case'/);
    // A company created before the lower-case rule, written as it was then.
    await localTables().send(
      new PutCommand({
        TableName: LOCAL_TABLES.companies,
        Item: { companyId: 'Legacy-Case', name: 'Legacy', quotaBytes: 1, usedBytes: 0 },
      }),
    );
    const twin = createCompany(ports(), root, { id: 'legacy-case', name: 'Shadow Legacy', quotaBytes: 1 });
    await expect(twin).rejects.toBeInstanceOf(ConflictError);
    await expect(twin).rejects.toThrow(/'Legacy-Case' exists/);
    expect(await stored('ACME-case')).toBeUndefined();
    expect(await stored('legacy-case')).toBeUndefined();
    expect((await entriesOf('legacy-case')).length).toBe(0);
    await localTables().send(new DeleteCommand({ TableName: LOCAL_TABLES.companies, Key: { companyId: 'Legacy-Case' } }));
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

describe('the audit entries of company changes', () => {
  it('records the creation (actor, after) and each change (before, after), newest first', async () => {
    await createCompany(ports(), root, { id: 'audited', name: 'Audited', quotaBytes: 1000 });
    await updateCompany(ports(), root, 'audited', { quotaBytes: 2000 });
    await updateCompany(ports(), root, 'audited', { name: 'Audited Inc' });
    const [renamed, requota, created] = await entriesOf('audited');
    expect(created).toMatchObject({
      actor: 'root',
      action: 'company.created',
      target: { kind: 'company', id: 'audited' },
      companies: ['audited'],
      after: { id: 'audited', name: 'Audited', quotaBytes: 1000 },
    });
    expect(created?.before).toBeUndefined();
    expect(requota).toMatchObject({
      action: 'company.updated',
      before: { id: 'audited', name: 'Audited', quotaBytes: 1000 },
      after: { id: 'audited', name: 'Audited', quotaBytes: 2000 },
    });
    expect(renamed).toMatchObject({ before: { name: 'Audited', quotaBytes: 2000 }, after: { name: 'Audited Inc', quotaBytes: 2000 } });
    expect(Date.parse(created?.at as string)).toBeLessThanOrEqual(Date.parse(renamed?.at as string));
  });

  it('records nothing for a refused change: an existing id (409), an unknown company (404), a caller without the scope', async () => {
    await expect(createCompany(ports(), root, { id: 'audited', name: 'Again', quotaBytes: 1 })).rejects.toBeInstanceOf(ConflictError);
    await expect(updateCompany(ports(), root, 'audit-ghost', { name: 'Ghost' })).rejects.toBeInstanceOf(NotFoundError);
    await expect(updateCompany(ports(), operator, 'audited', { name: 'Taken over' })).rejects.toBeInstanceOf(ForbiddenError);
    expect(await entriesOf('audited')).toHaveLength(3);
    expect(await entriesOf('audit-ghost')).toEqual([]);
  });

  it('changes nothing when its entry cannot be written: the company and its entry are one transaction', async () => {
    const broken = ports(localTables(), 'no-such-audit-table');
    await expect(createCompany(broken, root, { id: 'unaudited', name: 'Unaudited', quotaBytes: 1 })).rejects.toThrow();
    expect(await stored('unaudited')).toBeUndefined();
    await expect(updateCompany(broken, root, 'audited', { quotaBytes: 1 })).rejects.toThrow();
    expect((await stored('audited'))?.quotaBytes).toBe(2000);
  });

  it("records what a change replaced when another change came between the company's read and its write", async () => {
    const client = localTables();
    let raced = false;
    // Another administrator's change lands just before this change's transaction.
    const racing = {
      send: async (command: Parameters<DynamoDBDocumentClient['send']>[0]) => {
        if (command instanceof TransactWriteCommand && !raced) {
          raced = true;
          await client.send(
            new UpdateCommand({
              TableName: LOCAL_TABLES.companies,
              Key: { companyId: 'audited' },
              UpdateExpression: 'SET quotaBytes = :quota',
              ExpressionAttributeValues: { ':quota': 3000 },
            }),
          );
        }
        return client.send(command as never);
      },
    } as unknown as DynamoDBDocumentClient;
    expect(await updateCompany(ports(racing), root, 'audited', { name: 'Audited Group' })).toMatchObject({
      name: 'Audited Group',
      quotaBytes: 3000,
    });
    expect((await entriesOf('audited'))[0]).toMatchObject({
      before: { name: 'Audited Inc', quotaBytes: 3000 },
      after: { name: 'Audited Group', quotaBytes: 3000 },
    });
  });

  it('answers 409 and records nothing when the company changes between every read and write', async () => {
    const client = localTables();
    let quota = 4000;
    // Another administrator's change lands before each attempt's transaction.
    const racing = {
      send: async (command: Parameters<DynamoDBDocumentClient['send']>[0]) => {
        if (command instanceof TransactWriteCommand) {
          quota += 1;
          await client.send(
            new UpdateCommand({
              TableName: LOCAL_TABLES.companies,
              Key: { companyId: 'audited' },
              UpdateExpression: 'SET quotaBytes = :quota',
              ExpressionAttributeValues: { ':quota': quota },
            }),
          );
        }
        return client.send(command as never);
      },
    } as unknown as DynamoDBDocumentClient;
    const entries = (await entriesOf('audited')).length;
    await expect(updateCompany(ports(racing), root, 'audited', { name: 'Never' })).rejects.toThrow(/kept changing.*Try again/);
    expect(await stored('audited')).toMatchObject({ name: 'Audited Group', quotaBytes: quota });
    expect(await entriesOf('audited')).toHaveLength(entries);
  });
});
