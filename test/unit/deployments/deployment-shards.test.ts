/**
 * The sharded deployments table on a real DynamoDB Local: a table holding data of the unsharded key design (slots
 * under `ACTIVE#{company}`, some undeployed; history entries indexed under `HISTORY#{company}#{scenarioId}` and
 * `HISTORY#{company}`) is listed page by page with raw Queries, as the adapters did before sharding; then migrated
 * (migrateDeploymentShards) and listed through the adapters. Every listing gives the same items, in the same order,
 * on the same pages, with page sizes 1, 7 and 100; and the deployments stream derives no change from the migration.
 */

import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AttributeValue, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type _Record as StreamRecord,
} from '@aws-sdk/client-dynamodb-streams';
import { BatchWriteCommand, DynamoDBDocumentClient, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { monotonicFactory, ulid } from 'ulid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CursorCodec } from '../../../functions/adapters/aws/cursor-codec.js';
import { DynamoDbDeploymentHistory } from '../../../functions/adapters/aws/dynamodb-deployment-history.js';
import { DynamoDbDeploymentRepository, deploymentSlotFromItem } from '../../../functions/adapters/aws/dynamodb-deployment-repository.js';
import { DEPLOYMENT_SHARDS } from '../../../functions/adapters/aws/tables.js';
import { deploymentChangeOf } from '../../../functions/core/deployments/changes.js';
import type { DeploymentHistoryQuery } from '../../../functions/core/deployments/history.js';
import { type DynamoDbLocal, startDynamoDbLocal } from '../../../functions/local/dynamodb-local.js';
import { freePort } from '../../../functions/local/free-port.js';
import { migrateDeploymentShards } from '../../../functions/local/migrate-shards.js';
import { LOCAL_TABLES } from '../../../functions/local/runtime.js';
import { ensureTables } from '../../../functions/local/tables.js';

const TABLE = LOCAL_TABLES.deployments;
const PAGE_SIZES = [1, 7, 100];
const DEVICES = Array.from({ length: 40 }, (_, index) => `acme-kiosk-${String(index + 1).padStart(4, '0')}`);
const SCENARIOS = ['acme-welcome', 'acme-menu', 'acme-map'];
const VERSIONS = ['1.0.0', '1.1.0'];

let directory: string;
let dynamo: DynamoDbLocal;
let client: DynamoDBClient;
let documents: DynamoDBDocumentClient;
let streams: DynamoDBStreamsClient;
let streamArn: string;
const tables = { ...LOCAL_TABLES, deployments: TABLE };
const cursors = new CursorCodec(() => randomBytes(32));

/** A seeded pseudo-random generator (mulberry32): the same data on every run. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Items of the unsharded key design: slots (a quarter of them undeployed, awaiting their purge) and history. */
function legacyItems(company: string, devices: readonly string[], seed: number): Record<string, unknown>[] {
  const next = random(seed);
  // History ids in time order (monotonic within one millisecond); slots are deployed at random instants.
  const nextId = monotonicFactory();
  const items: Record<string, unknown>[] = [];
  const start = Date.parse('2026-11-20T08:00:00Z');
  for (const deviceId of devices) {
    for (const scenarioId of SCENARIOS) {
      for (const version of VERSIONS) {
        if (next() < 0.45) continue;
        const at = new Date(start + Math.floor(next() * 86_400_000)).toISOString();
        const id = ulid(Date.parse(at));
        const undeployed = next() < 0.25;
        items.push({
          pk: `ACTIVE#${company}`,
          sk: `${deviceId}#${scenarioId}#${version}`,
          entity: 'ACTIVE_DEPLOYMENT',
          id,
          company,
          deviceId,
          scenarioId,
          version,
          deployedAt: at,
          deployedBy: 'alice',
          ...(next() < 0.3 ? { note: 'spring' } : {}),
          ...(next() < 0.3 ? { deviceStatus: { id: ulid(Date.parse(at)), state: 'INSTALLED', updated: at } } : {}),
          ...(undeployed ? { undeploy: { id: ulid(Date.parse(at)), at, by: 'bob' } } : {}),
        });
      }
    }
  }
  for (let index = 0; index < 240; index += 1) {
    const deviceId = devices[Math.floor(next() * devices.length)] as string;
    const scenarioId = SCENARIOS[Math.floor(next() * SCENARIOS.length)] as string;
    const version = VERSIONS[Math.floor(next() * VERSIONS.length)] as string;
    const at = new Date(start + index * 60_000).toISOString();
    const id = nextId(Date.parse(at));
    items.push({
      pk: `HISTORY#${company}#${deviceId}`,
      sk: id,
      gsi1pk: `HISTORY#${company}#${scenarioId}`,
      gsi1sk: id,
      gsi2pk: `HISTORY#${company}`,
      gsi2sk: id,
      entity: 'DEPLOYMENT_HISTORY',
      kind: 'ACTION',
      id,
      company,
      deviceId,
      deviceSubId: null,
      targetType: 'DEVICE',
      whatType: 'SCENARIO',
      scenarioId,
      version,
      action: next() < 0.7 ? 'DEPLOY' : 'UNDEPLOY',
      state: next() < 0.9 ? 'SUCCESS' : 'FAILURE',
      cause: null,
      at,
      by: 'alice',
    });
  }
  return items;
}

/**
 * Pages of a listing read with raw Queries as the adapters did before sharding: Limit one more than the page, follow
 * LastEvaluatedKey while a FilterExpression dropped items (at most 10 calls, reading as much as the selectivity seen
 * suggests), the page's cursor the key of its last item. Each page as the list of its items.
 */
async function legacyPages(
  input: QueryCommandInput,
  keyAttributes: readonly string[],
  pageSize: number,
): Promise<Record<string, unknown>[][]> {
  const pages: Record<string, unknown>[][] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const found: Record<string, unknown>[] = [];
    let evaluated = 0;
    let lastEvaluatedKey: Record<string, unknown> | undefined;
    for (let round = 0; round < 10; round += 1) {
      const wanted = pageSize + 1 - found.length;
      const limit = round === 0 ? wanted : Math.min(1000, Math.max(wanted, Math.ceil((wanted * evaluated) / Math.max(found.length, 1))));
      const response = await documents.send(
        new QueryCommand({ ...input, Limit: limit, ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }) }),
      );
      found.push(...(response.Items ?? []));
      evaluated += response.ScannedCount ?? 0;
      lastEvaluatedKey = response.LastEvaluatedKey;
      if (found.length > pageSize || lastEvaluatedKey === undefined) break;
      startKey = lastEvaluatedKey;
    }
    const page = found.slice(0, pageSize);
    pages.push(page);
    const last = page.at(-1);
    if (found.length > pageSize && last !== undefined) startKey = Object.fromEntries(keyAttributes.map((name) => [name, last[name]]));
    else if (lastEvaluatedKey !== undefined) throw new Error('the legacy call budget ran out: the data should not make it');
    else startKey = undefined;
  } while (startKey !== undefined);
  return pages;
}

/** Every page of a listing through a new adapter, following nextCursor. */
async function adapterPages<T>(list: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor: string | null }>): Promise<T[][]> {
  const pages: T[][] = [];
  let cursor: string | undefined;
  do {
    const page = await list(cursor);
    pages.push(page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return pages;
}

/** Stream records of the deployments table from its start. */
async function streamRecords(): Promise<StreamRecord[]> {
  const shards = (await streams.send(new DescribeStreamCommand({ StreamArn: streamArn }))).StreamDescription?.Shards ?? [];
  const records: StreamRecord[] = [];
  for (const shard of shards) {
    let iterator = (
      await streams.send(new GetShardIteratorCommand({ StreamArn: streamArn, ShardId: shard.ShardId, ShardIteratorType: 'TRIM_HORIZON' }))
    ).ShardIterator;
    while (iterator !== undefined) {
      const response = await streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 1000 }));
      records.push(...(response.Records ?? []));
      // An open shard always hands back a next iterator: stop once a read finds nothing new.
      if ((response.Records ?? []).length === 0) break;
      iterator = response.NextShardIterator;
    }
  }
  return records;
}

const withoutUndeploy = (item: Record<string, unknown>) => {
  const { undeploy: _undeploy, ...slot } = deploymentSlotFromItem(item) as NonNullable<ReturnType<typeof deploymentSlotFromItem>>;
  return slot;
};

interface Legacy {
  active: Map<string, Record<string, unknown>[][]>;
  history: Map<string, string[][]>;
}
const legacy: Legacy = { active: new Map(), history: new Map() };
/** The history listings compared, by name: the query filters, and the legacy Query. */
const HISTORY_LISTINGS: {
  name: string;
  query: Omit<DeploymentHistoryQuery, 'limit' | 'companyId'>;
  input: QueryCommandInput;
  keys: string[];
}[] = [
  {
    name: 'the company',
    query: {},
    input: {
      TableName: TABLE,
      IndexName: 'gsi2',
      KeyConditionExpression: 'gsi2pk = :pk',
      ExpressionAttributeValues: { ':pk': 'HISTORY#acme' },
      ScanIndexForward: false,
    },
    keys: ['pk', 'sk', 'gsi2pk', 'gsi2sk'],
  },
  {
    name: 'a scenario',
    query: { scenarioId: 'acme-menu' },
    input: {
      TableName: TABLE,
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk',
      ExpressionAttributeValues: { ':pk': 'HISTORY#acme#acme-menu' },
      ScanIndexForward: false,
    },
    keys: ['pk', 'sk', 'gsi1pk', 'gsi1sk'],
  },
  {
    name: 'a scenario version',
    query: { scenarioId: 'acme-map', version: '1.1.0' },
    input: {
      TableName: TABLE,
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk',
      FilterExpression: 'version = :version',
      ExpressionAttributeValues: { ':pk': 'HISTORY#acme#acme-map', ':version': '1.1.0' },
      ScanIndexForward: false,
    },
    keys: ['pk', 'sk', 'gsi1pk', 'gsi1sk'],
  },
  {
    name: 'a device',
    query: { deviceId: 'acme-kiosk-0007' },
    input: {
      TableName: TABLE,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': 'HISTORY#acme#acme-kiosk-0007' },
      ScanIndexForward: false,
      ConsistentRead: true,
    },
    keys: ['pk', 'sk'],
  },
];
let recordsBeforeMigration: number;
let seeded: Record<string, unknown>[];

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'dss-shards-'));
  dynamo = await startDynamoDbLocal({ dataDirectory: directory, port: await freePort() });
  const config = { endpoint: dynamo.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } };
  client = new DynamoDBClient(config);
  documents = DynamoDBDocumentClient.from(client);
  streams = new DynamoDBStreamsClient(config);
  streamArn = (await ensureTables(client, LOCAL_TABLES))['deployment-changes'][0] as string;
  // Another company's data in the same table: never listed for acme, before or after.
  seeded = [...legacyItems('acme', DEVICES, 1), ...legacyItems('globex', ['globex-kiosk-0001', 'globex-kiosk-0002'], 2)];
  for (let start = 0; start < seeded.length; start += 25) {
    await documents.send(
      new BatchWriteCommand({ RequestItems: { [TABLE]: seeded.slice(start, start + 25).map((Item) => ({ PutRequest: { Item } })) } }),
    );
  }
  for (const size of PAGE_SIZES) {
    legacy.active.set(
      `company ${size}`,
      await legacyPages(
        {
          TableName: TABLE,
          KeyConditionExpression: 'pk = :pk',
          FilterExpression: 'attribute_not_exists(undeploy)',
          ExpressionAttributeValues: { ':pk': 'ACTIVE#acme' },
          ConsistentRead: true,
        },
        ['pk', 'sk'],
        size,
      ),
    );
    legacy.active.set(
      `device ${size}`,
      await legacyPages(
        {
          TableName: TABLE,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
          FilterExpression: 'attribute_not_exists(undeploy)',
          ExpressionAttributeValues: { ':pk': 'ACTIVE#acme', ':prefix': 'acme-kiosk-0003#' },
          ConsistentRead: true,
        },
        ['pk', 'sk'],
        size,
      ),
    );
    for (const listing of HISTORY_LISTINGS) {
      const pages = await legacyPages(listing.input, listing.keys, size);
      legacy.history.set(
        `${listing.name} ${size}`,
        pages.map((page) => page.map((item) => item.id as string)),
      );
    }
  }
  recordsBeforeMigration = (await streamRecords()).length;
}, 180_000);

afterAll(async () => {
  streams?.destroy();
  client?.destroy();
  await dynamo?.stop();
  await rm(directory, { recursive: true, force: true });
});

describe('sharding the deployments table', () => {
  it('the migration moves every slot to its shard and re-keys every history entry, once', async () => {
    const slots = seeded.filter((item) => item.entity === 'ACTIVE_DEPLOYMENT').length;
    const entries = seeded.length - slots;
    expect(await migrateDeploymentShards(client, TABLE)).toEqual({
      scanned: true,
      slotsMoved: slots,
      slotsLeft: 0,
      historyRekeyed: entries,
    });
    expect(await migrateDeploymentShards(client, TABLE)).toEqual({ scanned: false, slotsMoved: 0, slotsLeft: 0, historyRekeyed: 0 });
    const unsharded = await documents.send(
      new QueryCommand({ TableName: TABLE, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': 'ACTIVE#acme' } }),
    );
    expect(unsharded.Items).toEqual([]);
    const oldIndex = await documents.send(
      new QueryCommand({
        TableName: TABLE,
        IndexName: 'gsi2',
        KeyConditionExpression: 'gsi2pk = :pk',
        ExpressionAttributeValues: { ':pk': 'HISTORY#acme' },
      }),
    );
    expect(oldIndex.Items).toEqual([]);
    // Spread over the shards, not gathered in a few.
    const used = new Set<number>();
    for (let shard = 0; shard < DEPLOYMENT_SHARDS; shard += 1) {
      const { Count } = await documents.send(
        new QueryCommand({
          TableName: TABLE,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': `ACTIVE#acme#${shard}` },
          Select: 'COUNT',
        }),
      );
      if ((Count ?? 0) > 0) used.add(shard);
    }
    expect(used.size).toBeGreaterThanOrEqual(12);
  });

  it('the stream derives no history entry or event from the migration', async () => {
    const records = (await streamRecords()).slice(recordsBeforeMigration);
    const slotOf = (image: Record<string, AttributeValue> | undefined) =>
      deploymentSlotFromItem(image === undefined ? undefined : unmarshall(image));
    const slotRecords = records.filter((record) => record.dynamodb?.Keys?.pk?.S?.startsWith('ACTIVE#'));
    // A put under the new key and a delete of the old one per slot, each seen by the consumer.
    const slots = seeded.filter((item) => item.entity === 'ACTIVE_DEPLOYMENT').length;
    expect(slotRecords.filter((record) => record.eventName === 'INSERT')).toHaveLength(slots);
    expect(slotRecords.filter((record) => record.eventName === 'REMOVE')).toHaveLength(slots);
    const changes = records.flatMap(
      (record) => deploymentChangeOf(slotOf(record.dynamodb?.OldImage), slotOf(record.dynamodb?.NewImage)) ?? [],
    );
    expect(changes).toEqual([]);
  });

  for (const size of PAGE_SIZES) {
    it(`active deployments: the company's and a device's, ${size} a page, the same items on the same pages`, async () => {
      const repository = new DynamoDbDeploymentRepository(documents, tables, cursors);
      const company = await adapterPages((cursor) => repository.listActive('acme', undefined, size, cursor));
      const expected = (legacy.active.get(`company ${size}`) ?? []).map((page) => page.map(withoutUndeploy));
      expect(expected.flat().length).toBeGreaterThan(50);
      expect(company).toEqual(expected);
      const device = await adapterPages((cursor) => repository.listActive('acme', 'acme-kiosk-0003', size, cursor));
      expect(device).toEqual((legacy.active.get(`device ${size}`) ?? []).map((page) => page.map(withoutUndeploy)));
    });

    it(`history of the company, a scenario, a scenario version and a device, ${size} a page, the same entries on the same pages`, async () => {
      const history = new DynamoDbDeploymentHistory(documents, tables, cursors);
      for (const listing of HISTORY_LISTINGS) {
        const pages = await adapterPages((cursor) =>
          history.list({ companyId: 'acme', limit: size, ...listing.query, ...(cursor === undefined ? {} : { cursor }) }),
        );
        const expected = legacy.history.get(`${listing.name} ${size}`) ?? [];
        expect(expected.flat().length, listing.name).toBeGreaterThan(2);
        expect(
          pages.map((page) => page.map((entry) => entry.id)),
          listing.name,
        ).toEqual(expected);
      }
    });
  }

  it('history within from/to bounds pages the same way: every page inside the range, newest first', async () => {
    const history = new DynamoDbDeploymentHistory(documents, tables, cursors);
    const from = Date.parse('2026-11-20T09:00:00Z');
    const to = Date.parse('2026-11-20T10:30:00Z');
    const pages = await adapterPages((cursor) =>
      history.list({ companyId: 'acme', limit: 7, from, to, ...(cursor === undefined ? {} : { cursor }) }),
    );
    const all = (legacy.history.get('the company 100') ?? []).flat();
    const inRange = seeded
      .filter(
        (item) =>
          item.company === 'acme' &&
          item.entity === 'DEPLOYMENT_HISTORY' &&
          Date.parse(item.at as string) >= from &&
          Date.parse(item.at as string) < to,
      )
      .map((item) => item.id as string);
    const expected = all.filter((id) => inRange.includes(id));
    expect(expected).toHaveLength(90);
    expect(pages.flat().map((entry) => entry.id)).toEqual(expected);
    expect(pages.map((page) => page.length)).toEqual([...Array(12).fill(7), 6]);
  });
});
