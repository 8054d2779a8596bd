import { sweepRollouts } from '../core/rollouts/sweeper.js';
import { workQueue } from '../platform/composition/queue.js';
import { storage } from '../platform/composition/storage.js';
import { rolloutConfig } from '../platform/config.js';
import { logger } from '../platform/logger.js';
import { eventHandler } from '../platform/observability.js';

/**
 * Scheduled every minute (EventBridge Scheduler on AWS, a timer in the local runtime; the event is ignored): starts
 * the SCHEDULED rollouts whose `startAt` has come and rollout waves, completes them on their devices' reports or timeout, pauses a rollout on too many failures, and sends
 * again the chunks whose message was lost, and the cancel of a COMMAND rollout's commands that its cancel could not send (sweepRollouts). Every step is idempotent; a rollout that fails is logged
 * and looked at again on the next run.
 */
export const handler = eventHandler<unknown, void>().handler(async () => {
  const { rollouts } = storage();
  const queue = workQueue();
  const result = await sweepRollouts({
    rollouts,
    queue,
    chunkTimeoutSeconds: rolloutConfig().chunkTimeoutSeconds,
    onError: (error, context) => logger.error('Sweeping a rollout failed; the next run retries', { error: error as Error, ...context }),
  });
  const changed = result.started.length + result.resent.length + result.paused.length + result.completed.length + result.cancelled.length;
  if (changed + result.failed.length > 0) {
    logger.info('Swept rollouts', {
      started: result.started,
      resent: result.resent,
      paused: result.paused,
      completed: result.completed,
      cancelled: result.cancelled,
      conflicts: result.conflict.length,
      failed: result.failed,
      waiting: result.waiting.length,
    });
  }
});
