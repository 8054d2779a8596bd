import { sweepUploads } from '../core/scenarios/upload-sweeper.js';
import { uploadStorage } from '../platform/composition/archives.js';
import { logger } from '../platform/logger.js';
import { eventHandler } from '../platform/observability.js';

/**
 * Scheduled every few minutes (an EventBridge rule on AWS, a timer in the local runtime; the event is ignored):
 * rejects the upload slots that never finished (reason `expired` or `interrupted`) and deletes their objects, and
 * deletes archives written without a version record (sweepUploads). A failure throws; the next run retries.
 */
export const handler = eventHandler<unknown, void>().handler(async () => {
  const result = await sweepUploads({ ...uploadStorage() });
  if (result.expired.length + result.interrupted.length + result.orphansDeleted.length + result.waiting.length > 0) {
    logger.info('Swept unfinished uploads', { ...result });
  }
});
