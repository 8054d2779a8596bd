import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { BusEvent } from '../core/webhooks/events.js';
import { fanOut } from '../core/webhooks/fanout.js';
import { deliveryStore, webhookStore } from '../platform/composition/webhooks.js';
import { logger } from '../platform/logger.js';
import { eventHandler } from '../platform/observability.js';

/** The bus event an SQS message carries: its body is the EventBridge envelope, `detail` the event. */
function busEventOf(body: string): BusEvent | undefined {
  try {
    const detail = (JSON.parse(body) as { detail?: unknown }).detail;
    return detail !== null && typeof detail === 'object' && typeof (detail as { type?: unknown }).type === 'string'
      ? (detail as BusEvent)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The webhook fan-out, fed by the service's bus (an EventBridge rule's SQS queue on AWS, the local bus's follower
 * locally): every event webhooks carry becomes one PENDING delivery per subscribed webhook (core/webhooks/fanout.ts),
 * which the webhooks table's stream then sends. A message that is no bus event is logged and dropped; a store's
 * failure fails the whole batch (every message received again: the writes are idempotent).
 */
export const handler = eventHandler<SQSEvent, SQSBatchResponse>().handler(async (event) => {
  const events: BusEvent[] = [];
  for (const record of event.Records) {
    const busEvent = busEventOf(record.body);
    if (busEvent === undefined) logger.warn('A webhook events message is no bus event; dropped', { messageId: record.messageId });
    else events.push(busEvent);
  }
  try {
    const written = await fanOut({ webhooks: webhookStore(), deliveries: deliveryStore() }, events, new Date());
    if (written.length > 0) logger.info('Webhook deliveries written', { deliveries: written.length, events: events.length });
  } catch (error) {
    logger.error('Writing webhook deliveries failed; the messages will be received again', {
      error: error as Error,
      events: events.length,
    });
    return { batchItemFailures: event.Records.map((record) => ({ itemIdentifier: record.messageId })) };
  }
  return { batchItemFailures: [] };
});
