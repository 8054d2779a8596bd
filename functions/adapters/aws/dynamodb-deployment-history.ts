import { type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { type DeploymentHistory, type DeploymentHistoryQuery, ulidBounds } from '../../core/deployments/history.js';
import type { DeploymentHistoryEntry, DeviceStatusHistoryEntry, HistoryEntry } from '../../core/deployments/model.js';
import { ULID_ALPHABET, ULID_PATTERN } from '../../core/shared/identifiers.js';
import type { Page } from '../../core/shared/paging.js';
import { type CursorCodec, cursorListing, invalidCursor } from './cursor-codec.js';
import type { TableNames } from './dynamodb-shared.js';
import { mergeShards, queryBudget, type ShardRead } from './sharded-query.js';
import { DEPLOYMENT_SHARDS, deploymentShardOf } from './tables.js';

/**
 * Key attributes of a history entry on the deployments table (key design in tables.ts). The writer is
 * `DynamoDbDeploymentRepository.historyItem`; this is the reader's (and the shard migration's) copy of the same rule.
 */
export function historyKeys(
  entry: Pick<DeploymentHistoryEntry, 'company' | 'deviceId' | 'scenarioId' | 'id'>,
): Record<'pk' | 'sk' | 'gsi1pk' | 'gsi1sk' | 'gsi2pk' | 'gsi2sk', string> {
  const shard = deploymentShardOf(entry.deviceId);
  return {
    pk: `HISTORY#${entry.company}#${entry.deviceId}`,
    sk: entry.id,
    gsi1pk: `HISTORY#${entry.company}#${entry.scenarioId}#${shard}`,
    gsi1sk: entry.id,
    gsi2pk: `HISTORY#${entry.company}#${shard}`,
    gsi2sk: entry.id,
  };
}

/**
 * Where one listing reads: the table (device history, one partition) or an index (DEPLOYMENT_SHARDS partitions,
 * merged), with its key attributes.
 */
interface QueryShape {
  indexName: 'gsi1' | 'gsi2' | undefined;
  partitionAttribute: 'pk' | 'gsi1pk' | 'gsi2pk';
  sortAttribute: 'sk' | 'gsi1sk' | 'gsi2sk';
  /** The partitions read, by shard number (mergeShards passes the number back). */
  partitions: readonly string[];
  /** Attribute → value equalities applied as a FilterExpression (after the key condition, before the page is cut). */
  filters: Record<string, string>;
}

const shardNumbers = Array.from({ length: DEPLOYMENT_SHARDS }, (_, shard) => shard);

function shapeOf(query: DeploymentHistoryQuery): QueryShape {
  const filters: Record<string, string> = {};
  if (query.deviceId !== undefined) {
    if (query.scenarioId !== undefined) filters.scenarioId = query.scenarioId;
    if (query.version !== undefined) filters.version = query.version;
    return {
      indexName: undefined,
      partitionAttribute: 'pk',
      sortAttribute: 'sk',
      partitions: [`HISTORY#${query.companyId}#${query.deviceId}`],
      filters,
    };
  }
  if (query.scenarioId !== undefined) {
    if (query.version !== undefined) filters.version = query.version;
    return {
      indexName: 'gsi1',
      partitionAttribute: 'gsi1pk',
      sortAttribute: 'gsi1sk',
      partitions: shardNumbers.map((shard) => `HISTORY#${query.companyId}#${query.scenarioId}#${shard}`),
      filters,
    };
  }
  return {
    indexName: 'gsi2',
    partitionAttribute: 'gsi2pk',
    sortAttribute: 'gsi2sk',
    partitions: shardNumbers.map((shard) => `HISTORY#${query.companyId}#${shard}`),
    filters,
  };
}

/**
 * The greatest ULID before `id` (the base-32 number minus one), or undefined for the smallest. Every history sort key
 * is a ULID, so `sk <= ulidBefore(id)` is `sk < id`, and a key condition can say it together with a lower bound.
 */
export function ulidBefore(id: string): string | undefined {
  const digits = [...id].map((character) => ULID_ALPHABET.indexOf(character));
  let index = digits.length - 1;
  while (index >= 0 && digits[index] === 0) {
    digits[index] = ULID_ALPHABET.length - 1;
    index -= 1;
  }
  if (index < 0) return undefined;
  digits[index] = (digits[index] as number) - 1;
  return digits.map((digit) => ULID_ALPHABET[digit]).join('');
}

/** The listing a history cursor is bound to: the company and every filter of the query (not the page size). */
function listingOf(query: DeploymentHistoryQuery): string {
  return cursorListing('deployment-history', query.companyId, query.deviceId, query.scenarioId, query.version, query.from, query.to);
}

/** The signed cursor after the history entry `id` (a ULID): every partition of the listing resumes before it. */
function encodeCursor(cursors: CursorCodec, query: DeploymentHistoryQuery, id: string): string {
  return cursors.encode(listingOf(query), { sk: id });
}

/**
 * The ULID a cursor issued by `encodeCursor` for this query resumes before: `{ sk }`, or `{ pk, sk }` as issued before
 * the indexes were sharded (its pk then had to be a history partition of the company, the query's own on a device's
 * history). Besides the signature (which binds the company and every filter), defence in depth: the sk must be a
 * ULID inside the query's time bounds.
 * @throws BadRequestError (400) otherwise.
 */
function decodeCursor(
  cursors: CursorCodec,
  cursor: string,
  query: DeploymentHistoryQuery,
  bounds: { lower: string; upper: string },
): string {
  const key = cursors.decode(listingOf(query), cursor);
  const { pk, sk } = key;
  const names = Object.keys(key).sort().join(',');
  const legacyPartition =
    names === 'pk,sk' &&
    typeof pk === 'string' &&
    pk.startsWith(`HISTORY#${query.companyId}#`) &&
    (query.deviceId === undefined || pk === `HISTORY#${query.companyId}#${query.deviceId}`);
  if ((names !== 'sk' && !legacyPartition) || typeof sk !== 'string' || !ULID_PATTERN.test(sk) || sk < bounds.lower || sk > bounds.upper) {
    throw invalidCursor('unknown or altered cursor, or one issued for other filters');
  }
  return sk;
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

/** Most Query calls one page may take on a device's history (one partition) when a FilterExpression drops items. */
export const MAX_QUERIES_PER_PAGE = queryBudget(1);
/** Most Query calls one page of a scenario's or the company's history (DEPLOYMENT_SHARDS partitions merged) may take. */
export const MAX_QUERIES_PER_MERGED_PAGE = queryBudget(DEPLOYMENT_SHARDS);
/** Most items one Query evaluates. */
const MAX_ITEMS_PER_QUERY = 1_000;

/**
 * DeploymentHistory on the deployments table (key design in tables.ts), newest first, with `from`/`to` as ULID bounds
 * on the sort key: one device's history is Queries of its partition of the table; a scenario's or the company's merges
 * the DEPLOYMENT_SHARDS partitions of `gsi1` or `gsi2` (mergeShards), each read lazily. Filters that no key covers
 * (scenario on a device's history, version) are FilterExpressions; since DynamoDB applies `Limit` before them, the
 * page is filled by reading on, within MAX_QUERIES_PER_PAGE or MAX_QUERIES_PER_MERGED_PAGE calls (then it ends early
 * with a cursor). The cursor is the last ULID, signed by `cursors` (CursorCodec) for the company and filters of the
 * query; every partition resumes with `sk < cursor`.
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
    const after = query.cursor === undefined ? undefined : decodeCursor(this.cursors, query.cursor, query, bounds);
    const shards = shape.partitions.map((_, shard) => shard);
    const page = await mergeShards((shard, before, limit) => this.read(shape, shape.partitions[shard] as string, bounds, before, limit), {
      shards,
      order: 'descending',
      sortKey: (item) => item[shape.sortAttribute] as string,
      after,
      limit: query.limit,
      maxQueries: queryBudget(shards.length),
      maxItemsPerQuery: MAX_ITEMS_PER_QUERY,
    });
    return { items: page.items.map(toEntry), nextCursor: page.next === undefined ? null : encodeCursor(this.cursors, query, page.next) };
  }

  /** One Query of one partition, newest first: entries within `bounds` strictly before the ULID `before`, if given. */
  private async read(
    shape: QueryShape,
    partition: string,
    bounds: { lower: string; upper: string },
    before: string | undefined,
    limit: number,
  ): Promise<ShardRead<Record<string, unknown>>> {
    const justBefore = before === undefined ? undefined : ulidBefore(before);
    if (before !== undefined && (justBefore === undefined || justBefore < bounds.lower)) {
      return { items: [], lastEvaluated: undefined, evaluated: 0 };
    }
    const upper = justBefore !== undefined && justBefore < bounds.upper ? justBefore : bounds.upper;
    const filterNames = Object.keys(shape.filters);
    const names: Record<string, string> = { '#pk': shape.partitionAttribute, '#sk': shape.sortAttribute };
    const values: Record<string, unknown> = { ':pk': partition, ':lower': bounds.lower, ':upper': upper };
    filterNames.forEach((name, index) => {
      names[`#f${index}`] = name;
      values[`:f${index}`] = shape.filters[name];
    });
    const filterExpression = filterNames.map((_, index) => `#f${index} = :f${index}`).join(' AND ');
    const response = await this.client.send(
      new QueryCommand({
        TableName: this.tables.deployments,
        ...(shape.indexName === undefined ? { ConsistentRead: true } : { IndexName: shape.indexName }),
        KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :lower AND :upper',
        ...(filterExpression === '' ? {} : { FilterExpression: filterExpression }),
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ScanIndexForward: false,
        Limit: limit,
      }),
    );
    return {
      items: response.Items ?? [],
      lastEvaluated: response.LastEvaluatedKey?.[shape.sortAttribute] as string | undefined,
      evaluated: response.ScannedCount ?? response.Items?.length ?? 0,
    };
  }
}
