/**
 * The audit log's DynamoDB adapter (functions/adapters/aws/dynamodb-audit-log.ts) on DynamoDB Local: a retried record
 * changes nothing, listings are newest first (all, by company — an entry of several companies under each —, by
 * actor, by both), cursors page every entry once and are refused by another listing.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { monotonicFactory } from 'ulid';
import { describe, expect, it, vi } from 'vitest';
import { CursorCodec } from '../../../functions/adapters/aws/cursor-codec.js';
import { DynamoDbAuditLog } from '../../../functions/adapters/aws/dynamodb-audit-log.js';
import type { AuditEntry, AuditFilter } from '../../../functions/core/audit/ports.js';
import { BadRequestError } from '../../../functions/core/shared/errors.js';
import { LOCAL_TABLES } from '../../../functions/local/runtime.js';
import { useLocalTables } from '../../support/local-tables.js';

const localTables = useLocalTables('audit-log-');
const nextId = monotonicFactory();

function auditLog(): DynamoDbAuditLog {
  return new DynamoDbAuditLog(localTables(), LOCAL_TABLES.audit, new CursorCodec(() => Buffer.alloc(32, 7)));
}

function entry(actor: string, companies: string[], change: Partial<AuditEntry> = {}): AuditEntry {
  const id = nextId();
  return {
    id,
    at: new Date().toISOString(),
    actor,
    action: 'user.updated',
    target: { kind: 'user', id: `user-${id.slice(-4)}` },
    companies,
    before: { role: 'viewer', companies: companies.slice(0, 1) },
    after: { role: 'operator', companies },
    ...change,
  };
}

/** Every page of a listing, `limit` at a time: the ids in order and the number of pages. */
async function everyPage(filter: AuditFilter, limit: number): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await auditLog().list(filter, limit, cursor);
    expect(page.items.length).toBeLessThanOrEqual(limit);
    ids.push(...page.items.map((item) => item.id));
    cursor = page.nextCursor ?? undefined;
    pages += 1;
  } while (cursor !== undefined);
  return { ids, pages };
}

const recorded: AuditEntry[] = [];

describe('the DynamoDB audit log', () => {
  it('keeps an entry as given, and a retry with the same id changes nothing', async () => {
    const first = entry('root', ['initech'], { action: 'company.created', target: { kind: 'company', id: 'initech' }, before: undefined });
    delete first.before;
    await auditLog().record(first);
    await auditLog().record({ ...first, actor: 'mallory', after: { name: 'Changed on retry' } });
    recorded.push(first);
    expect((await auditLog().list({}, 10, undefined)).items).toEqual([first]);
    expect((await auditLog().list({ company: 'initech' }, 10, undefined)).items).toEqual([first]);
    expect((await auditLog().list({ actor: 'mallory' }, 10, undefined)).items).toEqual([]);
  });

  it('lists every entry newest first, and an entry of several companies under each of them', async () => {
    const moved = entry('alice', ['initech', 'umbrella']);
    const other = entry('bob', ['umbrella']);
    const platform = entry('root', [], { target: { kind: 'user', id: 'admin2' } });
    for (const each of [moved, other, platform]) await auditLog().record(each);
    recorded.push(moved, other, platform);
    expect((await auditLog().list({}, 10, undefined)).items.map((item) => item.id)).toEqual([
      platform.id,
      other.id,
      moved.id,
      recorded[0]?.id,
    ]);
    expect((await auditLog().list({ company: 'umbrella' }, 10, undefined)).items).toEqual([other, moved]);
    expect((await auditLog().list({ company: 'initech' }, 10, undefined)).items.map((item) => item.id)).toEqual([
      moved.id,
      recorded[0]?.id,
    ]);
    expect((await auditLog().list({ company: 'nobody' }, 10, undefined)).items).toEqual([]);
  });

  it("lists an actor's entries (through the index), and an actor's within one company", async () => {
    await vi.waitFor(async () => {
      expect((await auditLog().list({ actor: 'root' }, 10, undefined)).items.map((item) => item.id)).toEqual([
        recorded[3]?.id,
        recorded[0]?.id,
      ]);
    });
    expect((await auditLog().list({ actor: 'alice' }, 10, undefined)).items).toEqual([recorded[1]]);
    expect((await auditLog().list({ company: 'umbrella', actor: 'alice' }, 10, undefined)).items).toEqual([recorded[1]]);
    expect((await auditLog().list({ company: 'initech', actor: 'bob' }, 10, undefined)).items).toEqual([]);
  });

  it('keeps no copy of an entry in the index twice: one index item per entry', async () => {
    const { Items } = await localTables().send(
      new QueryCommand({
        TableName: LOCAL_TABLES.audit,
        IndexName: 'actor',
        KeyConditionExpression: 'actorKey = :actor',
        ExpressionAttributeValues: { ':actor': 'alice' },
      }),
    );
    expect(Items?.length).toBe(1);
  });

  it('pages every entry once with signed cursors, also when a filter drops most of what it reads', async () => {
    const many = Array.from({ length: 7 }, (_, index) => entry(index % 3 === 0 ? 'carol' : 'dave', ['globex']));
    for (const each of many) await auditLog().record(each);
    const newestFirst = [...many].reverse();
    expect(await everyPage({ company: 'globex' }, 3)).toEqual({ ids: newestFirst.map((item) => item.id), pages: 3 });
    const carols = newestFirst.filter((item) => item.actor === 'carol').map((item) => item.id);
    expect((await everyPage({ company: 'globex', actor: 'carol' }, 1)).ids).toEqual(carols);
    await vi.waitFor(async () => expect((await everyPage({ actor: 'carol' }, 2)).ids).toEqual(carols));
    expect((await everyPage({}, 4)).ids).toHaveLength(11);
  });

  it('refuses a cursor issued for another listing, altered or forged', async () => {
    const first = await auditLog().list({ company: 'globex' }, 1, undefined);
    const cursor = first.nextCursor as string;
    expect((await auditLog().list({ company: 'globex' }, 1, cursor)).items).toHaveLength(1);
    await expect(auditLog().list({ company: 'umbrella' }, 1, cursor)).rejects.toBeInstanceOf(BadRequestError);
    await expect(auditLog().list({ company: 'globex', actor: 'carol' }, 1, cursor)).rejects.toBeInstanceOf(BadRequestError);
    await expect(auditLog().list({}, 1, cursor)).rejects.toBeInstanceOf(BadRequestError);
    await expect(auditLog().list({ company: 'globex' }, 1, `A${cursor.slice(1)}`)).rejects.toBeInstanceOf(BadRequestError);
    const forged = `${Buffer.from(JSON.stringify({ id: nextId() })).toString('base64url')}.AAAAAAAAAAAAAAAAAAAAAA`;
    await expect(auditLog().list({}, 1, forged)).rejects.toBeInstanceOf(BadRequestError);
  });

  it('records an entry of more companies than one transaction holds, findable under each', async () => {
    const companies = Array.from({ length: 120 }, (_, index) => `company-${index}`);
    const wide = entry('root', companies);
    await auditLog().record(wide);
    await auditLog().record(wide);
    for (const company of ['company-0', 'company-119']) {
      expect((await auditLog().list({ company }, 10, undefined)).items).toEqual([wide]);
    }
    expect((await auditLog().list({}, 1, undefined)).items).toEqual([wide]);
  });
});
