/**
 * The fan-out (docs/webhooks.md, "Delivery"): each bus event a webhook may carry becomes one PENDING delivery per
 * enabled webhook of its company subscribed to its type, written idempotently (a replayed bus event writes nothing
 * twice: the delivery's id derives from the event and the webhook). The webhooks table's stream then sends them.
 */

import { newDelivery } from './deliveries.js';
import { type BusEvent, webhookEventOf } from './events.js';
import { MAX_WEBHOOK_DATA_BYTES, type StoredDelivery, type StoredWebhook, type WebhookEvent } from './model.js';
import type { DeliveryStore, WebhookStore } from './ports.js';

/** What the fan-out needs: the subscribed webhooks, and where deliveries are written. */
export interface FanoutPorts {
  webhooks: Pick<WebhookStore, 'subscribed'>;
  deliveries: Pick<DeliveryStore, 'createEach'>;
}

/** The longest string kept in an event's data cut to its identifiers, characters. */
const MAX_IDENTIFIER_LENGTH = 256;

/**
 * `event` with its `data` at most MAX_WEBHOOK_DATA_BYTES of JSON: as it is when it fits; else cut to its
 * identifiers (strings up to 256 characters, numbers, booleans, null, and small objects such as `target`), with
 * `truncated: true`, so that a receiver can read the rest through the API.
 */
export function boundedEvent(event: WebhookEvent): WebhookEvent {
  if (Buffer.byteLength(JSON.stringify(event.data)) <= MAX_WEBHOOK_DATA_BYTES) return event;
  const kept: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(event.data)) {
    const small =
      value === null ||
      typeof value === 'number' ||
      typeof value === 'boolean' ||
      (typeof value === 'string' && value.length <= MAX_IDENTIFIER_LENGTH) ||
      (typeof value === 'object' && Buffer.byteLength(JSON.stringify(value)) <= 4 * MAX_IDENTIFIER_LENGTH);
    if (small) kept[name] = value;
  }
  return { ...event, data: { ...kept, truncated: true } };
}

/**
 * Writes the deliveries of `events` (bus events; those no webhook carries are skipped) due at `now`: one per
 * subscribed webhook. Reads each company's subscribers to a type once per call.
 * @returns the deliveries written now (not those a replay had already written)
 * @throws what the stores throw (the caller retries: writing again is harmless)
 */
export async function fanOut(ports: FanoutPorts, events: readonly BusEvent[], now: Date): Promise<StoredDelivery[]> {
  const subscribers = new Map<string, Promise<StoredWebhook[]>>();
  const deliveries: StoredDelivery[] = [];
  for (const busEvent of events) {
    const event = webhookEventOf(busEvent);
    if (event === undefined) continue;
    const key = `${event.company}#${event.type}`;
    let webhooks = subscribers.get(key);
    if (webhooks === undefined) {
      webhooks = ports.webhooks.subscribed(event.company, event.type);
      subscribers.set(key, webhooks);
    }
    const bounded = boundedEvent(event);
    for (const webhook of await webhooks) deliveries.push(newDelivery(bounded, webhook, now));
  }
  return deliveries.length === 0 ? [] : ports.deliveries.createEach(deliveries);
}
