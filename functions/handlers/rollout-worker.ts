import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { ROLLOUT_LAST_ATTEMPT_RECEIVE_COUNT } from '../contract/functions.js';
import { cancelRolloutCommands } from '../core/rollouts/command-work.js';
import type { RolloutQueueMessage } from '../core/rollouts/model.js';
import { RolloutChunkIncompleteError, RolloutWorkMessageSchema, runRolloutChunk } from '../core/rollouts/worker.js';
import { storage } from '../platform/composition/storage.js';
import { logger } from '../platform/logger.js';
import { eventHandler } from '../platform/observability.js';

/** The work message of a record, or undefined when its body is not one (logged: it is acknowledged, never retried). */
function messageOf(record: SQSRecord): RolloutQueueMessage | undefined {
  let body: unknown;
  try {
    body = JSON.parse(record.body);
  } catch {
    body = undefined;
  }
  const parsed = RolloutWorkMessageSchema.safeParse(body);
  if (parsed.success) return parsed.data;
  logger.error('Malformed rollout work message dropped', {
    messageId: record.messageId,
    body: record.body.slice(0, 1_000),
    issues: parsed.error.issues.slice(0, 5).map((issue) => `${issue.path.join('.')}: ${issue.message}`),
  });
  return undefined;
}

/**
 * The rollout queue's consumer (SQS event source mapping on AWS, the local runtime's queue locally): runs each
 * message's chunk (runRolloutChunk), or cancels a cancelled COMMAND rollout's QUEUED commands (cancelRolloutCommands).
 * A message that fails (a backend error) is reported in `batchItemFailures`, so that only it is delivered again; a
 * malformed message is logged and acknowledged.
 */
export const handler = eventHandler<SQSEvent, SQSBatchResponse>().handler(async (event) => {
  const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
  const { devices, scenarios, deployments, rollouts, commands, targetHealth } = storage();
  const onError = (error: unknown, context: Record<string, unknown>) =>
    logger.warn('A rollout deployment met a backend error', { error: error as Error, ...context });
  const dependencies = { devices, scenarios, deployments, rollouts, commands, targetHealth, onError };
  for (const record of event.Records) {
    const message = messageOf(record);
    if (message === undefined) continue;
    const lastAttempt = Number(record.attributes.ApproximateReceiveCount) >= ROLLOUT_LAST_ATTEMPT_RECEIVE_COUNT;
    try {
      if (message.type === 'RolloutCancelCommands') {
        logger.info('Rollout commands cancelled', { ...message, cancelled: await cancelRolloutCommands(dependencies, message) });
      } else {
        logger.info('Rollout chunk', { ...message, ...(await runRolloutChunk(dependencies, message, { lastAttempt })) });
      }
    } catch (error) {
      const expected = error instanceof RolloutChunkIncompleteError;
      logger[expected ? 'warn' : 'error']('Rollout work failed; its message will be delivered again', {
        ...message,
        messageId: record.messageId,
        error: error as Error,
      });
      batchItemFailures.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures };
});
