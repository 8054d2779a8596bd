import { isDeepStrictEqual } from 'node:util';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { type DeviceImages, evaluateDeviceChanges, RuleCache } from '../core/alerts/evaluation.js';
import { connectionChangedEventOf } from '../core/devices/connection-changes.js';
import { ContinuousJoinIncompleteError, type DeviceChange, joinContinuousRollouts } from '../core/rollouts/continuous.js';
import type { DeviceDocument } from '../core/search/documents.js';
import { alertStorage } from '../platform/composition/alerts.js';
import { eventPublisher } from '../platform/composition/events.js';
import { storage } from '../platform/composition/storage.js';
import { type StreamImage, searchDocumentFromImage } from '../platform/composition/stream-images.js';
import { logger } from '../platform/logger.js';
import { eventHandler } from '../platform/observability.js';

/** The device document of an image, or undefined (no image, another item, a device being deleted). */
function deviceOf(image: StreamImage): DeviceDocument | undefined {
  const document = searchDocumentFromImage(image);
  return document?.type === 'DEVICE' ? document : undefined;
}

/**
 * A record's device before and after, or undefined when it changes no device resource: an item of another kind, or a
 * MODIFY that leaves the device's resource as it was (its credential or desired state tag written).
 */
function imagesOf(record: DynamoDBRecord): DeviceImages | undefined {
  const before = deviceOf(record.dynamodb?.OldImage as StreamImage);
  const after = deviceOf(record.dynamodb?.NewImage as StreamImage);
  const device = after ?? before;
  if (device === undefined || isDeepStrictEqual(before, after)) return undefined;
  return {
    company: device.company,
    deviceId: device.id,
    ...(before === undefined ? {} : { before }),
    ...(after === undefined ? {} : { after }),
  };
}

/** The company's alert rules, read at most every 5 s per warm function (a rule applies to changes after that). */
const rules = new RuleCache((company) => alertStorage().rules.list(company));

/**
 * Alert rules evaluated on the changes (core/alerts/evaluation.ts) and one DeviceConnectionChanged event per change
 * of connection state; both idempotent, so a failure retries the whole batch.
 */
async function alertsAndConnections(changes: readonly DeviceImages[]): Promise<void> {
  const evaluated = await evaluateDeviceChanges({ rulesOf: (company) => rules.rulesOf(company), alerts: alertStorage().alerts }, changes);
  if (evaluated.raised.length + evaluated.started.length + evaluated.resolved.length > 0)
    logger.info('Alert rules flipped', { ...evaluated });
  const events = changes.flatMap((change) => connectionChangedEventOf(change.before, change.after) ?? []);
  if (events.length > 0) await eventPublisher().publish(events);
}

/** The records from `position` on, as batch item failures. */
function failuresFrom(records: readonly DynamoDBRecord[], position: number, error: unknown, what: string): DynamoDBBatchResponse {
  const failed = records.slice(position);
  logger.error(`${what} failed; the batch will be retried from this record`, {
    error: error as Error,
    eventID: failed[0]?.eventID,
    retried: failed.length,
  });
  return { batchItemFailures: failed.map((record) => ({ itemIdentifier: record.dynamodb?.SequenceNumber ?? record.eventID ?? '' })) };
}

/**
 * DynamoDB Streams consumer of the devices table (functions/contract/functions.ts, continuousRollouts: device
 * changes): evaluates each change against the company's alert rules and publishes connection changes, then joins
 * each changed device to the running continuous rollouts of its company whose query it now matches
 * (joinContinuousRollouts), in record order. When a change cannot be finished (a backend error), the handler reports
 * its record and every later one (every record, for the alerts) as `batchItemFailures`, so that the event source
 * (Lambda with ReportBatchItemFailures, or the local runtime) retries from there; every step is idempotent, so nothing
 * is raised, joined or deployed twice.
 */
export const handler = eventHandler<DynamoDBStreamEvent, DynamoDBBatchResponse>().handler(async (event) => {
  const records = event.Records;
  const positions: number[] = [];
  const changes: DeviceImages[] = [];
  records.forEach((record, position) => {
    const change = imagesOf(record);
    if (change === undefined) return;
    positions.push(position);
    changes.push(change);
  });
  if (changes.length === 0) return { batchItemFailures: [] };
  try {
    await alertsAndConnections(changes);
  } catch (error) {
    return failuresFrom(records, positions[0] ?? 0, error, 'Evaluating alert rules');
  }
  const joins: DeviceChange[] = [];
  const joinPositions: number[] = [];
  changes.forEach((change, index) => {
    if (change.after === undefined) return;
    joins.push({ device: change.after });
    joinPositions.push(positions[index] ?? 0);
  });
  const { devices, scenarios, deployments, rollouts, commands } = storage();
  const onError = (error: unknown, context: Record<string, unknown>) =>
    logger.warn('A continuous rollout deployment met a backend error', { error: error as Error, ...context });
  try {
    const result = await joinContinuousRollouts({ devices, scenarios, deployments, rollouts, commands, onError }, joins);
    if (result.joined.length > 0) logger.info('Devices joined continuous rollouts', { joined: result.joined });
    return { batchItemFailures: [] };
  } catch (error) {
    const failedAt = error instanceof ContinuousJoinIncompleteError ? (joinPositions[error.change] ?? 0) : (joinPositions[0] ?? 0);
    return failuresFrom(records, failedAt, error, 'Joining continuous rollouts');
  }
});
