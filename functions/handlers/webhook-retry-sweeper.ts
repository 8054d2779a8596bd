import { sweepDueDeliveries } from '../core/webhooks/attempts.js';
import { deliveryEngine } from '../platform/composition/webhook-deliveries.js';
import { logger } from '../platform/logger.js';
import { eventHandler } from '../platform/observability.js';

/**
 * By when a run's attempts have all ended, ms from its start: within the function's 50-second timeout, with 5 s to
 * spare (sweepDueDeliveries starts no page whose attempts could end later); what is left is due at the next run.
 */
export const WEBHOOK_SWEEP_BUDGET_MS = 45_000;

/**
 * Scheduled every minute (EventBridge Scheduler on AWS, a timer in the local runtime at WEBHOOK_SWEEP_INTERVAL_MS;
 * the event is ignored): attempts the webhook deliveries whose next attempt is due (sweepDueDeliveries). A failure
 * throws; the next run retries, every attempt being claimed first.
 */
export const handler = eventHandler<unknown, void>().handler(async () => {
  const { ports, options } = deliveryEngine();
  const counts = await sweepDueDeliveries(ports, options, WEBHOOK_SWEEP_BUDGET_MS);
  if (counts.succeeded + counts.retrying + counts.failed > 0) logger.info('Due webhook deliveries attempted', { ...counts });
});
