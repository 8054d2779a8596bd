import { describe, expect, it } from 'vitest';
import type { DeploymentStatusChangedEvent } from '../../../functions/core/deployments/model.js';
import type { BusEvent } from '../../../functions/core/webhooks/events.js';
import { boundedEvent, fanOut } from '../../../functions/core/webhooks/fanout.js';
import { MAX_WEBHOOK_DATA_BYTES, type StoredWebhook, type WebhookEvent } from '../../../functions/core/webhooks/model.js';
import { InMemoryDeliveries, InMemoryWebhooks } from '../../support/in-memory-webhooks.js';

const T0 = new Date('2026-12-06T10:00:00.000Z');

const hook = (id: string, changes: Partial<StoredWebhook> = {}): StoredWebhook => ({
  id,
  company: 'acme',
  url: `https://hooks.example.com/${id}`,
  events: ['deployment.succeeded'],
  description: null,
  enabled: true,
  created: T0.toISOString(),
  updated: T0.toISOString(),
  by: 'alice',
  failingSince: null,
  previousSecretExpiresAt: null,
  secret: 'whsec_AAAA',
  previousSecret: null,
  ...changes,
});

const report = (state: DeploymentStatusChangedEvent['state'], statusId = '01JSTATUS00000000000000001', company = 'acme'): BusEvent => ({
  type: 'DeploymentStatusChanged',
  company,
  statusId,
  deploymentId: '01JDEPLOY00000000000000001',
  deviceId: 'kiosk-1',
  scenarioId: 'menu',
  version: '1.0.0',
  state,
  message: null,
  at: '2026-12-06T09:59:59.000Z',
  by: 'kiosk-1-client',
});

function world(webhooks: StoredWebhook[]) {
  const store = new InMemoryWebhooks();
  for (const webhook of webhooks) store.items.set(`${webhook.company}#${webhook.id}`, webhook);
  const deliveries = new InMemoryDeliveries();
  return { ports: { webhooks: store, deliveries }, deliveries };
}

describe('fanOut', () => {
  it("writes one PENDING delivery, due now, per enabled webhook of the event's company subscribed to its type", async () => {
    const w = world([
      hook('A'),
      hook('B', { events: ['deployment.failed', 'deployment.succeeded'] }),
      hook('C', { events: ['deployment.failed'] }),
      hook('D', { enabled: false }),
      hook('E', { company: 'globex' }),
    ]);
    const written = await fanOut(w.ports, [report('INSTALLED')], T0);
    expect(written.map((delivery) => delivery.webhookId).sort()).toEqual(['A', 'B']);
    for (const delivery of written) {
      expect(delivery).toMatchObject({ state: 'PENDING', attempts: 0, type: 'deployment.succeeded', nextAttemptAt: T0.toISOString() });
      expect(JSON.parse(delivery.payload)).toMatchObject({ type: 'deployment.succeeded', timestamp: '2026-12-06T09:59:59.000Z' });
    }
  });

  it('writes nothing twice when the same bus events come again', async () => {
    const w = world([hook('A')]);
    const first = await fanOut(w.ports, [report('INSTALLED')], T0);
    const again = await fanOut(w.ports, [report('INSTALLED')], new Date(T0.getTime() + 5_000));
    expect(first).toHaveLength(1);
    expect(again).toHaveLength(0);
    expect(w.deliveries.items.size).toBe(1);
  });

  it('skips the events webhooks do not carry', async () => {
    const w = world([hook('A', { events: ['deployment.succeeded', 'deployment.failed'] })]);
    expect(await fanOut(w.ports, [report('DOWNLOADING'), report('INSTALLING', '01JSTATUS00000000000000002')], T0)).toEqual([]);
  });

  it('gives two events two deliveries with different webhook-ids', async () => {
    const w = world([hook('A')]);
    const written = await fanOut(w.ports, [report('INSTALLED'), report('INSTALLED', '01JSTATUS00000000000000002')], T0);
    expect(new Set(written.map((delivery) => delivery.messageId)).size).toBe(2);
  });
});

describe('boundedEvent', () => {
  const event = (data: Record<string, unknown>): WebhookEvent => ({
    company: 'acme',
    eventId: 'e1',
    type: 'command.succeeded',
    timestamp: T0.toISOString(),
    data,
  });

  it('keeps data that fits as it is', () => {
    const small = event({ commandId: 'c1', message: 'done' });
    expect(boundedEvent(small)).toBe(small);
  });

  it('cuts data too large to its identifiers, marked truncated', () => {
    const large = event({ commandId: 'c1', target: { type: 'DEVICE', id: 'kiosk-1' }, message: 'x'.repeat(MAX_WEBHOOK_DATA_BYTES) });
    const bounded = boundedEvent(large);
    expect(bounded.data).toEqual({ commandId: 'c1', target: { type: 'DEVICE', id: 'kiosk-1' }, truncated: true });
  });
});
