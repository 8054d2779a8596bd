import { Webhook as StandardWebhook } from 'standardwebhooks';
import { describe, expect, it, vi } from 'vitest';
import type { AuditEntry } from '../../../functions/core/audit/ports.js';
import { dueOfImages, sweepDueDeliveries } from '../../../functions/core/webhooks/attempts.js';
import { newDelivery } from '../../../functions/core/webhooks/deliveries.js';
import { attemptDelivery, type DeliveryOptions, LEASE_MARGIN_MS } from '../../../functions/core/webhooks/delivery.js';
import {
  DISABLE_AFTER_FAILING_MS,
  MAX_DELIVERY_ATTEMPTS,
  type StoredDelivery,
  type StoredWebhook,
  type WebhookEvent,
} from '../../../functions/core/webhooks/model.js';
import type { SendOutcome } from '../../../functions/core/webhooks/ports.js';
import { InMemoryDeliveries, InMemoryWebhooks, ScriptedSender } from '../../support/in-memory-webhooks.js';

/** The in-memory webhooks, keeping the audit entry each write carries, by id. */
class AuditedWebhooks extends InMemoryWebhooks {
  readonly entries = new Map<string, AuditEntry>();
  override async replace(webhook: StoredWebhook, expectedUpdated: string, audit?: AuditEntry) {
    const replaced = await super.replace(webhook, expectedUpdated);
    if (replaced && audit !== undefined) this.entries.set(audit.id, audit);
    return replaced;
  }
}

const T0 = new Date('2026-12-06T10:00:00.000Z');
const SECRET = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;

const webhook = (changes: Partial<StoredWebhook> = {}): StoredWebhook => ({
  id: '01JWEBHOOK0000000000000000',
  company: 'acme',
  url: 'https://hooks.example.com/dss',
  events: ['deployment.succeeded'],
  description: null,
  enabled: true,
  created: T0.toISOString(),
  updated: T0.toISOString(),
  by: 'alice',
  failingSince: null,
  previousSecretExpiresAt: null,
  secret: SECRET,
  previousSecret: null,
  ...changes,
});

const event: WebhookEvent = {
  company: 'acme',
  eventId: 'status-1',
  type: 'deployment.succeeded',
  timestamp: T0.toISOString(),
  data: { deploymentId: 'd1' },
};

const answered = (status: number): SendOutcome => ({ kind: 'answered', status, durationMs: 12 });

/** A world of fakes with one webhook and one new delivery, and a clock the test moves. */
function world(outcomes: SendOutcome[], hook: StoredWebhook = webhook()) {
  const webhooks = new AuditedWebhooks();
  webhooks.items.set(`${hook.company}#${hook.id}`, hook);
  const deliveries = new InMemoryDeliveries();
  const delivery = newDelivery(event, hook, T0);
  deliveries.items.set(`acme#${delivery.id}`, structuredClone(delivery));
  const sender = new ScriptedSender(outcomes);
  let now = T0;
  const options: DeliveryOptions = { now: () => now, random: () => 0.5, retryScale: 1, timeoutMs: 10_000 };
  return {
    ports: { webhooks, deliveries, sender },
    options,
    stored: () => structuredClone(deliveries.items.get(`acme#${delivery.id}`) as StoredDelivery),
    hook: () => structuredClone(webhooks.items.get(`acme#${hook.id}`) as StoredWebhook),
    setNow: (at: Date) => {
      now = at;
    },
  };
}

describe('attemptDelivery', () => {
  it('sends a due delivery signed, with its body, and marks it SUCCEEDED on a 2xx', async () => {
    const w = world([answered(204)]);
    expect(await attemptDelivery(w.ports, w.stored(), w.options)).toBe('succeeded');
    const [request] = w.ports.sender.sent;
    expect(request?.url).toBe('https://hooks.example.com/dss');
    expect(request?.timeoutMs).toBe(10_000);
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers['webhook-id']).toBe(w.stored().messageId);
    expect(JSON.parse(request?.body ?? '')).toEqual({
      type: 'deployment.succeeded',
      timestamp: T0.toISOString(),
      data: { deploymentId: 'd1' },
    });
    vi.useFakeTimers({ now: T0, toFake: ['Date'] });
    try {
      expect(new StandardWebhook(SECRET).verify(request?.body ?? '', { ...request?.headers })).toBeTruthy();
    } finally {
      vi.useRealTimers();
    }
    expect(w.stored()).toMatchObject({ state: 'SUCCEEDED', attempts: 1, lastStatus: 204, nextAttemptAt: null });
    expect(w.stored().history).toEqual([{ at: T0.toISOString(), status: 204, error: null, durationMs: 12 }]);
  });

  it('claims with a lease past the timeout before sending', async () => {
    const w = world([answered(200)]);
    await attemptDelivery(w.ports, w.stored(), w.options);
    expect(w.ports.deliveries.claims).toEqual([
      { id: w.stored().id, leaseUntil: new Date(T0.getTime() + 10_000 + LEASE_MARGIN_MS).toISOString() },
    ]);
  });

  it('retries a failure after the schedule, keeping the same webhook-id, until FAILED after the last attempt', async () => {
    const w = world([answered(500)]);
    const ids = new Set<string>();
    let at = T0;
    for (let attempt = 1; attempt <= MAX_DELIVERY_ATTEMPTS; attempt += 1) {
      const result = await attemptDelivery(w.ports, w.stored(), w.options);
      expect(result).toBe(attempt === MAX_DELIVERY_ATTEMPTS ? 'failed' : 'retrying');
      ids.add(w.ports.sender.sent.at(-1)?.headers['webhook-id'] ?? '');
      const next = w.stored().nextAttemptAt;
      if (next !== null) {
        at = new Date(next);
        w.setNow(at);
      }
    }
    expect(ids).toEqual(new Set([w.stored().messageId]));
    expect(w.stored()).toMatchObject({ state: 'FAILED', attempts: MAX_DELIVERY_ATTEMPTS, lastStatus: 500, nextAttemptAt: null });
    expect(at.getTime() - T0.getTime()).toBe(99_305_000);
    expect(w.stored().history[0]?.error).toBe('the receiver answered 500');
  });

  it('schedules the next attempt from the end of this one', async () => {
    const w = world([{ kind: 'failed', reason: 'timed out after 10 s', durationMs: 10_000 }]);
    let calls = 0;
    const options = { ...w.options, now: () => new Date(T0.getTime() + (calls++ === 0 ? 0 : 10_000)) };
    expect(await attemptDelivery(w.ports, w.stored(), options)).toBe('retrying');
    expect(w.stored().nextAttemptAt).toBe(new Date(T0.getTime() + 15_000).toISOString());
    expect(w.stored().history[0]).toMatchObject({ status: null, error: 'timed out after 10 s', durationMs: 10_000 });
  });

  it('records a refusal with its reason and retries it like any failure', async () => {
    const w = world([{ kind: 'refused', reason: 'refused: 169.254.169.254 is a link-local/metadata address' }]);
    expect(await attemptDelivery(w.ports, w.stored(), w.options)).toBe('retrying');
    expect(w.stored().history[0]).toEqual({
      at: T0.toISOString(),
      status: null,
      error: 'refused: 169.254.169.254 is a link-local/metadata address',
      durationMs: null,
    });
  });

  it('says a redirect is not followed', async () => {
    const w = world([answered(302)]);
    expect(await attemptDelivery(w.ports, w.stored(), w.options)).toBe('retrying');
    expect(w.stored().history[0]?.error).toBe('the receiver answered 302 (redirects are not followed)');
  });

  it('does nothing to a delivery not yet due, or already final', async () => {
    const w = world([answered(200)]);
    const early = { ...w.stored(), nextAttemptAt: new Date(T0.getTime() + 1).toISOString() };
    expect(await attemptDelivery(w.ports, early, w.options)).toBe('not-due');
    expect(await attemptDelivery(w.ports, { ...w.stored(), state: 'SUCCEEDED', nextAttemptAt: null }, w.options)).toBe('not-due');
    expect(w.ports.sender.sent).toHaveLength(0);
  });

  it('sends once when two senders attempt the same delivery (stream consumer and sweeper)', async () => {
    const w = world([answered(200)]);
    const image = w.stored();
    const results = await Promise.all([
      attemptDelivery(w.ports, image, w.options),
      attemptDelivery(w.ports, structuredClone(image), w.options),
    ]);
    expect(results.sort()).toEqual(['succeeded', 'taken']);
    expect(w.ports.sender.sent).toHaveLength(1);
    expect(w.stored().attempts).toBe(1);
  });

  it('fails the pending delivery of a deleted or disabled webhook without sending', async () => {
    const disabled = world([answered(200)], webhook({ enabled: false }));
    expect(await attemptDelivery(disabled.ports, disabled.stored(), disabled.options)).toBe('failed');
    expect(disabled.stored().history[0]?.error).toBe('not sent: the webhook is disabled');
    const deleted = world([answered(200)]);
    await deleted.ports.webhooks.delete('acme', deleted.hook().id);
    expect(await attemptDelivery(deleted.ports, deleted.stored(), deleted.options)).toBe('failed');
    expect(deleted.stored()).toMatchObject({ state: 'FAILED', nextAttemptAt: null });
    expect([...disabled.ports.sender.sent, ...deleted.ports.sender.sent]).toHaveLength(0);
  });

  it('sends a test event to a disabled webhook, without disabling it again', async () => {
    const since = new Date(T0.getTime() - DISABLE_AFTER_FAILING_MS).toISOString();
    const hook = webhook({ enabled: false, failingSince: since });
    const w = world([answered(500)], hook);
    const test = newDelivery({ ...event, eventId: 'test-1', type: 'webhook.test', data: { webhookId: hook.id } }, hook, T0);
    w.ports.deliveries.items.set(`acme#${test.id}`, structuredClone(test));
    expect(await attemptDelivery(w.ports, test, w.options)).toBe('retrying');
    expect(w.ports.sender.sent).toHaveLength(1);
    expect(w.ports.webhooks.entries.size).toBe(0);
    expect(await attemptDelivery(w.ports, w.stored(), w.options)).toBe('failed');
    expect(w.ports.sender.sent).toHaveLength(1);
  });

  it('signs with the webhook as it is now (a rotated secret), not as it was when the event came', async () => {
    const next = `whsec_${Buffer.from('a'.repeat(32)).toString('base64')}`;
    const w = world(
      [answered(200)],
      webhook({ secret: next, previousSecret: SECRET, previousSecretExpiresAt: '2026-12-07T10:00:00.000Z' }),
    );
    await attemptDelivery(w.ports, w.stored(), w.options);
    expect(w.ports.sender.sent[0]?.headers['webhook-signature']?.split(' ')).toHaveLength(2);
  });
});

describe("a webhook's health", () => {
  it('starts failingSince at the first failure and clears it on a success', async () => {
    const w = world([answered(500), answered(200)]);
    await attemptDelivery(w.ports, w.stored(), w.options);
    expect(w.hook().failingSince).toBe(T0.toISOString());
    w.setNow(new Date(w.stored().nextAttemptAt ?? ''));
    await attemptDelivery(w.ports, w.stored(), w.options);
    expect(w.hook()).toMatchObject({ failingSince: null, enabled: true });
  });

  it('keeps the first failure time across later failures', async () => {
    const since = new Date(T0.getTime() - 60_000).toISOString();
    const w = world([answered(503)], webhook({ failingSince: since }));
    await attemptDelivery(w.ports, w.stored(), w.options);
    expect(w.hook().failingSince).toBe(since);
  });

  it('disables a webhook failing for 5 days and records webhook.disabled once', async () => {
    const since = new Date(T0.getTime() - DISABLE_AFTER_FAILING_MS).toISOString();
    const w = world([answered(500)], webhook({ failingSince: since }));
    await attemptDelivery(w.ports, w.stored(), w.options);
    expect(w.hook()).toMatchObject({ enabled: false, updated: T0.toISOString() });
    const entries = [...w.ports.webhooks.entries.values()];
    expect(entries).toEqual([
      expect.objectContaining({
        action: 'webhook.disabled',
        actor: 'webhook-deliveries',
        target: { kind: 'webhook', id: w.hook().id },
        companies: ['acme'],
      }),
    ]);
    w.setNow(new Date(w.stored().nextAttemptAt ?? ''));
    expect(await attemptDelivery(w.ports, w.stored(), w.options)).toBe('failed');
    expect(w.ports.webhooks.entries.size).toBe(1);
    expect(w.ports.sender.sent).toHaveLength(1);
  });

  it('does not disable a webhook failing for just under 5 days', async () => {
    const since = new Date(T0.getTime() - DISABLE_AFTER_FAILING_MS + 1).toISOString();
    const w = world([answered(500)], webhook({ failingSince: since }));
    await attemptDelivery(w.ports, w.stored(), w.options);
    expect(w.hook().enabled).toBe(true);
    expect(w.ports.webhooks.entries.size).toBe(0);
  });

  it('leaves a webhook a person changed meanwhile as they left it', async () => {
    const w = world([answered(500)]);
    const original = w.hook();
    const edited = { ...original, url: 'https://new.example.com/', updated: '2026-12-06T10:00:00.500Z' };
    const image = w.stored();
    w.ports.webhooks.get = async () => structuredClone(original);
    await w.ports.webhooks.replace(edited, original.updated);
    await attemptDelivery(w.ports, image, w.options);
    expect(w.hook()).toMatchObject({ url: 'https://new.example.com/', failingSince: null });
  });
});

describe('attempting many deliveries', () => {
  it('attempts only the last image of each delivery in a stream batch, when due', async () => {
    const w = world([answered(200)]);
    const created = w.stored();
    const claimed = { ...created, nextAttemptAt: new Date(T0.getTime() + 70_000).toISOString() };
    expect(dueOfImages([created, claimed], T0)).toEqual([]);
    expect(dueOfImages([claimed, created], T0)).toEqual([created]);
  });

  it('sweeps the due deliveries and leaves those not due', async () => {
    const w = world([answered(200)]);
    const later = { ...w.stored(), id: '01JLATER000000000000000000', nextAttemptAt: new Date(T0.getTime() + 60_000).toISOString() };
    w.ports.deliveries.items.set(`acme#${later.id}`, later);
    const counts = await sweepDueDeliveries(w.ports, w.options, 30_000);
    expect(counts).toMatchObject({ succeeded: 1, retrying: 0, failed: 0 });
    expect(w.stored().state).toBe('SUCCEEDED');
    expect(w.ports.deliveries.items.get(`acme#${later.id}`)?.state).toBe('PENDING');
  });

  it('starts no more attempts than can end within its budget, each counted at the send timeout', async () => {
    const w = world([answered(200)]);
    for (let index = 0; index < 40; index += 1) {
      const id = `01JDUE${String(index).padStart(20, '0')}`;
      w.ports.deliveries.items.set(`acme#${id}`, { ...w.stored(), id, messageId: `msg_${id}` });
    }
    // Less than one round's worst (10 s of timeout and 1 s of store calls): nothing is started.
    expect(await sweepDueDeliveries(w.ports, w.options, 10_999)).toMatchObject({ succeeded: 0 });
    expect(w.ports.sender.sent).toHaveLength(0);
    // One round's worst: one round of 16 attempts at once, each taking its whole timeout; the rest left to the next run.
    const send = w.ports.sender.send.bind(w.ports.sender);
    let clock = T0.getTime();
    w.ports.sender.send = async (...request) => {
      clock += 10_000;
      w.setNow(new Date(clock));
      return send(...request);
    };
    expect(await sweepDueDeliveries(w.ports, w.options, 11_000)).toMatchObject({ succeeded: 16 });
    expect(w.ports.sender.sent).toHaveLength(16);
  });
});
