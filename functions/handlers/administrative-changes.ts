import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { publishAdministrativeChanges } from '../core/audit/changes.js';
import { eventPublisher } from '../platform/composition/events.js';
import { auditEntryFromImage, type StreamImage } from '../platform/composition/stream-images.js';
import { logger } from '../platform/logger.js';
import { eventHandler } from '../platform/observability.js';

/**
 * DynamoDB Streams consumer of the audit table (NEW_IMAGE): every audit entry item written is emitted as an
 * AdministrativeChange event (core/audit/changes.ts), its `id` the entry's. The entries' company copies and anything
 * else of the table emit nothing. Publishing is idempotent by the entry id, so a failure throws: the whole batch is
 * retried (Lambda halves it on each failure; the local stream poller redelivers it), and a batch delivered twice
 * announces each change once on the local bus (EventBridge delivers at least once: consumers key on `id`).
 */
export const handler = eventHandler<DynamoDBStreamEvent, DynamoDBBatchResponse>().handler(async (event) => {
  const entries = event.Records.flatMap((record) => auditEntryFromImage(record.dynamodb?.NewImage as StreamImage) ?? []);
  try {
    await publishAdministrativeChanges({ events: eventPublisher() }, entries);
  } catch (error) {
    logger.error('Publishing administrative changes failed; the batch will be retried', {
      error: error as Error,
      records: event.Records.length,
      entries: entries.length,
      firstEventID: event.Records[0]?.eventID,
    });
    throw error;
  }
  return { batchItemFailures: [] };
});
