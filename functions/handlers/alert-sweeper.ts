import { sweepDueAlerts } from '../core/alerts/sweeper.js';
import { alertStorage } from '../platform/composition/alerts.js';
import { storage } from '../platform/composition/storage.js';
import { logger } from '../platform/logger.js';
import { eventHandler } from '../platform/observability.js';

/**
 * Scheduled every minute (EventBridge Scheduler on AWS, a timer in the local runtime; the event is ignored): raises
 * the alerts whose condition has held for their rule's minutes (sweepDueAlerts). A failure throws; the next run
 * retries, every step being idempotent.
 */
export const handler = eventHandler<unknown, void>().handler(async () => {
  const { rules, alerts } = alertStorage();
  const result = await sweepDueAlerts({ alerts, rules, devices: storage().devices });
  if (result.raised + result.ended > 0) logger.info('Alert sweep', { ...result });
});
