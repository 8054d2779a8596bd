/**
 * How an event becomes a delivery to one webhook: the one construction shared by the fan-out of the service's events
 * and by the API's test event, so that a replayed event gives the very same delivery (id, `webhook-id`, body).
 */
import { derivedId } from '../rollouts/derived-ids.js';
import type { StoredDelivery, StoredWebhook, WebhookEvent } from './model.js';

/** The id of `event`'s delivery to `webhookId`: a ULID timed at the event, the same whenever the event is replayed. */
export function deliveryIdOf(event: Pick<WebhookEvent, 'eventId' | 'timestamp'>, webhookId: string): string {
  return derivedId(event.timestamp, event.eventId + webhookId);
}

/** The body every attempt of a delivery sends (Standard Webhooks' payload): `{"type","timestamp","data"}` as JSON. */
export function deliveryPayload(event: Pick<WebhookEvent, 'type' | 'timestamp' | 'data'>): string {
  return JSON.stringify({ type: event.type, timestamp: event.timestamp, data: event.data });
}

/**
 * A new PENDING delivery of `event` to `webhook`, its first attempt due at `now`: id from the event id and the
 * webhook id (deliveryIdOf), `messageId` `msg_` + id (the `webhook-id` header of every attempt), no attempt yet.
 */
export function newDelivery(event: WebhookEvent, webhook: Pick<StoredWebhook, 'id' | 'company'>, now: Date): StoredDelivery {
  const id = deliveryIdOf(event, webhook.id);
  return {
    id,
    company: webhook.company,
    webhookId: webhook.id,
    eventId: event.eventId,
    messageId: `msg_${id}`,
    type: event.type,
    state: 'PENDING',
    attempts: 0,
    lastStatus: null,
    nextAttemptAt: now.toISOString(),
    created: now.toISOString(),
    history: [],
    payload: deliveryPayload(event),
  };
}
