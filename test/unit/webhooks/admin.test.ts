import { describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../../functions/core/audit/ports.js';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError } from '../../../functions/core/shared/errors.js';
import type { Principal } from '../../../functions/core/shared/principal.js';
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listWebhooks,
  rotateWebhookSecret,
  updateWebhook,
  urlRefusal,
} from '../../../functions/core/webhooks/admin.js';
import { getDelivery, listDeliveries, redeliver, testWebhook } from '../../../functions/core/webhooks/delivery-admin.js';
import { MAX_WEBHOOKS_PER_COMPANY, type StoredWebhook } from '../../../functions/core/webhooks/model.js';
import { InMemoryDeliveries, InMemoryWebhooks } from '../../support/in-memory-webhooks.js';

const admin: Principal = { subject: 'sub-ada', username: 'ada', companies: ['acme'], scopes: new Set(['webhooks:write']) };
const LOCAL_HOSTS = ['127.0.0.1', 'localhost'];
const T0 = new Date('2026-12-06T10:00:00.000Z');

/** The in-memory webhooks, keeping the audit entry each write carries. */
class AuditedWebhooks extends InMemoryWebhooks {
  readonly audit: AuditEntry[] = [];
  override async create(webhook: StoredWebhook, limit: number, audit?: AuditEntry) {
    const created = await super.create(webhook, limit);
    if (created && audit !== undefined) this.audit.push(audit);
    return created;
  }
  override async replace(webhook: StoredWebhook, expectedUpdated: string, audit?: AuditEntry) {
    const replaced = await super.replace(webhook, expectedUpdated);
    if (replaced && audit !== undefined) this.audit.push(audit);
    return replaced;
  }
  override async delete(company: string, id: string, audit?: AuditEntry, expectedUpdated?: string) {
    if (expectedUpdated !== undefined && (await super.get(company, id))?.updated !== expectedUpdated) return false;
    const deleted = await super.delete(company, id);
    if (deleted && audit !== undefined) this.audit.push(audit);
    return deleted;
  }
}

function setup(now: () => Date = () => T0) {
  const webhooks = new AuditedWebhooks();
  const deliveries = new InMemoryDeliveries();
  return {
    webhooks,
    deliveries,
    admin: { webhooks, allowedHttpHosts: LOCAL_HOSTS, now },
    delivery: { webhooks, deliveries, now },
  };
}

const request = { url: 'https://hooks.example.com/in', events: ['deployment.failed' as const, 'device.disconnected' as const] };

describe('webhook URLs', () => {
  it.each([
    ['https://hooks.example.com/in?x=1', undefined],
    ['http://127.0.0.1:8080/hook', undefined],
    ['http://localhost/hook', undefined],
    ['http://hooks.example.com/in', /https/],
    ['ftp://hooks.example.com/in', /https/],
    ['/relative', /absolute/],
    ['https://user:pass@hooks.example.com/in', /user name or password/],
    ['https://hooks.example.com/in#part', /fragment/],
    ['https://10.0.0.1/in', /private/],
    ['https://169.254.169.254/latest/meta-data', /metadata/],
    ['https://[::ffff:10.0.0.1]/in', /private/],
    ['https://100.64.0.1/in', /carrier-grade NAT/],
    ['https://127.0.0.2/in', /loopback/],
    [' https://hooks.example.com/in', /white space/],
  ])('%s: %s', (url, refused) => {
    const refusal = urlRefusal(url, LOCAL_HOSTS);
    if (refused === undefined) expect(refusal).toBeUndefined();
    else expect(refusal).toMatch(refused);
  });

  it('accepts http to a host only when WEBHOOK_ALLOWED_HTTP_HOSTS names it', () => {
    expect(urlRefusal('http://127.0.0.1:8080/hook', [])).toMatch(/https/);
  });
});

describe('webhook administration', () => {
  it('creates a webhook with a Standard Webhooks secret shown once, never in a read', async () => {
    const { admin: deps } = setup();
    const created = await createWebhook(deps, admin, 'acme', { ...request, description: 'On-call' });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(created.secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
    expect(created).toMatchObject({ url: request.url, events: request.events, enabled: true, by: 'ada', description: 'On-call' });
    const read = await getWebhook(deps, admin, 'acme', created.id);
    expect(read).not.toHaveProperty('secret');
    expect(read).not.toHaveProperty('previousSecret');
    const page = await listWebhooks(deps, admin, 'acme', { limit: 10 });
    expect(page.items).toEqual([read]);
    expect(JSON.stringify(page)).not.toContain(created.secret);
  });

  it('refuses a URL with a 400 naming /url, writing nothing', async () => {
    const { admin: deps, webhooks } = setup();
    const error = await createWebhook(deps, admin, 'acme', { ...request, url: 'https://10.1.2.3/in' }).catch((caught) => caught);
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as BadRequestError).violations).toEqual([
      { path: '/url', message: expect.stringMatching(/10\.1\.2\.3 is a private address/) },
    ]);
    expect(webhooks.items.size).toBe(0);
  });

  it('refuses a company not the caller’s, and answers 404 for another company’s webhook', async () => {
    const { admin: deps } = setup();
    await expect(createWebhook(deps, admin, 'globex', request)).rejects.toBeInstanceOf(ForbiddenError);
    const globexAdmin: Principal = { ...admin, companies: ['globex'] };
    const theirs = await createWebhook(deps, globexAdmin, 'globex', request);
    await expect(getWebhook(deps, admin, 'acme', theirs.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(deleteWebhook(deps, admin, 'acme', theirs.id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it(`stops at ${MAX_WEBHOOKS_PER_COMPANY} webhooks per company with a conflict saying what to do`, async () => {
    const { admin: deps } = setup();
    for (let index = 0; index < MAX_WEBHOOKS_PER_COMPANY; index += 1) await createWebhook(deps, admin, 'acme', request);
    await expect(createWebhook(deps, admin, 'acme', request)).rejects.toThrow(ConflictError);
    await expect(createWebhook(deps, admin, 'acme', request)).rejects.toThrow(/Delete one/);
  });

  it('changes only the members sent; re-enabling restarts the failure clock', async () => {
    let now = T0;
    const { admin: deps, webhooks } = setup(() => now);
    const created = await createWebhook(deps, admin, 'acme', { ...request, description: 'On-call' });
    const stored = webhooks.items.get(`acme#${created.id}`);
    if (stored === undefined) throw new Error('not stored');
    Object.assign(stored, { enabled: false, failingSince: '2026-12-01T00:00:00.000Z' });
    // Same millisecond as the create: `updated` must still move, or a compare-and-set could not see the change.
    const changed = await updateWebhook(deps, admin, 'acme', created.id, { events: ['webhook.test'], description: null });
    expect(changed).toMatchObject({ url: request.url, events: ['webhook.test'], description: null, enabled: false });
    expect(changed.updated > created.updated).toBe(true);
    now = new Date(T0.getTime() + 60_000);
    const enabled = await updateWebhook(deps, admin, 'acme', created.id, { enabled: true });
    expect(enabled).toMatchObject({ enabled: true, failingSince: null, updated: now.toISOString() });
    await expect(updateWebhook(deps, admin, 'acme', created.id, { url: 'http://example.com/' })).rejects.toBeInstanceOf(BadRequestError);
    await expect(updateWebhook(deps, admin, 'acme', '01JNOTHERE0000000000000000', { enabled: true })).rejects.toBeInstanceOf(NotFoundError);
  });

  it('gives up with a conflict when other changes keep winning', async () => {
    const { admin: deps, webhooks } = setup();
    const created = await createWebhook(deps, admin, 'acme', request);
    webhooks.replace = async () => false;
    await expect(updateWebhook(deps, admin, 'acme', created.id, { enabled: false })).rejects.toThrow(/kept changing/);
  });

  it('rotates the secret: a new one shown once, the previous one kept signing for 24 hours', async () => {
    const { admin: deps, webhooks } = setup();
    const created = await createWebhook(deps, admin, 'acme', request);
    const rotated = await rotateWebhookSecret(deps, admin, 'acme', created.id);
    expect(rotated.secret).not.toBe(created.secret);
    expect(rotated.previousSecretExpiresAt).toBe('2026-12-07T10:00:00.000Z');
    expect(webhooks.items.get(`acme#${created.id}`)).toMatchObject({ secret: rotated.secret, previousSecret: created.secret });
    expect(await getWebhook(deps, admin, 'acme', created.id)).not.toHaveProperty('secret');
  });

  it('records who created, changed, rotated and deleted a webhook, with its values before and after, never a secret', async () => {
    let now = T0;
    const { admin: deps, webhooks } = setup(() => now);
    const created = await createWebhook(deps, admin, 'acme', request);
    now = new Date(T0.getTime() + 1_000);
    await updateWebhook(deps, admin, 'acme', created.id, { enabled: false });
    const rotated = await rotateWebhookSecret(deps, admin, 'acme', created.id);
    await deleteWebhook(deps, admin, 'acme', created.id);
    expect(webhooks.audit.map((entry) => entry.action)).toEqual([
      'webhook.created',
      'webhook.updated',
      'webhook.secret-rotated',
      'webhook.deleted',
    ]);
    for (const entry of webhooks.audit) {
      expect(entry).toMatchObject({ actor: 'ada', target: { kind: 'webhook', id: created.id }, companies: ['acme'] });
    }
    expect(webhooks.audit[0]).toMatchObject({ at: T0.toISOString(), after: { url: request.url, events: request.events, enabled: true } });
    expect(webhooks.audit[0]).not.toHaveProperty('before');
    expect(webhooks.audit[1]).toMatchObject({ before: { enabled: true }, after: { enabled: false } });
    expect(webhooks.audit[2]).toMatchObject({ after: { previousSecretExpiresAt: rotated.previousSecretExpiresAt } });
    expect(webhooks.audit[3]).toMatchObject({ before: { url: request.url } });
    expect(webhooks.audit[3]).not.toHaveProperty('after');
    const recorded = JSON.stringify(webhooks.audit);
    expect(recorded).not.toContain(created.secret);
    expect(recorded).not.toContain(rotated.secret);
    expect(recorded).not.toContain('whsec_');
  });

  it('deletes a webhook once', async () => {
    const { admin: deps } = setup();
    const created = await createWebhook(deps, admin, 'acme', request);
    await deleteWebhook(deps, admin, 'acme', created.id);
    await expect(getWebhook(deps, admin, 'acme', created.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(deleteWebhook(deps, admin, 'acme', created.id)).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe('test events and deliveries', () => {
  it('writes a webhook.test delivery, PENDING and due now, that the deliveries list shows', async () => {
    const { admin: adminDeps, delivery: deps, deliveries } = setup();
    const created = await createWebhook(adminDeps, admin, 'acme', request);
    const sent = await testWebhook(deps, admin, 'acme', created.id);
    expect(sent).toMatchObject({ type: 'webhook.test', state: 'PENDING', attempts: 0, nextAttemptAt: T0.toISOString(), history: [] });
    expect(sent.messageId).toBe(`msg_${sent.id}`);
    const stored = deliveries.items.get(`acme#${sent.id}`);
    expect(JSON.parse(stored?.payload ?? '{}')).toEqual({
      type: 'webhook.test',
      timestamp: T0.toISOString(),
      data: { webhookId: created.id, message: expect.stringContaining('test event') },
    });
    expect((await listDeliveries(deps, admin, 'acme', created.id, { limit: 10 })).items).toEqual([sent]);
    expect(await getDelivery(deps, admin, 'acme', created.id, sent.id)).toEqual(sent);
    // Each test is an event of its own: a second one is another delivery.
    const again = await testWebhook(deps, admin, 'acme', created.id);
    expect(again.id).not.toBe(sent.id);
  });

  it('redelivers a final delivery with the same webhook-id, due now', async () => {
    let now = T0;
    const { admin: adminDeps, delivery: deps, deliveries } = setup(() => now);
    const created = await createWebhook(adminDeps, admin, 'acme', request);
    const sent = await testWebhook(deps, admin, 'acme', created.id);
    const stored = deliveries.items.get(`acme#${sent.id}`);
    if (stored === undefined) throw new Error('not stored');
    Object.assign(stored, { state: 'FAILED', attempts: 8, nextAttemptAt: null, lastStatus: 500 });
    now = new Date(T0.getTime() + 3_600_000);
    const again = await redeliver(deps, admin, 'acme', created.id, sent.id);
    expect(again).toMatchObject({ id: sent.id, messageId: sent.messageId, state: 'PENDING', nextAttemptAt: now.toISOString() });
    await expect(redeliver(deps, admin, 'acme', created.id, '01JNOTHERE0000000000000000')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('answers 404 for the deliveries of an unknown or deleted webhook', async () => {
    const { admin: adminDeps, delivery: deps } = setup();
    const created = await createWebhook(adminDeps, admin, 'acme', request);
    const sent = await testWebhook(deps, admin, 'acme', created.id);
    await deleteWebhook(adminDeps, admin, 'acme', created.id);
    await expect(listDeliveries(deps, admin, 'acme', created.id, { limit: 10 })).rejects.toBeInstanceOf(NotFoundError);
    await expect(getDelivery(deps, admin, 'acme', created.id, sent.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(testWebhook(deps, admin, 'acme', created.id)).rejects.toBeInstanceOf(NotFoundError);
  });
});
