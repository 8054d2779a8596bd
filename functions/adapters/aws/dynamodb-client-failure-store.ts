import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { ClientAttemptReservation, ClientFailureStore } from '../../core/access/ports.js';
import { ServiceUnavailableError } from '../../core/shared/errors.js';
import { isConditionalCheckFailed } from './dynamodb-shared.js';

/** The item's attributes, by expression name (names, not reserved words, but spelled once). */
const NAMES = { '#failures': 'failures', '#end': 'windowEndsAt', '#expires': 'expiresAt' } as const;

/**
 * Rounds of `reserve` when racing writers replace a closed window under it. Each lost round means another writer
 * opened a window, which the next round finds open; a third loss needs clocks apart by a whole window.
 */
const RESERVE_ROUNDS = 3;

/** How long a reservation that lost every round is refused, ms: the key has that many attempts arriving at once. */
const CONTENDED_RETRY_MS = 1_000;

/**
 * Errors meaning the table cannot be used at all (deleted or never created, the role without the grant, the
 * function's credentials refused): answered 503 like an outage, never with a hash. Throttling and unreachable
 * endpoints keep the client's error, which the platform already answers 503 with its own Retry-After.
 */
const UNUSABLE_TABLE_ERRORS = new Set(['ResourceNotFoundException', 'AccessDeniedException', 'UnrecognizedClientException']);

/** Seconds a client is told to wait when the table cannot be used. */
const UNUSABLE_RETRY_AFTER_SECONDS = 5;

/**
 * ClientFailureStore on the clientFailures table (tables.ts): one item per key, pk `pk` = the key, `failures` (the
 * attempts of the window not followed by a success), `windowEndsAt` (epoch ms) and `expiresAt` (epoch seconds, the
 * table's TTL attribute, the end of the window: DynamoDB deletes closed windows, within days; until then `reserve`
 * treats them as absent). Uses UpdateItem and DeleteItem only.
 */
export class DynamoDbClientFailureStore implements ClientFailureStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  /**
   * @inheritdoc
   * An UpdateItem adding 1 on condition that there is no item, or an open window below the limit (creating the item
   * with a window when there is none); refused, it returns the item it found (ReturnValuesOnConditionCheckFailure),
   * so an open window at the limit costs no read. A closed window found is replaced by an UpdateItem on condition it
   * is still closed (or gone); losing that race starts the round again.
   */
  async reserve(key: string, now: number, policy: { limit: number; windowMs: number }): Promise<ClientAttemptReservation> {
    const windowEndsAt = now + policy.windowMs;
    const expiresAt = Math.ceil(windowEndsAt / 1000);
    for (let round = 1; round <= RESERVE_ROUNDS; round += 1) {
      try {
        const { Attributes } = await this.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: { pk: key },
            UpdateExpression: 'ADD #failures :one SET #end = if_not_exists(#end, :end), #expires = if_not_exists(#expires, :expires)',
            ConditionExpression: 'attribute_not_exists(pk) OR (#end > :now AND #failures < :limit)',
            ExpressionAttributeNames: NAMES,
            ExpressionAttributeValues: { ':one': 1, ':end': windowEndsAt, ':expires': expiresAt, ':now': now, ':limit': policy.limit },
            ReturnValues: 'ALL_NEW',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        );
        return { reserved: true, attempts: Number(Attributes?.failures), windowEndsAt: Number(Attributes?.windowEndsAt) };
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
        const found = storedOnRefusal(error);
        const foundEnd = found?.windowEndsAt;
        // An open window at its limit: refused until it closes.
        if (typeof foundEnd === 'number' && foundEnd > now) return { reserved: false, windowEndsAt: foundEnd };
      }
      // The window found has closed: a new one counting this attempt, unless another writer opened one first.
      try {
        await this.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: { pk: key },
            UpdateExpression: 'SET #failures = :one, #end = :end, #expires = :expires',
            ConditionExpression: 'attribute_not_exists(pk) OR #end <= :now',
            ExpressionAttributeNames: NAMES,
            ExpressionAttributeValues: { ':one': 1, ':end': windowEndsAt, ':expires': expiresAt, ':now': now },
          }),
        );
        return { reserved: true, attempts: 1, windowEndsAt };
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
      }
    }
    return { reserved: false, windowEndsAt: now + CONTENDED_RETRY_MS };
  }

  /** @inheritdoc One DeleteItem. */
  async clear(key: string): Promise<void> {
    await this.send(new DeleteCommand({ TableName: this.tableName, Key: { pk: key } }));
  }

  /** @inheritdoc One UpdateItem (ADD -1 on condition that the count is above 0). */
  async release(key: string): Promise<void> {
    try {
      await this.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: key },
          UpdateExpression: 'ADD #failures :minusOne',
          ConditionExpression: '#failures > :zero',
          ExpressionAttributeNames: { '#failures': 'failures' },
          ExpressionAttributeValues: { ':minusOne': -1, ':zero': 0 },
        }),
      );
    } catch (error) {
      // Nothing to give back: the key was cleared, or its item expired, meanwhile.
      if ((error as { name?: string } | null)?.name !== 'ConditionalCheckFailedException') throw error;
    }
  }

  /**
   * Sends `command`, a table that cannot be used becoming a ServiceUnavailableError (the SDK's error as its cause).
   * @throws ServiceUnavailableError for UNUSABLE_TABLE_ERRORS; the client's error otherwise.
   */
  private async send(command: UpdateCommand | DeleteCommand): Promise<{ Attributes?: Record<string, unknown> }> {
    try {
      return command instanceof UpdateCommand ? await this.client.send(command) : await this.client.send(command);
    } catch (error) {
      if (!UNUSABLE_TABLE_ERRORS.has((error as { name?: string } | null)?.name ?? '')) throw error;
      const unavailable = new ServiceUnavailableError(
        `Failed authentication attempts cannot be counted right now, so none is checked; retry after ${UNUSABLE_RETRY_AFTER_SECONDS} seconds (Retry-After).`,
        UNUSABLE_RETRY_AFTER_SECONDS,
      );
      throw Object.assign(unavailable, { cause: error });
    }
  }
}

/** The item a refused conditional write found (ReturnValuesOnConditionCheckFailure ALL_OLD), plain, or undefined. */
function storedOnRefusal(error: unknown): Record<string, unknown> | undefined {
  const item = (error as { Item?: Record<string, AttributeValue> } | null)?.Item;
  return item === undefined ? undefined : unmarshall(item);
}
