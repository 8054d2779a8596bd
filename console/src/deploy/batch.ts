/**
 * The console's deployment batches, without the DOM or the network (the unit tests run them in Node): the entries of a
 * scenario version on a list of devices, their chunks of at most MAX_DEPLOYMENT_ENTRIES with one `Idempotency-Key`
 * each, the journal kept in the tab's sessionStorage, the retry of answers that ask for one, and the counts per state
 * and cause.
 *
 * The journal follows the CLI's batches (cli/batch.ts): it is written before the first chunk is sent and names the
 * batch id every chunk's key derives from, so that a reload in the middle of a deploy, followed by the same deploy
 * (same company, scenario version and devices), sends every chunk again with the same keys: the service replays the
 * chunks it had answered (`Idempotent-Replayed: true`) instead of deploying them twice, and executes the others.
 * Unlike the CLI's file, the journal also holds the device ids in the order they were sent, so that a resumed batch
 * sends the very same bodies even when a search now lists the devices in another order.
 */

import { CAUSE_MESSAGES, type DeploymentResultItem, type SummaryLine, summarize } from '../../../client/deployment-results.js';
import type { components } from '../../../client/index.js';

/**
 * Most entries one deployment request may carry: MAX_DEPLOYMENT_ENTRIES of functions/core/deployments/deployments.ts
 * (copied: the console bundle imports nothing from functions/; more gives 413 and changes nothing).
 */
export const MAX_DEPLOYMENT_ENTRIES = 5_000;

/** Longest `Idempotency-Key` the service accepts, characters (the deployment route's header). */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/** A deployment request entry (the body's `requests[]`). */
export type DeploymentEntry = components['schemas']['DeploymentRequest'];
/** One result item of the deployment route: one per entry, in request order. */

/** The DEPLOY entries of `scenario@version` on each device id, in order. */
export function deployEntries(scenario: string, version: string, ids: readonly string[]): DeploymentEntry[] {
  return ids.map((id) => ({ target: { type: 'DEVICE', id }, what: { type: 'SCENARIO', id: scenario, subId: version }, action: 'DEPLOY' }));
}

/** Splits `items` into consecutive chunks of at most `size` (the last one shorter). @throws RangeError for a size below 1 */
export function chunksOf<T>(items: readonly T[], size = MAX_DEPLOYMENT_ENTRIES): T[][] {
  if (!Number.isInteger(size) || size < 1) throw new RangeError(`chunk size must be a positive integer; got ${size}`);
  const chunks: T[][] = [];
  for (let start = 0; start < items.length; start += size) chunks.push(items.slice(start, start + size));
  return chunks;
}

/** The `Idempotency-Key` of chunk `index` (0-based) of batch `batchId`: `console-<batchId>-<index>`. */
export function idempotencyKeyOf(batchId: string, index: number): string {
  const key = `console-${batchId}-${index}`;
  if (key.length > MAX_IDEMPOTENCY_KEY_LENGTH)
    throw new RangeError(`batch id too long for an Idempotency-Key: ${batchId.length} characters`);
  return key;
}

/** One request of a batch: its entries and its key. */
export interface PlannedChunk {
  index: number;
  key: string;
  entries: DeploymentEntry[];
}

/** The requests of a batch: its entries in chunks of at most `size`, each with the key of its index. */
export function planChunks(batchId: string, entries: readonly DeploymentEntry[], size = MAX_DEPLOYMENT_ENTRIES): PlannedChunk[] {
  return chunksOf(entries, size).map((chunk, index) => ({ index, key: idempotencyKeyOf(batchId, index), entries: chunk }));
}

/** What decides a batch's request bodies: the company they go to, the scenario version, the devices. */
export interface BatchInput {
  company: string;
  scenario: string;
  version: string;
  /** Device ids of `company`, in the order they are to be sent. */
  ids: readonly string[];
}

/**
 * The fingerprint of a batch: two deploys share it when they deploy the same version to the same set of devices of a
 * company (in any order). A 53-bit string hash (cyrb53), hex: it names a journal, it guards nothing.
 */
export function batchFingerprint(input: BatchInput): string {
  const canonical = JSON.stringify([input.company, input.scenario, input.version, [...new Set(input.ids)].sort()]);
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < canonical.length; i++) {
    const code = canonical.charCodeAt(i);
    h1 = Math.imul(h1 ^ code, 2654435761);
    h2 = Math.imul(h2 ^ code, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(16).padStart(14, '0');
}

/** The part of the Storage interface a journal needs (sessionStorage in the console, a Map-backed fake in tests). */
export interface StorageLike {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

/** What a batch journal holds. */
export interface Journal {
  /** Random id of the batch (a UUID), the middle of every chunk's key. */
  batchId: string;
  fingerprint: string;
  company: string;
  scenario: string;
  version: string;
  /** The device ids in the order they are sent: a resumed batch sends exactly these bodies again. */
  ids: string[];
  /** Number of chunks. */
  chunks: number;
  /** Indexes of the chunks the service has answered, ascending. */
  done: number[];
  /** When the batch started, ISO-8601 (the service keeps a key's answer 24 h). */
  startedAt: string;
}

/** An open journal and whether an interrupted batch left it. */
export interface OpenJournal {
  journal: Journal;
  /** true when the same deploy was started before and not finished: its batch id (hence its keys) is reused. */
  resumed: boolean;
}

/**
 * The start of every journal's sessionStorage key: signing out removes every key with this prefix, so that the next
 * user of the tab neither sees nor resumes the previous user's interrupted deploys.
 */
export const DEPLOY_JOURNAL_PREFIX = 'dss.deployBatch.';

/** The storage key of a batch's journal: DEPLOY_JOURNAL_PREFIX and its fingerprint. */
export function journalKey(fingerprint: string): string {
  return `${DEPLOY_JOURNAL_PREFIX}${fingerprint}`;
}

/** The journal an interrupted batch with this input left, or undefined (none, or not a journal). */
export function findJournal(storage: StorageLike, input: BatchInput): Journal | undefined {
  const fingerprint = batchFingerprint(input);
  try {
    const raw = storage.getItem(journalKey(fingerprint));
    if (raw === null) return undefined;
    const journal = JSON.parse(raw) as Journal;
    const valid =
      typeof journal.batchId === 'string' &&
      journal.fingerprint === fingerprint &&
      Array.isArray(journal.ids) &&
      Array.isArray(journal.done) &&
      journal.chunks === chunksOf(journal.ids).length;
    return valid ? journal : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Opens the journal of a batch: the one an interrupted batch with the same input left (resumed, with its batch id and
 * its order of ids), or a new one with `newId()` as batch id, stored before this returns, hence before any chunk is
 * sent. @throws what `storage.setItem` throws (a full storage): better not to deploy than to deploy unjournaled
 */
export function openJournal(storage: StorageLike, input: BatchInput, newId: () => string, now = new Date()): OpenJournal {
  const existing = findJournal(storage, input);
  if (existing !== undefined) return { journal: existing, resumed: true };
  const journal: Journal = {
    batchId: newId(),
    fingerprint: batchFingerprint(input),
    company: input.company,
    scenario: input.scenario,
    version: input.version,
    ids: [...input.ids],
    chunks: chunksOf(input.ids).length,
    done: [],
    startedAt: now.toISOString(),
  };
  storage.setItem(journalKey(journal.fingerprint), JSON.stringify(journal));
  return { journal, resumed: false };
}

/** Records that chunk `index` was answered (in `journal` and in storage). */
export function markChunkDone(storage: StorageLike, journal: Journal, index: number): void {
  if (!journal.done.includes(index)) {
    journal.done.push(index);
    journal.done.sort((a, b) => a - b);
  }
  storage.setItem(journalKey(journal.fingerprint), JSON.stringify(journal));
}

/** Forgets a finished batch: the same deploy started later is a new batch, executed anew. */
export function closeJournal(storage: StorageLike, journal: Journal): void {
  storage.removeItem(journalKey(journal.fingerprint));
}

/** Sends one chunk with its key. @returns its items (one per entry) and whether the service replayed a stored answer */
export type SendChunk = (entries: DeploymentEntry[], key: string) => Promise<{ items: DeploymentResultItem[]; replayed: boolean }>;

/** What runBatch did. */
export interface BatchOutcome {
  /** Every result item, in the journal's order of ids. */
  items: DeploymentResultItem[];
  journal: Journal;
  /** It went on with an interrupted batch (same batch id, same keys). */
  resumed: boolean;
  /** Chunks the service answered from its idempotency store: sent before a reload, not executed again. */
  replayedChunks: number;
}

/** Where a batch stopped: the chunk that failed, and the failure. */
export class BatchStopped extends Error {
  constructor(
    /** Index of the chunk whose request failed (the ones before were answered and journaled). */
    readonly chunk: number,
    readonly chunks: number,
    override readonly cause: unknown,
  ) {
    super(`stopped at chunk ${chunk + 1} of ${chunks}`);
    this.name = 'BatchStopped';
  }
}

/**
 * Deploys a batch: opens (or resumes) its journal, then sends every chunk in order with its key, recording each
 * answered chunk, and forgets the journal once all were answered. Every chunk is sent, answered ones included: the
 * service replays those (its answer is the items the summary needs), which is also what makes a reload safe.
 * @param onStart told the journal and whether it resumes one, before the first chunk
 * @param onProgress told the number of entries answered so far
 * @throws BatchStopped when a chunk's request fails (the journal is kept, so that the same deploy resumes)
 */
export async function runBatch(
  storage: StorageLike,
  input: BatchInput,
  send: SendChunk,
  options: { newId: () => string; onStart?: (open: OpenJournal) => void; onProgress?: (done: number, total: number) => void },
): Promise<BatchOutcome> {
  const open = openJournal(storage, input, options.newId);
  const { journal } = open;
  options.onStart?.(open);
  const chunks = planChunks(journal.batchId, deployEntries(journal.scenario, journal.version, journal.ids));
  const items: DeploymentResultItem[] = [];
  let replayedChunks = 0;
  options.onProgress?.(0, journal.ids.length);
  for (const chunk of chunks) {
    let answer: Awaited<ReturnType<SendChunk>>;
    try {
      answer = await send(chunk.entries, chunk.key);
    } catch (error) {
      throw new BatchStopped(chunk.index, chunks.length, error);
    }
    if (answer.items.length !== chunk.entries.length) {
      throw new BatchStopped(
        chunk.index,
        chunks.length,
        new Error(`${answer.items.length} items answered for ${chunk.entries.length} entries`),
      );
    }
    items.push(...answer.items);
    if (answer.replayed) replayedChunks += 1;
    markChunkDone(storage, journal, chunk.index);
    options.onProgress?.(items.length, journal.ids.length);
  }
  closeJournal(storage, journal);
  return { items, journal, resumed: open.resumed, replayedChunks };
}

/** One attempt's outcome for `retrying`: a value, or a status that may ask for a retry (with its `Retry-After`). */
export type Attempt<T> = { ok: true; value: T } | { ok: false; status: number; retryAfter: string | null; failure: unknown };

/** How `retrying` waits and how often. */
export interface RetryOptions {
  /** Retries after the first attempt. @default 3 */
  retries?: number;
  /** First backoff, ms, doubled at each retry. @default 1_000 */
  backoff?: number;
  /** Longest `Retry-After` honoured, ms. @default 30_000 */
  maxWait?: number;
  /** Waits `ms` (tests pass a fake). */
  sleep?: (ms: number) => Promise<void>;
  /** Told before each wait: the status and how long. */
  onRetry?: (status: number, waitMs: number) => void;
}

/** Statuses worth a retry with the same request: 409 (the same key is still being processed), 429 and 503. */
export const RETRIED_STATUSES: readonly number[] = [409, 429, 503];

/** How long to wait before retry `retry` (0-based): `Retry-After` seconds when given (at most maxWait), else the backoff. */
export function retryDelay(retryAfter: string | null, retry: number, backoff = 1_000, maxWait = 30_000): number {
  const seconds = retryAfter === null ? Number.NaN : Number(retryAfter);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds * 1000, maxWait);
  return Math.min(backoff * 2 ** retry, maxWait);
}

/**
 * Runs `attempt` until it succeeds or fails for good: a failure with a RETRIED_STATUSES status is tried again, a few
 * times, after its delay (retryDelay). @returns the value; @throws the last failure's `failure`
 */
export async function retrying<T>(attempt: () => Promise<Attempt<T>>, options: RetryOptions = {}): Promise<T> {
  const retries = options.retries ?? 3;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((done) => setTimeout(done, ms)));
  for (let retry = 0; ; retry++) {
    const outcome = await attempt();
    if (outcome.ok) return outcome.value;
    if (!RETRIED_STATUSES.includes(outcome.status) || retry >= retries) throw outcome.failure;
    const wait = retryDelay(outcome.retryAfter, retry, options.backoff, options.maxWait);
    options.onRetry?.(outcome.status, wait);
    await sleep(wait);
  }
}

// Shared with every client (client/deployment-results.ts); re-exported for this module's users.
export { CAUSE_MESSAGES, type DeploymentResultItem, type SummaryLine, summarize };
