import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { applyCommandChanges, commandChangeOf } from '../core/commands/changes.js';
import { refreshDesiredStateTag } from '../core/devices/desired-state.js';
import { countRolloutCommand } from '../core/rollouts/command-work.js';
import { eventPublisher } from '../platform/composition/events.js';
import { storage } from '../platform/composition/storage.js';
import { commandFromImage, type StreamImage } from '../platform/composition/stream-images.js';
import { logger } from '../platform/logger.js';
import { eventHandler } from '../platform/observability.js';

/**
 * DynamoDB Streams consumer of the commands table: every change of a command's state gets its CommandStateChanged
 * event, every device whose pending commands changed gets its desired state tag refreshed (what `GET
 * /device/deployments` answers 304 to after one read), and every final command of a rollout is counted for its wave
 * (core/commands/changes.ts). Everything is idempotent, so a failure throws and the whole batch is retried.
 */
export const handler = eventHandler<DynamoDBStreamEvent, DynamoDBBatchResponse>().handler(async (event) => {
  const changes = event.Records.flatMap(
    (record) =>
      commandChangeOf(
        commandFromImage(record.dynamodb?.OldImage as StreamImage),
        commandFromImage(record.dynamodb?.NewImage as StreamImage),
      ) ?? [],
  );
  try {
    const { devices, deployments, commands, rollouts } = storage();
    await applyCommandChanges(
      {
        events: eventPublisher(),
        refreshDesiredState: (company, deviceId) => refreshDesiredStateTag({ devices, deployments, commands }, company, deviceId),
        countRolloutResult: async (command) => void (await countRolloutCommand(rollouts, command)),
      },
      changes,
    );
  } catch (error) {
    logger.error('Deriving command events and desired state tags failed; the batch will be retried', {
      error: error as Error,
      records: event.Records.length,
      changes: changes.length,
      firstEventID: event.Records[0]?.eventID,
    });
    throw error;
  }
  return { batchItemFailures: [] };
});
