import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { applyAlertTableChanges } from '../core/alerts/changes.js';
import { alertStorage, alertTableChangeOf } from '../platform/composition/alerts.js';
import { eventPublisher } from '../platform/composition/events.js';
import type { StreamImage } from '../platform/composition/stream-images.js';
import { logger } from '../platform/logger.js';
import { eventHandler } from '../platform/observability.js';

/**
 * DynamoDB Streams consumer of the alerts table: an AlertChanged event for every alert that became OPEN or RESOLVED,
 * and the watches of a rule deleted or changed ended (core/alerts/changes.ts). Everything is idempotent, so a failure
 * throws and the whole batch is retried.
 */
export const handler = eventHandler<DynamoDBStreamEvent, DynamoDBBatchResponse>().handler(async (event) => {
  const changes = event.Records.flatMap(
    (record) => alertTableChangeOf(record.dynamodb?.OldImage as StreamImage, record.dynamodb?.NewImage as StreamImage) ?? [],
  );
  if (changes.length === 0) return { batchItemFailures: [] };
  try {
    await applyAlertTableChanges({ events: eventPublisher(), alerts: alertStorage().alerts }, changes);
  } catch (error) {
    logger.error('Deriving alert events failed; the batch will be retried', {
      error: error as Error,
      records: event.Records.length,
      changes: changes.length,
      firstEventID: event.Records[0]?.eventID,
    });
    throw error;
  }
  return { batchItemFailures: [] };
});
