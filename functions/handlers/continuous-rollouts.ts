import { isDeepStrictEqual } from 'node:util';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { ContinuousJoinIncompleteError, type DeviceChange, joinContinuousRollouts } from '../core/rollouts/continuous.js';
import { storage } from '../platform/composition/storage.js';
import { type StreamImage, searchDocumentFromImage } from '../platform/composition/stream-images.js';
import { logger } from '../platform/logger.js';
import { eventHandler } from '../platform/observability.js';

/**
 * The device after a record's change, or undefined when the record changes no device resource: a REMOVE, an item of
 * another kind, a device being deleted, or a MODIFY that leaves the device's resource as it was (its credential or
 * desired state tag written: what is stored beside it).
 */
function changeOf(record: DynamoDBRecord): DeviceChange | undefined {
  if (record.eventName === 'REMOVE') return undefined;
  const after = searchDocumentFromImage(record.dynamodb?.NewImage as StreamImage);
  if (after?.type !== 'DEVICE') return undefined;
  if (record.eventName === 'MODIFY' && record.dynamodb?.OldImage !== undefined) {
    const before = searchDocumentFromImage(record.dynamodb.OldImage as StreamImage);
    if (before !== undefined && isDeepStrictEqual(before, after)) return undefined;
  }
  return { device: after };
}

/**
 * DynamoDB Streams consumer of the devices table (functions/contract/functions.ts, continuousRollouts): joins each
 * changed device to the running continuous rollouts of its company whose query it now matches (joinContinuousRollouts),
 * in record order. When a change cannot be finished (a backend error), the handler reports its record and every later
 * one as `batchItemFailures`, so that the event source (Lambda with ReportBatchItemFailures, or the local runtime)
 * retries from there; every step is idempotent, so nothing joins or deploys twice.
 */
export const handler = eventHandler<DynamoDBStreamEvent, DynamoDBBatchResponse>().handler(async (event) => {
  const records = event.Records;
  const positions: number[] = [];
  const changes: DeviceChange[] = [];
  records.forEach((record, position) => {
    const change = changeOf(record);
    if (change === undefined) return;
    positions.push(position);
    changes.push(change);
  });
  if (changes.length === 0) return { batchItemFailures: [] };
  const { devices, scenarios, deployments, rollouts, commands } = storage();
  const onError = (error: unknown, context: Record<string, unknown>) =>
    logger.warn('A continuous rollout deployment met a backend error', { error: error as Error, ...context });
  try {
    const result = await joinContinuousRollouts({ devices, scenarios, deployments, rollouts, commands, onError }, changes);
    if (result.joined.length > 0) logger.info('Devices joined continuous rollouts', { joined: result.joined });
    return { batchItemFailures: [] };
  } catch (error) {
    const failedAt = error instanceof ContinuousJoinIncompleteError ? (positions[error.change] ?? 0) : (positions[0] ?? 0);
    const failed = records.slice(failedAt);
    logger.error('Joining continuous rollouts failed; the batch will be retried from this record', {
      error: error as Error,
      eventID: failed[0]?.eventID,
      retried: failed.length,
    });
    return { batchItemFailures: failed.map((record) => ({ itemIdentifier: record.dynamodb?.SequenceNumber ?? record.eventID ?? '' })) };
  }
});
