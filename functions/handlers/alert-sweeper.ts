import { sweepDueAlerts } from '../core/alerts/sweeper.js';
import { alertStorage } from '../platform/composition/alerts.js';
import { searchIndex } from '../platform/composition/search.js';
import { storage } from '../platform/composition/storage.js';
import { logger } from '../platform/logger.js';
import { eventHandler } from '../platform/observability.js';

/**
 * Scheduled every minute (EventBridge Scheduler on AWS, a timer in the local runtime; the event is ignored): raises
 * the alerts whose condition has held for their rule's minutes, and evaluates the rules created or changed half a
 * minute ago once more on the devices the search finds holding their condition (sweepDueAlerts). A failure throws; the next run
 * retries, every step being idempotent.
 */
export const handler = eventHandler<unknown, void>().handler(async () => {
  const { rules, alerts } = alertStorage();
  const { devices, deviceDocuments } = storage();
  const result = await sweepDueAlerts({ alerts, rules, devices, backfill: { search: searchIndex(), devices: deviceDocuments } });
  if (result.raised + result.ended + result.rechecked > 0) logger.info('Alert sweep', { ...result });
});
