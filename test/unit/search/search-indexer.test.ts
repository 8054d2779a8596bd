/**
 * The DynamoDB Streams consumer (functions/handlers/search-indexer.ts) on SEARCH_ENGINE=opensearch, through the
 * real composition and the official client, against the OpenSearch fake served over HTTP: records applied in order
 * as bulk requests, and every record not applied reported in `batchItemFailures` so Lambda retries it.
 */
import { marshall } from '@aws-sdk/util-dynamodb';
import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../functions/local/free-port.js';
import { FakeOpenSearch } from './fake-opensearch.js';

type Item = Record<string, unknown>;
type Handler = (event: DynamoDBStreamEvent, context: Context) => Promise<DynamoDBBatchResponse>;

const fake = new FakeOpenSearch();
let port: number;
let handler: Handler;

beforeAll(async () => {
  port = await freePort();
  Object.assign(process.env, {
    SEARCH_ENGINE: 'opensearch',
    OPENSEARCH_URL: `http://127.0.0.1:${port}`,
    OPENSEARCH_INDEX: 'resources',
    OPENSEARCH_AUTH: 'none',
    POWERTOOLS_LOG_LEVEL: 'SILENT',
  });
  ({ handler } = (await import('../../../functions/handlers/search-indexer.js')) as unknown as { handler: Handler });
});

afterAll(async () => {
  await fake.close();
});

afterEach(() => {
  fake.indexes.clear();
  fake.requests.length = 0;
  fake.rejectItem = () => undefined;
});

const device = (id: string, state = 'CONNECTED'): Item => ({
  entity: 'DEVICE',
  company: 'acme',
  deviceId: id,
  id,
  serial: `SN-${id}`,
  created: '2024-01-01T00:00:00.000Z',
  updated: '2024-06-01T00:00:00.000Z',
  connection: { state },
});

let sequence = 100;
function record(eventName: 'INSERT' | 'MODIFY' | 'REMOVE', item: Item): DynamoDBRecord {
  sequence += 1;
  const image = marshall(item, { removeUndefinedValues: true }) as NonNullable<DynamoDBRecord['dynamodb']>['NewImage'];
  return {
    eventID: `event-${sequence}`,
    eventName,
    eventSource: 'aws:dynamodb',
    dynamodb: { SequenceNumber: String(sequence), ...(eventName === 'REMOVE' ? { OldImage: image } : { NewImage: image }) },
  };
}

/** A batch: k1 inserted, k2 modified, k3 removed, a scenario version (not searchable), k4 inserted. */
function batch(): DynamoDBRecord[] {
  return [
    record('INSERT', device('k1')),
    record('MODIFY', device('k2', 'DISCONNECTED')),
    record('REMOVE', device('k3')),
    record('INSERT', { entity: 'SCENARIO_VERSION', company: 'acme', sk: 'VERSION#s#1.0.0', scenarioId: 's', version: '1.0.0' }),
    record('INSERT', device('k4')),
  ];
}

const sequenceNumbers = (records: DynamoDBRecord[]) => records.map((entry) => ({ itemIdentifier: entry.dynamodb?.SequenceNumber }));

describe('search indexer on OpenSearch', () => {
  it('reports every record when OpenSearch is unreachable, so the whole batch is retried', async () => {
    const records = batch();
    const response = await handler({ Records: records }, {} as Context);
    expect(response.batchItemFailures).toEqual(sequenceNumbers(records));
  });

  it('once OpenSearch is back, applies the batch in order, one bulk request per run of upserts or removals', async () => {
    await fake.listen(port);
    fake.seedIndex('resources-1', 'resources', { 'DEVICE#acme#k3': { id: 'k3' } });
    const response = await handler({ Records: batch() }, {} as Context);
    expect(response.batchItemFailures).toEqual([]);
    const served = fake.documentsOf('resources');
    expect([...served.keys()].sort()).toEqual(['DEVICE#acme#k1', 'DEVICE#acme#k2', 'DEVICE#acme#k4']);
    expect(served.get('DEVICE#acme#k2')).toMatchObject({ connection: { state: 'DISCONNECTED' } });
    expect(fake.requests.map((request) => `${request.method} ${request.path}`)).toEqual([
      'POST /resources/_bulk?require_alias=true',
      'POST /resources/_bulk?require_alias=true',
      'POST /resources/_bulk?require_alias=true',
    ]);
  });

  it('reports the first refused record and every later one; earlier ones stay written', async () => {
    fake.seedIndex('resources-1', 'resources');
    fake.rejectItem = (id) => (id === 'DEVICE#acme#k2' ? { status: 429, type: 'es_rejected_execution_exception' } : undefined);
    const records = batch();
    const response = await handler({ Records: records }, {} as Context);
    expect(response.batchItemFailures).toEqual(sequenceNumbers(records.slice(1)));
    expect(fake.documentsOf('resources').has('DEVICE#acme#k1')).toBe(true);
  });

  it("indexes a device's resource members only, and removes a device once it is marked deleting", async () => {
    fake.seedIndex('resources-1', 'resources');
    const credential = {
      id: '01JCREDENTIAL0000000000000',
      secretHash: 'scrypt$4096$8$1$c2FsdA==$aGFzaA==',
      created: '2024-01-01T00:00:00.000Z',
    };
    await handler({ Records: [record('INSERT', { ...device('k5'), credential })] }, {} as Context);
    const indexed = fake.documentsOf('resources').get('DEVICE#acme#k5');
    expect(indexed).toMatchObject({ type: 'DEVICE', id: 'k5', serial: 'SN-k5' });
    expect(JSON.stringify(indexed)).not.toContain('secretHash');
    expect(indexed).not.toHaveProperty('entity');
    const response = await handler({ Records: [record('MODIFY', { ...device('k5'), credential, deleting: true })] }, {} as Context);
    expect(response.batchItemFailures).toEqual([]);
    expect(fake.documentsOf('resources').has('DEVICE#acme#k5')).toBe(false);
  });

  it('writes nothing for a change that leaves the document as it was (the desired state tag, a credential), and indexes one that does not', async () => {
    fake.seedIndex('resources-1', 'resources');
    const modified = (before: Item, after: Item): DynamoDBRecord => {
      const entry = record('MODIFY', after);
      return {
        ...entry,
        dynamodb: { ...entry.dynamodb, OldImage: marshall(before) as NonNullable<DynamoDBRecord['dynamodb']>['OldImage'] },
      };
    };
    const tagged = { ...device('k6'), desiredState: { tag: 'AAAAAAAAAAAAAAAAAAAAAA', generation: 1 } };
    const retagged = { ...device('k6'), desiredState: { tag: 'BBBBBBBBBBBBBBBBBBBBBB', generation: 2 } };
    const response = await handler({ Records: [modified(device('k6'), tagged), modified(tagged, retagged)] }, {} as Context);
    expect(response.batchItemFailures).toEqual([]);
    expect(fake.requests).toEqual([]);
    await handler({ Records: [modified(retagged, { ...retagged, connection: { state: 'DISCONNECTED' } })] }, {} as Context);
    expect(fake.documentsOf('resources').get('DEVICE#acme#k6')).toMatchObject({ connection: { state: 'DISCONNECTED' } });
    expect(JSON.stringify(fake.documentsOf('resources').get('DEVICE#acme#k6'))).not.toContain('desiredState');
  });

  it('reports the batch, and creates no index, when the alias does not exist yet', async () => {
    const records = batch();
    const response = await handler({ Records: records }, {} as Context);
    expect(response.batchItemFailures).toEqual(sequenceNumbers(records));
    expect(fake.indexes.size).toBe(0);
  });
});
