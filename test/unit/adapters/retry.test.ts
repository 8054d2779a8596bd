/**
 * The retry helper (functions/adapters/retry.ts): its back-off schedule and jitter, the retryable predicate, the
 * attempt and time budgets, the resumed failure count and the abort signal. Waits are recorded, not slept, except in
 * the abort case.
 */
import { describe, expect, it } from 'vitest';
import { backoffDelayMs, type RetryFailure, retry } from '../../../functions/adapters/retry.js';

class Transient extends Error {}

/** An operation that fails `failures` times with `error`, then resolves to 'done'; counts its calls. */
function flaky(failures: number, error: () => Error = () => new Transient('not yet')) {
  const calls: number[] = [];
  const operation = async (attempt: number) => {
    calls.push(attempt);
    if (calls.length <= failures) throw error();
    return 'done';
  };
  return { operation, calls };
}

/** A sleep that advances a fake clock and records each wait, ms. */
function fakeTime() {
  const waits: number[] = [];
  let clock = 0;
  return {
    waits,
    now: () => clock,
    sleep: async (ms: number) => {
      waits.push(ms);
      clock += ms;
    },
  };
}

describe('backoffDelayMs', () => {
  it('doubles from minDelayMs up to maxDelayMs; jitter takes off up to its share of each wait', () => {
    const schedule = (random: number, jitter: number) =>
      [1, 2, 3, 4, 5, 6, 7].map((retryNumber) =>
        backoffDelayMs(retryNumber, { minDelayMs: 2_000, maxDelayMs: 60_000, jitter, random: () => random }),
      );
    expect(schedule(0.999_999, 0)).toEqual([2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000]);
    expect(schedule(0, 0.5)).toEqual([2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000]);
    expect(schedule(0.5, 0.5)).toEqual([1_500, 3_000, 6_000, 12_000, 24_000, 45_000, 45_000]);
    expect(schedule(0.5, 1)).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000]);
  });

  it('draws a different wait each time by default, never above the nominal one nor below (1 - jitter) of it', () => {
    const draws = Array.from({ length: 200 }, () => backoffDelayMs(3));
    expect(Math.max(...draws)).toBeLessThanOrEqual(2_000);
    expect(Math.min(...draws)).toBeGreaterThanOrEqual(1_000);
    expect(new Set(draws).size).toBeGreaterThan(10);
  });
});

describe('retry', () => {
  it('retries until the operation succeeds, reporting each failure and wait', async () => {
    const { operation, calls } = flaky(2);
    const time = fakeTime();
    const reported: RetryFailure[] = [];
    const result = await retry(operation, { ...time, jitter: 0, minDelayMs: 100, onRetry: (failure) => reported.push(failure) });
    expect(result).toBe('done');
    expect(calls).toEqual([1, 2, 3]);
    expect(time.waits).toEqual([100, 200]);
    expect(reported.map(({ attempt, delayMs, error }) => ({ attempt, delayMs, message: (error as Error).message }))).toEqual([
      { attempt: 1, delayMs: 100, message: 'not yet' },
      { attempt: 2, delayMs: 200, message: 'not yet' },
    ]);
  });

  it('gives up after `attempts` in all, throwing the last error', async () => {
    let count = 0;
    const time = fakeTime();
    const error = await retry(
      async () => {
        count += 1;
        throw new Transient(`failure ${count}`);
      },
      { ...time, attempts: 3 },
    ).catch((caught: unknown) => caught);
    expect((error as Error).message).toBe('failure 3');
    expect(count).toBe(3);
    expect(time.waits).toHaveLength(2);
  });

  it('throws an error the predicate does not accept at once, without waiting', async () => {
    const { operation, calls } = flaky(5, () => new Error('permanent'));
    const time = fakeTime();
    await expect(retry(operation, { ...time, retryable: (error) => error instanceof Transient })).rejects.toThrow('permanent');
    expect(calls).toEqual([1]);
    expect(time.waits).toEqual([]);
  });

  it('starts no attempt after the budget: it stops when the next wait would end beyond it', async () => {
    const { operation, calls } = flaky(Number.POSITIVE_INFINITY);
    const time = fakeTime();
    await expect(
      retry(operation, { ...time, attempts: Number.POSITIVE_INFINITY, minDelayMs: 1_000, maxDelayMs: 4_000, jitter: 0, budgetMs: 15_000 }),
    ).rejects.toThrow('not yet');
    // 1 + 2 + 4 + 4 = 11 s; a further 4 s wait would end at 15 s, still within; the next would not.
    expect(time.waits).toEqual([1_000, 2_000, 4_000, 4_000, 4_000]);
    expect(calls).toHaveLength(6);
  });

  it('resumes a run of failures: waits before the first attempt and goes on doubling', async () => {
    const { operation } = flaky(1);
    const time = fakeTime();
    await retry(operation, { ...time, priorFailures: 3, minDelayMs: 500, jitter: 0 });
    expect(time.waits).toEqual([2_000, 4_000]);
  });

  it('an aborted signal ends a wait in progress and rejects with its reason', async () => {
    const controller = new AbortController();
    const { operation, calls } = flaky(Number.POSITIVE_INFINITY);
    const started = performance.now();
    const outcome = retry(operation, { attempts: Number.POSITIVE_INFINITY, minDelayMs: 60_000, signal: controller.signal });
    // A real timer: the abort must land while retry's own wait (node:timers/promises, which fake timers leave alone) is
    // under way.
    setTimeout(() => controller.abort(new Error('stopped')), 50);
    await expect(outcome).rejects.toThrow('stopped');
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(calls).toEqual([1]);
  });
});
