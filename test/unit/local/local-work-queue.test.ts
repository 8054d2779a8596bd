/**
 * The local runtime's rollout queue (functions/adapters/embedded/local-work-queue.ts): what a consumer is given looks
 * like an SQS event, records reported in `batchItemFailures` (or a whole batch whose handler threw) come back after
 * the delay and are dropped after `maxReceives`, concurrency is bounded, and stop() waits for the work in flight.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { type LocalQueueConsumer, LocalWorkQueue, localQueue } from '../../../functions/adapters/embedded/local-work-queue.js';
import type { RolloutWorkMessage } from '../../../functions/core/rollouts/model.js';

let names = 0;
const consumers: LocalQueueConsumer[] = [];
afterEach(async () => {
  for (const consumer of consumers.splice(0)) await consumer.stop();
});

const message = (chunk: number): RolloutWorkMessage => ({
  type: 'RolloutChunk',
  company: 'acme',
  rolloutId: '01J0000000000000000000000A',
  wave: 0,
  chunk,
});
const chunkOf = (body: string) => (JSON.parse(body) as RolloutWorkMessage).chunk;

/** Resolves once `condition` holds (polled), or fails after 5 s. */
async function until(condition: () => boolean): Promise<void> {
  for (let waited = 0; !condition(); waited += 10) {
    if (waited > 5_000) throw new Error('condition not met within 5 s');
    await sleep(10);
  }
}

describe('local work queue', () => {
  it('delivers SQS-shaped records in batches, and what the handler reports failed again, with its receive count', async () => {
    names += 1;
    const name = `local:test-${names}`;
    const seen: { chunk: number; receiveCount: string; batch: number }[] = [];
    let batches = 0;
    const consumer = localQueue(name).consume(
      async (event: SQSEvent): Promise<SQSBatchResponse> => {
        batches += 1;
        for (const record of event.Records) {
          expect(record).toMatchObject({ eventSource: 'aws:sqs', messageId: expect.any(String), md5OfBody: expect.any(String) });
          seen.push({ chunk: chunkOf(record.body), receiveCount: record.attributes.ApproximateReceiveCount, batch: batches });
        }
        // Chunk 1 fails on its first delivery.
        const failed = event.Records.filter((record) => chunkOf(record.body) === 1 && record.attributes.ApproximateReceiveCount === '1');
        return { batchItemFailures: failed.map((record) => ({ itemIdentifier: record.messageId })) };
      },
      { batchSize: 2, concurrency: 1, redeliveryDelayMs: 20 },
    );
    consumers.push(consumer);
    await new LocalWorkQueue(name).send([message(0), message(1), message(2)]);
    await until(() => seen.length === 4);
    expect(seen).toEqual([
      { chunk: 0, receiveCount: '1', batch: 1 },
      { chunk: 1, receiveCount: '1', batch: 1 },
      { chunk: 2, receiveCount: '1', batch: 2 },
      { chunk: 1, receiveCount: '2', batch: 3 },
    ]);
    expect(localQueue(name).size).toBe(0);
  });

  it('delivers a whole batch again when the handler throws, and drops a record after maxReceives', async () => {
    names += 1;
    const name = `local:test-${names}`;
    const errors: string[] = [];
    let deliveries = 0;
    consumers.push(
      localQueue(name).consume(
        async () => {
          deliveries += 1;
          throw new Error('worker down');
        },
        { batchSize: 1, concurrency: 1, redeliveryDelayMs: 5, maxReceives: 3, onError: (error) => errors.push((error as Error).message) },
      ),
    );
    await new LocalWorkQueue(name).send([message(7)]);
    await until(() => errors.length === 4);
    expect(deliveries).toBe(3);
    expect(errors.slice(0, 3)).toEqual(['worker down', 'worker down', 'worker down']);
    expect(errors[3]).toMatch(/dropped after 3 deliveries/);
    expect(localQueue(name).size).toBe(0);
  });

  it('runs at most `concurrency` invocations at once, drops a body sent again while still waiting, and stop() waits for the work in flight', async () => {
    names += 1;
    const name = `local:test-${names}`;
    let running = 0;
    let most = 0;
    let finished = 0;
    const consumer = localQueue(name).consume(
      async () => {
        running += 1;
        most = Math.max(most, running);
        await sleep(50); // the work in flight, which stop() must wait for
        running -= 1;
        finished += 1;
        return { batchItemFailures: [] };
      },
      { batchSize: 1, concurrency: 2, redeliveryDelayMs: 5 },
    );
    const queue = new LocalWorkQueue(name);
    await queue.send([message(0), message(1), message(2), message(3)]);
    // Chunks 0 and 1 are being delivered, 2 and 3 wait: 3 again is dropped, 0 again is queued (it is no longer waiting).
    await queue.send([message(3), message(0)]);
    expect(localQueue(name).size).toBe(3);
    // Stopped while both invocations are under way.
    await until(() => running === 2);
    await consumer.stop();
    expect(running).toBe(0);
    expect(finished).toBe(2);
    expect(most).toBe(2);
    // Stopped: what was waiting stays for a later consumer.
    expect(localQueue(name).size).toBe(3);
    const later: number[] = [];
    consumers.push(
      localQueue(name).consume(
        async (event) => {
          later.push(...event.Records.map((record) => chunkOf(record.body)));
          return { batchItemFailures: [] };
        },
        { batchSize: 10, concurrency: 1 },
      ),
    );
    await until(() => later.length === 3);
    expect(later).toEqual([2, 3, 0]);
  });
});
