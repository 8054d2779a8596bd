import {
  type AttributeValue,
  DescribeStreamCommand,
  type DynamoDBStreamsClient,
  ExpiredIteratorException,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type _Record as StreamRecord,
  TrimmedDataAccessException,
} from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';

/** How often shards created since the last look are looked for, ms (below the default idle interval, 800 ms). */
const SHARD_DISCOVERY_MS = 750;
/**
 * After an empty GetRecords that took T ms, the shard is not read again for EMPTY_READ_COST_FACTOR × T ms, so idle
 * shards cost DynamoDB Local at most ~5 % of its time. DynamoDB Local answers an empty read of an idle table's shard
 * in time proportional to the records written to the other tables since (100,000 device writes: ~650 ms of CPU per
 * read of the scenarios shard, measured), which at a fixed interval kept it busy ~50 % of a core.
 */
const EMPTY_READ_COST_FACTOR = 20;

/**
 * Where a consumer stands in one shard: the sequence number of the last record it handled (the shard resumes after
 * it), or FROM_OLDEST when it handled none of a shard it reads from its oldest record.
 */
export type ShardPosition = string;
/** The ShardPosition of a shard none of whose records was handled, read from its oldest record (TRIM_HORIZON). */
export const FROM_OLDEST: ShardPosition = 'TRIM_HORIZON';

/** resumeAfter could not position a shard after its given position: its records were trimmed or the shard is gone. */
export class StalePositionError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StalePositionError';
  }
}

interface ShardCursor {
  streamArn: string;
  shardId: string;
  iterator: string | undefined;
  /**
   * The last record handled, or the position the shard was opened after; undefined when none: the shard was opened
   * at LATEST (`fromOldest` false: the position is unknown) or at TRIM_HORIZON (`fromOldest` true).
   */
  lastSequenceNumber: string | undefined;
  fromOldest: boolean;
  /** Records fetched but not yet acknowledged by the handler (redelivered on failure). */
  pending: StreamRecord[];
  /** performance.now() before which the shard is not read again (after an empty read; see EMPTY_READ_COST_FACTOR). */
  notBefore: number;
  /** A read failed (e.g. DynamoDB Local was restarted, which invalidates iterators): get a new iterator first. */
  stale: boolean;
  /** performance.now() at the start of the last read that found no record (-Infinity before one). */
  emptyReadAt?: number;
}

/**
 * Where a poller keeps, per shard (`{streamArn}|{shardId}`), the sequence number of the last record its consumer
 * handled, so that a restarted poller resumes after it (the Lambda event source mapping keeps the same position).
 */
export interface StreamCheckpoints {
  /** The saved positions; none on a first start. */
  load(): Promise<Map<string, string>>;
  /** Replaces the saved positions (durably: a crash right after leaves them readable). */
  save(positions: ReadonlyMap<string, string>): Promise<void>;
}

/** A function consuming DynamoDB stream batches: the Lambda event-source contract. */
// biome-ignore lint/suspicious/noConfusingVoidType: as a Lambda stream handler, a consumer may resolve to nothing.
export type StreamConsumer = (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse | void>;

/**
 * The attribute value as DynamoDB sent it: the Streams client reads an empty map (`{ "M": {} }`, e.g. a device
 * command's `payload: {}`) back as `{}`, which unmarshall refuses ("No value defined"), so one such item stopped the
 * search indexer for good. Lambda's event carries `{ "M": {} }`: restored here, in maps and lists at any depth.
 */
function repairedValue(value: AttributeValue): AttributeValue {
  if (value.M !== undefined) return { M: repairedImage(value.M) };
  if (value.L !== undefined) return { L: value.L.map(repairedValue) };
  return Object.keys(value).length === 0 ? { M: {} } : value;
}

function repairedImage(image: Record<string, AttributeValue>): Record<string, AttributeValue> {
  const repaired: Record<string, AttributeValue> = {};
  for (const [name, value] of Object.entries(image)) repaired[name] = repairedValue(value);
  return repaired;
}

function toLambdaRecord(record: StreamRecord, streamArn: string): DynamoDBRecord {
  const streamed = record.dynamodb ?? {};
  const image = {
    ...streamed,
    ...(streamed.NewImage === undefined ? {} : { NewImage: repairedImage(streamed.NewImage) }),
    ...(streamed.OldImage === undefined ? {} : { OldImage: repairedImage(streamed.OldImage) }),
  };
  return {
    eventID: record.eventID,
    eventName: record.eventName,
    eventVersion: '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: record.awsRegion ?? 'us-east-1',
    eventSourceARN: streamArn,
    dynamodb: {
      ...(image as DynamoDBRecord['dynamodb']),
      ...(image.ApproximateCreationDateTime === undefined
        ? {}
        : { ApproximateCreationDateTime: Math.floor(new Date(image.ApproximateCreationDateTime).getTime() / 1000) }),
    },
  } as DynamoDBRecord;
}

/**
 * Reads DynamoDB Local streams and delivers batches in the Lambda `DynamoDBStreamEvent` shape to a consumer, as the
 * Lambda event source mapping does: in order per shard, up to `batchSize` records, and on `batchItemFailures` it
 * redelivers from the first failed record after a back-off. Either shards open at start are read from LATEST
 * (positionAtLatest: the search index is rebuilt from a scan right after), or, with `checkpoints`, every shard resumes
 * after its last handled record, or from TRIM_HORIZON when it has none (resume: nothing written while no poller ran
 * is missed, so the consumer must be idempotent). Shards that appear later are read from TRIM_HORIZON.
 */
export class DynamoDbStreamPoller {
  private readonly shards = new Map<string, ShardCursor>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private lastDiscovery = 0;
  private positions = new Map<string, string>();
  /** Passes and whenIdle functions, one at a time, in call order. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly client: DynamoDBStreamsClient,
    private readonly streamArns: readonly string[],
    private readonly consumer: StreamConsumer,
    private readonly options: {
      intervalMs?: number;
      idleIntervalMs?: number;
      batchSize?: number;
      onError?: (error: unknown) => void;
      checkpoints?: StreamCheckpoints;
    } = {},
  ) {}

  /** Positions every open shard at LATEST. Call before rebuilding the index so no write falls between. */
  async positionAtLatest(): Promise<void> {
    await this.discoverShards('LATEST');
  }

  /**
   * Positions every shard after its checkpoint (AFTER_SEQUENCE_NUMBER), or at TRIM_HORIZON without one.
   * @throws Error when the poller has no `checkpoints`.
   */
  async resume(): Promise<void> {
    if (this.options.checkpoints === undefined) throw new Error('resume() needs checkpoints.');
    this.positions = await this.options.checkpoints.load();
    await this.discoverShards('TRIM_HORIZON');
  }

  /**
   * Positions every shard after its position in `positions` (keys `{streamArn}|{shardId}`; FROM_OLDEST or a shard
   * not named: from its oldest record), as a consumer whose state (a snapshot) covers the records up to there.
   * @throws StalePositionError when a named shard is no longer in the streams, or cannot be read after its position
   *   (trimmed: the records in between are gone); nothing is then read.
   */
  async resumeAfter(positions: ReadonlyMap<string, ShardPosition>): Promise<void> {
    this.positions = new Map([...positions].filter(([, position]) => position !== FROM_OLDEST));
    try {
      await this.discoverShards('TRIM_HORIZON', true);
      const missing = [...positions.keys()].filter((key) => !this.shards.has(key));
      if (missing.length > 0) throw new StalePositionError(`Shard(s) ${missing.join(', ')} no longer in the streams.`);
    } catch (error) {
      // Left unpositioned, so that the caller may position it otherwise (positionAtLatest) and rebuild.
      this.shards.clear();
      this.positions = new Map();
      throw error;
    }
  }

  /**
   * The position of every shard known (keys `{streamArn}|{shardId}`): after the last record the consumer handled,
   * FROM_OLDEST, or undefined when unknown (opened at LATEST, nothing handled since). Read it inside whenIdle for
   * a position that matches what the consumer has applied.
   */
  shardPositions(): Map<string, ShardPosition | undefined> {
    const positions = new Map<string, ShardPosition | undefined>();
    for (const [key, cursor] of this.shards) {
      positions.set(key, cursor.lastSequenceNumber ?? (cursor.fromOldest ? FROM_OLDEST : undefined));
    }
    return positions;
  }

  /**
   * Whether every record written to the streams before `since` (a performance.now() time) has been handled: every
   * shard still open has had a read that started after `since`, found nothing, and left nothing to deliver.
   */
  caughtUpSince(since: number): boolean {
    for (const cursor of this.shards.values()) {
      if (cursor.iterator === undefined && cursor.pending.length === 0) continue; // closed, read to its end
      if (cursor.pending.length > 0 || (cursor.emptyReadAt ?? Number.NEGATIVE_INFINITY) <= since) return false;
    }
    return true;
  }

  /**
   * Runs `task` between two passes (no batch is being read or handled meanwhile, and none starts until it settles),
   * or at once when the poller is stopped; resolves with its result.
   */
  whenIdle<T>(task: () => T | Promise<T>): Promise<T> {
    return this.serialized(task);
  }

  private serialized<T>(task: () => T | Promise<T>): Promise<T> {
    const run = this.queue.then(task);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Records that the consumer handled `cursor`'s records up to `sequenceNumber`, and saves the checkpoints. */
  private async checkpoint(cursor: ShardCursor, sequenceNumber: string | undefined): Promise<void> {
    cursor.lastSequenceNumber = sequenceNumber;
    if (this.options.checkpoints === undefined || sequenceNumber === undefined) return;
    this.positions.set(`${cursor.streamArn}|${cursor.shardId}`, sequenceNumber);
    await this.options.checkpoints.save(this.positions);
  }

  /**
   * An iterator after `after` (AFTER_SEQUENCE_NUMBER), or at `position` without one. When `after` has been trimmed
   * from the stream (24 h of retention passed, or DynamoDB Local lost it), the records in between are gone: this is
   * reported through `onError` and the shard is read from TRIM_HORIZON.
   */
  private async iteratorAt(
    streamArn: string,
    shardId: string,
    position: 'LATEST' | 'TRIM_HORIZON',
    after: string | undefined,
    strict = false,
  ): Promise<string | undefined> {
    if (after !== undefined) {
      try {
        const { ShardIterator } = await this.client.send(
          new GetShardIteratorCommand({
            StreamArn: streamArn,
            ShardId: shardId,
            ShardIteratorType: 'AFTER_SEQUENCE_NUMBER',
            SequenceNumber: after,
          }),
        );
        return ShardIterator;
      } catch (error) {
        // Strict (resumeAfter): whatever keeps the position from being read makes it stale (DynamoDB Local answers a
        // sequence number it does not know with a validation error, not TrimmedDataAccessException).
        if (strict) throw new StalePositionError(`Cannot read ${shardId} after ${after}: ${(error as Error).message}`, { cause: error });
        if (!(error instanceof TrimmedDataAccessException)) throw error;
        this.options.onError?.(
          new Error(
            `Stream records after ${after} of ${shardId} were trimmed before they were handled; reading the shard from its oldest record.`,
          ),
        );
        position = 'TRIM_HORIZON';
      }
    }
    const { ShardIterator } = await this.client.send(
      new GetShardIteratorCommand({ StreamArn: streamArn, ShardId: shardId, ShardIteratorType: position }),
    );
    return ShardIterator;
  }

  /**
   * Starts polling: every `intervalMs` (default 100 ms) while records flow; each pass that finds none doubles the
   * wait, up to `idleIntervalMs` (default 800 ms), so an idle runtime does not keep DynamoDB Local busy (a fixed
   * 100 ms cost ~35 % of a core, java and node together). A pass with records resets the wait. A shard whose empty
   * reads are slow is also read less often (EMPTY_READ_COST_FACTOR).
   */
  start(): void {
    const busyMs = this.options.intervalMs ?? 100;
    const idleMs = Math.max(busyMs, this.options.idleIntervalMs ?? 800);
    let waitMs = busyMs;
    const tick = async () => {
      if (this.stopped) return;
      this.running = this.serialized(() => this.pollOnce())
        .then((delivered) => {
          waitMs = delivered > 0 ? busyMs : Math.min(idleMs, Math.max(1, waitMs) * 2);
        })
        .catch((error) => {
          // A backend that is down (DynamoDB Local restarting) is retried at the idle interval, not every 100 ms.
          waitMs = idleMs;
          this.options.onError?.(error);
        });
      await this.running;
      if (!this.stopped) this.timer = setTimeout(tick, waitMs);
    };
    this.timer = setTimeout(tick, 0);
  }

  /** Stops polling and waits for the batch in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    await this.running;
  }

  private async discoverShards(newShardPosition: 'LATEST' | 'TRIM_HORIZON', strict = false): Promise<void> {
    this.lastDiscovery = Date.now();
    for (const streamArn of this.streamArns) {
      let exclusiveStartShardId: string | undefined;
      do {
        const { StreamDescription } = await this.client.send(
          new DescribeStreamCommand({ StreamArn: streamArn, ExclusiveStartShardId: exclusiveStartShardId }),
        );
        for (const shard of StreamDescription?.Shards ?? []) {
          const shardId = shard.ShardId as string;
          const key = `${streamArn}|${shardId}`;
          if (this.shards.has(key)) continue;
          const ending = shard.SequenceNumberRange?.EndingSequenceNumber;
          if (newShardPosition === 'LATEST' && ending !== undefined) {
            // Closed before we started: already reflected in the table scan, so handled up to its last record.
            this.shards.set(key, {
              streamArn,
              shardId,
              iterator: undefined,
              lastSequenceNumber: ending,
              fromOldest: false,
              pending: [],
              notBefore: 0,
              stale: false,
            });
            continue;
          }
          const after = newShardPosition === 'TRIM_HORIZON' ? this.positions.get(key) : undefined;
          const iterator = await this.iteratorAt(streamArn, shardId, newShardPosition, after, strict);
          this.shards.set(key, {
            streamArn,
            shardId,
            iterator,
            lastSequenceNumber: after,
            fromOldest: newShardPosition === 'TRIM_HORIZON',
            pending: [],
            notBefore: 0,
            stale: false,
          });
        }
        exclusiveStartShardId = StreamDescription?.LastEvaluatedShardId;
      } while (exclusiveStartShardId !== undefined);
    }
  }

  /** One pass over every shard; resolves with the number of records handed to the consumer. Exposed for tests. */
  async pollOnce(): Promise<number> {
    let delivered = 0;
    // New shards are looked for at most every SHARD_DISCOVERY_MS, so with the idle interval on every idle pass.
    if (Date.now() - this.lastDiscovery >= SHARD_DISCOVERY_MS) await this.discoverShards('TRIM_HORIZON');
    for (const cursor of this.shards.values()) {
      if (cursor.pending.length === 0 && cursor.iterator !== undefined) {
        if (performance.now() < cursor.notBefore) continue;
        if (cursor.stale) {
          // Resume after the last record handled (or from the oldest one when none was).
          cursor.iterator = await this.iteratorAt(cursor.streamArn, cursor.shardId, 'TRIM_HORIZON', cursor.lastSequenceNumber);
          cursor.stale = false;
        }
        try {
          const started = performance.now();
          const response = await this.client.send(
            new GetRecordsCommand({ ShardIterator: cursor.iterator, Limit: this.options.batchSize ?? 500 }),
          );
          cursor.pending = response.Records ?? [];
          cursor.iterator = response.NextShardIterator;
          const tookMs = performance.now() - started;
          cursor.notBefore = cursor.pending.length === 0 ? performance.now() + EMPTY_READ_COST_FACTOR * tookMs : 0;
          if (cursor.pending.length === 0) cursor.emptyReadAt = started;
        } catch (error) {
          cursor.stale = true;
          if (!(error instanceof ExpiredIteratorException || error instanceof TrimmedDataAccessException)) throw error;
          continue;
        }
      }
      if (cursor.pending.length === 0) continue;
      const batch = cursor.pending;
      delivered += batch.length;
      const response = await this.consumer({ Records: batch.map((record) => toLambdaRecord(record, cursor.streamArn)) });
      const failures = response?.batchItemFailures ?? [];
      if (failures.length === 0) {
        cursor.pending = [];
        await this.checkpoint(cursor, batch.at(-1)?.dynamodb?.SequenceNumber);
        continue;
      }
      const failedIds = new Set(failures.map((failure) => failure.itemIdentifier));
      const firstFailed = batch.findIndex(
        (record) => failedIds.has(record.dynamodb?.SequenceNumber ?? '') || failedIds.has(record.eventID ?? ''),
      );
      cursor.pending = firstFailed < 0 ? batch : batch.slice(firstFailed);
      if (firstFailed > 0) await this.checkpoint(cursor, batch[firstFailed - 1]?.dynamodb?.SequenceNumber);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    return delivered;
  }
}
