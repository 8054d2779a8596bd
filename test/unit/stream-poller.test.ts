/**
 * The local runtime's DynamoDB stream poller (functions/local/stream-poller.ts), in front of a mocked DynamoDB
 * Streams client: records reach the consumer in the Lambda event shape, an idle stream is polled less and less
 * often, and a record arriving after an idle spell is still delivered within the idle interval.
 */
import {
  DescribeStreamCommand, DynamoDBStreamsClient, GetRecordsCommand, GetShardIteratorCommand, type _Record as StreamRecord,
} from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { DynamoDbStreamPoller } from '../../functions/local/stream-poller.js';

const STREAM = 'arn:aws:dynamodb:us-east-1:000000000000:table/devices/stream/2026-11-22T00:00:00.000';
const streams = mockClient(DynamoDBStreamsClient);
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

function record(sequenceNumber: string): StreamRecord {
  return { eventID: `event-${sequenceNumber}`, eventName: 'MODIFY', dynamodb: { SequenceNumber: sequenceNumber, Keys: { deviceId: { S: `device-${sequenceNumber}` } } } };
}

/** A one-shard stream whose GetRecords answers with `queued` records once, then nothing; counts GetRecords calls. */
function fakeStream() {
  const state = { queued: [] as StreamRecord[], getRecordsCalls: 0, calledAt: [] as number[] };
  streams.reset();
  streams.on(DescribeStreamCommand).resolves({ StreamDescription: { Shards: [{ ShardId: 'shard-1', SequenceNumberRange: { StartingSequenceNumber: '1' } }] } });
  streams.on(GetShardIteratorCommand).resolves({ ShardIterator: 'iterator' });
  streams.on(GetRecordsCommand).callsFake(() => {
    state.getRecordsCalls += 1;
    state.calledAt.push(performance.now());
    const records = state.queued;
    state.queued = [];
    return { Records: records, NextShardIterator: 'iterator' };
  });
  return state;
}

let poller: DynamoDbStreamPoller | undefined;
afterEach(async () => {
  await poller?.stop();
  poller = undefined;
});

describe('DynamoDbStreamPoller', () => {
  it('backs off while the stream is idle and still delivers a late record within the idle interval', async () => {
    const stream = fakeStream();
    const delivered: DynamoDBStreamEvent[] = [];
    poller = new DynamoDbStreamPoller(new DynamoDBStreamsClient({ region: 'us-east-1' }), [STREAM], async (event) => {
      delivered.push(event);
    }, { intervalMs: 10, idleIntervalMs: 80 });
    await poller.positionAtLatest();
    poller.start();
    await sleep(1_200);
    // A fixed 10 ms interval would have polled ~120 times; doubling to the 80 ms cap gives about 4 + 1,200 / 80.
    expect(stream.getRecordsCalls).toBeGreaterThan(8);
    expect(stream.getRecordsCalls).toBeLessThan(30);
    // The wait stops growing at idleIntervalMs: no gap between two polls much above 80 ms (slack for a loaded CI).
    const gaps = stream.calledAt.slice(1).map((at, index) => at - (stream.calledAt[index] as number));
    expect(Math.max(...gaps.slice(-5))).toBeLessThan(80 + 150);

    stream.queued = [record('100'), record('101')];
    const queuedAt = Date.now();
    while (delivered.length === 0 && Date.now() - queuedAt < 2_000) await sleep(5);
    expect(Date.now() - queuedAt).toBeLessThan(80 + 150);
    expect(delivered).toHaveLength(1);
    expect(delivered[0]?.Records.map((item) => [item.eventSourceARN, item.dynamodb?.SequenceNumber])).toEqual([[STREAM, '100'], [STREAM, '101']]);
  });

  it('polls again at the busy interval right after a batch', async () => {
    const stream = fakeStream();
    let deliveries = 0;
    poller = new DynamoDbStreamPoller(new DynamoDBStreamsClient({ region: 'us-east-1' }), [STREAM], async () => {
      deliveries += 1;
      // Each batch brings another record along, as a steady write load does.
      stream.queued = [record(String(200 + deliveries))];
    }, { intervalMs: 10, idleIntervalMs: 1_000 });
    await poller.positionAtLatest();
    stream.queued = [record('200')];
    poller.start();
    await sleep(300);
    // With records flowing the poller never backs off to 1 s: about one batch per 10 ms.
    expect(deliveries).toBeGreaterThan(8);
  });
});

describe('DynamoDbStreamPoller with a shard whose empty reads are slow', () => {
  it('reads that shard less often (20x the time its empty read took) while still reading the fast one every pass', async () => {
    const SLOW_STREAM = `${STREAM.replace('devices', 'scenarios')}`;
    const calls = { fast: 0, slow: 0 };
    streams.reset();
    streams.on(DescribeStreamCommand).resolves({ StreamDescription: { Shards: [{ ShardId: 'shard-1', SequenceNumberRange: { StartingSequenceNumber: '1' } }] } });
    streams.on(GetShardIteratorCommand).callsFake((input: { StreamArn: string }) => ({ ShardIterator: input.StreamArn === SLOW_STREAM ? 'slow' : 'fast' }));
    streams.on(GetRecordsCommand).callsFake(async (input: { ShardIterator: string }) => {
      if (input.ShardIterator === 'slow') {
        calls.slow += 1;
        await sleep(40); // as DynamoDB Local reading an idle table's shard after many writes elsewhere
      } else {
        calls.fast += 1;
      }
      return { Records: [], NextShardIterator: input.ShardIterator };
    });
    poller = new DynamoDbStreamPoller(new DynamoDBStreamsClient({ region: 'us-east-1' }), [STREAM, SLOW_STREAM], async () => undefined, {
      intervalMs: 10,
      idleIntervalMs: 20,
    });
    await poller.positionAtLatest();
    poller.start();
    await sleep(1_500);
    // Every ~20 ms pass reads the fast shard; the slow one waits >= 20 x 40 ms = 800 ms after each empty read.
    expect(calls.fast).toBeGreaterThan(15);
    expect(calls.slow).toBeGreaterThanOrEqual(1);
    expect(calls.slow).toBeLessThanOrEqual(3);
  });
});
