import { BatchGetCommand, BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import pLimit from 'p-limit';
import { type RetryPolicy, retry } from '../retry.js';

/** Items DynamoDB left unprocessed (throttling) after a BatchGetItem or BatchWriteItem call: sent again. */
class UnprocessedItemsError extends Error {}

/**
 * Back-off for unprocessed batch items: 8 calls in all, waits of about 50 ms doubling to 3.2 s (jittered, so that
 * chunks throttled together do not come back together): about 6.4 s at most before giving up.
 */
const UNPROCESSED_RETRY: RetryPolicy = {
  attempts: 8,
  minDelayMs: 50,
  maxDelayMs: 3_200,
  retryable: (error) => error instanceof UnprocessedItemsError,
};

/**
 * Reads many items by key with BatchGetItem (100 keys per call, chunks in parallel), retrying unprocessed keys with
 * exponential backoff (UNPROCESSED_RETRY). Returns the items found, in no particular order.
 * @param projection attribute names to read (keep it small: existence checks read only the keys).
 * @throws Error when keys stay unprocessed after the retries (throttling).
 */
export async function batchGetAll(
  client: DynamoDBDocumentClient,
  table: string,
  keys: Record<string, unknown>[],
  projection: string[],
): Promise<Record<string, unknown>[]> {
  const chunks: Record<string, unknown>[][] = [];
  for (let start = 0; start < keys.length; start += 100) chunks.push(keys.slice(start, start + 100));
  const names = Object.fromEntries(projection.map((name, index) => [`#p${index}`, name]));
  const results = await Promise.all(
    chunks.map(async (chunk) => {
      const found: Record<string, unknown>[] = [];
      let pending: Record<string, unknown>[] = chunk;
      await retry(async () => {
        const response = await client.send(
          new BatchGetCommand({
            RequestItems: {
              [table]: { Keys: pending, ProjectionExpression: Object.keys(names).join(', '), ExpressionAttributeNames: names },
            },
          }),
        );
        found.push(...(response.Responses?.[table] ?? []));
        pending = (response.UnprocessedKeys?.[table]?.Keys as Record<string, unknown>[] | undefined) ?? [];
        if (pending.length > 0) throw new UnprocessedItemsError(`BatchGetItem on ${table} left ${pending.length} keys unprocessed.`);
      }, UNPROCESSED_RETRY);
      return found;
    }),
  );
  return results.flat();
}

/** BatchWriteItem calls in flight at once in batchPutAll. */
export const BATCH_WRITE_CONCURRENCY = 4;

/**
 * Writes many items with BatchWriteItem (25 per call, `concurrency` calls in flight), retrying unprocessed items with
 * exponential backoff (UNPROCESSED_RETRY). Unconditional: use only for appends and seeding. Every chunk is attempted
 * even when another one fails.
 * @throws Error naming how many items stayed unwritten (unprocessed after the retries, or refused by DynamoDB).
 */
export async function batchPutAll(
  client: DynamoDBDocumentClient,
  table: string,
  items: Record<string, unknown>[],
  concurrency = BATCH_WRITE_CONCURRENCY,
): Promise<void> {
  const limit = pLimit(concurrency);
  const chunks: Record<string, unknown>[][] = [];
  for (let start = 0; start < items.length; start += 25) chunks.push(items.slice(start, start + 25));
  const outcomes = await Promise.allSettled(
    chunks.map((chunk) =>
      limit(async () => {
        let pending = chunk.map((item) => ({ PutRequest: { Item: item } }));
        await retry(async () => {
          const response = await client.send(new BatchWriteCommand({ RequestItems: { [table]: pending } }));
          pending = (response.UnprocessedItems?.[table] as typeof pending | undefined) ?? [];
          if (pending.length > 0) throw new UnprocessedItemsError(`BatchWriteItem on ${table} left ${pending.length} items unprocessed.`);
        }, UNPROCESSED_RETRY);
      }),
    ),
  );
  const failed = outcomes.flatMap((outcome, index) =>
    outcome.status === 'rejected' ? [{ reason: outcome.reason as unknown, size: chunks[index]?.length ?? 0 }] : [],
  );
  const [first] = failed;
  if (first !== undefined) {
    const unwritten = failed.reduce((sum, failure) => sum + failure.size, 0);
    throw new Error(
      `BatchWriteItem on ${table}: ${unwritten} of ${items.length} items not written (${String((first.reason as Error)?.message ?? first.reason)}).`,
      {
        cause: first.reason,
      },
    );
  }
}
