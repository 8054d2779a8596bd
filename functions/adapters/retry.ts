/**
 * The one retry helper of the service: exponential back-off with jitter, on p-retry 7. Every loop that tries again
 * (DynamoDB unprocessed batch items and transaction conflicts, OpenSearch bulk retries and index setup, the local
 * runtime's restarts and waits) goes through `retry`, each with its own policy.
 *
 * p-retry runs the attempts, the retry count and the abort signal; the wait itself is made here (p-retry's own is
 * off: `minTimeout: 0`), so that `onRetry` can report it and tests can inject `sleep`, `now` and `random` instead of
 * faking timers. p-retry never retries a TypeError other than a network error, nor a thrown non-Error.
 */
import { setTimeout as wait } from 'node:timers/promises';
import pRetry from 'p-retry';

/** One failed attempt that will be tried again, as `onRetry` sees it. */
export interface RetryFailure {
  /** What the attempt threw. */
  error: unknown;
  /** The attempt that failed, 1-based, counted from this call (not from `priorFailures`). */
  attempt: number;
  /** The wait before the next attempt, ms (jitter applied). */
  delayMs: number;
}

/** How `retry` tries again. Every field has a default (DEFAULT_RETRY_POLICY). */
export interface RetryPolicy {
  /** Attempts in all, the first included; `Infinity` tries until success, the budget or the signal. @default 4 */
  attempts?: number;
  /** Nominal wait after the first failure, ms; it doubles after every further failure. @default 500 */
  minDelayMs?: number;
  /** Longest nominal wait, ms. @default 30000 */
  maxDelayMs?: number;
  /**
   * Share of each nominal wait drawn at random, 0 to 1: the wait is uniform in [(1 - jitter) × nominal, nominal],
   * so callers that failed together spread out while the nominal schedule stays the ceiling (budgets computed from
   * it hold). 0: exact waits; 0.5: "equal jitter"; 1: "full jitter". @default 0.5
   */
  jitter?: number;
  /** No attempt starts later than this after the call started, ms (the last wait is never cut short). @default Infinity */
  budgetMs?: number;
  /** Whether an error may be retried; any other is thrown at once. @default every error */
  retryable?: (error: unknown) => boolean;
  /** Called before each wait (not after the last attempt), e.g. to log it. */
  onRetry?: (failure: RetryFailure) => void;
  /**
   * Failures already counted before this call (a supervisor resuming a run of failures): the first attempt waits as
   * the retry after that many failures would, and the waits go on doubling from there. @default 0
   */
  priorFailures?: number;
  /** Ends the retrying: a pending wait rejects with the signal's reason and no attempt starts after it. */
  signal?: AbortSignal;
  /** Waits `ms` (tests). With a custom `sleep`, the signal no longer interrupts a wait in progress. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Monotonic clock, ms (tests). */
  now?: () => number;
  /** Uniform random number in [0, 1) drawing the jitter (tests). */
  random?: () => number;
}

/** The defaults of every RetryPolicy field that has one. */
export const DEFAULT_RETRY_POLICY = {
  attempts: 4,
  minDelayMs: 500,
  maxDelayMs: 30_000,
  jitter: 0.5,
  budgetMs: Number.POSITIVE_INFINITY,
} as const;

/**
 * The wait before retry number `retryNumber` (1 = after the first failure), ms: min(maxDelayMs, minDelayMs ×
 * 2^(retryNumber − 1)), less up to `jitter` of it at random.
 */
export function backoffDelayMs(
  retryNumber: number,
  policy: Pick<RetryPolicy, 'minDelayMs' | 'maxDelayMs' | 'jitter' | 'random'> = {},
): number {
  const minDelayMs = policy.minDelayMs ?? DEFAULT_RETRY_POLICY.minDelayMs;
  const maxDelayMs = policy.maxDelayMs ?? DEFAULT_RETRY_POLICY.maxDelayMs;
  const jitter = Math.min(1, Math.max(0, policy.jitter ?? DEFAULT_RETRY_POLICY.jitter));
  const nominal = Math.min(maxDelayMs, minDelayMs * 2 ** Math.max(0, retryNumber - 1));
  return Math.round(nominal * (1 - jitter * (policy.random ?? Math.random)()));
}

/** Waits `ms`; an abort ends the wait with the signal's reason (node's own rejection is a generic AbortError). */
async function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  try {
    await wait(ms, undefined, signal === undefined ? {} : { signal });
  } catch (error) {
    signal?.throwIfAborted();
    throw error;
  }
}

/**
 * Runs `operation` (given the attempt number, 1-based) until it resolves, waiting with jittered exponential
 * back-off (backoffDelayMs) after each retryable failure, while attempts are left and the next attempt would start
 * within `budgetMs`.
 * @returns what `operation` resolved to.
 * @throws the error of the last attempt (not retryable, attempts or budget spent); the signal's reason when aborted.
 */
export async function retry<T>(operation: (attempt: number) => Promise<T>, policy: RetryPolicy = {}): Promise<T> {
  const attempts = policy.attempts ?? DEFAULT_RETRY_POLICY.attempts;
  const budgetMs = policy.budgetMs ?? DEFAULT_RETRY_POLICY.budgetMs;
  const sleep = policy.sleep ?? abortableSleep;
  const now = policy.now ?? (() => performance.now());
  const prior = policy.priorFailures ?? 0;
  const deadline = now() + budgetMs;
  if (prior > 0) {
    await sleep(backoffDelayMs(prior, policy), policy.signal);
    policy.signal?.throwIfAborted();
  }
  return pRetry(operation, {
    retries: Math.max(0, attempts - 1),
    minTimeout: 0,
    ...(policy.signal === undefined ? {} : { signal: policy.signal }),
    // Called only when an attempt is left: decides, reports and waits.
    shouldRetry: async ({ error, attemptNumber }) => {
      if (policy.retryable !== undefined && !policy.retryable(error)) return false;
      const delayMs = backoffDelayMs(prior + attemptNumber, policy);
      if (now() + delayMs > deadline) return false;
      policy.onRetry?.({ error, attempt: attemptNumber, delayMs });
      await sleep(delayMs, policy.signal);
      return true;
    },
  });
}
