import { type DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { AuditEntry } from '../../core/audit/ports.js';
import { ULID_PATTERN } from '../../core/shared/identifiers.js';
import type { ListParameters, Page } from '../../core/shared/paging.js';
import type { StoredWebhook, WebhookEventType } from '../../core/webhooks/model.js';
import type { WebhookStore } from '../../core/webhooks/ports.js';
import { type CursorCodec, cursorListing, invalidCursor } from './cursor-codec.js';
import { type AuditPut, auditItems } from './dynamodb-audit-log.js';
import { cancellationCodes, isConditionalCheckFailed, sendTransaction } from './dynamodb-shared.js';

/** The partition of a company's webhooks: `WEBHOOK#{company}`. */
export function webhookPartition(company: string): string {
  return `WEBHOOK#${company}`;
}

/** The key of the item counting a company's webhooks (`WEBHOOKS#{company}` / `COUNT`, attribute `webhookCount`). */
export function webhookCountKey(company: string): { pk: string; sk: string } {
  return { pk: `WEBHOOKS#${company}`, sk: 'COUNT' };
}

const webhooksListing = (company: string) => cursorListing('webhooks', company);

/** The item of a webhook (`entity` WEBHOOK, so that a stream consumer tells it from a delivery). */
export function webhookItem(webhook: StoredWebhook): Record<string, unknown> {
  return { ...webhook, pk: webhookPartition(webhook.company), sk: webhook.id, entity: 'WEBHOOK' };
}

/** The webhook an item holds (the table's item, or a stream image unmarshalled). */
export function webhookFromItem(item: Record<string, unknown>): StoredWebhook {
  return {
    id: item.id as string,
    company: item.company as string,
    url: item.url as string,
    events: [...(item.events as WebhookEventType[])],
    description: (item.description as string | null | undefined) ?? null,
    enabled: item.enabled === true,
    created: item.created as string,
    updated: item.updated as string,
    by: item.by as string,
    failingSince: (item.failingSince as string | null | undefined) ?? null,
    previousSecretExpiresAt: (item.previousSecretExpiresAt as string | null | undefined) ?? null,
    secret: item.secret as string,
    previousSecret: (item.previousSecret as string | null | undefined) ?? null,
  };
}

/**
 * WebhookStore on the webhooks table (key design in tables.ts): a webhook is one item in its company's partition;
 * a counter item beside them bounds how many a company has, written in the same transaction as a create or delete,
 * and each audited change's entry on the audit table too.
 */
export class DynamoDbWebhookStore implements WebhookStore {
  /**
   * @param auditTable the audit table's name: only the changes given an audit entry need it.
   */
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly cursors: CursorCodec,
    private readonly auditTable?: string,
  ) {}

  /** The audit items of `entry` (none without one). @throws Error when an entry is given without the audit table. */
  private audited(entry: AuditEntry | undefined): AuditPut[] {
    if (entry === undefined) return [];
    if (this.auditTable === undefined) throw new Error('DynamoDbWebhookStore needs the audit table to record a change');
    return auditItems(this.auditTable, entry);
  }

  /**
   * @inheritdoc
   * One transaction: the webhook's put (only if its id is new) and the company's count incremented only while below
   * `limit`, so racing creates never pass it.
   */
  async create(webhook: StoredWebhook, limit: number, audit?: AuditEntry): Promise<boolean> {
    const auditPuts = this.audited(audit);
    try {
      await sendTransaction(this.client, {
        TransactItems: [
          { Put: { TableName: this.tableName, Item: webhookItem(webhook), ConditionExpression: 'attribute_not_exists(pk)' } },
          {
            Update: {
              TableName: this.tableName,
              Key: webhookCountKey(webhook.company),
              UpdateExpression: 'ADD webhookCount :one SET entity = :entity',
              ConditionExpression: 'attribute_not_exists(webhookCount) OR webhookCount < :limit',
              ExpressionAttributeValues: { ':one': 1, ':limit': limit, ':entity': 'WEBHOOK_COUNT' },
            },
          },
          ...auditPuts,
        ],
      });
      return true;
    } catch (error) {
      const codes = cancellationCodes(error);
      if (codes?.[1] === 'ConditionalCheckFailed') return false;
      throw error;
    }
  }

  /** @inheritdoc */
  async get(company: string, webhookId: string): Promise<StoredWebhook | undefined> {
    if (!ULID_PATTERN.test(webhookId)) return undefined;
    const { Item } = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: { pk: webhookPartition(company), sk: webhookId }, ConsistentRead: true }),
    );
    return Item === undefined ? undefined : webhookFromItem(Item);
  }

  /** @inheritdoc */
  async list(company: string, { limit, cursor }: ListParameters): Promise<Page<StoredWebhook>> {
    const pk = webhookPartition(company);
    let startKey: Record<string, unknown> | undefined;
    if (cursor !== undefined) {
      const key = this.cursors.decode(webhooksListing(company), cursor);
      if (typeof key.sk !== 'string' || !ULID_PATTERN.test(key.sk) || Object.keys(key).length !== 1) throw invalidCursor();
      startKey = { pk, sk: key.sk };
    }
    const response = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': pk },
        ConsistentRead: true,
        // One extra item tells whether another page exists, so the last page carries no cursor.
        Limit: limit + 1,
        ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }),
      }),
    );
    const found = response.Items ?? [];
    const items = found.slice(0, limit).map(webhookFromItem);
    const last = items.at(-1);
    const more = found.length > limit || response.LastEvaluatedKey !== undefined;
    return { items, nextCursor: more && last !== undefined ? this.cursors.encode(webhooksListing(company), { sk: last.id }) : null };
  }

  /**
   * @inheritdoc
   * One PutItem conditioned on the item existing with `updated` = `expectedUpdated`; with an audit entry, one
   * transaction of that Put and the entry's items.
   */
  async replace(webhook: StoredWebhook, expectedUpdated: string, audit?: AuditEntry): Promise<boolean> {
    const put = {
      TableName: this.tableName,
      Item: webhookItem(webhook),
      ConditionExpression: 'attribute_exists(pk) AND #updated = :expected',
      ExpressionAttributeNames: { '#updated': 'updated' },
      ExpressionAttributeValues: { ':expected': expectedUpdated },
    };
    try {
      if (audit === undefined) await this.client.send(new PutCommand(put));
      else await sendTransaction(this.client, { TransactItems: [{ Put: put }, ...this.audited(audit)] });
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error) || cancellationCodes(error)?.[0] === 'ConditionalCheckFailed') return false;
      throw error;
    }
  }

  /**
   * @inheritdoc
   * One transaction: the webhook's delete (only if it exists, and is as read), the company's count decremented, and
   * the audit entry's items.
   */
  async delete(company: string, webhookId: string, audit?: AuditEntry, expectedUpdated?: string): Promise<boolean> {
    if (!ULID_PATTERN.test(webhookId)) return false;
    const auditPuts = this.audited(audit);
    try {
      await sendTransaction(this.client, {
        TransactItems: [
          {
            Delete: {
              TableName: this.tableName,
              Key: { pk: webhookPartition(company), sk: webhookId },
              ...(expectedUpdated === undefined
                ? { ConditionExpression: 'attribute_exists(pk)' }
                : {
                    ConditionExpression: 'attribute_exists(pk) AND #updated = :expected',
                    ExpressionAttributeNames: { '#updated': 'updated' },
                    ExpressionAttributeValues: { ':expected': expectedUpdated },
                  }),
            },
          },
          {
            Update: {
              TableName: this.tableName,
              Key: webhookCountKey(company),
              UpdateExpression: 'ADD webhookCount :minusOne',
              ExpressionAttributeValues: { ':minusOne': -1 },
            },
          },
          ...auditPuts,
        ],
      });
      return true;
    } catch (error) {
      if (cancellationCodes(error)?.[0] === 'ConditionalCheckFailed') return false;
      throw error;
    }
  }

  /** @inheritdoc One Query of the company's partition (at most MAX_WEBHOOKS_PER_COMPANY items), filtered. */
  async subscribed(company: string, type: WebhookEventType): Promise<StoredWebhook[]> {
    const items: Record<string, unknown>[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: 'pk = :pk',
          FilterExpression: 'enabled = :true AND contains(events, :type)',
          ExpressionAttributeValues: { ':pk': webhookPartition(company), ':true': true, ':type': type },
          ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }),
        }),
      );
      items.push(...(page.Items ?? []));
      startKey = page.LastEvaluatedKey;
    } while (startKey !== undefined);
    return items.map(webhookFromItem);
  }
}
