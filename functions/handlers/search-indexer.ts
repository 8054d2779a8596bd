import middy from '@middy/core';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { documentKeyFromItem, searchDocumentFromItem } from '../adapters/aws/search-documents.js';
import { services } from '../platform/composition.js';
import { logger } from '../platform/logger.js';

type Image = Record<string, AttributeValue>;

/**
 * DynamoDB Streams consumer (devices and scenarios tables): INSERT/MODIFY upsert the item's search document,
 * REMOVE deletes it. Records are applied in order; on the first failure the handler reports that record and every
 * later one as `batchItemFailures`, so the event source (Lambda, or the local runtime) retries from there.
 */
export const handler = middy<DynamoDBStreamEvent, DynamoDBBatchResponse>({ timeoutEarlyInMillis: 0 }).handler(async (event) => {
  const { search } = services();
  const records = event.Records;
  for (let index = 0; index < records.length; index += 1) {
    const record = records[index];
    if (record === undefined) continue;
    try {
      if (record.eventName === 'REMOVE') {
        const key = documentKeyFromItem(unmarshall((record.dynamodb?.OldImage ?? record.dynamodb?.Keys ?? {}) as Image));
        if (key !== undefined) await search.remove([key]);
      } else {
        const document = searchDocumentFromItem(unmarshall((record.dynamodb?.NewImage ?? {}) as Image));
        if (document !== undefined) await search.upsert([document]);
      }
    } catch (error) {
      logger.error('Indexing failed; the batch will be retried from this record', { error: error as Error, eventID: record.eventID });
      return {
        batchItemFailures: records.slice(index).map((failed) => ({ itemIdentifier: failed.dynamodb?.SequenceNumber ?? failed.eventID ?? '' })),
      };
    }
  }
  return { batchItemFailures: [] };
});
