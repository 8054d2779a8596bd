import { QueryCommand, ScanCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { type DeploymentHistory, type DeploymentHistoryQuery, ulidBounds } from '../../core/deployment-history.js';
import type { DeploymentHistoryEntry, DeviceStatusHistoryEntry, HistoryEntry, Page } from '../../core/ports.js';
import { type CursorCodec, cursorListing, invalidCursor } from './cursor-codec.js';
import type { TableNames } from './dynamodb-shared.js';

/**
 * Key attributes of a history entry on the deployments table (key design in tables.ts). The writer is
 * `DynamoDbDeploymentRepository.historyItem`; this is the reader's (and the backfill's) copy of the same rule.
 */
export function historyKeys(
  entry: Pick<DeploymentHistoryEntry, 'company' | 'deviceId' | 'scenarioId' | 'id'>,
): Record<'pk' | 'sk' | 'gsi1pk' | 'gsi1sk' | 'gsi2pk' | 'gsi2sk', string> {
  return {
    pk: `HISTORY#${entry.company}#${entry.deviceId}`,
    sk: entry.id,
    gsi1pk: `HISTORY#${entry.company}#${entry.scenarioId}`,
    gsi1sk: entry.id,
    gsi2pk: `HISTORY#${entry.company}`,
    gsi2sk: entry.id,
  };
}

/** Where one listing reads: the table (device history) or an index, with its key attributes and partition value. */
interface QueryShape {
  indexName: 'gsi1' | 'gsi2' | undefined;
  partitionAttribute: 'pk' | 'gsi1pk' | 'gsi2pk';
  sortAttribute: 'sk' | 'gsi1sk' | 'gsi2sk';
  partition: string;
  /** Attribute names of a LastEvaluatedKey of this shape (table keys, plus the index keys on an index). */
  keyAttributes: readonly string[];
  /** Attribute → value equalities applied as a FilterExpression (after the key condition, before the page is cut). */
  filters: Record<string, string>;
}

function shapeOf(query: DeploymentHistoryQuery): QueryShape {
  const filters: Record<string, string> = {};
  if (query.deviceId !== undefined) {
    if (query.scenarioId !== undefined) filters.scenarioId = query.scenarioId;
    if (query.version !== undefined) filters.version = query.version;
    return {
      indexName: undefined,
      partitionAttribute: 'pk',
      sortAttribute: 'sk',
      partition: `HISTORY#${query.companyId}#${query.deviceId}`,
      keyAttributes: ['pk', 'sk'],
      filters,
    };
  }
  if (query.scenarioId !== undefined) {
    if (query.version !== undefined) filters.version = query.version;
    return {
      indexName: 'gsi1',
      partitionAttribute: 'gsi1pk',
      sortAttribute: 'gsi1sk',
      partition: `HISTORY#${query.companyId}#${query.scenarioId}`,
      keyAttributes: ['pk', 'sk', 'gsi1pk', 'gsi1sk'],
      filters,
    };
  }
  return {
    indexName: 'gsi2',
    partitionAttribute: 'gsi2pk',
    sortAttribute: 'gsi2sk',
    partition: `HISTORY#${query.companyId}`,
    keyAttributes: ['pk', 'sk', 'gsi2pk', 'gsi2sk'],
    filters,
  };
}

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/** The listing a history cursor is bound to: the company and every filter of the query (not the page size). */
function listingOf(query: DeploymentHistoryQuery): string {
  return cursorListing('deployment-history', query.companyId, query.deviceId, query.scenarioId, query.version, query.from, query.to);
}

/**
 * The signed cursor after `key` (the key of the last item returned, or DynamoDB's LastEvaluatedKey). Only the
 * table key `{ pk, sk }` is carried: an index's key is the query's partition and the same ULID.
 */
function encodeCursor(cursors: CursorCodec, query: DeploymentHistoryQuery, key: Record<string, unknown>): string {
  return cursors.encode(listingOf(query), { pk: key.pk, sk: key.sk });
}

/**
 * The ExclusiveStartKey of a cursor issued by `encodeCursor` for this query. Besides the signature (which binds the
 * company and every filter), defence in depth: the pk must be a history partition of the company (the query's own on
 * a device's history), the sk a ULID inside the query's time bounds.
 * @throws BadRequestError (400) otherwise.
 */
function decodeCursor(
  cursors: CursorCodec,
  cursor: string,
  query: DeploymentHistoryQuery,
  shape: QueryShape,
  bounds: { lower: string; upper: string },
): Record<string, string> {
  const key = cursors.decode(listingOf(query), cursor);
  const { pk, sk } = key;
  if (
    Object.keys(key).length !== 2 ||
    typeof pk !== 'string' ||
    typeof sk !== 'string' ||
    !pk.startsWith(`HISTORY#${query.companyId}#`) ||
    (shape.partitionAttribute === 'pk' && pk !== shape.partition) ||
    !ULID.test(sk) ||
    sk < bounds.lower ||
    sk > bounds.upper
  ) {
    throw invalidCursor('unknown or altered cursor, or one issued for other filters');
  }
  const full: Record<string, string> = { pk, sk, [shape.partitionAttribute]: shape.partition, [shape.sortAttribute]: sk };
  return Object.fromEntries(shape.keyAttributes.map((name) => [name, full[name] as string]));
}

/** A stored history item as an entry: a status report when its `kind` says so, an action otherwise (older items have no `kind`). */
function toEntry(item: Record<string, unknown>): HistoryEntry {
  if (item.kind === 'DEVICE_STATUS') {
    const status = (item.deviceStatus ?? {}) as Record<string, unknown>;
    return {
      kind: 'DEVICE_STATUS',
      id: item.id as string,
      company: item.company as string,
      deviceId: item.deviceId as string,
      deviceSubId: null,
      targetType: 'DEVICE',
      whatType: 'SCENARIO',
      scenarioId: item.scenarioId as string,
      version: item.version as string,
      deploymentId: item.deploymentId as string,
      deviceStatus: {
        state: status.state as DeviceStatusHistoryEntry['deviceStatus']['state'],
        ...(typeof status.message === 'string' ? { message: status.message } : {}),
      },
      at: item.at as string,
      by: item.by as string,
    };
  }
  return {
    kind: 'ACTION',
    id: item.id as string,
    company: item.company as string,
    deviceId: item.deviceId as string,
    deviceSubId: typeof item.deviceSubId === 'string' ? item.deviceSubId : null,
    targetType: item.targetType as string,
    whatType: item.whatType as string,
    scenarioId: item.scenarioId as string,
    version: item.version as string,
    action: item.action as DeploymentHistoryEntry['action'],
    state: item.state as DeploymentHistoryEntry['state'],
    cause: typeof item.cause === 'string' ? item.cause : null,
    at: item.at as string,
    by: item.by as string,
    ...(typeof item.note === 'string' ? { note: item.note } : {}),
  };
}

/** Most Query calls one page may take when a FilterExpression drops items; the page then ends early with a cursor. */
export const MAX_QUERIES_PER_PAGE = 10;
/** Most items one of those follow-up Queries evaluates. */
const MAX_ITEMS_PER_QUERY = 1_000;

/**
 * DeploymentHistory on the deployments table (key design in tables.ts): one Query per listing, on the device's
 * partition of the table, the scenario's partition of `gsi1` or the company's partition of `gsi2`, newest first,
 * with `from`/`to` as ULID bounds on the sort key. Filters that no key covers (scenario on a device's history,
 * version) are FilterExpressions; since DynamoDB applies `Limit` before them, the page is filled by following
 * LastEvaluatedKey (at most MAX_QUERIES_PER_PAGE calls). The cursor is the key of the page's last item, signed by
 * `cursors` (CursorCodec) for the company and filters of the query.
 */
export class DynamoDbDeploymentHistory implements DeploymentHistory {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tables: Pick<TableNames, 'deployments'>,
    private readonly cursors: CursorCodec,
  ) {}

  /** @inheritdoc */
  async list(query: DeploymentHistoryQuery): Promise<Page<HistoryEntry>> {
    const bounds = ulidBounds(query.from, query.to);
    if (bounds === undefined) return { items: [], nextCursor: null };
    const shape = shapeOf(query);
    const filterNames = Object.keys(shape.filters);
    const names: Record<string, string> = { '#pk': shape.partitionAttribute, '#sk': shape.sortAttribute };
    const values: Record<string, unknown> = { ':pk': shape.partition, ':lower': bounds.lower, ':upper': bounds.upper };
    filterNames.forEach((name, index) => {
      names[`#f${index}`] = name;
      values[`:f${index}`] = shape.filters[name];
    });
    const filterExpression = filterNames.map((_, index) => `#f${index} = :f${index}`).join(' AND ');

    let startKey: Record<string, unknown> | undefined =
      query.cursor === undefined ? undefined : decodeCursor(this.cursors, query.cursor, query, shape, bounds);
    const found: Record<string, unknown>[] = [];
    let evaluated = 0;
    let lastEvaluatedKey: Record<string, unknown> | undefined;
    for (let round = 0; round < MAX_QUERIES_PER_PAGE; round += 1) {
      // One extra item tells whether another page exists, so the last page carries no cursor. When a filter dropped
      // items, the next call reads as many as the observed selectivity suggests are needed.
      const wanted = query.limit + 1 - found.length;
      const readLimit =
        round === 0 ? wanted : Math.min(MAX_ITEMS_PER_QUERY, Math.max(wanted, Math.ceil((wanted * evaluated) / Math.max(found.length, 1))));
      const response = await this.client.send(
        new QueryCommand({
          TableName: this.tables.deployments,
          ...(shape.indexName === undefined ? { ConsistentRead: true } : { IndexName: shape.indexName }),
          KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :lower AND :upper',
          ...(filterExpression === '' ? {} : { FilterExpression: filterExpression }),
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ScanIndexForward: false,
          Limit: readLimit,
          ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }),
        }),
      );
      found.push(...(response.Items ?? []));
      evaluated += response.ScannedCount ?? 0;
      lastEvaluatedKey = response.LastEvaluatedKey;
      if (found.length > query.limit || lastEvaluatedKey === undefined) break;
      startKey = lastEvaluatedKey;
    }

    const pageItems = found.slice(0, query.limit);
    let nextKey: Record<string, unknown> | undefined;
    if (found.length > query.limit) {
      const last = pageItems.at(-1) as Record<string, unknown>;
      nextKey = Object.fromEntries(shape.keyAttributes.map((name) => [name, last[name]]));
    } else if (lastEvaluatedKey !== undefined) {
      // The call budget ran out before the page filled: continue after the last item evaluated.
      nextKey = lastEvaluatedKey;
    }
    return { items: pageItems.map(toEntry), nextCursor: nextKey === undefined ? null : encodeCursor(this.cursors, query, nextKey) };
  }
}

/**
 * Gives history entries written before `gsi1` became the scenario history and `gsi2` existed their current index
 * keys (they lack `gsi2pk`). Run once, right after `gsi2` is added to an existing table (functions/local/tables.ts);
 * a Scan, so it belongs to a migration, never to a request. Idempotent.
 * @returns how many entries were updated.
 */
export async function backfillHistoryKeys(client: DynamoDBDocumentClient, tableName: string): Promise<number> {
  let updated = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const response = await client.send(
      new ScanCommand({
        TableName: tableName,
        FilterExpression: 'begins_with(#pk, :history) AND attribute_not_exists(gsi2pk)',
        ExpressionAttributeValues: { ':history': 'HISTORY#' },
        ProjectionExpression: '#pk, #sk, #company, #deviceId, #scenarioId, #id',
        ExpressionAttributeNames: {
          '#pk': 'pk',
          '#sk': 'sk',
          '#company': 'company',
          '#deviceId': 'deviceId',
          '#scenarioId': 'scenarioId',
          '#id': 'id',
        },
        ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }),
      }),
    );
    for (const item of response.Items ?? []) {
      if (
        typeof item.company !== 'string' ||
        typeof item.deviceId !== 'string' ||
        typeof item.scenarioId !== 'string' ||
        typeof item.id !== 'string'
      )
        continue;
      const keys = historyKeys({ company: item.company, deviceId: item.deviceId, scenarioId: item.scenarioId, id: item.id });
      await client.send(
        new UpdateCommand({
          TableName: tableName,
          Key: { pk: item.pk, sk: item.sk },
          UpdateExpression: 'SET gsi1pk = :gsi1pk, gsi1sk = :gsi1sk, gsi2pk = :gsi2pk, gsi2sk = :gsi2sk',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':gsi1pk': keys.gsi1pk, ':gsi1sk': keys.gsi1sk, ':gsi2pk': keys.gsi2pk, ':gsi2sk': keys.gsi2sk },
        }),
      );
      updated += 1;
    }
    startKey = response.LastEvaluatedKey;
  } while (startKey !== undefined);
  return updated;
}
