/**
 * The deployment batch protocol every client follows (`dss deploy`/`undeploy` in the CLI, the console's bulk deploy):
 * a list of entries sent in chunks of at most MAX_DEPLOYMENT_ENTRIES, in order; chunk i of a run carries the
 * `Idempotency-Key` `<client>-<run id>-<i>`; a journal, opened before the first chunk, is told each chunk the service
 * answered and forgotten once all were, so that the same batch started again after an interruption reuses the run id
 * (hence the keys): the service replays the answered chunks (`Idempotent-Replayed: true`) instead of executing them
 * twice. Where the journal is kept is each client's (a file of the CLI, the console's sessionStorage). An answer that
 * asks for it (409 of a key still being processed, 429, 503) is retried with the same key, after its `Retry-After`
 * or a doubling backoff.
 *
 * No Node module and nothing of the service's sources: the console bundles this file.
 */
import type { DeploymentResultItem } from './deployment-results.js';
import type { components } from './index.js';
import { IDEMPOTENCY_KEY_RETENTION_SECONDS, MAX_DEPLOYMENT_ENTRIES, MAX_IDEMPOTENCY_KEY_LENGTH } from './limits.js';

/** A deployment request entry (the body's `requests[]`). */
export type DeploymentEntry = components['schemas']['DeploymentRequest'];
/** DEPLOY or UNDEPLOY. */
export type DeploymentAction = components['schemas']['DeploymentAction'];

/** The entries of `action` of `scenario@version` on each device id, in order. */
export function deploymentEntries(action: DeploymentAction, scenario: string, version: string, ids: readonly string[]): DeploymentEntry[] {
  return ids.map((id) => ({ target: { type: 'DEVICE', id }, what: { type: 'SCENARIO', id: scenario, subId: version }, action }));
}

/** Splits `items` into consecutive chunks of at most `size` (the last one shorter). @throws RangeError for a size below 1 */
export function chunksOf<T>(items: readonly T[], size = MAX_DEPLOYMENT_ENTRIES): T[][] {
  if (!Number.isInteger(size) || size < 1) throw new RangeError(`chunk size must be a positive integer; got ${size}`);
  const chunks: T[][] = [];
  for (let start = 0; start < items.length; start += size) chunks.push(items.slice(start, start + size));
  return chunks;
}

/**
 * The `Idempotency-Key` of chunk `index` (0-based) of run `runId` of a client: `<client>-<runId>-<index>`.
 * @throws RangeError when it would be longer than MAX_IDEMPOTENCY_KEY_LENGTH (the service would refuse every chunk)
 */
export function batchIdempotencyKey(client: string, runId: string, index: number): string {
  const key = `${client}-${runId}-${index}`;
  if (key.length > MAX_IDEMPOTENCY_KEY_LENGTH) throw new RangeError(`batch id too long for an Idempotency-Key: ${runId.length} characters`);
  return key;
}

/**
 * Whether a run started at `startedAt` (ISO-8601) is older than the service keeps a key's answer: resuming it replays
 * nothing, its answered chunks execute again.
 */
export function outlivesKeyRetention(startedAt: string, now: Date): boolean {
  return now.getTime() - Date.parse(startedAt) > IDEMPOTENCY_KEY_RETENTION_SECONDS * 1000;
}

/** One request of a batch: its index, its key (undefined on a dry run: nothing to resume) and its entries. */
export interface PlannedChunk<Key extends string | undefined = string | undefined> {
  index: number;
  key: Key;
  entries: DeploymentEntry[];
}

/** The requests of a batch: its entries in chunks of at most `size`, each with the key `keyOf` gives its index. */
export function planChunks<Key extends string | undefined>(
  entries: readonly DeploymentEntry[],
  size: number,
  keyOf: (index: number) => Key,
): PlannedChunk<Key>[] {
  return chunksOf(entries, size).map((chunk, index) => ({ index, key: keyOf(index), entries: chunk }));
}

/** What one chunk's request answered. */
export interface ChunkAnswer {
  /** One item per entry, in request order. */
  items: DeploymentResultItem[];
  /** The service replayed a stored answer (`Idempotent-Replayed: true`): the chunk had been answered before. */
  replayed: boolean;
}

/** Where a batch stopped: the chunk whose request failed (the ones before were answered and journaled), and why. */
export class BatchStopped extends Error {
  constructor(
    /** Index of the chunk whose request failed. */
    readonly chunk: number,
    readonly chunks: number,
    override readonly cause: unknown,
  ) {
    super(`stopped at chunk ${chunk + 1} of ${chunks}`);
    this.name = 'BatchStopped';
  }
}

/** What sendChunks calls. */
export interface ChunkSending<Key extends string | undefined> {
  /** Sends one chunk (retrying as it sees fit). @throws what makes the batch stop */
  send: (chunk: PlannedChunk<Key>) => Promise<ChunkAnswer>;
  /** Records in the journal that chunk `index` was answered, before the next one is sent. */
  answered?: (index: number) => void | Promise<void>;
  /** Told the number of entries answered so far: 0 before the first chunk, then after each. */
  progress?: (done: number) => void;
}

/**
 * Sends the chunks in order, one at a time, journaling each answered one. Every chunk is sent, answered ones
 * included: the service replays those, and its answer is the items the summary needs.
 * @returns every result item in request order, and how many chunks the service replayed
 * @throws BatchStopped when a chunk's request fails or its answer has not one item per entry (the journal is kept)
 */
export async function sendChunks<Key extends string | undefined>(
  chunks: readonly PlannedChunk<Key>[],
  sending: ChunkSending<Key>,
): Promise<{ items: DeploymentResultItem[]; replayedChunks: number }> {
  const items: DeploymentResultItem[] = [];
  let replayedChunks = 0;
  sending.progress?.(0);
  for (const chunk of chunks) {
    let answer: ChunkAnswer;
    try {
      answer = await sending.send(chunk);
    } catch (error) {
      throw new BatchStopped(chunk.index, chunks.length, error);
    }
    if (answer.items.length !== chunk.entries.length) {
      const mismatch = new Error(`The service answered ${answer.items.length} items for a chunk of ${chunk.entries.length} entries.`);
      throw new BatchStopped(chunk.index, chunks.length, mismatch);
    }
    items.push(...answer.items);
    if (answer.replayed) replayedChunks += 1;
    await sending.answered?.(chunk.index);
    sending.progress?.(items.length);
  }
  return { items, replayedChunks };
}

/** One attempt's outcome for `retrying`: a value, or a status that may ask for a retry (with its `Retry-After`). */
export type Attempt<T> = { ok: true; value: T } | { ok: false; status: number; retryAfter: string | null; failure: unknown };

/** How `retrying` waits and how often. */
export interface RetryOptions {
  /** Retries after the first attempt. @default 3 */
  retries?: number;
  /** First backoff, ms, doubled at each retry. @default 1_000 */
  backoff?: number;
  /** Longest backoff, ms. @default maxWait */
  maxBackoff?: number;
  /** Longest `Retry-After` honoured, ms. @default 30_000 */
  maxWait?: number;
  /** Waits `ms` (tests pass a fake). */
  sleep?: (ms: number) => Promise<void>;
  /** Told before each wait: the status and how long, ms. */
  onRetry?: (status: number, waitMs: number) => void;
}

/**
 * The CLI's retries: a terminal run of many chunks waits long for a chunk still being processed (409) or a busy
 * service, 12 times at most, backing off from 0.5 s to 5 s, or `Retry-After` up to a minute.
 */
export const CLI_RETRY: Readonly<RetryOptions> = { retries: 12, backoff: 500, maxBackoff: 5_000, maxWait: 60_000 };

/** The console's retries: a person is waiting, so a few (3), from 1 s doubling, `Retry-After` up to 30 s; "Deploy" again resumes. */
export const CONSOLE_RETRY: Readonly<RetryOptions> = { retries: 3, backoff: 1_000, maxWait: 30_000 };

/** Statuses worth a retry with the same request: 409 (the same key is still being processed), 429 and 503. */
export const RETRIED_STATUSES: readonly number[] = [409, 429, 503];

/**
 * How long to wait before retry `retry` (0-based), ms: `Retry-After` seconds when given as a positive number (at most
 * maxWait), else the backoff doubled at each retry (at most maxBackoff). A `Retry-After` of 0 or an empty one gets
 * the backoff, so that a busy service is never retried in a tight loop.
 */
export function retryDelay(retryAfter: string | null, retry: number, backoff = 1_000, maxWait = 30_000, maxBackoff = maxWait): number {
  const seconds = retryAfter === null || retryAfter.trim() === '' ? Number.NaN : Number(retryAfter);
  if (Number.isFinite(seconds) && seconds > 0) return Math.min(seconds * 1000, maxWait);
  return Math.min(backoff * 2 ** retry, maxBackoff);
}

/**
 * Runs `attempt` until it succeeds or fails for good: a failure with a RETRIED_STATUSES status is tried again, at most
 * `retries` times, after its delay (retryDelay). @returns the value; @throws the last failure's `failure`
 */
export async function retrying<T>(attempt: () => Promise<Attempt<T>>, options: RetryOptions = {}): Promise<T> {
  const retries = options.retries ?? 3;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((done) => setTimeout(done, ms)));
  for (let retry = 0; ; retry++) {
    const outcome = await attempt();
    if (outcome.ok) return outcome.value;
    if (!RETRIED_STATUSES.includes(outcome.status) || retry >= retries) throw outcome.failure;
    const wait = retryDelay(outcome.retryAfter, retry, options.backoff, options.maxWait, options.maxBackoff);
    options.onRetry?.(outcome.status, wait);
    await sleep(wait);
  }
}
