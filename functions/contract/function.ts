/**
 * One definition per function that no HTTP route runs: what invokes it (its trigger) and what it may touch (its
 * access, as a route's). From it follow, on AWS, the function, its event source, schedule or queue, its IAM grants and
 * its alarms, and locally the stand-in of its trigger's kind (a stream poller, the in-process queue, a timer, the S3
 * event bridge: functions/local/event-functions.ts). Plain data: the CDK app, the local runtime and the tests all
 * import it.
 */
import type { FunctionAccess, TableName } from './route.js';

/**
 * A DynamoDB stream consumer of `tables` (each must have a stream), from the oldest record: batches of `batchSize`
 * records (waiting up to `maxBatchingWindowSeconds` to fill one), a failed batch halved and retried `retryAttempts`
 * times (-1: until `maxRecordAgeHours`), then described in the function's dead-letter queue.
 */
export interface TableStreamTrigger {
  kind: 'tableStream';
  tables: readonly TableName[];
  batchSize: number;
  /** @default no batching window */
  maxBatchingWindowSeconds?: number;
  /** -1: until the records are `maxRecordAgeHours` old. */
  retryAttempts: number;
  /** @default the stream's retention (24 hours) */
  maxRecordAgeHours?: number;
  /**
   * Only the records whose new image's partition key begins with this reach the function (an event filter on AWS,
   * the local poller drops the others): writes of the table's other items, and deletions, invoke nothing.
   * @default every record
   */
  partitionKeyPrefix?: string;
}

/**
 * A consumer of the SQS queue `queue` (its construct id prefix: `<queue>Queue`, `<queue>DeadLetterQueue`): batches
 * of `batchSize` messages, at most `maxConcurrency` invocations at once; a message failed `maxReceiveCount` times
 * moves to the dead-letter queue. `retentionDays`: how long a message waits at most.
 */
export interface QueueTrigger {
  kind: 'queue';
  queue: string;
  /** The queue's name in alarms. */
  queueLabel: string;
  batchSize: number;
  maxConcurrency: number;
  /** Receives of a message before it moves to the dead-letter queue (each one an invocation that failed it). */
  maxReceiveCount: number;
  retentionDays: number;
}

/**
 * The service's own bus events of `detailTypes` (EventBridge `detail-type`s, source EVENT_SOURCE): on AWS an
 * EventBridge rule on the bus sends them to the SQS queue `<queue>Queue` (dead-letter queue `<queue>DeadLetterQueue`
 * after `maxReceiveCount` receives), which feeds the function batches of `batchSize` SQS messages, each body the
 * EventBridge envelope (`detail` = the bus event), at most `maxConcurrency` invocations at once. Locally a follower of
 * the local bus's file hands the same envelopes to the same handler, resuming after its checkpoint after a restart.
 */
export interface BusEventsTrigger {
  kind: 'busEvents';
  detailTypes: readonly string[];
  queue: string;
  /** The queue's name in alarms. */
  queueLabel: string;
  batchSize: number;
  /** @default no batching window */
  maxBatchingWindowSeconds?: number;
  maxConcurrency: number;
  /** Receives of a message before it moves to the dead-letter queue (each one an invocation that failed it). */
  maxReceiveCount: number;
  retentionDays: number;
}

/**
 * A run every `everyMinutes`: from EventBridge Scheduler (`scheduler`: a role that may invoke this function only,
 * the schedule's own failure metrics, alarmed when runs stop) or an EventBridge rule (`rule`). A missed run is not
 * retried: the next one does what it left.
 */
export interface ScheduleTrigger {
  kind: 'schedule';
  everyMinutes: number;
  via: 'scheduler' | 'rule';
  /** The schedule's description. */
  description: string;
}

/**
 * S3 ObjectCreated notifications of the archive bucket under `prefix`: asynchronous invocations, retried
 * `retryAttempts` times within `maxEventAgeHours`, then the function's dead-letter queue.
 */
export interface ObjectCreatedTrigger {
  kind: 'objectCreated';
  prefix: string;
  retryAttempts: number;
  maxEventAgeHours: number;
}

/** The onEvent handler of a CloudFormation custom resource (`resourceType`), run on deployments. */
export interface CustomResourceTrigger {
  kind: 'customResource';
  resourceType: string;
}

/** The Cognito user pool's pre-token-generation trigger (V2_0 event): lives in the stateful stack with the pool. */
export interface CognitoTrigger {
  kind: 'cognito';
  operation: 'preTokenGeneration';
}

/**
 * API Gateway's Lambda REQUEST authorizer of the user routes of `apis` (payload 2.0, simple responses), its answer
 * cached per `Authorization` header for `resultsCacheTtlSeconds` (API Gateway allows 0 to 3,600).
 */
export interface HttpAuthorizerTrigger {
  kind: 'httpAuthorizer';
  apis: readonly ('main' | 'upload')[];
  resultsCacheTtlSeconds: number;
}

/** Invoked by hand only (an operator's command). */
export interface ManualTrigger {
  kind: 'manual';
  /** The stack output naming the function, and its description. */
  output: { name: string; description: string };
}

/** What invokes a function. */
export type FunctionTrigger =
  | TableStreamTrigger
  | QueueTrigger
  | BusEventsTrigger
  | ScheduleTrigger
  | ObjectCreatedTrigger
  | CustomResourceTrigger
  | CognitoTrigger
  | HttpAuthorizerTrigger
  | ManualTrigger;

/** A function that no HTTP route runs: see the module comment. */
export interface FunctionDefinition<T extends FunctionTrigger = FunctionTrigger> {
  /**
   * Name (PascalCase) of the function's companions on AWS: `<id>DeadLetterQueue`, `<id>Schedule`, `<id>ScheduleRole`
   * and its alarms. The function's own construct id follows from `entry`, as a route's does.
   */
  id: string;
  /** The function's name in alarms. */
  label: string;
  /** Handler module, relative to the repository root; it exports `handler`. */
  entry: string;
  trigger: T;
  /** What the function may touch (timeout and memory included). */
  access: FunctionAccess;
}

/** Declares a function, keeping its literal types (so that its trigger's fields stay typed where they are read). */
export function defineFunction<const T extends FunctionTrigger>(definition: FunctionDefinition<T>): FunctionDefinition<T> {
  return definition;
}
