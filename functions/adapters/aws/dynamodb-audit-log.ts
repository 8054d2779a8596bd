/**
 * The audit log on the audit table (key design in tables.ts): each entry is an `ENTRY` item (with `actorKey`, the
 * `actor` index's key) and a copy under `COMPANY#{company}` for each company it concerns, written together.
 */
import { type DynamoDBDocumentClient, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { AuditAction, AuditEntry, AuditFilter, AuditLog } from '../../core/audit/ports.js';
import { ULID_PATTERN } from '../../core/shared/identifiers.js';
import type { Page } from '../../core/shared/paging.js';
import { type CursorCodec, cursorListing, invalidCursor } from './cursor-codec.js';
import { cancellationCodes, isConditionalCheckFailed, sendTransaction } from './dynamodb-shared.js';
import { mergeShards, queryBudget, type ShardRead } from './sharded-query.js';

/** Partition key of every entry item (the listing of all entries). */
export const AUDIT_ENTRY_PARTITION = 'ENTRY';

/** Partition key of the copies of the entries concerning `company`. */
export function auditCompanyPartition(company: string): string {
  return `COMPANY#${company}`;
}

/** Most items one TransactWriteItems may hold (DynamoDB's limit). */
const MAX_TRANSACTION_ITEMS = 100;

/** Copies put at once when an entry concerns more companies than a transaction holds. */
const CONCURRENT_PUTS = 10;

/** Most Query calls one page may take when a FilterExpression (actor within a company) drops items. */
const MAX_QUERIES_PER_PAGE = queryBudget(1);

/** Most items one Query evaluates. */
const MAX_ITEMS_PER_QUERY = 1_000;

/** A Put of a TransactWriteItems (document client shape). */
export interface AuditPut {
  Put: { TableName: string; Item: Record<string, unknown>; ConditionExpression: string };
}

/**
 * The items that record `entry` in `tableName`: the entry item first, then one copy per distinct company it concerns,
 * each put only where no item is (`attribute_not_exists(pk)`), so writing them again changes nothing.
 */
export function auditItems(tableName: string, entry: AuditEntry): AuditPut[] {
  const attributes: Record<string, unknown> = {
    id: entry.id,
    at: entry.at,
    actor: entry.actor,
    action: entry.action,
    target: { kind: entry.target.kind, id: entry.target.id },
    companies: entry.companies,
    ...(entry.before === undefined ? {} : { before: entry.before }),
    ...(entry.after === undefined ? {} : { after: entry.after }),
  };
  const put = (Item: Record<string, unknown>): AuditPut => ({
    Put: { TableName: tableName, Item, ConditionExpression: 'attribute_not_exists(pk)' },
  });
  return [
    put({ pk: AUDIT_ENTRY_PARTITION, sk: entry.id, actorKey: entry.actor, ...attributes }),
    ...[...new Set(entry.companies)].map((company) => put({ pk: auditCompanyPartition(company), sk: entry.id, ...attributes })),
  ];
}

/** True when a cancelled transaction was refused only by conditions on audit items that already exist (a retry). */
export function isAlreadyRecorded(error: unknown): boolean {
  const codes = cancellationCodes(error);
  return codes?.includes('ConditionalCheckFailed') === true && codes.every((code) => code === 'ConditionalCheckFailed' || code === 'None');
}

/** The entry an entry item (or a copy, or a stream image unmarshalled) holds. */
export function auditEntryOf(item: Record<string, unknown>): AuditEntry {
  const target = item.target as AuditEntry['target'];
  return {
    id: item.id as string,
    at: item.at as string,
    actor: item.actor as string,
    action: item.action as AuditAction,
    target: { kind: target.kind, id: target.id },
    companies: [...((item.companies as string[] | undefined) ?? [])],
    ...(item.before === undefined ? {} : { before: item.before as Record<string, unknown> }),
    ...(item.after === undefined ? {} : { after: item.after as Record<string, unknown> }),
  };
}

/** Where one listing reads: a partition of the table or of the `actor` index, and an actor filter. */
interface AuditQueryShape {
  indexName: 'actor' | undefined;
  partitionAttribute: 'pk' | 'actorKey';
  partition: string;
  /** The actor every item must have (a FilterExpression), when the key does not say it. */
  actor: string | undefined;
}

function shapeOf(filter: AuditFilter): AuditQueryShape {
  if (filter.company !== undefined) {
    return { indexName: undefined, partitionAttribute: 'pk', partition: auditCompanyPartition(filter.company), actor: filter.actor };
  }
  if (filter.actor !== undefined) return { indexName: 'actor', partitionAttribute: 'actorKey', partition: filter.actor, actor: undefined };
  return { indexName: undefined, partitionAttribute: 'pk', partition: AUDIT_ENTRY_PARTITION, actor: undefined };
}

/**
 * AuditLog on the audit table, newest first (ULID sort keys, ScanIndexForward false):
 * - every entry: the `ENTRY` partition;
 * - a company's: its `COMPANY#{company}` partition (with an actor: a FilterExpression on it, the page filled by
 *   reading on within MAX_QUERIES_PER_PAGE calls, then cut early with a cursor);
 * - an actor's: the `actor` index (eventually consistent: an entry shows there within a second or so).
 * Cursors hold the last id, signed for the listing's filters.
 */
export class DynamoDbAuditLog implements AuditLog {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly cursors: CursorCodec,
  ) {}

  /**
   * @inheritdoc
   * One TransactWriteItems of the entry item and its company copies (auditItems), each conditional on its absence: a
   * retry is cancelled by those conditions and changes nothing. An entry concerning more companies than one
   * transaction holds (99) writes its copies first, then the entry item: the entry (and its event) exists only once
   * every copy does.
   */
  async record(entry: AuditEntry): Promise<void> {
    const items = auditItems(this.tableName, entry);
    if (items.length <= MAX_TRANSACTION_ITEMS) {
      try {
        await sendTransaction(this.client, { TransactItems: items });
      } catch (error) {
        if (!isAlreadyRecorded(error)) throw error;
      }
      return;
    }
    const [entryItem, ...copies] = items as [AuditPut, ...AuditPut[]];
    for (let start = 0; start < copies.length; start += CONCURRENT_PUTS) {
      await Promise.all(copies.slice(start, start + CONCURRENT_PUTS).map((copy) => this.putOnce(copy)));
    }
    await this.putOnce(entryItem);
  }

  private async putOnce(item: AuditPut): Promise<void> {
    try {
      await this.client.send(new PutCommand(item.Put));
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
    }
  }

  /** @inheritdoc */
  async list(filter: AuditFilter, limit: number, cursor: string | undefined): Promise<Page<AuditEntry>> {
    const listing = cursorListing('audit', filter.company ?? '', filter.actor);
    let after: string | undefined;
    if (cursor !== undefined) {
      const key = this.cursors.decode(listing, cursor);
      if (typeof key.id !== 'string' || !ULID_PATTERN.test(key.id) || Object.keys(key).length !== 1) throw invalidCursor();
      after = key.id;
    }
    const shape = shapeOf(filter);
    const page = await mergeShards((_, before, readLimit) => this.read(shape, before, readLimit), {
      shards: [0],
      order: 'descending',
      sortKey: (item) => item.sk as string,
      after,
      limit,
      maxQueries: MAX_QUERIES_PER_PAGE,
      maxItemsPerQuery: MAX_ITEMS_PER_QUERY,
    });
    return {
      items: page.items.map(auditEntryOf),
      nextCursor: page.next === undefined ? null : this.cursors.encode(listing, { id: page.next }),
    };
  }

  /** One Query of the listing's partition, newest first, strictly before the id `before` when given. */
  private async read(shape: AuditQueryShape, before: string | undefined, limit: number): Promise<ShardRead<Record<string, unknown>>> {
    const names: Record<string, string> = { '#p': shape.partitionAttribute };
    const values: Record<string, unknown> = { ':p': shape.partition };
    let keyCondition = '#p = :p';
    if (before !== undefined) {
      keyCondition += ' AND sk < :before';
      values[':before'] = before;
    }
    if (shape.actor !== undefined) {
      names['#actor'] = 'actor';
      values[':actor'] = shape.actor;
    }
    const response = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        ...(shape.indexName === undefined ? { ConsistentRead: true } : { IndexName: shape.indexName }),
        KeyConditionExpression: keyCondition,
        ...(shape.actor === undefined ? {} : { FilterExpression: '#actor = :actor' }),
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ScanIndexForward: false,
        Limit: limit,
      }),
    );
    return {
      items: response.Items ?? [],
      lastEvaluated: response.LastEvaluatedKey?.sk as string | undefined,
      evaluated: response.ScannedCount ?? response.Items?.length ?? 0,
    };
  }
}
