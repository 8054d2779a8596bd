/**
 * Deployment batches of `dss deploy` and `dss undeploy`: a list of device ids sent in chunks of at most
 * MAX_CHUNK_SIZE entries, each chunk with an `Idempotency-Key`, so that rerunning an interrupted run is safe.
 *
 * The keys come from a journal, `{config}/batches/<fingerprint>.json`, written before the first chunk is sent and
 * removed once every chunk was answered. The fingerprint is a SHA-256 of everything that makes the request bodies
 * (company, action, scenario version, ids, note, chunk size) and the address they go to. A rerun of the same command
 * that finds the journal reuses its run id, hence every chunk's key: chunks answered before the interruption are
 * replayed by the service (`Idempotent-Replayed: true`) instead of executing again; the others execute. A later run
 * with the same input finds no journal and draws a new run id, so it executes anew instead of getting the first
 * run's responses back.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ulid } from 'ulid';
import {
  BatchStopped,
  batchIdempotencyKey,
  type ChunkAnswer,
  CLI_RETRY,
  chunksOf,
  type DeploymentAction,
  type DeploymentEntry,
  deploymentEntries,
  outlivesKeyRetention,
  planChunks,
  retrying,
  sendChunks,
} from '../client/deployment-batch.js';
import { CAUSE_MESSAGES, type DeploymentResultItem, type SummaryLine, summarize } from '../client/deployment-results.js';
import { ApiError } from '../client/index.js';
import {
  IDEMPOTENCY_KEY_RETENTION_SECONDS,
  MAX_DEPLOYMENT_ENTRIES,
  MAX_DEPLOYMENT_NOTE_LENGTH,
  MAX_DEPLOYMENT_TARGET_ID_LENGTH,
} from '../client/limits.js';
import { UsageError } from './output.js';

/** Most entries one deployment request may carry (the service's own limit): the largest chunk. */
export const MAX_CHUNK_SIZE = MAX_DEPLOYMENT_ENTRIES;
/** Chunk size when `--chunk-size` is not given. */
export const DEFAULT_CHUNK_SIZE = MAX_CHUNK_SIZE;
/** Most ids a `--devices` list may hold (a longer list belongs in a file: `--from`). */
export const MAX_LISTED_DEVICES = 10_000;
/** Longest `--note`, characters (the request body's `note` limit). */
export const MAX_NOTE_LENGTH = MAX_DEPLOYMENT_NOTE_LENGTH;
/** Longest device id the request body accepts, characters: a longer one would make the whole chunk a 400. */
export const MAX_TARGET_ID_LENGTH = MAX_DEPLOYMENT_TARGET_ID_LENGTH;

/**
 * The device ids of a `--devices a,b,c` list: trimmed, blanks dropped, each kept once in first-seen order.
 * @throws UsageError when the list is empty, holds more than MAX_LISTED_DEVICES ids, or an id is too long
 */
export function parseDeviceList(list: string): string[] {
  const ids = [
    ...new Set(
      list
        .split(',')
        .map((id) => id.trim())
        .filter(Boolean),
    ),
  ];
  if (ids.length === 0) throw new UsageError('--devices names no device: give ids separated by commas, e.g. --devices kiosk-1,kiosk-2.');
  if (ids.length > MAX_LISTED_DEVICES) {
    throw new UsageError(`--devices holds ${ids.length} ids; at most ${MAX_LISTED_DEVICES} may be listed: put them in a file for --from.`);
  }
  checkDeviceIds(ids);
  return ids;
}

/** @throws UsageError when an id is longer than the request body accepts (the whole chunk would be refused) */
export function checkDeviceIds(ids: readonly string[]): void {
  const long = ids.find((id) => id.length > MAX_TARGET_ID_LENGTH);
  if (long !== undefined) throw new UsageError(`Device id '${long.slice(0, 40)}…' is longer than ${MAX_TARGET_ID_LENGTH} characters.`);
}

/** Everything that decides a batch's request bodies and where they go. */
export interface BatchInput {
  /** `{base_url}` the chunks are sent to. */
  baseUrl: string;
  company: string;
  action: DeploymentAction;
  scenario: string;
  version: string;
  /** Device ids, in the order they are sent. */
  ids: readonly string[];
  /** The request's note, when given. */
  note?: string;
  /** Entries per request, 1 to MAX_CHUNK_SIZE. */
  chunkSize: number;
}

/** The entries of a batch, in order: one per device id. */
export function entriesOf(input: BatchInput): DeploymentEntry[] {
  return deploymentEntries(input.action, input.scenario, input.version, input.ids);
}

/**
 * The fingerprint of a batch: hex SHA-256 of its input. Two runs share it exactly when they would send the same
 * request bodies to the same company at the same address, chunk by chunk.
 */
export function batchFingerprint(input: BatchInput): string {
  const canonical = JSON.stringify([
    input.baseUrl.replace(/\/+$/, ''),
    input.company,
    input.action,
    `${input.scenario}@${input.version}`,
    input.ids,
    input.note ?? null,
    input.chunkSize,
  ]);
  return createHash('sha256').update(canonical).digest('hex');
}

/** The `Idempotency-Key` of chunk `index` (0-based) of run `runId`: `dss-<runId>-<index>`. @throws RangeError when too long */
export function idempotencyKey(runId: string, index: number): string {
  return batchIdempotencyKey('dss', runId, index);
}

/** What a batch journal holds. */
export interface Journal {
  /** Random id of the run (a ULID), the middle of every chunk's key. */
  runId: string;
  /** When the run started, ISO-8601. */
  startedAt: string;
  /** The batch's fingerprint (also the file's name). */
  fingerprint: string;
  /** For people reading the file: `DEPLOY acme-welcome@1.2.0 to 2000 devices`. */
  description: string;
  /** Number of chunks of the run. */
  chunks: number;
  /** Indexes of the chunks the service has answered, ascending. */
  answered: number[];
}

/** An open journal: its path and content, and whether it was left by an interrupted run. */
export interface OpenJournal {
  path: string;
  journal: Journal;
  /** true when the file existed: this run resumes an interrupted one, with its run id. */
  resumed: boolean;
}

/** Path of the journal of a batch: `{directory}/batches/<fingerprint>.json`. */
export function journalPath(directory: string, fingerprint: string): string {
  return join(directory, 'batches', `${fingerprint}.json`);
}

/**
 * Opens the journal of a batch in the CLI's folder `directory`: the one an interrupted run left (resumed), or a new
 * one with a fresh run id, written before this returns so that it exists before the first chunk is sent.
 */
export async function openJournal(directory: string, input: BatchInput, chunks: number, now = new Date()): Promise<OpenJournal> {
  const fingerprint = batchFingerprint(input);
  const path = journalPath(directory, fingerprint);
  const existing = await readJournal(path);
  if (existing !== undefined && existing.fingerprint === fingerprint && existing.chunks === chunks) {
    return { path, journal: existing, resumed: true };
  }
  const journal: Journal = {
    runId: ulid(now.getTime()),
    startedAt: now.toISOString(),
    fingerprint,
    description: `${input.action} ${input.scenario}@${input.version} on ${input.ids.length} devices of ${input.company} at ${input.baseUrl}`,
    chunks,
    answered: [],
  };
  await writeJournal(path, journal);
  return { path, journal, resumed: false };
}

/** Reads a journal; undefined when there is none or it is not one (a run then starts afresh). */
async function readJournal(path: string): Promise<Journal | undefined> {
  try {
    const journal = JSON.parse(await readFile(path, 'utf8')) as Journal;
    return typeof journal.runId === 'string' && Array.isArray(journal.answered) ? journal : undefined;
  } catch {
    return undefined;
  }
}

/** Writes a journal atomically (a temporary file renamed over it): a run killed mid-write leaves the old one whole. */
export async function writeJournal(path: string, journal: Journal): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(journal, null, 2)}\n`, { mode: 0o600 });
  await rename(temporary, path);
}

/**
 * Sends one chunk: its entries and, for a real run, its `Idempotency-Key` (undefined on a dry run).
 * @throws ApiError when the service refuses it
 */
export type SendChunk = (entries: DeploymentEntry[], key: string | undefined) => Promise<ChunkAnswer>;

/** How runBatch proceeds and reports. */
export interface BatchOptions {
  /** The CLI's folder, holding `batches/` (configDirectory()). */
  directory: string;
  /** `dryRun=true`: no journal and no keys (nothing is written, a rerun has nothing to resume). */
  dryRun: boolean;
  send: SendChunk;
  /** Called before the first chunk (0), then after each chunk, with the number of entries answered so far. */
  progress?: (done: number) => void;
  /** Called with lines for stderr (resuming, where the journal is, how to resume). */
  note?: (line: string) => void;
  /** Retries of a chunk answered 409 or 503 (see sendWithRetry). */
  retry?: RetryOptions;
  /** The clock (tests). */
  now?: () => Date;
}

/** The outcome of a batch. */
export interface BatchOutcome {
  /** Every result item, in request order. */
  items: DeploymentResultItem[];
  dryRun: boolean;
  chunks: number;
  /** The run id (absent on a dry run). */
  runId?: string;
  /** The run resumed an interrupted one. */
  resumed: boolean;
  /** Chunks the service answered from its idempotency store (answered before an interruption). */
  replayedChunks: number;
}

/**
 * Runs a batch: opens (or resumes) its journal, sends every chunk in order with its key (sendChunks, each retried as
 * sendWithRetry does), records each answered chunk in the journal, and removes the journal once every chunk was
 * answered. A chunk that cannot be sent stops the run with its error and leaves the journal, so that the same command
 * resumes it.
 * @throws UsageError when there are no ids; ApiError (or a connection error) of the chunk that failed
 */
export async function runBatch(input: BatchInput, options: BatchOptions): Promise<BatchOutcome> {
  if (input.ids.length === 0) throw new UsageError('No device to act on.');
  const now = options.now ?? (() => new Date());
  const say = options.note ?? (() => {});
  const chunkCount = chunksOf(input.ids, input.chunkSize).length;
  const outcome: BatchOutcome = { items: [], dryRun: options.dryRun, chunks: chunkCount, resumed: false, replayedChunks: 0 };
  const open = options.dryRun ? undefined : await openJournal(options.directory, input, chunkCount, now());
  if (open !== undefined) {
    outcome.runId = open.journal.runId;
    outcome.resumed = open.resumed;
    if (open.resumed) sayResuming(open.journal, now(), say);
  }
  const chunks = planChunks(entriesOf(input), input.chunkSize, (index) => open && idempotencyKey(open.journal.runId, index));
  try {
    const sent = await sendChunks(chunks, {
      send: (chunk) => sendWithRetry(() => options.send(chunk.entries, chunk.key), { ...options.retry, note: say }),
      answered: (index) => open && markAnswered(open, index),
      progress: options.progress,
    });
    Object.assign(outcome, sent);
  } catch (error) {
    if (!(error instanceof BatchStopped)) throw error;
    if (open !== undefined) {
      say(
        `Stopped at chunk ${error.chunk + 1} of ${error.chunks}: run the same command again to resume (${error.chunk} chunks answered; journal ${open.path}).`,
      );
    }
    throw error.cause;
  }
  if (open !== undefined) await rm(open.path, { force: true });
  return outcome;
}

/** Tells that a run resumes an interrupted one, and when the service no longer holds that run's answers. */
function sayResuming(journal: Journal, now: Date, say: (line: string) => void): void {
  say(
    `Resuming an interrupted run (run ${journal.runId}, started ${journal.startedAt}, ${journal.answered.length} of ${journal.chunks} chunks answered): every chunk is sent again with its key; the service replays the answered ones.`,
  );
  if (outlivesKeyRetention(journal.startedAt, now)) {
    say(
      `The run started more than ${IDEMPOTENCY_KEY_RETENTION_SECONDS / 3600} h ago: the service no longer holds its answers, so answered chunks execute again.`,
    );
  }
}

/** Records in an open journal (and its file) that chunk `index` was answered. */
async function markAnswered(open: OpenJournal, index: number): Promise<void> {
  if (open.journal.answered.includes(index)) return;
  open.journal.answered.push(index);
  await writeJournal(open.path, open.journal);
}

/** How sendWithRetry retries (CLI_RETRY of client/deployment-batch.ts unless given). */
export interface RetryOptions {
  /** Retries after the first attempt. @default 12 */
  retries?: number;
  /** First backoff, ms (doubling, at most maxTimeout). @default 500 */
  minTimeout?: number;
  /** Longest backoff, ms. @default 5_000 */
  maxTimeout?: number;
  /** Longest `Retry-After` honoured, ms. @default 60_000 */
  maxRetryAfter?: number;
  /** Where to say that a retry waits. */
  note?: (line: string) => void;
}

/**
 * Calls `send` and retries it, with the same key, on the answers that ask for it (retrying of
 * client/deployment-batch.ts): 409 (the same key is still being processed: its response comes once it is done) and
 * 429/503 (waiting `Retry-After` seconds when given, else the backoff). Anything else, connection errors included,
 * fails at once.
 */
export async function sendWithRetry<T>(send: () => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const attempt = async () => {
    try {
      return { ok: true as const, value: await send() };
    } catch (failure) {
      const status = failure instanceof ApiError ? failure.status : 0;
      const retryAfter = failure instanceof ApiError ? failure.response.headers.get('retry-after') : null;
      return { ok: false as const, status, retryAfter, failure };
    }
  };
  return retrying(attempt, {
    retries: options.retries ?? CLI_RETRY.retries,
    backoff: options.minTimeout ?? CLI_RETRY.backoff,
    maxBackoff: options.maxTimeout ?? CLI_RETRY.maxBackoff,
    maxWait: options.maxRetryAfter ?? CLI_RETRY.maxWait,
    onRetry: (status, wait) =>
      options.note?.(
        status === 409
          ? 'The service is still processing this chunk (an earlier attempt with its key): waiting for its answer.'
          : `The service answered ${status}: retrying in ${wait / 1000} s.`,
      ),
  });
}

// Shared with every client (client/deployment-batch.ts, client/deployment-results.ts); re-exported for this module's users.
export {
  CAUSE_MESSAGES,
  type ChunkAnswer,
  chunksOf,
  type DeploymentAction,
  type DeploymentEntry,
  type DeploymentResultItem,
  type SummaryLine,
  summarize,
};
