import { DeleteCommand, type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { ClientFailureCount, ClientFailureStore } from '../../core/ports.js';
import { isConditionalCheckFailed } from './dynamodb-shared.js';

/** The item's attributes, by expression name (names, not reserved words, but spelled once). */
const NAMES = { '#failures': 'failures', '#end': 'windowEndsAt', '#expires': 'expiresAt' } as const;

/** Writes `record` tries when racing writers replace a closed window under it (each race needs another writer). */
const RECORD_ATTEMPTS = 3;

/**
 * ClientFailureStore on the clientFailures table (tables.ts): one item per key, pk `pk` = the key, `failures` (the
 * count), `windowEndsAt` (epoch ms) and `expiresAt` (epoch seconds, the table's TTL attribute, the end of the window:
 * DynamoDB deletes closed windows, within days; until then reads ignore them).
 */
export class DynamoDbClientFailureStore implements ClientFailureStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  /**
   * @inheritdoc
   * An eventually consistent GetItem (half a read unit, on every token request): a failure written a moment ago may
   * be missed by a read in another function instance, which lets a burst through a few attempts beyond the limit.
   */
  async current(key: string, now: number): Promise<ClientFailureCount | undefined> {
    const { Item } = await this.client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: key },
        ProjectionExpression: '#failures, #end',
        ExpressionAttributeNames: { '#failures': NAMES['#failures'], '#end': NAMES['#end'] },
      }),
    );
    return open(Item, now);
  }

  /**
   * @inheritdoc
   * An UpdateItem adding 1 on condition that no window or an open one is there (creating the item with the window if
   * there is none); when the stored window has closed, an UpdateItem setting a new window on condition it is still
   * closed. Racing writers that replace the same closed window make the losers add to the winner's window
   * (RECORD_ATTEMPTS).
   */
  async record(key: string, now: number, windowMs: number): Promise<ClientFailureCount> {
    const windowEndsAt = now + windowMs;
    const expiresAt = Math.ceil(windowEndsAt / 1000);
    for (let attempt = 1; ; attempt += 1) {
      try {
        const { Attributes } = await this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: { pk: key },
            UpdateExpression: 'ADD #failures :one SET #end = if_not_exists(#end, :end), #expires = if_not_exists(#expires, :expires)',
            ConditionExpression: 'attribute_not_exists(pk) OR #end > :now',
            ExpressionAttributeNames: NAMES,
            ExpressionAttributeValues: { ':one': 1, ':end': windowEndsAt, ':expires': expiresAt, ':now': now },
            ReturnValues: 'ALL_NEW',
          }),
        );
        return open(Attributes, now) as ClientFailureCount;
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
      }
      // The stored window has closed: a new one, unless another writer opened it first.
      try {
        await this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: { pk: key },
            UpdateExpression: 'SET #failures = :one, #end = :end, #expires = :expires',
            ConditionExpression: '#end <= :now',
            ExpressionAttributeNames: NAMES,
            ExpressionAttributeValues: { ':one': 1, ':end': windowEndsAt, ':expires': expiresAt, ':now': now },
          }),
        );
        return { failures: 1, windowEndsAt };
      } catch (error) {
        if (!isConditionalCheckFailed(error) || attempt >= RECORD_ATTEMPTS) throw error;
      }
    }
  }

  /** @inheritdoc One DeleteItem. */
  async clear(key: string): Promise<void> {
    await this.client.send(new DeleteCommand({ TableName: this.tableName, Key: { pk: key } }));
  }
}

/** The count of a stored item if its window is open at `now` (epoch ms). */
function open(item: Record<string, unknown> | undefined, now: number): ClientFailureCount | undefined {
  const failures = item?.failures;
  const windowEndsAt = item?.windowEndsAt;
  if (typeof failures !== 'number' || typeof windowEndsAt !== 'number' || windowEndsAt <= now) return undefined;
  return { failures, windowEndsAt };
}
