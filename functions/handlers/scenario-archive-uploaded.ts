import type { S3Event } from 'aws-lambda';
import { processUploadedArchive } from '../core/scenarios/presigned-upload.js';
import { uploadStorage } from '../platform/composition/archives.js';
import { logger } from '../platform/logger.js';
import { eventHandler, measuredPresignedUpload } from '../platform/observability.js';

/**
 * S3 ObjectCreated notification (prefix `uploads/`): validates and stores each archive PUT through a presigned
 * upload slot. Keys arrive URL-encoded with `+` for spaces, as S3 sends them; the record's `eventTime` (when the
 * PUT completed) decides whether the archive arrived before the slot expired. An unexpected failure throws, so the
 * event is retried (then sent to the dead-letter queue in AWS).
 */
export const handler = eventHandler<S3Event, void>().handler(async (event) => {
  for (const record of event.Records) {
    const key = decodeURIComponent(record.s3.object.key.replace(/\+/g, ' '));
    const outcome = await measuredPresignedUpload({ ...uploadStorage() }, (observed) =>
      processUploadedArchive(observed, key, record.eventTime),
    );
    logger.info('Processed uploaded archive', { key, outcome, size: record.s3.object.size });
  }
});
