/**
 * The event catalogue (docs/webhooks.md, "Event types") is what the service sends: each example body there is the
 * body (deliveryPayload) of webhookEventOf for the matching bus event below, or of the test event, and every webhook
 * event type has exactly one example. Bus events no webhook carries give none.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { deliveryPayload } from '../../../functions/core/webhooks/deliveries.js';
import { testEvent } from '../../../functions/core/webhooks/delivery-admin.js';
import { type BusEvent, busEventId, webhookEventOf } from '../../../functions/core/webhooks/events.js';
import { WEBHOOK_EVENT_TYPES, type WebhookEvent } from '../../../functions/core/webhooks/model.js';

const COMPANY = 'acme';
const DEVICE = 'kiosk-lyon-012';
const REASON =
  'Wave 1: 3 of 20 devices reported FAILED (15 %), above the failure threshold of 10 %. Resume to go on with wave 2, or cancel.';

/** One bus event per webhook event type (but webhook.test, which no bus event makes), as the stream consumers publish them. */
const CATALOGUE_SOURCES: readonly BusEvent[] = [
  {
    type: 'DeploymentStatusChanged',
    company: COMPANY,
    statusId: '01JPB7C2M9D4F6H8K0N2Q4S6V8',
    deploymentId: '01JPB6Z8X4N2Q7R5T3V9W1Y6ZA',
    deviceId: DEVICE,
    scenarioId: 'spring-promo',
    version: '1.2.0',
    state: 'INSTALLED',
    message: null,
    at: '2026-03-14T09:26:53.000Z',
    by: 'device-kiosk-lyon-012',
  },
  {
    type: 'DeploymentStatusChanged',
    company: COMPANY,
    statusId: '01JPB7D5R1T3W5Y7A9C1E3G5J7',
    deploymentId: '01JPB6Z8X4N2Q7R5T3V9W1Y6ZB',
    deviceId: 'kiosk-lyon-013',
    scenarioId: 'spring-promo',
    version: '1.2.0',
    state: 'FAILED',
    message: 'Not enough storage: 180 MB free, 240 MB needed.',
    at: '2026-03-14T09:27:10.000Z',
    by: 'device-kiosk-lyon-013',
  },
  {
    type: 'DeviceConnectionChanged',
    company: COMPANY,
    deviceId: DEVICE,
    serial: 'ACM-K1-000012',
    state: 'CONNECTED',
    at: '2026-03-14T07:58:02.000Z',
  },
  {
    type: 'DeviceConnectionChanged',
    company: COMPANY,
    deviceId: DEVICE,
    serial: 'ACM-K1-000012',
    state: 'DISCONNECTED',
    at: '2026-03-14T21:03:40.000Z',
  },
  {
    type: 'RolloutStateChanged',
    company: COMPANY,
    rolloutId: '01JPB5W3E6G8J0M2P4R6T8W0Y2',
    action: 'DEPLOY',
    what: { type: 'SCENARIO', id: 'spring-promo', subId: '1.2.0' },
    state: 'PAUSED',
    at: '2026-03-14T09:41:00.000Z',
    wave: 1,
    reason: REASON,
  },
  {
    type: 'RolloutStateChanged',
    company: COMPANY,
    rolloutId: '01JPB9A1C3E5G7J9M1P3R5T7W9',
    action: 'COMMAND',
    command: 'reconcile',
    state: 'COMPLETED',
    at: '2026-03-14T18:05:12.000Z',
  },
  {
    type: 'CommandStateChanged',
    company: COMPANY,
    commandId: '01JPB8F2H4K6N8Q0S2V4X6Z8B0',
    deviceId: DEVICE,
    subId: 'hub-12/printer-12',
    command: 'print-test-page',
    state: 'SUCCEEDED',
    at: '2026-03-14T10:12:31.000Z',
    by: 'alice',
    message: 'Test page printed.',
    rolloutId: null,
  },
  {
    type: 'CommandStateChanged',
    company: COMPANY,
    commandId: '01JPB9A4D6F8H0K2M4P6R8T0V2',
    deviceId: 'kiosk-lyon-013',
    subId: 'hub-13/payment-13',
    command: 'reconcile',
    state: 'FAILED',
    at: '2026-03-14T18:01:47.000Z',
    by: 'alice',
    message: 'Acquirer unreachable: connection timed out.',
    rolloutId: '01JPB9A1C3E5G7J9M1P3R5T7W9',
  },
  {
    type: 'CommandStateChanged',
    company: COMPANY,
    commandId: '01JPB9A4D6F8H0K2M4P6R8T0V3',
    deviceId: 'kiosk-paris-004',
    subId: 'hub-4/payment-4',
    command: 'reconcile',
    state: 'EXPIRED',
    at: '2026-03-14T19:00:47.000Z',
    by: 'alice',
    message: null,
    rolloutId: '01JPB9A1C3E5G7J9M1P3R5T7W9',
  },
  {
    type: 'AlertChanged',
    company: COMPANY,
    alertId: '01JPBQ3N5R7T9W1Y3A5C7E9G1J',
    ruleId: '01JP9X2K4M6P8R0T2W4Y6A8C0E',
    ruleName: 'Lyon kiosks offline 15 min',
    state: 'OPEN',
    target: { type: 'DEVICE', id: DEVICE },
    at: '2026-03-14T21:18:40.000Z',
    detail: 'Disconnected since 2026-03-14T21:03:40.000Z.',
  },
  {
    type: 'AlertChanged',
    company: COMPANY,
    alertId: '01JPBQ3N5R7T9W1Y3A5C7E9G1J',
    ruleId: '01JP9X2K4M6P8R0T2W4Y6A8C0E',
    ruleName: 'Lyon kiosks offline 15 min',
    state: 'RESOLVED',
    target: { type: 'DEVICE', id: DEVICE },
    at: '2026-03-15T07:55:09.000Z',
    detail: 'Disconnected since 2026-03-14T21:03:40.000Z.',
  },
];

/** The test event of the catalogue. */
const TEST_EVENT = testEvent(COMPANY, '01JPA2B4D6F8H0K2M4P6R8T0W2', new Date('2026-03-14T08:30:00.000Z'));

/** The JSON examples of docs/webhooks.md's "Event types" section, in order. */
function documentedBodies(): unknown[] {
  const text = readFileSync('docs/webhooks.md', 'utf8');
  const start = text.indexOf('\n## Event types\n');
  expect(start, 'docs/webhooks.md has an "Event types" section').toBeGreaterThan(-1);
  const end = text.indexOf('\n## ', start + 1);
  const section = text.slice(start, end === -1 ? undefined : end);
  return [...section.matchAll(/```json\n([\s\S]*?)```/g)].map((match) => JSON.parse(match[1] as string));
}

/** What a receiver gets for an event: the delivery's body. */
const bodyOf = (event: WebhookEvent) => JSON.parse(deliveryPayload(event)) as unknown;

describe('the event catalogue', () => {
  it('shows one example of every webhook event type', () => {
    const types = documentedBodies().map((body) => (body as { type: string }).type);
    expect([...types].sort()).toEqual([...WEBHOOK_EVENT_TYPES].sort());
  });

  it('shows exactly what webhookEventOf sends for each bus event, and what the test event sends', () => {
    const sent = [...CATALOGUE_SOURCES.map((event) => webhookEventOf(event) as WebhookEvent), TEST_EVENT];
    for (const event of sent) expect(event, 'every source gives a webhook event').toBeDefined();
    const documented = new Map(documentedBodies().map((body) => [(body as { type: string }).type, body]));
    for (const event of sent) expect(documented.get(event.type), event.type).toEqual(bodyOf(event));
  });
});

describe('webhookEventOf', () => {
  it('carries no deployment action, report in progress, command not final nor administrative change', () => {
    const [installed, , , , , , succeeded] = CATALOGUE_SOURCES as BusEvent[];
    const none: BusEvent[] = [
      { ...(installed as Extract<BusEvent, { type: 'DeploymentStatusChanged' }>), state: 'DOWNLOADING' },
      { ...(installed as Extract<BusEvent, { type: 'DeploymentStatusChanged' }>), state: 'INSTALLING' },
      { ...(succeeded as Extract<BusEvent, { type: 'CommandStateChanged' }>), state: 'DELIVERED' },
      { ...(succeeded as Extract<BusEvent, { type: 'CommandStateChanged' }>), state: 'CANCELLED' },
      {
        type: 'DeploymentChanged',
        company: COMPANY,
        deploymentId: '01JPB6Z8X4N2Q7R5T3V9W1Y6ZA',
        action: 'DEPLOY',
        deviceId: DEVICE,
        scenarioId: 'spring-promo',
        version: '1.2.0',
        at: '2026-03-14T09:20:00.000Z',
        by: 'alice',
        note: null,
      },
      {
        type: 'AdministrativeChange',
        id: '01JPB6Z8X4N2Q7R5T3V9W1Y6ZC',
        at: '2026-03-14T09:20:00.000Z',
      } as unknown as BusEvent,
    ];
    for (const event of none) expect(webhookEventOf(event), `${event.type} ${JSON.stringify(event)}`).toBeUndefined();
  });

  it("keeps the bus event's id, so that a replayed change is the same event", () => {
    for (const source of CATALOGUE_SOURCES) {
      expect(webhookEventOf(source)?.eventId).toBe(busEventId(source));
      expect(webhookEventOf(structuredClone(source))).toEqual(webhookEventOf(source));
    }
  });
});
