/**
 * The functions no route runs, started locally from their definitions (functions/contract/functions.ts) by the kind
 * of their trigger, as lib/constructs/event-functions.ts wires them on AWS: a table stream → a DynamoDbStreamPoller
 * over the streams of its tables; a queue → a consumer of the in-process queue; a schedule → a timer; the archive
 * bucket's ObjectCreated → s3rver's event bridge. Each stand-in invokes the `handler` its definition's `entry`
 * exports, the very function Lambda runs. Nothing here names a function: adding one is its definition and its handler.
 */
import { join } from 'node:path';
import type { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent, S3Event, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { TABLES, type TableName } from '../adapters/aws/tables.js';
import { localQueue } from '../adapters/embedded/local-work-queue.js';
import { retry } from '../adapters/retry.js';
import { ENV } from '../contract/environment.js';
import type {
  BusEventsTrigger,
  FunctionDefinition,
  FunctionTrigger,
  ObjectCreatedTrigger,
  QueueTrigger,
  ScheduleTrigger,
  TableStreamTrigger,
} from '../contract/function.js';
import {
  alertSweeper,
  commandExpirySweeper,
  FUNCTIONS,
  heartbeatSweeper,
  rolloutSweeper,
  uploadSweeper,
  webhookRetrySweeper,
} from '../contract/functions.js';
import { LocalBusFollower } from './bus-follower.js';
import { FileStreamCheckpoints } from './file-checkpoints.js';
import { LOCAL_ROLLOUT_QUEUE, localEventsFileOf } from './local-environment.js';
import type { Log, RuntimeSettings, StopSteps } from './runtime-layout.js';
import { type S3rverRecord, toS3Event } from './s3-events.js';
import { DynamoDbStreamPoller } from './stream-poller.js';
import type { TableStreamArns } from './tables.js';

/**
 * Invocations of an ObjectCreated handler per S3 event, the first included, as AWS makes for an asynchronous
 * invocation (two retries); the waits between them are jittered around 0.5 s and 1 s.
 */
const S3_EVENT_ATTEMPTS = 3;

/** The notifications s3rver emits after an object is written (S3rver satisfies it). */
export interface S3Notifications {
  on(event: 'event', listener: (event: { Records: S3rverRecord[] }) => void): unknown;
}

/** What the stand-ins need from the running runtime. */
export interface EventFunctionsContext {
  /** The `handler` export of a handler module (loadHandler, from the repository root). */
  load<Handler extends (...args: never[]) => unknown>(entry: string): Promise<Handler>;
  /** The DynamoDB Local streams client the pollers share (its owner destroys it). */
  streams: DynamoDBStreamsClient;
  /** The stream ARN of each streamed table. */
  streamArns: TableStreamArns;
  /** The data folder: stream checkpoints are kept in its `streams/` folder. */
  dataDirectory: string;
  /** s3rver, whose ObjectCreated notifications the objectCreated functions receive. */
  s3: S3Notifications;
  /** The region S3 events name. */
  region: string;
  /** How often a scheduled function runs locally, ms (localScheduleIntervalMs). */
  scheduleIntervalMs(definition: FunctionDefinition<ScheduleTrigger>): number;
  /**
   * Stream consumers (definition ids) whose position the runtime sets itself: the search indexer, positioned by the
   * search index's start (its snapshot's positions, or the latest records before a rebuild). Every other stream
   * consumer resumes after its checkpoint, as an event source mapping keeps its position.
   */
  positionedByRuntime: ReadonlySet<string>;
  /** Where each stand-in pushes its stop (run in reverse order). */
  stops: StopSteps;
  log: Log;
}

/** The functions started: see startEventFunctions. */
export interface EventFunctions {
  /** The ids of the definitions started, in the order of the definitions. */
  started: readonly string[];
  /** The poller of each stream consumer, by definition id: created, not polling until startStreams. */
  pollers: ReadonlyMap<string, DynamoDbStreamPoller>;
  /**
   * Resumes the pollers that keep checkpoints and starts every poller (once the runtime has positioned the others);
   * pushes their stop.
   */
  startStreams(): Promise<void>;
}

/** Starts one function on its local stand-in; a stream consumer's poller is registered in `pollers`, not started. */
type Starter<T extends FunctionTrigger> = (
  definition: FunctionDefinition<T>,
  context: EventFunctionsContext,
  pollers: Map<string, DynamoDbStreamPoller>,
) => Promise<void>;

/** A trigger kind the runtime deliberately starts nothing for, and why. */
interface NotStartedLocally {
  notStartedLocally: string;
}

/** How each trigger kind runs locally: a kind added to FunctionTrigger does not compile until it is given one. */
const LOCAL_TRIGGERS: { [K in FunctionTrigger['kind']]: Starter<Extract<FunctionTrigger, { kind: K }>> | NotStartedLocally } = {
  tableStream: startStreamConsumer,
  queue: startQueueConsumer,
  busEvents: startBusEventsConsumer,
  schedule: startSchedule,
  objectCreated: startObjectCreated,
  customResource: {
    notStartedLocally:
      'CloudFormation runs custom resources on deployments, and the local runtime deploys nothing. The one the service has ' +
      "(the search index's template and alias) is the runtime's start: it loads or rebuilds the index, and a rebuild puts " +
      'the template (fillSearchIndex).',
  },
  cognito: {
    notStartedLocally:
      'The local runtime has no Cognito user pool: its own issuer puts the scopes and companies the pre-token-generation ' +
      'trigger adds on AWS into the tokens it issues.',
  },
  httpAuthorizer: {
    notStartedLocally:
      'The local gateway verifies every bearer token itself before it invokes a handler, with the same verifyBearerToken ' +
      "the authorizer runs on AWS, trusting the one local issuer that signs users', devices' and API clients' tokens.",
  },
  manual: {
    notStartedLocally:
      "Invoked by an operator's command, never by an event: locally the same rebuild is npm run reindex (the admin " +
      "listener's POST /search/reindex).",
  },
};

/**
 * Schedules the runtime runs at its own rate (a setting of the `localRuntime` group, which tests shorten), by
 * definition id; any other schedule runs at its definition's rate.
 */
const LOCAL_SCHEDULE_SETTINGS: Readonly<Record<string, keyof RuntimeSettings>> = {
  [uploadSweeper.id]: ENV.uploadSweepIntervalMs,
  [heartbeatSweeper.id]: ENV.heartbeatSweepIntervalMs,
  [rolloutSweeper.id]: ENV.rolloutSweepIntervalMs,
  [commandExpirySweeper.id]: ENV.commandSweepIntervalMs,
  [alertSweeper.id]: ENV.alertSweepIntervalMs,
  [webhookRetrySweeper.id]: ENV.webhookSweepIntervalMs,
};

/**
 * How often a scheduled function runs locally, ms: its local setting (UPLOAD_SWEEP_INTERVAL_MS,
 * HEARTBEAT_SWEEP_INTERVAL_MS, ROLLOUT_SWEEP_INTERVAL_MS, COMMAND_SWEEP_INTERVAL_MS, ALERT_SWEEP_INTERVAL_MS,
 * WEBHOOK_SWEEP_INTERVAL_MS) when it has one, else its definition's `everyMinutes`.
 */
export function localScheduleIntervalMs(definition: FunctionDefinition<ScheduleTrigger>, settings: RuntimeSettings): number {
  const setting = LOCAL_SCHEDULE_SETTINGS[definition.id];
  return setting === undefined ? definition.trigger.everyMinutes * 60_000 : (settings[setting] as number);
}

/**
 * Starts every function of `definitions` (FUNCTIONS by default) whose trigger kind runs locally, on its stand-in
 * (see the module comment); the stream pollers are created, and polled once startStreams is called. Each stand-in
 * pushes its stop to `context.stops`.
 * @throws Error when a handler module exports no handler, or a stream consumer names a table without a stream
 */
export async function startEventFunctions(
  context: EventFunctionsContext,
  definitions: readonly FunctionDefinition[] = FUNCTIONS,
): Promise<EventFunctions> {
  const pollers = new Map<string, DynamoDbStreamPoller>();
  const started: string[] = [];
  for (const definition of definitions) {
    const starter = LOCAL_TRIGGERS[definition.trigger.kind];
    if (typeof starter !== 'function') continue;
    await (starter as Starter<FunctionTrigger>)(definition, context, pollers);
    started.push(definition.id);
  }
  return {
    started,
    pollers,
    startStreams: async () => {
      // Side by side: each resume is a few DynamoDB Local round trips, and a start waits for all of them.
      await Promise.all([...pollers].filter(([id]) => !context.positionedByRuntime.has(id)).map(([, poller]) => poller.resume()));
      for (const poller of pollers.values()) poller.start();
      context.stops.push(async () => {
        await Promise.all([...pollers.values()].map((poller) => poller.stop()));
      });
    },
  };
}

/**
 * The stream ARNs of a stream consumer's tables, in the order of TABLES (as the stack adds its event sources).
 * @throws Error for a table without a stream
 */
export function tableStreamArnsOf(definition: FunctionDefinition<TableStreamTrigger>, streamArns: TableStreamArns): string[] {
  return (Object.keys(TABLES) as TableName[])
    .filter((table) => definition.trigger.tables.includes(table))
    .map((table) => {
      const arn = streamArns[table];
      if (arn === undefined) throw new Error(`The ${table} table has no stream for ${definition.id} (TABLES).`);
      return arn;
    });
}

/** `DeploymentChanges` → `deployment-changes`: the name of a function's checkpoint file. */
function fileNameOf(id: string): string {
  return id.replace(/(?<=[a-z0-9])([A-Z])/g, '-$1').toLowerCase();
}

/** Records one local stream read may deliver at the least: see localStreamBatchSize. */
export const LOCAL_STREAM_BATCH_RECORDS = 500;

/**
 * Records per local read and handler call of a stream consumer: its definition's `batchSize`, and at least
 * LOCAL_STREAM_BATCH_RECORDS. Locally one poller reads each shard once per 100 ms while records flow (Lambda polls a
 * shard several times a second and invokes concurrently), so a read of 100 would drain a seeded fleet's backlog at a
 * fifth of the rate the local runtime always had; every stream consumer is idempotent over its batch's size.
 */
export function localStreamBatchSize(definition: FunctionDefinition<TableStreamTrigger>): number {
  return Math.max(definition.trigger.batchSize, LOCAL_STREAM_BATCH_RECORDS);
}

/**
 * A poller over the streams of the definition's tables (tableStreamArnsOf), in batches of localStreamBatchSize,
 * checkpointed in `streams/<id>.json` unless the runtime positions it. A batch
 * the handler fails is delivered again from its first failed record until it succeeds, whatever `retryAttempts`
 * says: locally there is no dead-letter queue to describe a given-up batch in, and every stream consumer is
 * idempotent. No batching window: locally a change is delivered as soon as it is read.
 */
async function startStreamConsumer(
  definition: FunctionDefinition<TableStreamTrigger>,
  context: EventFunctionsContext,
  pollers: Map<string, DynamoDbStreamPoller>,
): Promise<void> {
  const arns = tableStreamArnsOf(definition, context.streamArns);
  const handler = await context.load<(event: DynamoDBStreamEvent, context: unknown) => Promise<DynamoDBBatchResponse>>(definition.entry);
  const { log } = context;
  const file = join(context.dataDirectory, 'streams', `${fileNameOf(definition.id)}.json`);
  const filtered = recordsFilter(definition.trigger);
  const poller = new DynamoDbStreamPoller(context.streams, arns, (event) => filtered(event, (kept) => handler(kept, {})), {
    batchSize: localStreamBatchSize(definition),
    onError: (error) => log(`${definition.label}: ${(error as Error).message}`),
    ...(context.positionedByRuntime.has(definition.id)
      ? {}
      : { checkpoints: new FileStreamCheckpoints(file, (error) => log(error.message)) }),
  });
  pollers.set(definition.id, poller);
}

/** A stream handler's invocation, given the event of the records it is to receive. */
type StreamInvocation = (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse>;

/**
 * How a batch reaches the handler of `trigger`: whole, or, with a `partitionKeyPrefix`, only the records whose new
 * image's partition key (any of its tables' key attribute) begins with it, and no invocation when none does (as the
 * event filter does on AWS).
 */
export function recordsFilter(
  trigger: TableStreamTrigger,
): (event: DynamoDBStreamEvent, invoke: StreamInvocation) => Promise<DynamoDBBatchResponse> {
  const prefix = trigger.partitionKeyPrefix;
  if (prefix === undefined) return (event, invoke) => invoke(event);
  const attributes = [...new Set(trigger.tables.map((table) => TABLES[table].partitionKey))];
  const kept = (image: Record<string, { S?: string }> | undefined) =>
    attributes.some((attribute) => image?.[attribute]?.S?.startsWith(prefix) === true);
  return async (event, invoke) => {
    const records = event.Records.filter((record) => kept(record.dynamodb?.NewImage as Record<string, { S?: string }> | undefined));
    return records.length === 0 ? { batchItemFailures: [] } : invoke({ Records: records });
  };
}

/**
 * A consumer of the in-process queue, with the definition's batch size, concurrency and redrive count, as the event
 * source mapping feeds SQS messages on AWS. The stack has one work queue, which every queue trigger consumes; so has
 * the runtime (LOCAL_ROLLOUT_QUEUE, the handlers' ROLLOUT_QUEUE_URL). Its stop lets the invocations in flight finish;
 * messages still queued are lost with the process, and the rollout sweeper sends them again.
 */
async function startQueueConsumer(definition: FunctionDefinition<QueueTrigger>, context: EventFunctionsContext): Promise<void> {
  const handler = await context.load<(event: SQSEvent, context: unknown) => Promise<SQSBatchResponse>>(definition.entry);
  const consumer = localQueue(LOCAL_ROLLOUT_QUEUE).consume((event) => handler(event, {}), {
    batchSize: definition.trigger.batchSize,
    concurrency: definition.trigger.maxConcurrency,
    maxReceives: definition.trigger.maxReceiveCount,
    onError: (error) => context.log(`${definition.label}: ${(error as Error).message}`),
  });
  context.stops.push(() => consumer.stop());
}

/**
 * A follower of the local bus's file (LocalBusFollower) handing the events of the trigger's detail types to the
 * handler as SQS events of EventBridge envelopes, in batches of its batch size, as the rule and queue do on AWS; its
 * offset is kept in `events/<id>.offset.json`, so it resumes there after a restart or a crash. Its stop lets the
 * batch in flight finish.
 */
async function startBusEventsConsumer(definition: FunctionDefinition<BusEventsTrigger>, context: EventFunctionsContext): Promise<void> {
  const handler = await context.load<(event: SQSEvent, context: unknown) => Promise<SQSBatchResponse>>(definition.entry);
  const follower = new LocalBusFollower({
    eventsFile: localEventsFileOf(context.dataDirectory),
    checkpointFile: join(context.dataDirectory, 'events', `${fileNameOf(definition.id)}.offset.json`),
    detailTypes: definition.trigger.detailTypes,
    // As many events per call as a local stream read, at least: the fan-out is idempotent over any batch.
    batchSize: Math.max(definition.trigger.batchSize, LOCAL_STREAM_BATCH_RECORDS),
    queue: definition.trigger.queue,
    region: context.region,
    handler: (event) => handler(event, {}),
    onError: (error) => context.log(`${definition.label}: ${error.message}`),
  });
  await follower.start();
  context.stops.push(() => follower.stop());
}

/**
 * Runs the handler every scheduleIntervalMs, one run at a time (a run still going when the timer fires is not
 * doubled, as a missed run on AWS is not retried); its stop clears the timer and waits for the run in progress.
 */
async function startSchedule(definition: FunctionDefinition<ScheduleTrigger>, context: EventFunctionsContext): Promise<void> {
  const run = await context.load<(event: unknown, context: unknown) => Promise<void>>(definition.entry);
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    running ??= run({}, {})
      .catch((error: unknown) => context.log(`${definition.label}: ${(error as Error).message}`))
      .finally(() => {
        running = undefined;
      });
  }, context.scheduleIntervalMs(definition));
  context.stops.push(async () => {
    clearInterval(timer);
    await running;
  });
}

/**
 * Hands s3rver's ObjectCreated notifications under the definition's prefix to its handler, as S3 invokes it on AWS
 * (asynchronously: S3_EVENT_ATTEMPTS); its stop waits for the invocations in flight.
 */
async function startObjectCreated(definition: FunctionDefinition<ObjectCreatedTrigger>, context: EventFunctionsContext): Promise<void> {
  const handler = await context.load<(event: S3Event, context: unknown) => Promise<void>>(definition.entry);
  const inFlight = new Set<Promise<void>>();
  context.s3.on('event', (event) => {
    for (const record of event.Records) {
      if (!record.eventName.startsWith('ObjectCreated') || !record.s3.object.key.startsWith(definition.trigger.prefix)) continue;
      const failed = (attempt: number, error: unknown) =>
        context.log(
          `${definition.label} failed (attempt ${attempt} of ${S3_EVENT_ATTEMPTS}) for ${record.s3.object.key}: ${(error as Error).message}`,
        );
      let attempts = 0;
      const invocation = retry(
        (attempt) => {
          attempts = attempt;
          return handler(toS3Event(record, context.region), {});
        },
        { attempts: S3_EVENT_ATTEMPTS, minDelayMs: 500, onRetry: ({ error, attempt }) => failed(attempt, error) },
      ).catch((error: unknown) => failed(attempts, error));
      inFlight.add(invocation);
      void invocation.finally(() => inFlight.delete(invocation));
    }
  });
  context.stops.push(async () => {
    await Promise.allSettled([...inFlight]);
  });
}
