import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { attemptEach, dueOfImages } from '../core/webhooks/attempts.js';
import type { StoredDelivery } from '../core/webhooks/model.js';
import { deliveryFromImage, type StreamImage } from '../platform/composition/stream-images.js';
import { deliveryEngine } from '../platform/composition/webhook-deliveries.js';
import { logger } from '../platform/logger.js';
import { eventHandler } from '../platform/observability.js';

/**
 * DynamoDB Streams consumer of the webhooks table's delivery items: every delivery whose latest image in the batch is
 * PENDING and due (a new one, a redelivery) is attempted now, 16 at a time (core/webhooks/attempts.ts); claimed
 * deliveries, retries not due yet and final ones are skipped. A failed send is an attempt recorded, not a failure; a
 * store's failure throws and the batch is retried (the claims make an attempt already made not be made again).
 */
export const handler = eventHandler<DynamoDBStreamEvent, DynamoDBBatchResponse>().handler(async (event) => {
  const images = event.Records.flatMap((record) => deliveryFromImage(record.dynamodb?.NewImage as StreamImage) ?? []);
  const due: StoredDelivery[] = dueOfImages(images, new Date());
  if (due.length === 0) return { batchItemFailures: [] };
  const { ports, options } = deliveryEngine();
  try {
    const counts = await attemptEach(ports, due, options);
    logger.info('Webhook deliveries attempted', { ...counts });
  } catch (error) {
    logger.error('Attempting webhook deliveries failed; the batch will be retried', {
      error: error as Error,
      deliveries: due.length,
      firstEventID: event.Records[0]?.eventID,
    });
    throw error;
  }
  return { batchItemFailures: [] };
});
