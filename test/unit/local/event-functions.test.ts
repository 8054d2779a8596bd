/**
 * The local runtime starts the functions no route runs from their definitions (functions/local/event-functions.ts):
 * every function of FUNCTIONS whose trigger has a local stand-in is started, each on its own (a stream poller over
 * its tables' streams with its batch size, the in-process queue, a timer, the S3 event bridge), with nothing else to
 * wire; so a definition added to FUNCTIONS runs locally, or this fails.
 */
import { EventEmitter } from 'node:events';
import { access, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  DescribeStreamCommand,
  type DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBStreamEvent, S3Event, SQSEvent } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TABLES, type TableKeySchema, type TableName } from '../../../functions/adapters/aws/tables.js';
import { localQueue } from '../../../functions/adapters/embedded/local-work-queue.js';
import { readEnvironment } from '../../../functions/contract/environment.js';
import { defineFunction, type FunctionDefinition, type ScheduleTrigger } from '../../../functions/contract/function.js';
import { FUNCTIONS, heartbeatSweeper, rolloutSweeper, searchIndexer, uploadSweeper } from '../../../functions/contract/functions.js';
import {
  type EventFunctionsContext,
  localScheduleIntervalMs,
  localStreamBatchSize,
  startEventFunctions,
} from '../../../functions/local/event-functions.js';
import { LOCAL_ROLLOUT_QUEUE } from '../../../functions/local/local-environment.js';
import type { StopSteps } from '../../../functions/local/runtime-layout.js';

/** The trigger kinds that have, deliberately, no local stand-in (each says why in event-functions.ts). */
const NOT_RUN_LOCALLY = new Set(['customResource', 'cognito', 'httpAuthorizer', 'manual']);

/** Resolves once `condition` holds (polled), or fails after 5 s. */
async function until(condition: () => boolean): Promise<void> {
  for (let waited = 0; !condition(); waited += 10) {
    if (waited > 5_000) throw new Error('condition not met within 5 s');
    await sleep(10);
  }
}

/** A fake stream ARN per streamed table. */
const STREAM_ARNS: Partial<Record<TableName, string>> = Object.fromEntries(
  (Object.entries(TABLES) as [TableName, TableKeySchema][])
    .filter(([, schema]) => schema.stream !== undefined)
    .map(([table]) => [table, `arn:aws:dynamodb:local:000000000000:table/${table}/stream/1`]),
);

/** The partition key prefix the consumer of `table` filters on, if one does. */
const prefixOf = (table: TableName): string =>
  FUNCTIONS.flatMap((definition) =>
    definition.trigger.kind === 'tableStream' && definition.trigger.tables.includes(table)
      ? [definition.trigger.partitionKeyPrefix ?? '']
      : [],
  ).find((prefix) => prefix !== '') ?? '';

/**
 * A streams client whose every stream has one shard holding one record (whose new image's partition key passes the
 * `partitionKeyPrefix` of its table's consumers), and that notes the `Limit` of each read by stream (`arn|limit`).
 */
function fakeStreams(reads: Set<string>): DynamoDBStreamsClient {
  const send = async (command: unknown) => {
    if (command instanceof DescribeStreamCommand)
      return { StreamDescription: { Shards: [{ ShardId: 'shard-1', SequenceNumberRange: {} }] } };
    if (command instanceof GetShardIteratorCommand) return { ShardIterator: `${command.input.StreamArn}#0` };
    if (command instanceof GetRecordsCommand) {
      const [arn, position] = (command.input.ShardIterator as string).split('#');
      reads.add(`${arn}|${command.input.Limit}`);
      const table = (Object.entries(STREAM_ARNS) as [TableName, string][]).find(([, candidate]) => candidate === arn)?.[0] as TableName;
      const NewImage = { [TABLES[table].partitionKey]: { S: `${prefixOf(table)}x` } };
      const records =
        position === '0'
          ? [{ eventID: 'e1', eventName: 'INSERT', dynamodb: { SequenceNumber: '100', Keys: { id: { S: 'x' } }, NewImage } }]
          : [];
      return { Records: records, NextShardIterator: `${arn}#1` };
    }
    throw new Error(`unexpected command ${(command as object).constructor.name}`);
  };
  return { send } as unknown as DynamoDBStreamsClient;
}

let dataDirectory: string;
let stops: StopSteps;
let calls: Map<string, unknown[]>;
let reads: Set<string>;
let s3: EventEmitter;
let log: string[];

beforeEach(async () => {
  dataDirectory = await mkdtemp(join(tmpdir(), 'dss-event-functions-'));
  stops = [];
  calls = new Map();
  reads = new Set();
  s3 = new EventEmitter();
  log = [];
});

afterEach(async () => {
  for (const step of stops.reverse()) await step();
  await rm(dataDirectory, { recursive: true, force: true });
});

/** The context the runtime gives, with handlers that record their events by entry, and schedules every 20 ms. */
function context(positionedByRuntime: ReadonlySet<string> = new Set([searchIndexer.id])): EventFunctionsContext {
  return {
    load: async (entry) => {
      calls.set(entry, calls.get(entry) ?? []);
      return (async (event: unknown) => {
        calls.get(entry)?.push(event);
        return { batchItemFailures: [] };
      }) as never;
    },
    streams: fakeStreams(reads),
    streamArns: STREAM_ARNS,
    dataDirectory,
    s3,
    region: 'us-east-1',
    scheduleIntervalMs: () => 20,
    positionedByRuntime,
    stops,
    log: (message) => log.push(message),
  };
}

const ofKind = <K extends FunctionDefinition['trigger']['kind']>(kind: K) =>
  FUNCTIONS.filter((definition) => definition.trigger.kind === kind) as FunctionDefinition<
    Extract<FunctionDefinition['trigger'], { kind: K }>
  >[];

describe('the functions no route runs, locally', () => {
  it('starts every function of FUNCTIONS but those of a kind with no local stand-in, and loads their handlers', async () => {
    const { started } = await startEventFunctions(context());
    const expected = FUNCTIONS.filter((definition) => !NOT_RUN_LOCALLY.has(definition.trigger.kind));
    expect(started).toEqual(expected.map((definition) => definition.id));
    expect([...calls.keys()].sort()).toEqual(expected.map((definition) => definition.entry).sort());
  });

  it('feeds each stream consumer the streams of its tables, in batches of its size (at least the local read size), checkpointed unless the runtime positions it', async () => {
    const functions = await startEventFunctions(context());
    const consumers = ofKind('tableStream');
    expect([...functions.pollers.keys()].sort()).toEqual(consumers.map((definition) => definition.id).sort());
    // The runtime positions the search indexer's poller itself (from the search index's start).
    await functions.pollers.get(searchIndexer.id)?.positionAtLatest();
    await functions.startStreams();
    await until(() => consumers.every((definition) => (calls.get(definition.entry) ?? []).length > 0));
    for (const definition of consumers) {
      const arns = (calls.get(definition.entry) as DynamoDBStreamEvent[]).flatMap((event) =>
        event.Records.map((record) => record.eventSourceARN),
      );
      expect(new Set(arns), definition.id).toEqual(new Set(definition.trigger.tables.map((table) => STREAM_ARNS[table])));
    }
    const expectedReads = consumers.flatMap((definition) =>
      definition.trigger.tables.map((table) => `${STREAM_ARNS[table]}|${localStreamBatchSize(definition)}`),
    );
    expect(reads).toEqual(new Set(expectedReads));
    // The checkpoint files of earlier versions' data folders, one per consumer; none for the search indexer. Stopped
    // first: a poller saves its checkpoint after its handler returns.
    await Promise.all([...functions.pollers.values()].map((poller) => poller.stop()));
    for (const name of ['deployment-changes', 'continuous-rollouts', 'administrative-changes']) {
      await expect(access(join(dataDirectory, 'streams', `${name}.json`))).resolves.toBeUndefined();
    }
    await expect(access(join(dataDirectory, 'streams', 'search-indexer.json'))).rejects.toThrow();
  });

  it('hands the bus events of its detail types to a bus events consumer, as SQS messages of EventBridge envelopes', async () => {
    await startEventFunctions(context());
    const [consumer] = ofKind('busEvents');
    if (consumer === undefined) throw new Error('no busEvents function');
    const [type] = consumer.trigger.detailTypes;
    await mkdir(join(dataDirectory, 'events'), { recursive: true });
    const event = { type, company: 'acme', at: '2026-12-06T10:00:00.000Z' };
    await writeFile(join(dataDirectory, 'events', 'events.jsonl'), `${JSON.stringify({ type: 'Other' })}\n${JSON.stringify(event)}\n`);
    await until(() => (calls.get(consumer.entry) ?? []).length > 0);
    const [delivered] = calls.get(consumer.entry) as SQSEvent[];
    expect(delivered?.Records.map((record) => JSON.parse(record.body))).toEqual([
      expect.objectContaining({ 'detail-type': type, source: 'device-scenario-service', detail: event }),
    ]);
  });

  it('hands the S3 ObjectCreated notifications under its prefix to the archive function, and nothing else', async () => {
    await startEventFunctions(context());
    const [archive] = ofKind('objectCreated');
    if (archive === undefined) throw new Error('no objectCreated function');
    const record = (eventName: string, key: string) => ({
      eventName,
      eventTime: '2026-01-01T00:00:00.000Z',
      s3: { bucket: { name: 'scenario-archives' }, object: { key, size: 1, eTag: 'e', sequencer: '1' } },
    });
    s3.emit('event', {
      Records: [
        record('ObjectCreated:Put', `${archive.trigger.prefix}acme/upload 1.zip`),
        record('ObjectCreated:Put', 'companies/acme/other.zip'),
        record('ObjectRemoved:Delete', `${archive.trigger.prefix}acme/gone.zip`),
      ],
    });
    await until(() => (calls.get(archive.entry) ?? []).length > 0);
    await sleep(50);
    const events = calls.get(archive.entry) as S3Event[];
    expect(events.map((event) => event.Records[0]?.s3.object.key)).toEqual([`${archive.trigger.prefix}acme/upload+1.zip`]);
  });

  it('feeds the queue consumer from the in-process queue and runs each schedule on its timer', async () => {
    await startEventFunctions(context());
    const [worker] = ofKind('queue');
    if (worker === undefined) throw new Error('no queue function');
    localQueue(LOCAL_ROLLOUT_QUEUE).send(['{"type":"RolloutChunk"}']);
    await until(() => (calls.get(worker.entry) ?? []).length > 0);
    expect((calls.get(worker.entry) as SQSEvent[])[0]?.Records.map((record) => record.body)).toEqual(['{"type":"RolloutChunk"}']);
    const schedules = ofKind('schedule');
    expect(schedules.length).toBeGreaterThan(0);
    await until(() => schedules.every((definition) => (calls.get(definition.entry) ?? []).length >= 2));
  });

  it('starts a function added to the definitions with nothing more than its definition and handler', async () => {
    const added = defineFunction({
      id: 'NightlyReport',
      label: 'Nightly report',
      entry: 'functions/handlers/nightly-report.ts',
      trigger: { kind: 'tableStream', tables: ['audit'], batchSize: 700, retryAttempts: -1 },
      access: { storage: false },
    });
    const functions = await startEventFunctions(context(), [added]);
    expect(functions.started).toEqual(['NightlyReport']);
    await functions.startStreams();
    await until(() => (calls.get(added.entry) ?? []).length > 0);
    // Its own batch size, being above the local read's floor.
    expect(reads).toEqual(new Set([`${STREAM_ARNS.audit}|700`]));
    await functions.pollers.get('NightlyReport')?.stop();
    await expect(access(join(dataDirectory, 'streams', 'nightly-report.json'))).resolves.toBeUndefined();
  });
});

describe('localScheduleIntervalMs', () => {
  const settings = readEnvironment('localRuntime', {
    UPLOAD_SWEEP_INTERVAL_MS: '1234',
    HEARTBEAT_SWEEP_INTERVAL_MS: '2345',
    ROLLOUT_SWEEP_INTERVAL_MS: '3456',
  });

  it("runs the sweepers at the runtime's own settings, which tests shorten", () => {
    expect(localScheduleIntervalMs(uploadSweeper, settings)).toBe(1234);
    expect(localScheduleIntervalMs(heartbeatSweeper, settings)).toBe(2345);
    expect(localScheduleIntervalMs(rolloutSweeper, settings)).toBe(3456);
  });

  it("runs any other schedule at its definition's rate", () => {
    const hourly: FunctionDefinition<ScheduleTrigger> = defineFunction({
      id: 'Hourly',
      label: 'Hourly',
      entry: 'functions/handlers/hourly.ts',
      trigger: { kind: 'schedule', everyMinutes: 60, via: 'rule', description: 'Hourly.' },
      access: { storage: false },
    });
    expect(localScheduleIntervalMs(hourly, settings)).toBe(3_600_000);
  });
});
