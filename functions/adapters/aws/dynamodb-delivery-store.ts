import { type DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import pLimit from 'p-limit';
import { ULID_PATTERN } from '../../core/shared/identifiers.js';
import type { ListParameters, Page } from '../../core/shared/paging.js';
import {
  type DeliveryAttempt,
  type DeliveryState,
  MAX_KEPT_ATTEMPTS,
  type StoredDelivery,
  type WebhookEventType,
} from '../../core/webhooks/model.js';
import type { DeliveryStore } from '../../core/webhooks/ports.js';
import { type CursorCodec, cursorListing, invalidCursor } from './cursor-codec.js';
import { type DueIndex, dueItemsOfShard, isConditionalCheckFailed } from './dynamodb-shared.js';

import { webhookDueShardOf as dueShardOf, WEBHOOK_DUE_SHARDS } from './tables.js';

/** The webhooks table's sparse index of PENDING deliveries, by next attempt. */
const DUE_INDEX: DueIndex = { name: 'due', shardKey: 'dueShard', dueKey: 'dueAt' };

/** How long a final delivery is kept (its `expiresAt`, the table's TTL), ms: 30 days. */
export const FINAL_DELIVERY_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

/** Conditional puts of one createEach in flight at once. */
const CREATE_CONCURRENCY = 16;

/** The partition of a webhook's deliveries: `DELIVERY#{company}#{webhookId}` (neither id contains `#`). */
export function deliveryPartition(company: string, webhookId: string): string {
  return `DELIVERY#${company}#${webhookId}`;
}

/** `expiresAt` (epoch seconds) of a delivery that became final at `at` (ISO-8601). */
function expiryOf(at: string): number {
  return Math.floor((Date.parse(at) + FINAL_DELIVERY_RETENTION_MS) / 1000);
}

const deliveriesListing = (company: string, webhookId: string) => cursorListing('webhook-deliveries', company, webhookId);

/**
 * The item of a delivery (`entity` DELIVERY): while PENDING with `dueShard` and `dueAt` (its nextAttemptAt, the
 * sparse `due` index); once final with `expiresAt` (`now`: when it became final).
 */
export function deliveryItem(delivery: StoredDelivery, now: string = delivery.created): Record<string, unknown> {
  const pk = deliveryPartition(delivery.company, delivery.webhookId);
  const pending = delivery.state === 'PENDING' && delivery.nextAttemptAt !== null;
  return {
    ...delivery,
    pk,
    sk: delivery.id,
    entity: 'DELIVERY',
    ...(pending ? { dueShard: dueShardOf(pk), dueAt: delivery.nextAttemptAt } : { expiresAt: expiryOf(now) }),
  };
}

/** Whether a table item (or a stream image unmarshalled) is a delivery, not a webhook or a count. */
export function isDeliveryItem(item: Record<string, unknown>): boolean {
  return item.entity === 'DELIVERY';
}

/** The delivery an item holds (the table's item, or a stream image unmarshalled). */
export function deliveryFromItem(item: Record<string, unknown>): StoredDelivery {
  return {
    id: item.id as string,
    company: item.company as string,
    webhookId: item.webhookId as string,
    eventId: item.eventId as string,
    messageId: item.messageId as string,
    type: item.type as WebhookEventType,
    state: item.state as DeliveryState,
    attempts: Number(item.attempts),
    lastStatus: item.lastStatus === null || item.lastStatus === undefined ? null : Number(item.lastStatus),
    nextAttemptAt: (item.nextAttemptAt as string | null | undefined) ?? null,
    created: item.created as string,
    history: ((item.history as Record<string, unknown>[] | undefined) ?? []).map((attempt) => ({
      at: attempt.at as string,
      status: attempt.status === null || attempt.status === undefined ? null : Number(attempt.status),
      error: (attempt.error as string | null | undefined) ?? null,
      durationMs: attempt.durationMs === null || attempt.durationMs === undefined ? null : Number(attempt.durationMs),
    })),
    payload: item.payload as string,
  };
}

/**
 * DeliveryStore on the webhooks table (key design in tables.ts): one item per delivery in its webhook's partition,
 * each change one conditional write; the table's stream hands new and redelivered ones to the delivery function.
 */
export class DynamoDbDeliveryStore implements DeliveryStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly cursors: CursorCodec,
  ) {}

  /**
   * @inheritdoc
   * One conditional PutItem per delivery (only if its id is new), CREATE_CONCURRENCY at once.
   * @throws the first backend error, once every write has settled (the caller retries: the written ones are kept).
   */
  async createEach(deliveries: readonly StoredDelivery[]): Promise<StoredDelivery[]> {
    const limit = pLimit(CREATE_CONCURRENCY);
    const outcomes = await Promise.allSettled(
      deliveries.map((delivery) =>
        limit(async () => {
          try {
            await this.client.send(
              new PutCommand({ TableName: this.tableName, Item: deliveryItem(delivery), ConditionExpression: 'attribute_not_exists(pk)' }),
            );
            return true;
          } catch (error) {
            if (isConditionalCheckFailed(error)) return false;
            throw error;
          }
        }),
      ),
    );
    const failed = outcomes.find((outcome) => outcome.status === 'rejected');
    if (failed !== undefined) throw (failed as PromiseRejectedResult).reason;
    return deliveries.filter((_, index) => (outcomes[index] as PromiseFulfilledResult<boolean>).value);
  }

  /** @inheritdoc A strongly consistent read. */
  async get(company: string, webhookId: string, deliveryId: string): Promise<StoredDelivery | undefined> {
    if (!ULID_PATTERN.test(deliveryId)) return undefined;
    const { Item } = await this.client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: deliveryPartition(company, webhookId), sk: deliveryId },
        ConsistentRead: true,
      }),
    );
    return Item === undefined ? undefined : deliveryFromItem(Item);
  }

  /** @inheritdoc One Query of the webhook's partition, backwards. */
  async list(company: string, webhookId: string, { limit, cursor }: ListParameters): Promise<Page<StoredDelivery>> {
    const pk = deliveryPartition(company, webhookId);
    let startKey: Record<string, unknown> | undefined;
    if (cursor !== undefined) {
      const key = this.cursors.decode(deliveriesListing(company, webhookId), cursor);
      if (typeof key.sk !== 'string' || !ULID_PATTERN.test(key.sk) || Object.keys(key).length !== 1) throw invalidCursor();
      startKey = { pk, sk: key.sk };
    }
    const response = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': pk },
        ScanIndexForward: false,
        // One extra item tells whether another page exists, so the last page carries no cursor.
        Limit: limit + 1,
        ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }),
      }),
    );
    const found = response.Items ?? [];
    const items = found.slice(0, limit).map(deliveryFromItem);
    const last = items.at(-1);
    const more = found.length > limit || response.LastEvaluatedKey !== undefined;
    return {
      items,
      nextCursor: more && last !== undefined ? this.cursors.encode(deliveriesListing(company, webhookId), { sk: last.id }) : null,
    };
  }

  /**
   * @inheritdoc
   * One Query per shard of the sparse `due` index, all at once, each for up to `limit` of its oldest due (eventually
   * consistent: claim decides); then the oldest due first across shards, so that a shard crowded with one failing
   * webhook's deliveries never keeps the other shards' from being read.
   */
  async due(now: string, limit: number): Promise<StoredDelivery[]> {
    const shards = Array.from({ length: WEBHOOK_DUE_SHARDS }, (_, shard) =>
      dueItemsOfShard(this.client, this.tableName, DUE_INDEX, `DUE#${shard}`, now, limit),
    );
    return (await Promise.all(shards))
      .flat()
      .map(deliveryFromItem)
      .filter((delivery) => delivery.state === 'PENDING')
      .sort((a, b) => (a.nextAttemptAt ?? '').localeCompare(b.nextAttemptAt ?? ''))
      .slice(0, limit);
  }

  /** @inheritdoc One UpdateItem conditioned on the delivery still PENDING with the attempts and due time read. */
  async claim(delivery: StoredDelivery, leaseUntil: string): Promise<boolean> {
    return this.conditionalUpdate(delivery, {
      UpdateExpression: 'SET nextAttemptAt = :lease, dueAt = :lease',
      ConditionExpression: '#state = :pending AND attempts = :attempts AND nextAttemptAt = :next',
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: {
        ':lease': leaseUntil,
        ':pending': 'PENDING',
        ':attempts': delivery.attempts,
        ':next': delivery.nextAttemptAt,
      },
    });
  }

  /**
   * @inheritdoc
   * One UpdateItem conditioned on `attempts`: the history keeps the latest MAX_KEPT_ATTEMPTS; a final state leaves
   * the `due` index and gets `expiresAt` (kept FINAL_DELIVERY_RETENTION_MS after the attempt).
   */
  async recordAttempt(
    delivery: StoredDelivery,
    attempt: DeliveryAttempt,
    next: { state: StoredDelivery['state']; nextAttemptAt: string | null },
  ): Promise<boolean> {
    const pending = next.state === 'PENDING' && next.nextAttemptAt !== null;
    const pk = deliveryPartition(delivery.company, delivery.webhookId);
    const sets = ['attempts = :after', 'lastStatus = :status', 'history = :history', '#state = :state', 'nextAttemptAt = :next'];
    const values: Record<string, unknown> = {
      ':attempts': delivery.attempts,
      ':after': delivery.attempts + 1,
      ':status': attempt.status,
      ':history': [...delivery.history, attempt].slice(-MAX_KEPT_ATTEMPTS),
      ':state': next.state,
      ':next': next.nextAttemptAt,
    };
    if (pending) {
      sets.push('dueShard = :shard', 'dueAt = :next');
      values[':shard'] = dueShardOf(pk);
    } else {
      sets.push('expiresAt = :expiresAt');
      values[':expiresAt'] = expiryOf(attempt.at);
    }
    return this.conditionalUpdate(delivery, {
      UpdateExpression: `SET ${sets.join(', ')}${pending ? ' REMOVE expiresAt' : ' REMOVE dueShard, dueAt'}`,
      ConditionExpression: 'attempts = :attempts',
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: values,
    });
  }

  /** @inheritdoc One UpdateItem conditioned on the delivery existing: back in the `due` index, due at `now`. */
  async redeliver(company: string, webhookId: string, deliveryId: string, now: string): Promise<boolean> {
    if (!ULID_PATTERN.test(deliveryId)) return false;
    const pk = deliveryPartition(company, webhookId);
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk, sk: deliveryId },
          UpdateExpression:
            'SET #state = :pending, nextAttemptAt = :now, dueShard = :shard, dueAt = :now, redeliveredAt = :now REMOVE expiresAt',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: { ':pending': 'PENDING', ':now': now, ':shard': dueShardOf(pk) },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }

  /** One UpdateItem of `delivery`'s item. @returns false when its condition failed. */
  private async conditionalUpdate(
    delivery: StoredDelivery,
    update: Pick<
      ConstructorParameters<typeof UpdateCommand>[0],
      'UpdateExpression' | 'ConditionExpression' | 'ExpressionAttributeNames' | 'ExpressionAttributeValues'
    >,
  ): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: deliveryPartition(delivery.company, delivery.webhookId), sk: delivery.id },
          ...update,
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }
}
