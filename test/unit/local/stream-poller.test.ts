/**
 * The local runtime's DynamoDB stream poller (functions/local/stream-poller.ts), in front of a mocked DynamoDB
 * Streams client: records reach the consumer in the Lambda event shape, an idle stream is polled less and less
 * often, and a record arriving after an idle spell is still delivered within the idle interval. The poller's pace is
 * what these tests are about, so they run on Vitest's fake clock (timers, Date and performance.now()), moved by the
 * test: the figures are exact, whatever the machine's load.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type _Record as StreamRecord,
  TrimmedDataAccessException,
} from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FileStreamCheckpoints } from '../../../functions/local/file-checkpoints.js';
import { DynamoDbStreamPoller, FROM_OLDEST, StalePositionError } from '../../../functions/local/stream-poller.js';

const STREAM = 'arn:aws:dynamodb:us-east-1:000000000000:table/devices/stream/2026-11-22T00:00:00.000';
const streams = mockClient(DynamoDBStreamsClient);
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

function record(sequenceNumber: string): StreamRecord {
  return {
    eventID: `event-${sequenceNumber}`,
    eventName: 'MODIFY',
    dynamodb: { SequenceNumber: sequenceNumber, Keys: { deviceId: { S: `device-${sequenceNumber}` } } },
  };
}

/** A one-shard stream whose GetRecords answers with `queued` records once, then nothing; records when it was called. */
function fakeStream() {
  const state = { queued: [] as StreamRecord[], getRecordsCalls: 0, calledAt: [] as number[] };
  streams.reset();
  streams
    .on(DescribeStreamCommand)
    .resolves({ StreamDescription: { Shards: [{ ShardId: 'shard-1', SequenceNumberRange: { StartingSequenceNumber: '1' } }] } });
  streams.on(GetShardIteratorCommand).resolves({ ShardIterator: 'iterator' });
  streams.on(GetRecordsCommand).callsFake(() => {
    state.getRecordsCalls += 1;
    state.calledAt.push(Date.now());
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
  vi.useRealTimers();
});

/** The gaps between consecutive times, ms. */
const gapsOf = (times: number[]): number[] => times.slice(1).map((at, index) => at - (times[index] as number));

describe('DynamoDbStreamPoller', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });

  it('backs off while the stream is idle and still delivers a late record within the idle interval', async () => {
    const stream = fakeStream();
    const delivered: DynamoDBStreamEvent[] = [];
    poller = new DynamoDbStreamPoller(
      new DynamoDBStreamsClient({ region: 'us-east-1' }),
      [STREAM],
      async (event) => {
        delivered.push(event);
      },
      { intervalMs: 10, idleIntervalMs: 80 },
    );
    await poller.positionAtLatest();
    poller.start();
    await vi.advanceTimersByTimeAsync(1_200);
    // Each empty pass doubles the 10 ms wait, up to the 80 ms idle interval, where it stays: 4 + 1,200 / 80 polls, not
    // the 120 of a fixed 10 ms interval.
    const gaps = gapsOf(stream.calledAt);
    expect(gaps.slice(0, 3)).toEqual([20, 40, 80]);
    expect(new Set(gaps.slice(3))).toEqual(new Set([80]));
    expect(stream.getRecordsCalls).toBe(17);

    stream.queued = [record('100'), record('101')];
    await vi.advanceTimersByTimeAsync(80);
    expect(delivered).toHaveLength(1);
    expect(delivered[0]?.Records.map((item) => [item.eventSourceARN, item.dynamodb?.SequenceNumber])).toEqual([
      [STREAM, '100'],
      [STREAM, '101'],
    ]);
  });

  it('polls again at the busy interval right after a batch', async () => {
    const stream = fakeStream();
    let deliveries = 0;
    poller = new DynamoDbStreamPoller(
      new DynamoDBStreamsClient({ region: 'us-east-1' }),
      [STREAM],
      async () => {
        deliveries += 1;
        // Each batch brings another record along, as a steady write load does.
        stream.queued = [record(String(200 + deliveries))];
      },
      { intervalMs: 10, idleIntervalMs: 1_000 },
    );
    await poller.positionAtLatest();
    stream.queued = [record('200')];
    poller.start();
    await vi.advanceTimersByTimeAsync(300);
    // With records flowing the poller never backs off to 1 s: one batch every 10 ms.
    expect(new Set(gapsOf(stream.calledAt))).toEqual(new Set([10]));
    expect(deliveries).toBe(31);
  });
});

describe('DynamoDbStreamPoller record images', () => {
  it('hands the consumer an empty map as DynamoDB wrote it ({ M: {} }), not as the Streams client reads it back ({})', async () => {
    const stream = fakeStream();
    const delivered: DynamoDBStreamEvent[] = [];
    poller = new DynamoDbStreamPoller(new DynamoDBStreamsClient({ region: 'us-east-1' }), [STREAM], async (event) => {
      delivered.push(event);
    });
    await poller.positionAtLatest();
    stream.queued = [
      {
        eventID: 'event-1',
        eventName: 'INSERT',
        dynamodb: {
          SequenceNumber: '1',
          NewImage: {
            deviceId: { S: 'k1' },
            commands: { L: [{ M: { payload: {} as never, arguments: { L: [] } } }] },
            health: { M: { extra: {} as never } },
          },
        },
      },
    ];
    await poller.pollOnce();
    expect(delivered[0]?.Records[0]?.dynamodb?.NewImage).toEqual({
      deviceId: { S: 'k1' },
      commands: { L: [{ M: { payload: { M: {} }, arguments: { L: [] } } }] },
      health: { M: { extra: { M: {} } } },
    });
  });
});

describe('DynamoDbStreamPoller with a shard whose empty reads are slow', () => {
  it('reads that shard less often (20x the time its empty read took) while still reading the fast one every pass', async () => {
    vi.useFakeTimers();
    const SLOW_STREAM = `${STREAM.replace('devices', 'scenarios')}`;
    const calls = { fast: 0, slow: 0 };
    streams.reset();
    streams
      .on(DescribeStreamCommand)
      .resolves({ StreamDescription: { Shards: [{ ShardId: 'shard-1', SequenceNumberRange: { StartingSequenceNumber: '1' } }] } });
    streams
      .on(GetShardIteratorCommand)
      .callsFake((input: { StreamArn: string }) => ({ ShardIterator: input.StreamArn === SLOW_STREAM ? 'slow' : 'fast' }));
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
    await vi.advanceTimersByTimeAsync(1_500);
    // Every pass reads the fast shard; the slow one waits 20 x 40 ms = 800 ms after each empty read: read at 0 and 840.
    expect(calls.fast).toBeGreaterThan(15);
    expect(calls.slow).toBe(2);
  });
});

describe('DynamoDbStreamPoller with checkpoints', () => {
  /** A one-shard stream holding `sequence` numbers 1…n; GetShardIterator positions are recorded. */
  function storedStream(count: number, options: { trimmedBefore?: number } = {}) {
    // `generation` counts DynamoDB Local restarts: an iterator issued before one is invalid for good.
    const state = { positions: [] as string[], generation: 0 };
    streams.reset();
    streams
      .on(DescribeStreamCommand)
      .resolves({ StreamDescription: { Shards: [{ ShardId: 'shard-1', SequenceNumberRange: { StartingSequenceNumber: '1' } }] } });
    streams.on(GetShardIteratorCommand).callsFake((input: { ShardIteratorType: string; SequenceNumber?: string }) => {
      const after = input.ShardIteratorType === 'AFTER_SEQUENCE_NUMBER' ? Number(input.SequenceNumber) : 0;
      if (after > 0 && options.trimmedBefore !== undefined && after < options.trimmedBefore) {
        throw new TrimmedDataAccessException({ message: 'trimmed', $metadata: {} });
      }
      state.positions.push(`${input.ShardIteratorType}${input.SequenceNumber === undefined ? '' : ` ${input.SequenceNumber}`}`);
      return {
        ShardIterator: `${state.generation}:from-${input.ShardIteratorType === 'TRIM_HORIZON' ? (options.trimmedBefore ?? 1) - 1 : after}`,
      };
    });
    streams.on(GetRecordsCommand).callsFake((input: { ShardIterator: string }) => {
      const [generation, position] = input.ShardIterator.split(':') as [string, string];
      if (Number(generation) !== state.generation) throw new Error('Invalid ShardIterator (DynamoDB Local restarted)');
      const from = Number(position.slice('from-'.length));
      const records = Array.from({ length: Math.max(0, Math.min(2, count - from)) }, (_, index) => record(String(from + index + 1)));
      return { Records: records, NextShardIterator: `${generation}:from-${from + records.length}` };
    });
    return state;
  }

  function memoryCheckpoints(initial: Record<string, string> = {}) {
    const saved = { current: new Map(Object.entries(initial)), saves: 0 };
    return {
      saved,
      checkpoints: {
        load: async () => new Map(saved.current),
        save: async (positions: ReadonlyMap<string, string>) => {
          saved.current = new Map(positions);
          saved.saves += 1;
        },
      },
    };
  }

  const sequences = (events: DynamoDBStreamEvent[]) =>
    events.flatMap((event) => event.Records.map((item) => item.dynamodb?.SequenceNumber));

  it('saves the last handled record, resumes after it, and keeps a partly failed batch from its first failed record', async () => {
    storedStream(6);
    const { saved, checkpoints } = memoryCheckpoints();
    const delivered: DynamoDBStreamEvent[] = [];
    let failOnce = true;
    poller = new DynamoDbStreamPoller(
      new DynamoDBStreamsClient({ region: 'us-east-1' }),
      [STREAM],
      async (event) => {
        delivered.push(event);
        if (failOnce && event.Records.some((item) => item.dynamodb?.SequenceNumber === '4')) {
          failOnce = false;
          return { batchItemFailures: [{ itemIdentifier: '4' }] };
        }
        return { batchItemFailures: [] };
      },
      { checkpoints },
    );
    await poller.resume();
    for (let pass = 0; pass < 6; pass += 1) await poller.pollOnce();
    // 1-2, 3-4 (4 failed: 3 is kept), 4 again, 5-6.
    expect(sequences(delivered)).toEqual(['1', '2', '3', '4', '4', '5', '6']);
    expect(saved.current.get(`${STREAM}|shard-1`)).toBe('6');

    // A new poller (a restarted runtime) resumes after the saved position.
    storedStream(8);
    const resumed: DynamoDBStreamEvent[] = [];
    poller = new DynamoDbStreamPoller(
      new DynamoDBStreamsClient({ region: 'us-east-1' }),
      [STREAM],
      async (event) => {
        resumed.push(event);
      },
      { checkpoints },
    );
    await poller.resume();
    for (let pass = 0; pass < 3; pass += 1) await poller.pollOnce();
    expect(sequences(resumed)).toEqual(['7', '8']);
  });

  it('reads a shard whose saved position was trimmed from its oldest record, and says so', async () => {
    const stream = storedStream(9, { trimmedBefore: 5 });
    const { checkpoints } = memoryCheckpoints({ [`${STREAM}|shard-1`]: '2' });
    const errors: string[] = [];
    const delivered: DynamoDBStreamEvent[] = [];
    poller = new DynamoDbStreamPoller(
      new DynamoDBStreamsClient({ region: 'us-east-1' }),
      [STREAM],
      async (event) => {
        delivered.push(event);
      },
      { checkpoints, onError: (error) => errors.push((error as Error).message) },
    );
    await poller.resume();
    for (let pass = 0; pass < 4; pass += 1) await poller.pollOnce();
    expect(stream.positions).toEqual(['TRIM_HORIZON']);
    expect(errors).toEqual([expect.stringMatching(/trimmed before they were handled/)]);
    expect(sequences(delivered)).toEqual(['5', '6', '7', '8', '9']);
  });

  it('after a failed read (iterators lost with a restarted DynamoDB Local) resumes after the last handled record', async () => {
    const stream = storedStream(6);
    const { checkpoints } = memoryCheckpoints();
    const delivered: DynamoDBStreamEvent[] = [];
    poller = new DynamoDbStreamPoller(
      new DynamoDBStreamsClient({ region: 'us-east-1' }),
      [STREAM],
      async (event) => {
        delivered.push(event);
      },
      { checkpoints },
    );
    await poller.resume();
    await poller.pollOnce();
    stream.generation += 1;
    await expect(poller.pollOnce()).rejects.toThrow(/Invalid ShardIterator/);
    for (let pass = 0; pass < 3; pass += 1) await poller.pollOnce();
    expect(sequences(delivered)).toEqual(['1', '2', '3', '4', '5', '6']);
    expect(stream.positions).toEqual(['TRIM_HORIZON', 'AFTER_SEQUENCE_NUMBER 2']);
  });
});

describe('FileStreamCheckpoints', () => {
  it('keeps positions across instances, and reads a damaged file as none, saying so', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'dss-checkpoints-'));
    try {
      const file = join(directory, 'streams', 'positions.json');
      await new FileStreamCheckpoints(file).save(new Map([['arn|shard', '42']]));
      expect(await new FileStreamCheckpoints(file).load()).toEqual(new Map([['arn|shard', '42']]));
      await writeFile(file, '{"arn|shard": "4');
      const reported: string[] = [];
      expect(await new FileStreamCheckpoints(file, (error) => reported.push(error.message)).load()).toEqual(new Map());
      expect(reported).toEqual([expect.stringMatching(/unreadable/)]);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});

describe('DynamoDbStreamPoller positions (search snapshots)', () => {
  /**
   * A stream with a shard closed at record 3 (`shard-0`) and an open one (`shard-1`) holding records 4…`state.last`
   * (grow it to append); trimmed before `trimmedBefore`. GetShardIterator requests are recorded.
   */
  function twoShardStream(last: number, options: { trimmedBefore?: number } = {}) {
    const state = { last, requests: [] as string[], getRecordsCalls: 0 };
    streams.reset();
    streams.on(DescribeStreamCommand).resolves({
      StreamDescription: {
        Shards: [
          { ShardId: 'shard-0', SequenceNumberRange: { StartingSequenceNumber: '1', EndingSequenceNumber: '3' } },
          { ShardId: 'shard-1', SequenceNumberRange: { StartingSequenceNumber: '4' }, ParentShardId: 'shard-0' },
        ],
      },
    });
    streams.on(GetShardIteratorCommand).callsFake((input: { ShardId: string; ShardIteratorType: string; SequenceNumber?: string }) => {
      state.requests.push(
        `${input.ShardId} ${input.ShardIteratorType}${input.SequenceNumber === undefined ? '' : ` ${input.SequenceNumber}`}`,
      );
      const after = Number(input.SequenceNumber ?? 0);
      if (input.ShardIteratorType === 'AFTER_SEQUENCE_NUMBER' && options.trimmedBefore !== undefined && after < options.trimmedBefore) {
        throw new TrimmedDataAccessException({ message: 'trimmed', $metadata: {} });
      }
      const [first, end] = input.ShardId === 'shard-0' ? [1, 3] : [4, Number.POSITIVE_INFINITY];
      const from =
        input.ShardIteratorType === 'AFTER_SEQUENCE_NUMBER'
          ? after
          : input.ShardIteratorType === 'LATEST'
            ? Math.min(end, state.last)
            : first - 1;
      return { ShardIterator: `${input.ShardId}:${from}` };
    });
    streams.on(GetRecordsCommand).callsFake((input: { ShardIterator: string }) => {
      state.getRecordsCalls += 1;
      const [shard, position] = input.ShardIterator.split(':') as [string, string];
      const end = shard === 'shard-0' ? 3 : state.last;
      const from = Number(position);
      const records = Array.from({ length: Math.max(0, Math.min(2, end - from)) }, (_, index) => record(String(from + index + 1)));
      const next = from + records.length;
      return { Records: records, ...(shard === 'shard-0' && next >= 3 ? {} : { NextShardIterator: `${shard}:${next}` }) };
    });
    return state;
  }

  const newPoller = (consumer: (event: DynamoDBStreamEvent) => Promise<void> = async () => undefined) =>
    new DynamoDbStreamPoller(new DynamoDBStreamsClient({ region: 'us-east-1' }), [STREAM], consumer, { intervalMs: 5, idleIntervalMs: 5 });

  it('knows no position of a shard opened at LATEST until it handles a record; a shard closed before is at its last record', async () => {
    const stream = twoShardStream(6);
    poller = newPoller();
    await poller.positionAtLatest();
    expect(poller.shardPositions()).toEqual(
      new Map([
        [`${STREAM}|shard-0`, '3'],
        [`${STREAM}|shard-1`, undefined],
      ]),
    );
    expect(stream.requests).toEqual(['shard-1 LATEST']);

    stream.last = 9;
    for (let pass = 0; pass < 3; pass += 1) await poller.pollOnce();
    expect(poller.shardPositions().get(`${STREAM}|shard-1`)).toBe('9');
  });

  it('resumes each shard after its position and a shard it was not given from the oldest record', async () => {
    const stream = twoShardStream(8);
    const delivered: string[] = [];
    poller = newPoller(async (event) => {
      delivered.push(...event.Records.map((item) => item.dynamodb?.SequenceNumber as string));
    });
    await poller.resumeAfter(new Map([[`${STREAM}|shard-1`, '6']]));
    expect(stream.requests).toEqual(['shard-0 TRIM_HORIZON', 'shard-1 AFTER_SEQUENCE_NUMBER 6']);
    expect(poller.shardPositions()).toEqual(
      new Map([
        [`${STREAM}|shard-0`, FROM_OLDEST],
        [`${STREAM}|shard-1`, '6'],
      ]),
    );
    for (let pass = 0; pass < 3; pass += 1) await poller.pollOnce();
    expect(delivered.sort()).toEqual(['1', '2', '3', '7', '8']);
    expect(poller.shardPositions()).toEqual(
      new Map([
        [`${STREAM}|shard-0`, '3'],
        [`${STREAM}|shard-1`, '8'],
      ]),
    );
  });

  it('refuses a position that was trimmed or a shard that is gone, and can then be positioned at LATEST', async () => {
    const stream = twoShardStream(8, { trimmedBefore: 5 });
    poller = newPoller();
    await expect(poller.resumeAfter(new Map([[`${STREAM}|shard-1`, '4']]))).rejects.toThrow(StalePositionError);
    await expect(poller.resumeAfter(new Map([[`${STREAM}|shard-7`, '4']]))).rejects.toThrow(/shard-7 no longer in the streams/);
    stream.requests.length = 0;
    await poller.positionAtLatest();
    expect(stream.requests).toEqual(['shard-1 LATEST']);
    expect([...poller.shardPositions().keys()]).toEqual([`${STREAM}|shard-0`, `${STREAM}|shard-1`]);
  });

  it('runs a whenIdle task between two batches, never during one, and holds the next pass until it ends', async () => {
    vi.useFakeTimers();
    const stream = twoShardStream(6);
    let releaseBatch: () => void = () => undefined;
    const events: string[] = [];
    poller = newPoller(async (event) => {
      events.push(`batch ${event.Records.map((item) => item.dynamodb?.SequenceNumber).join(',')} starts`);
      await new Promise<void>((done) => {
        releaseBatch = done;
      });
      events.push('batch ends');
    });
    await poller.positionAtLatest();
    stream.last = 7;
    poller.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(events).toEqual(['batch 7 starts']);
    const task = poller.whenIdle(async () => {
      events.push('task starts');
      const readsBefore = stream.getRecordsCalls;
      await sleep(100);
      events.push(`task ends after ${stream.getRecordsCalls - readsBefore} reads`);
      return poller?.shardPositions().get(`${STREAM}|shard-1`);
    });
    await vi.advanceTimersByTimeAsync(50);
    expect(events).toEqual(['batch 7 starts']);
    releaseBatch();
    // The task's 100 ms, in which the poller's own timer comes due many times over.
    await vi.advanceTimersByTimeAsync(100);
    expect(await task).toBe('7');
    expect(events).toEqual(['batch 7 starts', 'batch ends', 'task starts', 'task ends after 0 reads']);
  });

  it('is caught up with a time once every open shard had an empty read started after it', async () => {
    const stream = twoShardStream(6);
    poller = newPoller();
    await poller.positionAtLatest();
    stream.last = 9;
    const since = performance.now();
    await poller.pollOnce(); // 7, 8
    expect(poller.caughtUpSince(since)).toBe(false);
    await poller.pollOnce(); // 9
    expect(poller.caughtUpSince(since)).toBe(false);
    await poller.pollOnce(); // nothing
    expect(poller.caughtUpSince(since)).toBe(true);
    expect(poller.caughtUpSince(performance.now())).toBe(false);
  });
});
