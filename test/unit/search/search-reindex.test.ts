/**
 * Reindexing OpenSearch from DynamoDB without downtime (functions/core/search/reindex.ts with the adapters' DynamoDB source and OpenSearch alias rebuild), against the in-memory
 * OpenSearch fake and a DynamoDB document client whose Scan is served from in-memory tables (aws-sdk-client-mock).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, ScanCommand, type ScanCommandInput } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  DynamoDbSearchDocumentSource,
  rebuildSearchIndex,
  SCAN_SEGMENTS,
  type SearchSource,
} from '../../../functions/adapters/aws/dynamodb-search-source.js';
import { indexTemplate } from '../../../functions/adapters/aws/opensearch-queries.js';
import {
  OpenSearchAliasRebuild,
  type OpenSearchRebuildSettings,
  upsertWithRetries,
} from '../../../functions/adapters/aws/opensearch-reindex.js';
import { BulkIndexError, OpenSearchSearchIndex } from '../../../functions/adapters/aws/opensearch-search-index.js';
import type { OpenSearchRequest, OpenSearchTransport } from '../../../functions/adapters/aws/opensearch-transport.js';
import { searchDocumentFromItem } from '../../../functions/adapters/aws/search-documents.js';
import type { SearchDocument } from '../../../functions/core/search/documents.js';
import { type ReindexResult, rebuildSearch } from '../../../functions/core/search/reindex.js';
import { ServiceUnavailableError } from '../../../functions/core/shared/errors.js';
import { FakeOpenSearch } from './fake-opensearch.js';

type Item = Record<string, unknown>;

const documentClient = DynamoDBDocumentClient.from(
  new DynamoDBClient({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } }),
);
const dynamo = mockClient(documentClient);
const source: SearchSource = { dynamoDb: documentClient, tables: { devices: 'devices', scenarios: 'scenarios' } };
const noSleep = async (): Promise<void> => undefined;

/** The OpenSearch rebuild loaded from the tables of `source`, as the composition root wires it. */
function reindexOpenSearch({ source, ...settings }: OpenSearchRebuildSettings & { source: SearchSource }): Promise<ReindexResult> {
  return rebuildSearch({ source: new DynamoDbSearchDocumentSource(source), index: new OpenSearchAliasRebuild(settings) });
}

/** The tables, as DynamoDB items; Scan pages hold PAGE_SIZE items. */
let tables: Record<string, Item[]>;
const PAGE_SIZE = 2;

function device(id: string, state = 'CONNECTED', updated = '2024-06-01T00:00:00.000Z'): Item {
  return {
    entity: 'DEVICE',
    company: 'acme',
    deviceId: id,
    id,
    serial: `SN-${id}`,
    created: '2024-01-01T00:00:00.000Z',
    updated,
    connection: { state },
  };
}

beforeEach(() => {
  tables = {
    devices: [device('k1'), device('k2'), device('k3'), device('k4'), device('k5')],
    scenarios: [
      {
        entity: 'SCENARIO',
        company: 'acme',
        sk: 'SCENARIO#welcome',
        scenarioId: 'welcome',
        name: 'Welcome',
        versions: ['1.0.0'],
        latestVersion: '1.0.0',
        created: '2024-01-01T00:00:00.000Z',
        updated: '2024-01-01T00:00:00.000Z',
      },
      { entity: 'SCENARIO_VERSION', company: 'acme', sk: 'VERSION#welcome#1.0.0', scenarioId: 'welcome', version: '1.0.0' },
    ],
  };
  // Scan: pages of PAGE_SIZE items in table order; `updated >= :since` applied as DynamoDB does (after the read); a
  // parallel Scan's segment holds every TotalSegments-th item.
  dynamo.on(ScanCommand).callsFake((input: ScanCommandInput) => {
    const all = (tables[input.TableName as string] ?? []).filter(
      (_, position) => input.TotalSegments === undefined || position % input.TotalSegments === input.Segment,
    );
    const start = input.ExclusiveStartKey === undefined ? 0 : Number(input.ExclusiveStartKey.position);
    const page = all.slice(start, start + PAGE_SIZE);
    const since = input.ExpressionAttributeValues?.[':since'] as string | undefined;
    return {
      Items: structuredClone(since === undefined ? page : page.filter((item) => typeof item.updated === 'string' && item.updated >= since)),
      ...(start + PAGE_SIZE < all.length ? { LastEvaluatedKey: { position: start + PAGE_SIZE } } : {}),
    };
  });
});

afterEach(() => dynamo.reset());

function key(item: Item): string {
  const document = searchDocumentFromItem(item) as SearchDocument;
  return `${document.type}#${document.company}#${document.id}`;
}

/** Bulk lines that index a document, over the requests made to `target`. */
function indexedThrough(fake: FakeOpenSearch, target: string): number {
  return fake.requests
    .filter((request) => request.path.startsWith(`/${target}/_bulk`))
    .reduce(
      (sum, request) =>
        sum +
        String(request.body)
          .split('\n')
          .filter((line) => line.startsWith('{"index"')).length,
      0,
    );
}

describe('reindexOpenSearch', () => {
  it('builds a new index from the template, switches the alias atomically and deletes the old index', async () => {
    const fake = new FakeOpenSearch();
    fake.seedIndex('resources-old', 'resources', { 'DEVICE#acme#ghost': { id: 'ghost' }, 'DEVICE#acme#k1': { id: 'k1' } });
    const now = new Date('2026-11-22T16:16:46.712Z');

    const result = await reindexOpenSearch({ source, transport: fake.transport(), alias: 'resources', now: () => now, sleep: noSleep });

    expect(result).toEqual({ index: 'resources-20261122t161646712z', documents: 6, tookMs: 0 });
    expect(fake.aliasTable()).toEqual({ resources: ['resources-20261122t161646712z'] });
    expect([...fake.indexes.keys()]).toEqual(['resources-20261122t161646712z']);
    const served = fake.documentsOf('resources');
    expect([...served.keys()].sort()).toEqual([...tables.devices!, tables.scenarios![0]!].map(key).sort());
    expect(served.has('DEVICE#acme#ghost')).toBe(false);
    expect(fake.indexes.get(result.index)?.fromTemplate).toEqual(indexTemplate());
    // One _aliases call moves the alias; at every request the alias pointed to an index (no downtime).
    const switches = fake.requests.filter((request) => request.path === '/_aliases');
    expect(switches.map((request) => request.body)).toEqual([
      {
        actions: [{ remove: { index: 'resources-old', alias: 'resources' } }, { add: { index: result.index, alias: 'resources' } }],
      },
    ]);
    expect(fake.requests.every((request) => (request.aliasesBefore.resources ?? []).length === 1)).toBe(true);
    // The new index is loaded directly (no require_alias), refreshed before it is switched in.
    const order = fake.requests.map((request) => `${request.method} ${request.path.split('?')[0]}`);
    expect(order.indexOf(`POST /${result.index}/_refresh`)).toBeLessThan(order.indexOf('POST /_aliases'));
    expect(order.indexOf('PUT /_index_template/resources-template')).toBeLessThan(order.indexOf(`PUT /${result.index}`));
  });

  it('keeps a change made while the new index was loading (catch-up pass)', async () => {
    const fake = new FakeOpenSearch();
    fake.seedIndex('resources-old', 'resources');
    const base = fake.transport();
    let changed = false;
    // When the first page reaches the new index, device k1 goes DISCONNECTED; the stream consumer writes the change
    // through the alias, i.e. into the old index; the new index already holds k1's previous state.
    const transport: OpenSearchTransport = {
      request: async (request: OpenSearchRequest) => {
        if (!changed && /^\/resources-2\d+t\d+z\/_bulk/.test(request.path)) {
          changed = true;
          const updated = device('k1', 'DISCONNECTED', new Date().toISOString());
          tables.devices![0] = updated;
          await new OpenSearchSearchIndex({ transport: base, alias: 'resources' }).upsert([
            searchDocumentFromItem(updated) as SearchDocument,
          ]);
        }
        return base.request(request);
      },
    };

    await reindexOpenSearch({ source, transport, alias: 'resources', sleep: noSleep });

    expect(changed).toBe(true);
    expect(fake.documentsOf('resources').get('DEVICE#acme#k1')).toMatchObject({ connection: { state: 'DISCONNECTED' } });
    // The catch-up rewrote only what changed, through the alias.
    expect(indexedThrough(fake, 'resources')).toBe(2);
  });

  it('leaves the alias on the old index and deletes the new one when documents keep being refused', async () => {
    const fake = new FakeOpenSearch();
    fake.seedIndex('resources-old', 'resources', { 'DEVICE#acme#k1': { id: 'k1' } });
    fake.rejectItem = (id) => (id === 'DEVICE#acme#k3' ? { status: 429, type: 'es_rejected_execution_exception' } : undefined);

    const error = await reindexOpenSearch({ source, transport: fake.transport(), alias: 'resources', sleep: noSleep }).catch(
      (caught: unknown) => caught,
    );

    expect(error).toBeInstanceOf(BulkIndexError);
    expect((error as BulkIndexError).failedIds).toEqual(['DEVICE#acme#k3']);
    expect(fake.aliasTable()).toEqual({ resources: ['resources-old'] });
    expect([...fake.indexes.keys()]).toEqual(['resources-old']);
    expect(fake.documentsOf('resources').size).toBe(1);
  });

  it('creates the alias when the domain has none yet', async () => {
    const fake = new FakeOpenSearch();
    const result = await reindexOpenSearch({ source, transport: fake.transport(), alias: 'resources', sleep: noSleep });
    expect(fake.aliasTable()).toEqual({ resources: [result.index] });
    expect(fake.documentsOf('resources').size).toBe(6);
  });

  it('fails with 503 and changes nothing when OpenSearch is unreachable', async () => {
    const fake = new FakeOpenSearch();
    fake.seedIndex('resources-old', 'resources');
    fake.down = true;
    await expect(reindexOpenSearch({ source, transport: fake.transport(), alias: 'resources', sleep: noSleep })).rejects.toBeInstanceOf(
      ServiceUnavailableError,
    );
    fake.down = false;
    expect([...fake.indexes.keys()]).toEqual(['resources-old']);
  });
});

describe('rebuildSearchIndex', () => {
  it('reads each table as a parallel Scan of SCAN_SEGMENTS segments and writes every searchable item once', async () => {
    const written: string[] = [];
    const count = await rebuildSearchIndex({
      ...source,
      search: {
        upsert: async (documents) => {
          written.push(...documents.map((document) => `${document.type}#${document.company}#${document.id}`));
        },
      },
    });

    expect(count).toBe(6);
    expect(written.sort()).toEqual([...tables.devices!, tables.scenarios![0]!].map(key).sort());
    const firstPages = dynamo
      .commandCalls(ScanCommand)
      .map((call) => call.args[0].input)
      .filter((input) => input.ExclusiveStartKey === undefined)
      .map((input) => `${input.TableName} ${input.Segment}/${input.TotalSegments}`);
    expect(SCAN_SEGMENTS).toBe(4);
    expect(firstPages.sort()).toEqual([
      'devices 0/4',
      'devices 1/4',
      'devices 2/4',
      'devices 3/4',
      'scenarios 0/4',
      'scenarios 1/4',
      'scenarios 2/4',
      'scenarios 3/4',
    ]);
  });
});

describe('upsertWithRetries', () => {
  it('resends only the refused documents, with back-off, until they are accepted', async () => {
    const fake = new FakeOpenSearch();
    fake.seedIndex('resources-1', 'resources');
    let refusals = 2;
    fake.rejectItem = (id) =>
      id === 'DEVICE#acme#k2' && refusals-- > 0 ? { status: 429, type: 'es_rejected_execution_exception' } : undefined;
    const waits: number[] = [];
    const documents = tables.devices!.map((item) => searchDocumentFromItem(item) as SearchDocument);

    await upsertWithRetries(new OpenSearchSearchIndex({ transport: fake.transport(), alias: 'resources' }), documents, async (ms) => {
      waits.push(ms);
    });

    expect(fake.documentsOf('resources').size).toBe(5);
    // Jittered back-off: each wait between half and all of 0.5 s, then 1 s.
    expect(waits).toHaveLength(2);
    expect(waits[0]).toBeGreaterThanOrEqual(250);
    expect(waits[0]).toBeLessThanOrEqual(500);
    expect(waits[1]).toBeGreaterThanOrEqual(500);
    expect(waits[1]).toBeLessThanOrEqual(1000);
    expect(indexedThrough(fake, 'resources')).toBe(5 + 1 + 1);
  });
});
