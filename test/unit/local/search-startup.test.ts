/**
 * The local runtime's search start (functions/local/search-startup.ts) when DynamoDB Local answers a request of the
 * start with a transient error, as a loaded DynamoDB Local does: the step is tried again and the start completes with
 * every document indexed; any other error still stops the start at once. The tables are a DynamoDB document client
 * whose Scan is served from in-memory items, the streams a DynamoDB Streams client (both aws-sdk-client-mock).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DescribeStreamCommand, DynamoDBStreamsClient, GetShardIteratorCommand } from '@aws-sdk/client-dynamodb-streams';
import { DynamoDBDocumentClient, ScanCommand, type ScanCommandInput } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DynamoDbSearchDocumentSource } from '../../../functions/adapters/aws/dynamodb-search-source.js';
import { EmbeddedSearchIndex } from '../../../functions/adapters/embedded/search-engine.js';
import { SwappableSearchIndex } from '../../../functions/adapters/embedded/swappable-search-index.js';
import { rebuildSearch } from '../../../functions/core/search/reindex.js';
import { searchSnapshotFile } from '../../../functions/local/search-snapshot.js';
import { startEmbeddedSearch } from '../../../functions/local/search-startup.js';
import { DynamoDbStreamPoller } from '../../../functions/local/stream-poller.js';

const STREAM = 'arn:aws:dynamodb:ddblocal:000000000000:table/devices/stream/2026-11-22T00:00:00.000';
const DEVICES = 25;
const documentClient = DynamoDBDocumentClient.from(
  new DynamoDBClient({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } }),
);
const dynamo = mockClient(documentClient);
const streams = mockClient(DynamoDBStreamsClient);

/** What the SDK throws once a request went unanswered past its requestTimeout on every attempt. */
const timedOut = () =>
  Object.assign(new Error('@smithy/node-http-handler - [ERROR] a request has exceeded the configured 5000 ms requestTimeout.'), {
    name: 'TimeoutError',
    $metadata: { attempts: 3, totalRetryDelay: 400 },
  });

/** The devices table: DEVICES devices of acme (the scenarios table is empty). */
const devices = Array.from({ length: DEVICES }, (_, n) => ({
  entity: 'DEVICE',
  company: 'acme',
  deviceId: `k${n}`,
  id: `k${n}`,
  serial: `SN-${n}`,
  created: '2026-01-01T00:00:00.000Z',
  updated: '2026-01-01T00:00:00.000Z',
  connection: { state: 'CONNECTED' },
}));

/** A Scan page of the tables: 4 items; a parallel Scan's segment holds every TotalSegments-th item. */
function scanPage(input: ScanCommandInput) {
  const all = (input.TableName === 'devices' ? devices : []).filter(
    (_, position) => input.TotalSegments === undefined || position % input.TotalSegments === input.Segment,
  );
  const start = input.ExclusiveStartKey === undefined ? 0 : Number(input.ExclusiveStartKey.position);
  return {
    Items: structuredClone(all.slice(start, start + 4)),
    ...(start + 4 < all.length ? { LastEvaluatedKey: { position: start + 4 } } : {}),
  };
}

let folder: string;
beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), 'dss-search-start-'));
  dynamo.on(ScanCommand).callsFake(scanPage);
  streams.on(DescribeStreamCommand).resolves({
    StreamDescription: { Shards: [{ ShardId: 'shard-1', SequenceNumberRange: { StartingSequenceNumber: '1' } }] },
  });
  streams.on(GetShardIteratorCommand).resolves({ ShardIterator: 'iterator' });
});
afterEach(async () => {
  dynamo.reset();
  streams.reset();
  await rm(folder, { recursive: true, force: true });
});

/** startEmbeddedSearch with no snapshot (a rebuild from the tables), as the runtime wires it; what it logged and indexed. */
async function start(mark: () => Promise<void> = async () => undefined) {
  const index = new SwappableSearchIndex(() => new EmbeddedSearchIndex());
  const source = new DynamoDbSearchDocumentSource({ dynamoDb: documentClient, tables: { devices: 'devices', scenarios: 'scenarios' } });
  const logged: string[] = [];
  const started = await startEmbeddedSearch({
    index,
    poller: new DynamoDbStreamPoller(new DynamoDBStreamsClient({ region: 'us-east-1' }), [STREAM], async () => undefined),
    streamArns: [STREAM],
    snapshotFile: searchSnapshotFile(folder),
    rebuild: () => rebuildSearch({ source, index }),
    mark,
    log: (message) => logged.push(message),
  });
  const found = await index.search({
    companies: ['acme'],
    filters: new Map(),
    sort: { field: 'created', direction: 'ASC' },
    page: 1,
    pageSize: 100,
  });
  return { started, logged, found: found.total };
}

describe('the search start on a loaded DynamoDB Local', () => {
  it('rebuilds every document when the first Scan request of the rebuild timed out', async () => {
    dynamo.reset();
    dynamo.on(ScanCommand).rejectsOnce(timedOut()).callsFake(scanPage);

    const { started, logged, found } = await start();

    expect(started).toMatchObject({ path: 'rebuild', documents: DEVICES });
    expect(found).toBe(DEVICES);
    expect(logged).toEqual([
      expect.stringMatching(/^Search start: the rebuild from the tables failed \(.*5000 ms requestTimeout\.\); trying again in \d\.\d s/),
      expect.stringMatching(new RegExp(`^Search index rebuilt from a parallel scan of the tables \\(${DEVICES} documents\\)`)),
    ]);
  });

  it('positions and marks the streams again when DynamoDB Local throttled or dropped the connection', async () => {
    const throttled = Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException', $metadata: { httpStatusCode: 400 } });
    streams
      .on(DescribeStreamCommand)
      .rejectsOnce(throttled)
      .resolves({
        StreamDescription: { Shards: [{ ShardId: 'shard-1', SequenceNumberRange: { StartingSequenceNumber: '1' } }] },
      });
    let marks = 0;

    const { started } = await start(async () => {
      marks += 1;
      if (marks === 1) throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    });

    expect(streams.commandCalls(DescribeStreamCommand)).toHaveLength(2);
    expect(marks).toBe(2);
    expect(started).toMatchObject({ path: 'rebuild', documents: DEVICES });
  });

  it('stops the start at once on an error that is not transient', async () => {
    const invalid = Object.assign(new Error('One or more parameter values were invalid'), {
      name: 'ValidationException',
      $fault: 'client',
      $metadata: { httpStatusCode: 400 },
    });
    dynamo.on(ScanCommand).rejects(invalid);

    await expect(start()).rejects.toBe(invalid);
    // One rebuild: each segment of the devices table asked for its first page once.
    expect(dynamo.commandCalls(ScanCommand)).toHaveLength(4);
  });
});
