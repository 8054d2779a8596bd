import { sweepHeartbeats } from '../core/devices/heartbeat-sweeper.js';
import { storage } from '../platform/composition/storage.js';
import { logger } from '../platform/logger.js';
import { eventHandler } from '../platform/observability.js';

/**
 * Scheduled every minute (EventBridge Scheduler on AWS, a timer in the local runtime; the event is ignored): marks
 * the devices silent beyond their heartbeat window DISCONNECTED (sweepHeartbeats). A failure throws; the next run
 * retries, every step being idempotent.
 */
export const handler = eventHandler<unknown, void>().handler(async () => {
  const result = await sweepHeartbeats(storage());
  if (result.disconnected.length + result.released.length > 0) {
    logger.info('Swept silent devices', {
      disconnected: result.disconnected.length,
      released: result.released.length,
      superseded: result.superseded.length,
      devices: result.disconnected.slice(0, 100),
    });
  }
});
