import { randomBytes } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { CursorCodec } from '../../../functions/adapters/aws/cursor-codec.js';
import { DynamoDbDeliveryStore, deliveryPartition } from '../../../functions/adapters/aws/dynamodb-delivery-store.js';
import { DynamoDbWebhookStore } from '../../../functions/adapters/aws/dynamodb-webhook-store.js';
import { webhookDueShardOf } from '../../../functions/adapters/aws/tables.js';
import type { AuditEntry } from '../../../functions/core/audit/ports.js';
import { BadRequestError } from '../../../functions/core/shared/errors.js';
import { newDelivery } from '../../../functions/core/webhooks/deliveries.js';
import { MAX_KEPT_ATTEMPTS, type StoredWebhook } from '../../../functions/core/webhooks/model.js';
import { LOCAL_TABLES } from '../../../functions/local/runtime.js';
import { useLocalTables } from '../../support/local-tables.js';

const client = useLocalTables('dss-webhooks-');
const cursors = new CursorCodec(() => randomBytes(32));
const webhooks = () => new DynamoDbWebhookStore(client(), LOCAL_TABLES.webhooks, cursors, LOCAL_TABLES.audit);
const deliveries = () => new DynamoDbDeliveryStore(client(), LOCAL_TABLES.webhooks, cursors);

const base: StoredWebhook = {
  id: '01JWHK00000000000000000001',
  company: 'acme',
  url: 'https://hooks.example.com/in',
  events: ['deployment.failed', 'device.disconnected'],
  description: null,
  enabled: true,
  created: '2026-12-06T10:00:00.000Z',
  updated: '2026-12-06T10:00:00.000Z',
  by: 'ada',
  failingSince: null,
  previousSecretExpiresAt: null,
  secret: 'whsec_c2VjcmV0',
  previousSecret: null,
};
const webhook = (id: string, overrides: Partial<StoredWebhook> = {}): StoredWebhook => ({ ...base, id, ...overrides });
const event = (eventId: string, timestamp: string) => ({
  company: 'acme',
  eventId,
  type: 'deployment.failed' as const,
  timestamp,
  data: { deploymentId: 'd-1', big: 1e300 },
});

describe('DynamoDbWebhookStore on DynamoDB Local', () => {
  it('creates webhooks up to the limit, counting deletes, and reads them back exactly', async () => {
    const store = webhooks();
    const company = 'limited';
    expect(await store.create(webhook('01JWHK00000000000000000011', { company }), 2)).toBe(true);
    expect(await store.create(webhook('01JWHK00000000000000000012', { company }), 2)).toBe(true);
    expect(await store.create(webhook('01JWHK00000000000000000013', { company }), 2)).toBe(false);
    expect(await store.get(company, '01JWHK00000000000000000013')).toBeUndefined();
    expect(await store.delete(company, '01JWHK00000000000000000011')).toBe(true);
    expect(await store.delete(company, '01JWHK00000000000000000011')).toBe(false);
    expect(await store.create(webhook('01JWHK00000000000000000013', { company }), 2)).toBe(true);
    expect(await store.get(company, '01JWHK00000000000000000013')).toEqual(webhook('01JWHK00000000000000000013', { company }));
    expect(await store.get('other', '01JWHK00000000000000000013')).toBeUndefined();
    expect(await store.get(company, 'not-a-ulid')).toBeUndefined();
  });

  it('pages a company’s webhooks oldest first, refusing a cursor of another company', async () => {
    const store = webhooks();
    for (const suffix of ['1', '2', '3']) await store.create(webhook(`01JWHK0000000000000000002${suffix}`, { company: 'paged' }), 100);
    const first = await store.list('paged', { limit: 2 });
    expect(first.items.map((item) => item.id.at(-1))).toEqual(['1', '2']);
    const second = await store.list('paged', { limit: 2, cursor: first.nextCursor ?? undefined });
    expect(second).toMatchObject({ items: [{ id: '01JWHK00000000000000000023' }], nextCursor: null });
    await expect(store.list('acme', { limit: 2, cursor: first.nextCursor ?? undefined })).rejects.toBeInstanceOf(BadRequestError);
  });

  it('replaces a webhook only while its updated is the one read, and lists the enabled subscribers of a type', async () => {
    const store = webhooks();
    const company = 'cas';
    const original = webhook('01JWHK00000000000000000031', { company });
    await store.create(original, 100);
    await store.create(webhook('01JWHK00000000000000000032', { company, enabled: false }), 100);
    await store.create(webhook('01JWHK00000000000000000033', { company, events: ['webhook.test'] }), 100);
    const changed = { ...original, url: 'https://hooks.example.com/v2', updated: '2026-12-06T10:00:01.000Z' };
    expect(await store.replace(changed, original.updated)).toBe(true);
    expect(await store.replace({ ...changed, url: 'https://lost.example.com/' }, original.updated)).toBe(false);
    expect((await store.get(company, original.id))?.url).toBe('https://hooks.example.com/v2');
    expect(await store.replace(webhook('01JWHK00000000000000000039', { company }), base.updated)).toBe(false);
    expect((await store.subscribed(company, 'deployment.failed')).map((item) => item.id)).toEqual([original.id]);
    expect((await store.subscribed(company, 'webhook.test')).map((item) => item.id)).toEqual(['01JWHK00000000000000000033']);
  });
});

describe('DynamoDbWebhookStore with audit entries', () => {
  const entry = (id: string, action: AuditEntry['action']): AuditEntry => ({
    id,
    at: '2026-12-06T10:00:00.000Z',
    actor: 'ada',
    action,
    target: { kind: 'webhook', id: '01JWHK00000000000000000051' },
    companies: ['audited'],
  });
  const auditItem = async (id: string) =>
    (await client().send(new GetCommand({ TableName: LOCAL_TABLES.audit, Key: { pk: 'ENTRY', sk: id } }))).Item;

  it('writes each change with its audit entry, and neither when the change is refused', async () => {
    const store = webhooks();
    const company = 'audited';
    const hook = webhook('01JWHK00000000000000000051', { company });
    expect(await store.create(hook, 1, entry('01JAUD00000000000000000001', 'webhook.created'))).toBe(true);
    expect(await auditItem('01JAUD00000000000000000001')).toMatchObject({ action: 'webhook.created', actor: 'ada' });
    // At the limit: neither the webhook nor its entry.
    expect(
      await store.create(webhook('01JWHK00000000000000000052', { company }), 1, entry('01JAUD00000000000000000002', 'webhook.created')),
    ).toBe(false);
    expect(await auditItem('01JAUD00000000000000000002')).toBeUndefined();
    const changed = { ...hook, enabled: false, updated: '2026-12-06T10:00:01.000Z' };
    expect(await store.replace(changed, hook.updated, entry('01JAUD00000000000000000003', 'webhook.updated'))).toBe(true);
    expect(await store.replace(changed, hook.updated, entry('01JAUD00000000000000000004', 'webhook.updated'))).toBe(false);
    expect(await auditItem('01JAUD00000000000000000003')).toBeDefined();
    expect(await auditItem('01JAUD00000000000000000004')).toBeUndefined();
    // A delete of the webhook as read before the change: refused, nothing recorded.
    expect(await store.delete(company, hook.id, entry('01JAUD00000000000000000005', 'webhook.deleted'), hook.updated)).toBe(false);
    expect(await auditItem('01JAUD00000000000000000005')).toBeUndefined();
    expect(await store.delete(company, hook.id, entry('01JAUD00000000000000000006', 'webhook.deleted'), changed.updated)).toBe(true);
    expect(await auditItem('01JAUD00000000000000000006')).toMatchObject({ action: 'webhook.deleted' });
    expect(await store.get(company, hook.id)).toBeUndefined();
  });
});

describe('DynamoDbDeliveryStore on DynamoDB Local', () => {
  const target = webhook('01JWHK00000000000000000041');

  it('writes each delivery once (a replayed event writes nothing) and pages them newest first', async () => {
    const store = deliveries();
    const now = new Date('2026-12-06T10:00:00.000Z');
    const older = newDelivery(event('e-1', '2026-12-06T09:00:00.000Z'), target, now);
    const newer = newDelivery(event('e-2', '2026-12-06T09:30:00.000Z'), target, now);
    expect(await store.createEach([older, newer])).toEqual([older, newer]);
    expect(await store.createEach([newDelivery(event('e-1', '2026-12-06T09:00:00.000Z'), target, now)])).toEqual([]);
    expect(await store.get('acme', target.id, older.id)).toEqual(older);
    const first = await store.list('acme', target.id, { limit: 1 });
    expect(first.items).toEqual([newer]);
    const second = await store.list('acme', target.id, { limit: 1, cursor: first.nextCursor ?? undefined });
    expect(second).toEqual({ items: [older], nextCursor: null });
  });

  it("finds the oldest due deliveries across every shard, not the first shards' only", async () => {
    const store = deliveries();
    const shard = (id: string) => Number(webhookDueShardOf(deliveryPartition('fair', id)).slice('DUE#'.length));
    const ids = Array.from({ length: 200 }, (_, index) => `01JWHKFAIR${String(index).padStart(16, '0')}`);
    const crowded = ids.find((id) => shard(id) === 0) as string;
    const quiet = ids.find((id) => shard(id) === 15) as string;
    // Before every other test's deliveries: the crowded webhook's five, and the quiet one's one, older still.
    const crowding = Array.from({ length: 5 }, (_, index) =>
      newDelivery(
        event(`e-crowd-${index}`, '2020-01-01T00:00:00.000Z'),
        webhook(crowded, { company: 'fair' }),
        new Date('2020-01-01T00:00:00.000Z'),
      ),
    );
    const waiting = newDelivery(
      event('e-quiet', '2019-12-31T00:00:00.000Z'),
      webhook(quiet, { company: 'fair' }),
      new Date('2019-12-31T00:00:00.000Z'),
    );
    await store.createEach([...crowding, waiting]);
    const due = await store.due('2020-01-01T00:00:00.000Z', 3);
    expect(due).toHaveLength(3);
    expect(due[0]?.id).toBe(waiting.id);
  });

  it('finds due deliveries, lets one sender claim an attempt, records it, and keeps a final one out of the due index with a TTL', async () => {
    const store = deliveries();
    const hook = webhook('01JWHK00000000000000000042');
    const created = newDelivery(event('e-due', '2026-12-06T11:00:00.000Z'), hook, new Date('2026-12-06T11:00:00.000Z'));
    await store.createEach([created]);
    expect((await store.due('2026-12-06T10:59:59.000Z', 100)).map((item) => item.id)).not.toContain(created.id);
    const [due] = (await store.due('2026-12-06T11:00:00.000Z', 100)).filter((item) => item.id === created.id);
    if (due === undefined) throw new Error('not due');
    expect(await store.claim(due, '2026-12-06T11:00:30.000Z')).toBe(true);
    expect(await store.claim(due, '2026-12-06T11:00:30.000Z')).toBe(false);
    const failed = { at: '2026-12-06T11:00:01.000Z', status: 500, error: 'answered 500', durationMs: 12 };
    expect(await store.recordAttempt(due, failed, { state: 'PENDING', nextAttemptAt: '2026-12-06T11:00:06.000Z' })).toBe(true);
    expect(await store.recordAttempt(due, failed, { state: 'PENDING', nextAttemptAt: '2026-12-06T11:00:06.000Z' })).toBe(false);
    const retried = await store.get('acme', hook.id, created.id);
    expect(retried).toMatchObject({
      attempts: 1,
      lastStatus: 500,
      state: 'PENDING',
      nextAttemptAt: '2026-12-06T11:00:06.000Z',
      history: [failed],
    });
    if (retried === undefined) throw new Error('gone');
    const ok = { at: '2026-12-06T11:00:06.000Z', status: 204, error: null, durationMs: 8 };
    expect(await store.recordAttempt(retried, ok, { state: 'SUCCEEDED', nextAttemptAt: null })).toBe(true);
    expect((await store.due('2026-12-07T00:00:00.000Z', 1000)).map((item) => item.id)).not.toContain(created.id);
    const { Item } = await client().send(
      new GetCommand({ TableName: LOCAL_TABLES.webhooks, Key: { pk: deliveryPartition('acme', hook.id), sk: created.id } }),
    );
    expect(Item).toMatchObject({ state: 'SUCCEEDED', expiresAt: Math.floor(Date.parse(ok.at) / 1000) + 30 * 86_400 });
    expect(Item).not.toHaveProperty('dueShard');
  });

  it('keeps the latest attempts only, and redelivers a final delivery with its webhook-id, due again', async () => {
    const store = deliveries();
    const hook = webhook('01JWHK00000000000000000043');
    const created = newDelivery(event('e-re', '2026-12-06T12:00:00.000Z'), hook, new Date('2026-12-06T12:00:00.000Z'));
    await store.createEach([created]);
    let current = created;
    for (let index = 0; index < MAX_KEPT_ATTEMPTS + 2; index += 1) {
      const attempt = {
        at: new Date(Date.parse('2026-12-06T12:00:00.000Z') + index * 1000).toISOString(),
        status: null,
        error: 'timed out',
        durationMs: 10_000,
      };
      const final = index === MAX_KEPT_ATTEMPTS + 1;
      await store.recordAttempt(
        current,
        attempt,
        final ? { state: 'FAILED', nextAttemptAt: null } : { state: 'PENDING', nextAttemptAt: attempt.at },
      );
      current = (await store.get('acme', hook.id, created.id)) ?? current;
    }
    expect(current.history).toHaveLength(MAX_KEPT_ATTEMPTS);
    expect(current.history[0]?.at).toBe('2026-12-06T12:00:02.000Z');
    expect(current).toMatchObject({ state: 'FAILED', attempts: MAX_KEPT_ATTEMPTS + 2, nextAttemptAt: null });
    expect(await store.redeliver('acme', hook.id, created.id, '2026-12-06T13:00:00.000Z')).toBe(true);
    expect(await store.redeliver('acme', hook.id, '01JNOTHERE0000000000000000', '2026-12-06T13:00:00.000Z')).toBe(false);
    expect(await store.get('acme', hook.id, created.id)).toMatchObject({
      state: 'PENDING',
      nextAttemptAt: '2026-12-06T13:00:00.000Z',
      messageId: created.messageId,
      history: current.history,
    });
    expect((await store.due('2026-12-06T13:00:00.000Z', 1000)).map((item) => item.id)).toContain(created.id);
  });
});
