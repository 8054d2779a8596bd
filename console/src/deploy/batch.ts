/**
 * The console's deployment batches, without the DOM or the network (the unit tests run them in Node): the DEPLOY
 * entries of a scenario version on a list of devices, and the journal kept in the tab's sessionStorage. The protocol
 * itself (chunks of at most MAX_DEPLOYMENT_ENTRIES, their keys, the journaled sending, the retries) is the one every
 * client follows, client/deployment-batch.ts.
 *
 * A reload in the middle of a deploy, followed by the same deploy (same company, scenario version and devices), finds
 * the journal and its batch id, so every chunk is sent again with the same key: the service replays the chunks it had
 * answered (`Idempotent-Replayed: true`) instead of deploying them twice, and executes the others. Unlike the CLI's
 * file, the journal also holds the device ids in the order they were sent, so that a resumed batch sends the very same
 * bodies even when a search now lists the devices in another order.
 */
import {
  type Attempt,
  BatchStopped,
  batchIdempotencyKey,
  type ChunkAnswer,
  chunksOf,
  type DeploymentEntry,
  deploymentEntries,
  type PlannedChunk,
  planChunks as planKeyedChunks,
  type RetryOptions,
  retryDelay,
  retrying,
  sendChunks,
} from '../../../client/deployment-batch.js';
import { CAUSE_MESSAGES, type DeploymentResultItem, type SummaryLine, summarize } from '../../../client/deployment-results.js';
import { MAX_DEPLOYMENT_ENTRIES } from '../../../client/limits.js';

/** The DEPLOY entries of `scenario@version` on each device id, in order. */
export function deployEntries(scenario: string, version: string, ids: readonly string[]): DeploymentEntry[] {
  return deploymentEntries('DEPLOY', scenario, version, ids);
}

/** The `Idempotency-Key` of chunk `index` (0-based) of batch `batchId`: `console-<batchId>-<index>`. @throws RangeError when too long */
export function idempotencyKeyOf(batchId: string, index: number): string {
  return batchIdempotencyKey('console', batchId, index);
}

/** The requests of a batch: its entries in chunks of at most `size`, each with the key of its index. */
export function planChunks(batchId: string, entries: readonly DeploymentEntry[], size = MAX_DEPLOYMENT_ENTRIES): PlannedChunk<string>[] {
  return planKeyedChunks(entries, size, (index) => idempotencyKeyOf(batchId, index));
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
  /** When the batch started, ISO-8601 (the service keeps a key's answer IDEMPOTENCY_KEY_RETENTION_SECONDS). */
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
export type SendChunk = (entries: DeploymentEntry[], key: string) => Promise<ChunkAnswer>;

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

/**
 * Deploys a batch: opens (or resumes) its journal, then sends every chunk in order with its key (sendChunks),
 * recording each answered chunk, and forgets the journal once all were answered.
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
  const { items, replayedChunks } = await sendChunks(chunks, {
    send: (chunk) => send(chunk.entries, chunk.key),
    answered: (index) => markChunkDone(storage, journal, index),
    progress: (done) => options.onProgress?.(done, journal.ids.length),
  });
  closeJournal(storage, journal);
  return { items, journal, resumed: open.resumed, replayedChunks };
}

// The protocol's pieces (client/deployment-batch.ts) and the summary (client/deployment-results.ts), for this
// module's users.
export {
  type Attempt,
  BatchStopped,
  CAUSE_MESSAGES,
  chunksOf,
  type DeploymentEntry,
  type DeploymentResultItem,
  MAX_DEPLOYMENT_ENTRIES,
  type RetryOptions,
  retryDelay,
  retrying,
  type SummaryLine,
  summarize,
};
