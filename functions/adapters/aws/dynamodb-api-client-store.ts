import { type DynamoDBDocumentClient, GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { API_CLIENT_ID_PATTERN, type ApiClientRole, type StoredApiClient } from '../../core/clients/model.js';
import type { ApiClientStore } from '../../core/clients/ports.js';
import type { Page } from '../../core/shared/paging.js';
import { type CursorCodec, cursorListing, invalidCursor } from './cursor-codec.js';
import { cancellationCodes, isConditionalCheckFailed, sendTransaction } from './dynamodb-shared.js';

/** The `listed` value every client carries: the one partition of the `all` index. */
const LISTED = 'CLIENT';

/** The attributes of a previous secret, removed by a change that leaves the client without one. */
const PREVIOUS_SECRET_ATTRIBUTES = ['previousSecretHash', 'previousSecretExpiresAt'];

/** The key of a company's client count: never a client id (`api_…`), and without `company`, so no index lists it. */
function countKey(company: string): { clientId: string } {
  return { clientId: `COUNT#${company}` };
}

/** The listing a cursor is bound to: the clients of one company, or of every company. */
const clientsListing = (company: string | undefined) => cursorListing('api-clients', company ?? '*');

/** The item of a client: the client, and `listed` for the `all` index (`company` keys `byCompany`). */
function clientItem(client: StoredApiClient): Record<string, unknown> {
  return { ...client, listed: LISTED };
}

/** The client an item holds. */
function clientFromItem(item: Record<string, unknown>): StoredApiClient {
  const optional = (name: string) => (typeof item[name] === 'string' ? { [name]: item[name] as string } : {});
  return {
    clientId: item.clientId as string,
    name: item.name as string,
    company: item.company as string,
    role: item.role as ApiClientRole,
    enabled: item.enabled as boolean,
    created: item.created as string,
    createdBy: item.createdBy as string,
    updated: item.updated as string,
    ...optional('lastUsedAt'),
    ...optional('previousSecretExpiresAt'),
    secretHash: item.secretHash as string,
    ...optional('previousSecretHash'),
    ...optional('tokensNotBefore'),
  };
}

/**
 * ApiClientStore on the apiClients table (tables.ts): a client per item keyed by its id, listed by the `byCompany`
 * and `all` indexes; a create or delete is one transaction with the company's count, so no race passes the limit.
 */
export class DynamoDbApiClientStore implements ApiClientStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly table: string,
    private readonly cursors: CursorCodec,
  ) {}

  /** @inheritdoc */
  async create(apiClient: StoredApiClient, max: number): Promise<'created' | 'full'> {
    try {
      await sendTransaction(this.client, {
        TransactItems: [
          {
            Put: { TableName: this.table, Item: clientItem(apiClient), ConditionExpression: 'attribute_not_exists(clientId)' },
          },
          {
            Update: {
              TableName: this.table,
              Key: countKey(apiClient.company),
              UpdateExpression: 'ADD #clients :one',
              ConditionExpression: 'attribute_not_exists(#clients) OR #clients < :max',
              ExpressionAttributeNames: { '#clients': 'clients' },
              ExpressionAttributeValues: { ':one': 1, ':max': max },
            },
          },
        ],
      });
      return 'created';
    } catch (error) {
      if (cancellationCodes(error)?.[1] === 'ConditionalCheckFailed') return 'full';
      throw error;
    }
  }

  /** @inheritdoc */
  async get(clientId: string): Promise<StoredApiClient | undefined> {
    if (!API_CLIENT_ID_PATTERN.test(clientId)) return undefined;
    const { Item } = await this.client.send(new GetCommand({ TableName: this.table, Key: { clientId }, ConsistentRead: true }));
    return Item === undefined ? undefined : clientFromItem(Item);
  }

  /**
   * @inheritdoc
   * One Query of `byCompany` (a company's) or `all` (every company's), reading one item more than `limit` to tell
   * whether another page exists. @throws BadRequestError for a cursor this listing did not issue.
   */
  async list(company: string | undefined, limit: number, cursor: string | undefined): Promise<Page<StoredApiClient>> {
    const [indexName, keyName, keyValue] = company === undefined ? ['all', 'listed', LISTED] : ['byCompany', 'company', company];
    let startKey: Record<string, unknown> | undefined;
    if (cursor !== undefined) {
      const key = this.cursors.decode(clientsListing(company), cursor);
      const after = key.after;
      if (typeof after !== 'string' || !API_CLIENT_ID_PATTERN.test(after) || Object.keys(key).length !== 1) throw invalidCursor();
      startKey = { [keyName]: keyValue, clientId: after };
    }
    const response = await this.client.send(
      new QueryCommand({
        TableName: this.table,
        IndexName: indexName,
        KeyConditionExpression: '#key = :key',
        ExpressionAttributeNames: { '#key': keyName },
        ExpressionAttributeValues: { ':key': keyValue },
        Limit: limit + 1,
        ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }),
      }),
    );
    const found = response.Items ?? [];
    const items = found.slice(0, limit).map(clientFromItem);
    const last = items.at(-1);
    const more = found.length > limit || response.LastEvaluatedKey !== undefined;
    return {
      items,
      nextCursor: more && last !== undefined ? this.cursors.encode(clientsListing(company), { after: last.clientId }) : null,
    };
  }

  /**
   * @inheritdoc
   * One conditional UpdateItem setting every attribute of the client but its id and `lastUsedAt` (so that a use
   * recorded since the client was read is kept), and removing the previous secret's when it has none.
   */
  async replace(apiClient: StoredApiClient, expectedUpdated: string): Promise<boolean> {
    const { clientId: _id, lastUsedAt: _used, ...set } = clientItem(apiClient);
    const present = Object.keys(set).filter((name) => set[name] !== undefined);
    const absent = PREVIOUS_SECRET_ATTRIBUTES.filter((name) => set[name] === undefined);
    const names = [...present, ...absent];
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { clientId: apiClient.clientId },
          UpdateExpression: [
            `SET ${present.map((name) => `#${name} = :${name}`).join(', ')}`,
            ...(absent.length === 0 ? [] : [`REMOVE ${absent.map((name) => `#${name}`).join(', ')}`]),
          ].join(' '),
          ConditionExpression: '#updated = :expected',
          ExpressionAttributeNames: Object.fromEntries(names.map((name) => [`#${name}`, name])),
          ExpressionAttributeValues: {
            ...Object.fromEntries(present.map((name) => [`:${name}`, set[name]])),
            ':expected': expectedUpdated,
          },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }

  /** @inheritdoc One transaction: the client's delete (while it exists) and its company's count less one. */
  async delete(clientId: string): Promise<StoredApiClient | undefined> {
    const apiClient = await this.get(clientId);
    if (apiClient === undefined) return undefined;
    try {
      await sendTransaction(this.client, {
        TransactItems: [
          { Delete: { TableName: this.table, Key: { clientId }, ConditionExpression: 'attribute_exists(clientId)' } },
          {
            Update: {
              TableName: this.table,
              Key: countKey(apiClient.company),
              UpdateExpression: 'ADD #clients :minus',
              ExpressionAttributeNames: { '#clients': 'clients' },
              ExpressionAttributeValues: { ':minus': -1 },
            },
          },
        ],
      });
      return apiClient;
    } catch (error) {
      if (cancellationCodes(error)?.[0] === 'ConditionalCheckFailed') return undefined;
      throw error;
    }
  }

  /** @inheritdoc */
  async touch(clientId: string, at: string, olderThan: string): Promise<void> {
    if (!API_CLIENT_ID_PATTERN.test(clientId)) return;
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { clientId },
          UpdateExpression: 'SET lastUsedAt = :at',
          ConditionExpression: 'attribute_exists(clientId) AND (attribute_not_exists(lastUsedAt) OR lastUsedAt < :olderThan)',
          ExpressionAttributeValues: { ':at': at, ':olderThan': olderThan },
        }),
      );
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
    }
  }
}
