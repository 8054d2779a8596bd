import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { applyDeploymentChanges, deploymentChangeOf } from '../core/deployments/changes.js';
import { eventPublisher } from '../platform/composition/events.js';
import { storage } from '../platform/composition/storage.js';
import { deploymentSlotFromImage, type StreamImage } from '../platform/composition/stream-images.js';
import { logger } from '../platform/logger.js';
import { eventHandler } from '../platform/observability.js';

/**
 * DynamoDB Streams consumer of the deployments table: every DEPLOY (a slot becoming active) and UNDEPLOY (a slot marked
 * undeployed) gets its history entry and its DeploymentChanged event, then the undeployed slot is purged; every device
 * status report (an active slot's new `deviceStatus`) gets its DEVICE_STATUS history entry and its
 * DeploymentStatusChanged event (core/deployments/changes.ts), and an INSTALLED or FAILED report on a deployment a
 * rollout made counts once for its wave; the device of every DEPLOY and UNDEPLOY gets its desired state tag refreshed
 * (what `GET /device/deployments` answers 304 to after one read). History entries and other items of the table change
 * nothing here. Everything is idempotent, so a failure throws: the whole batch is retried (Lambda halves it on each
 * failure, so one bad record cannot hold back the others; the local stream poller redelivers it), and a batch delivered
 * twice changes nothing.
 */
export const handler = eventHandler<DynamoDBStreamEvent, DynamoDBBatchResponse>().handler(async (event) => {
  const changes = event.Records.flatMap(
    (record) =>
      deploymentChangeOf(
        deploymentSlotFromImage(record.dynamodb?.OldImage as StreamImage),
        deploymentSlotFromImage(record.dynamodb?.NewImage as StreamImage),
      ) ?? [],
  );
  try {
    const { deployments, rollouts, devices, commands } = storage();
    await applyDeploymentChanges(
      { deployments, events: eventPublisher(), rollouts, desiredStates: { devices, deployments, commands } },
      changes,
    );
  } catch (error) {
    logger.error('Deriving deployment history and events failed; the batch will be retried', {
      error: error as Error,
      records: event.Records.length,
      changes: changes.length,
      firstEventID: event.Records[0]?.eventID,
    });
    throw error;
  }
  return { batchItemFailures: [] };
});
