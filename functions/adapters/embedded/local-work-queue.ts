/**
 * The local runtime's stand-in for SQS: an in-memory queue per `local:<name>`, shared by the whole process (the
 * handlers that send and the runtime that consumes load this module separately, so the queues hang off `globalThis`),
 * and a consumer that invokes an SQS handler with SQS-shaped events, as Lambda's event source mapping does: batches of
 * `batchSize`, at most `concurrency` invocations at once, the records a handler reports in `batchItemFailures` (or the
 * whole batch when it throws) delivered again after a delay, and dropped after `maxReceives` deliveries (SQS would move
 * them to a dead-letter queue). Nothing survives the process: the rollout sweeper sends lost work again.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { RolloutWorkMessage } from '../../core/rollouts/model.js';
import type { WorkQueue } from '../../core/rollouts/ports.js';

/** One message in a local queue. */
interface LocalMessage {
  messageId: string;
  body: string;
  /** Deliveries so far. */
  receiveCount: number;
  /** Epoch ms. */
  sentTimestamp: number;
  /** Epoch ms of the first delivery. */
  firstReceiveTimestamp?: number;
}

/** The handler a consumer invokes: an SQS Lambda handler (partial batch responses). */
export type SqsBatchHandler = (event: SQSEvent) => Promise<SQSBatchResponse | undefined>;

/** How a consumer delivers. */
export interface LocalQueueConsumerOptions {
  /** Records per invocation. */
  batchSize: number;
  /** Invocations at once. */
  concurrency: number;
  /** Wait before a failed record is delivered again, ms (SQS: its visibility timeout). @default 1000 */
  redeliveryDelayMs?: number;
  /** Deliveries of a record before it is dropped. @default 5 */
  maxReceives?: number;
  /** Told of a handler that threw, and of each record dropped. */
  onError?: (error: unknown) => void;
}

/** A running consumer. */
export interface LocalQueueConsumer {
  /**
   * Stops delivering: waits for the invocations in flight; records failed by them, and those waiting to be delivered
   * again, stay in the queue (for a later consumer of this process).
   */
  stop(): Promise<void>;
}

/** One named in-memory queue. */
export class LocalQueue {
  private readonly ready: LocalMessage[] = [];
  private readonly delayed = new Map<NodeJS.Timeout, LocalMessage>();
  private readonly inFlight = new Set<Promise<void>>();
  private consumer:
    | { handler: SqsBatchHandler; options: Required<Omit<LocalQueueConsumerOptions, 'onError'>> & LocalQueueConsumerOptions }
    | undefined;

  constructor(readonly name: string) {}

  /** Messages waiting: ready or waiting to be delivered again (not those being delivered). */
  get size(): number {
    return this.ready.length + this.delayed.size;
  }

  /**
   * Appends messages. A body equal to one still waiting to be delivered is dropped: sending the same work again
   * while it is queued (the rollout sweeper re-sending a chunk that is only slow) must not pile it up.
   */
  send(bodies: readonly string[]): void {
    const waiting = new Set(this.ready.map((message) => message.body));
    for (const body of bodies) {
      if (waiting.has(body)) continue;
      waiting.add(body);
      this.ready.push({ messageId: randomUUID(), body, receiveCount: 0, sentTimestamp: Date.now() });
    }
    this.pump();
  }

  /** Drops every waiting message (not those being delivered). */
  clear(): void {
    this.ready.length = 0;
    for (const timer of this.delayed.keys()) clearTimeout(timer);
    this.delayed.clear();
  }

  /**
   * Starts delivering to `handler`. @throws Error when the queue has a consumer already (one per queue, as one
   * event source mapping).
   */
  consume(handler: SqsBatchHandler, options: LocalQueueConsumerOptions): LocalQueueConsumer {
    if (this.consumer !== undefined) throw new Error(`The local queue ${this.name} has a consumer already.`);
    const consumer = { handler, options: { redeliveryDelayMs: 1_000, maxReceives: 5, ...options } };
    this.consumer = consumer;
    this.pump();
    return {
      stop: async () => {
        if (this.consumer === consumer) this.consumer = undefined;
        while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
        // Records waiting for their redelivery become ready again: a later consumer gets them at once.
        for (const [timer, message] of this.delayed) {
          clearTimeout(timer);
          this.ready.push(message);
        }
        this.delayed.clear();
      },
    };
  }

  private pump(): void {
    const consumer = this.consumer;
    if (consumer === undefined) return;
    while (this.consumer === consumer && this.inFlight.size < consumer.options.concurrency && this.ready.length > 0) {
      const batch = this.ready.splice(0, Math.max(1, consumer.options.batchSize));
      const delivery: Promise<void> = this.deliver(consumer, batch).finally(() => {
        this.inFlight.delete(delivery);
        this.pump();
      });
      this.inFlight.add(delivery);
    }
  }

  private async deliver(consumer: NonNullable<LocalQueue['consumer']>, batch: LocalMessage[]): Promise<void> {
    const now = Date.now();
    for (const message of batch) {
      message.receiveCount += 1;
      message.firstReceiveTimestamp ??= now;
    }
    let failed: Set<string>;
    try {
      const response = await consumer.handler({ Records: batch.map((message) => this.record(message)) });
      failed = new Set((response?.batchItemFailures ?? []).map((failure) => failure.itemIdentifier));
    } catch (error) {
      consumer.options.onError?.(error);
      failed = new Set(batch.map((message) => message.messageId));
    }
    for (const message of batch) if (failed.has(message.messageId)) this.redeliver(consumer, message);
  }

  private redeliver(consumer: NonNullable<LocalQueue['consumer']>, message: LocalMessage): void {
    if (message.receiveCount >= consumer.options.maxReceives) {
      consumer.options.onError?.(
        new Error(
          `Local queue ${this.name}: message ${message.messageId} dropped after ${message.receiveCount} deliveries: ${message.body}`,
        ),
      );
      return;
    }
    const timer = setTimeout(() => {
      this.delayed.delete(timer);
      this.ready.push(message);
      this.pump();
    }, consumer.options.redeliveryDelayMs);
    this.delayed.set(timer, message);
  }

  /** The message as an SQS event record. */
  private record(message: LocalMessage): SQSRecord {
    return {
      messageId: message.messageId,
      receiptHandle: message.messageId,
      body: message.body,
      attributes: {
        ApproximateReceiveCount: String(message.receiveCount),
        SentTimestamp: String(message.sentTimestamp),
        SenderId: 'local',
        ApproximateFirstReceiveTimestamp: String(message.firstReceiveTimestamp ?? message.sentTimestamp),
      },
      messageAttributes: {},
      md5OfBody: createHash('md5').update(message.body).digest('hex'),
      eventSource: 'aws:sqs',
      eventSourceARN: `arn:aws:sqs:local:000000000000:${this.name}`,
      awsRegion: 'local',
    };
  }
}

const QUEUES = Symbol.for('device-scenario-service.local-work-queues');

/**
 * The process's queue named `name` (`local:rollouts` and `rollouts` name the same queue), created on first use.
 */
export function localQueue(name: string): LocalQueue {
  const registry = ((globalThis as Record<symbol, unknown>)[QUEUES] ??= new Map<string, LocalQueue>()) as Map<string, LocalQueue>;
  const key = name.replace(/^local:/, '');
  let queue = registry.get(key);
  if (queue === undefined) {
    queue = new LocalQueue(key);
    registry.set(key, queue);
  }
  return queue;
}

/** WorkQueue on the process's local queue `local:<name>` (ROLLOUT_QUEUE_URL in the local runtime). */
export class LocalWorkQueue implements WorkQueue {
  constructor(private readonly name: string) {}

  /** @inheritdoc */
  async send(messages: readonly RolloutWorkMessage[]): Promise<void> {
    localQueue(this.name).send(messages.map((message) => JSON.stringify(message)));
  }
}
