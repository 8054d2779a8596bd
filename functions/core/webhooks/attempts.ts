/**
 * Attempting many deliveries at once: those a stream batch brought (new and redelivered ones) and those the retry
 * sweeper finds due. Each goes through attemptDelivery, whose claim keeps two senders from making the same attempt.
 */
import pLimit from 'p-limit';
import { type AttemptResult, attemptDelivery, type DeliveryOptions, type DeliveryPorts, isDue } from './delivery.js';
import { DELIVERY_TIMEOUT_MS, type StoredDelivery } from './model.js';

/** Attempts in flight at once per caller (each waits at most the delivery timeout on its receiver). */
export const ATTEMPT_CONCURRENCY = 16;

/** Due deliveries the sweeper reads per query of the `due` index. */
export const SWEEP_PAGE_SIZE = 64;

/** How many attempts ended each way. */
export type AttemptCounts = Record<AttemptResult, number>;

const noAttempts = (): AttemptCounts => ({ 'not-due': 0, taken: 0, succeeded: 0, retrying: 0, failed: 0 });

/**
 * The deliveries of `images` (a stream batch's new images, oldest first) to attempt now: the last image of each
 * delivery, when it is PENDING and due at `now` (a delivery claimed or recorded later in the batch is not).
 */
export function dueOfImages(images: readonly StoredDelivery[], now: Date): StoredDelivery[] {
  const latest = new Map<string, StoredDelivery>();
  for (const image of images) latest.set(`${image.company}#${image.webhookId}#${image.id}`, image);
  return [...latest.values()].filter((delivery) => isDue(delivery, now));
}

/**
 * Attempts each delivery (attemptDelivery), ATTEMPT_CONCURRENCY at a time.
 * @returns how many attempts ended each way
 * @throws the first store failure, once every attempt started has ended (the caller's batch or run is retried)
 */
export async function attemptEach(
  ports: DeliveryPorts,
  deliveries: readonly StoredDelivery[],
  options: DeliveryOptions,
): Promise<AttemptCounts> {
  const limit = pLimit(ATTEMPT_CONCURRENCY);
  const settled = await Promise.allSettled(deliveries.map((delivery) => limit(() => attemptDelivery(ports, delivery, options))));
  const counts = noAttempts();
  for (const result of settled) if (result.status === 'fulfilled') counts[result.value] += 1;
  const failure = settled.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (failure !== undefined) throw failure.reason;
  return counts;
}

/**
 * The longest one round of ATTEMPT_CONCURRENCY attempts may take, ms: the send's timeout and a second for the claim,
 * the webhook's read and the record.
 */
const ROUND_WORST_MS = DELIVERY_TIMEOUT_MS + 1_000;

/**
 * The retry sweeper's run: reads the due deliveries (DeliveryStore.due) and attempts them, until none is due, a page
 * made no progress (every one taken by another sender), or no more can end within `budgetMs` of the run's start:
 * each page is at most as large as the rounds of ATTEMPT_CONCURRENCY that fit in what is left, each counted at its
 * worst (ROUND_WORST_MS), so that no attempt outlives the function's timeout with its result unrecorded (what is left
 * is due at the next run).
 * @returns how many attempts ended each way
 * @throws what the stores throw
 */
export async function sweepDueDeliveries(ports: DeliveryPorts, options: DeliveryOptions, budgetMs: number): Promise<AttemptCounts> {
  const started = options.now().getTime();
  const counts = noAttempts();
  for (;;) {
    const rounds = Math.floor((budgetMs - (options.now().getTime() - started)) / ROUND_WORST_MS);
    const pageSize = Math.min(SWEEP_PAGE_SIZE, rounds * ATTEMPT_CONCURRENCY);
    if (pageSize <= 0) break;
    const due = await ports.deliveries.due(options.now().toISOString(), pageSize);
    const page = await attemptEach(ports, due, options);
    for (const [result, count] of Object.entries(page) as [AttemptResult, number][]) counts[result] += count;
    const progressed = page.succeeded + page.retrying + page.failed > 0;
    if (due.length < pageSize || !progressed) break;
  }
  return counts;
}
