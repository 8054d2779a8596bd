import { sweepExpiredCommands } from '../core/commands/expiry.js';
import { storage } from '../platform/composition/storage.js';
import { logger } from '../platform/logger.js';
import { eventHandler } from '../platform/observability.js';

/**
 * Scheduled every minute (EventBridge Scheduler on AWS, a timer in the local runtime; the event is ignored): makes
 * the commands still pending at their `expiresAt` EXPIRED (sweepExpiredCommands). A failure throws; the next run
 * retries, every step being idempotent.
 */
export const handler = eventHandler<unknown, void>().handler(async () => {
  const expired = await sweepExpiredCommands({ commands: storage().commands });
  if (expired > 0) logger.info('Expired commands', { expired });
});
