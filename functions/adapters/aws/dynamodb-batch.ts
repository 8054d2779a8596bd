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

/**
 * Writes many items with BatchWriteItem (25 per call), retrying unprocessed items with exponential backoff.
 * Unconditional: use only for appends and seeding.
 * @throws Error when items stay unprocessed after the retries.
 */
export async function batchPutAll(client: DynamoDBDocumentClient, table: string, items: Record<string, unknown>[]): Promise<void> {
  for (let start = 0; start < items.length; start += 25) {
    let pending = items.slice(start, start + 25).map((item) => ({ PutRequest: { Item: item } }));
    for (let attempt = 0; pending.length > 0; attempt += 1) {
      if (attempt === MAX_ATTEMPTS) throw new Error(`BatchWriteItem on ${table} left ${pending.length} items unprocessed.`);
      if (attempt > 0) await sleep(25 * 2 ** attempt);
      const response = await client.send(new BatchWriteCommand({ RequestItems: { [table]: pending } }));
      pending = (response.UnprocessedItems?.[table] as typeof pending | undefined) ?? [];
    }
  }
}
