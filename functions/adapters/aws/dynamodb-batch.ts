import pLimit from 'p-limit';
import { BatchGetCommand, BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

const MAX_ATTEMPTS = 8;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Reads many items by key with BatchGetItem (100 keys per call, chunks in parallel), retrying unprocessed keys with
 * exponential backoff. Returns the items found, in no particular order.
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
      for (let attempt = 0; pending.length > 0; attempt += 1) {
        if (attempt === MAX_ATTEMPTS) throw new Error(`BatchGetItem on ${table} left ${pending.length} keys unprocessed.`);
        if (attempt > 0) await sleep(25 * 2 ** attempt);
        const response = await client.send(
          new BatchGetCommand({
            RequestItems: { [table]: { Keys: pending, ProjectionExpression: Object.keys(names).join(', '), ExpressionAttributeNames: names } },
          }),
        );
        found.push(...(response.Responses?.[table] ?? []));
        pending = (response.UnprocessedKeys?.[table]?.Keys as Record<string, unknown>[] | undefined) ?? [];
      }
      return found;
    }),
  );
  return results.flat();
}

/** BatchWriteItem calls in flight at once in batchPutAll. */
export const BATCH_WRITE_CONCURRENCY = 4;

/**
 * Writes many items with BatchWriteItem (25 per call, BATCH_WRITE_CONCURRENCY calls in flight), retrying unprocessed
 * items with exponential backoff. Unconditional: use only for appends and seeding. Every chunk is attempted even when
 * another one fails.
 * @throws Error naming how many items stayed unwritten (unprocessed after the retries, or refused by DynamoDB).
 */
export async function batchPutAll(client: DynamoDBDocumentClient, table: string, items: Record<string, unknown>[]): Promise<void> {
  const limit = pLimit(BATCH_WRITE_CONCURRENCY);
  const chunks: Record<string, unknown>[][] = [];
  for (let start = 0; start < items.length; start += 25) chunks.push(items.slice(start, start + 25));
  const outcomes = await Promise.allSettled(
    chunks.map((chunk) =>
      limit(async () => {
        let pending = chunk.map((item) => ({ PutRequest: { Item: item } }));
        for (let attempt = 0; pending.length > 0; attempt += 1) {
          if (attempt === MAX_ATTEMPTS) throw new Error(`BatchWriteItem on ${table} left ${pending.length} items unprocessed.`);
          if (attempt > 0) await sleep(25 * 2 ** attempt);
          const response = await client.send(new BatchWriteCommand({ RequestItems: { [table]: pending } }));
          pending = (response.UnprocessedItems?.[table] as typeof pending | undefined) ?? [];
        }
      }),
    ),
  );
  const failed = outcomes.flatMap((outcome, index) => (outcome.status === 'rejected' ? [{ reason: outcome.reason as unknown, size: chunks[index]!.length }] : []));
  if (failed.length > 0) {
    const unwritten = failed.reduce((sum, failure) => sum + failure.size, 0);
    throw new Error(`BatchWriteItem on ${table}: ${unwritten} of ${items.length} items not written (${String((failed[0]!.reason as Error)?.message ?? failed[0]!.reason)}).`, {
      cause: failed[0]!.reason,
    });
  }
}
