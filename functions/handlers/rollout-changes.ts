import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { publishRolloutStateChanges, rolloutStateChangeOf } from '../core/rollouts/changes.js';
import { eventPublisher } from '../platform/composition/events.js';
import { rolloutFromImage, type StreamImage } from '../platform/composition/stream-images.js';
import { logger } from '../platform/logger.js';
import { eventHandler } from '../platform/observability.js';

/**
 * DynamoDB Streams consumer of the rollouts table: a rollout item whose state became PAUSED or COMPLETED gets its
 * RolloutStateChanged event (core/rollouts/changes.ts); every other item (targets, tallies, reports) is skipped.
 * Idempotent (the same record gives the same event id), so a failure throws and the whole batch is retried.
 */
export const handler = eventHandler<DynamoDBStreamEvent, DynamoDBBatchResponse>().handler(async (event) => {
  const changes = event.Records.flatMap(
    (record) =>
      rolloutStateChangeOf(
        rolloutFromImage(record.dynamodb?.OldImage as StreamImage),
        rolloutFromImage(record.dynamodb?.NewImage as StreamImage),
      ) ?? [],
  );
  try {
    await publishRolloutStateChanges({ events: eventPublisher() }, changes);
  } catch (error) {
    logger.error('Publishing rollout state changes failed; the batch will be retried', {
      error: error as Error,
      records: event.Records.length,
      changes: changes.length,
      firstEventID: event.Records[0]?.eventID,
    });
    throw error;
  }
  return { batchItemFailures: [] };
});
