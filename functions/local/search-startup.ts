/**
 * How the local runtime fills its embedded search index at start, and keeps a snapshot of it in the data folder:
 * - startEmbeddedSearch: from the snapshot when there is a usable one (then the search streams are read from the
 *   positions it covers: the changes made since are caught up), else by rebuilding from a parallel scan of the
 *   tables (the streams read from LATEST);
 * - SearchSnapshots: writes the snapshot every SEARCH_SNAPSHOT_INTERVAL_MS when the index changed, and at stop.
 */
import { DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { TABLES } from '../adapters/aws/tables.js';
import type { SwappableSearchIndex } from '../adapters/embedded/swappable-search-index.js';
import { type RetryPolicy, retry } from '../adapters/retry.js';
import type { ReindexResult } from '../core/search/reindex.js';
import { classifyBackendError } from '../platform/problem.js';
import {
  readSearchSnapshot,
  removeAbandonedSnapshotFiles,
  type SearchSnapshot,
  UnreadableSnapshotError,
  writeSearchSnapshot,
} from './search-snapshot.js';
import { type DynamoDbStreamPoller, type ShardPosition, StalePositionError } from './stream-poller.js';
import { STREAM_ANCHOR_ENTITY } from './tables.js';

/** How the index was filled at start. */
export interface SearchStart {
  /** `snapshot`: loaded from the snapshot file; `rebuild`: scanned from the tables. */
  path: 'snapshot' | 'rebuild';
  /** Documents in the index. */
  documents: number;
  /** From the start of the decision to the index being served, ms. */
  tookMs: number;
  /** Why the snapshot was not used (path `rebuild`). */
  reason?: string;
  /** Whether the snapshot's full text was used (path `snapshot`; else it is built from the documents after the start). */
  withText?: boolean;
}

/** What startEmbeddedSearch works with. */
export interface SearchStartOptions {
  index: SwappableSearchIndex;
  /** The search streams' poller, not yet positioned nor started. */
  poller: DynamoDbStreamPoller;
  /** The search streams (devices and scenarios tables) as they are now. */
  streamArns: readonly string[];
  snapshotFile: string;
  /** The snapshot file read and loaded into `index` while the backends started (read now when not given). */
  preloaded?: Promise<PreloadedSnapshot>;
  /** Rebuilds the index from the tables (reindexSearch). */
  rebuild: () => Promise<ReindexResult>;
  /** Writes one record into each search stream (markSearchStreams), so that the poller soon knows its position. */
  mark: () => Promise<void>;
  log: (message: string) => void;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** Names of the errors of a request that timed out on the service's side (classifyBackendError sees only the client's). */
const REQUEST_TIMEOUT_NAMES = new Set(['RequestTimeout', 'RequestTimeoutException']);

/**
 * Whether a step of the start failed only for the moment: DynamoDB Local (or its streams) did not answer in time (the
 * SDK's TimeoutError, after the SDK's own attempts), dropped the connection, throttled, or failed on its side (5xx).
 */
function isTransientStartError(error: unknown): boolean {
  return classifyBackendError(error) !== undefined || REQUEST_TIMEOUT_NAMES.has((error as Error | undefined)?.name ?? '');
}

/**
 * How a step of the search start that calls DynamoDB Local (positioning the streams, marking them, the rebuild's
 * scan) is tried again after a transient error (isTransientStartError): 4 attempts in all, waits of 1 s doubling
 * (jittered: each between half and all of that), so at most about 7 s of waiting beside the attempts; any other error
 * is thrown at once. A busy 2-core machine scanning 100,000 devices while the sweepers run can leave a Scan page of
 * DynamoDB Local unanswered past DYNAMODB_REQUEST_TIMEOUT_MS on each of the SDK's attempts.
 */
const START_STEP_RETRY: RetryPolicy = { attempts: 4, minDelayMs: 1_000, maxDelayMs: 4_000, retryable: isTransientStartError };

/** Runs `run`, a step of the start described by `step`, under START_STEP_RETRY, logging each retry. */
function startStep<T>(options: Pick<SearchStartOptions, 'log'>, step: string, run: () => Promise<T>): Promise<T> {
  return retry(run, {
    ...START_STEP_RETRY,
    onRetry: ({ error, attempt, delayMs }) =>
      options.log(
        `Search start: ${step} failed (${(error as Error).message}); trying again in ${seconds(delayMs)} (attempt ${attempt + 1} of ${START_STEP_RETRY.attempts}).`,
      ),
  });
}

/**
 * The snapshot file as read at start: its documents loaded into the index (`snapshot`, with how long reading and
 * loading took, ms), why there are none (`reason`: no file, or an unreadable one), or the error reading it threw.
 */
export type PreloadedSnapshot = LoadedSnapshot | { reason: string } | { error: unknown };

/** A snapshot loaded into the index: how long reading and loading took (ms), and whether its full text was used. */
interface LoadedSnapshot {
  snapshot: SearchSnapshot;
  tookMs: number;
  withText: boolean;
}

/**
 * Reads the snapshot file and loads its documents into `index` (a rebuild that adopts them: full text completed in
 * the background), before anything else needs the index. The runtime calls it before starting DynamoDB Local, so that
 * the decoding overlaps the JVM's start; whether the snapshot can be used (its streams and positions) is only known
 * once the streams can be read, and startEmbeddedSearch rebuilds from the tables when it cannot. Never rejects.
 */
export async function preloadSearchSnapshot(file: string, index: SwappableSearchIndex): Promise<PreloadedSnapshot> {
  const started = performance.now();
  try {
    const snapshot = await readSearchSnapshot(file);
    if (snapshot === undefined) return { reason: 'no snapshot yet' };
    let withText = false;
    await index.rebuild(async (sink) => {
      withText = await sink.adoptEncoded(snapshot.header.strings, snapshot.documents, snapshot.text);
      return snapshot.documents.length;
    });
    return { snapshot, tookMs: performance.now() - started, withText };
  } catch (error) {
    return error instanceof UnreadableSnapshotError ? { reason: error.message } : { error };
  }
}

/**
 * Whether the preloaded snapshot can be used: it was taken of the same streams (a reset data folder has new ones), and
 * every position in it can still be read (poller.resumeAfter: no shard gone, no record trimmed). The poller is then
 * positioned after those positions.
 * @returns the snapshot, or why it cannot be used.
 * @throws what reading the file threw, other than UnreadableSnapshotError.
 */
async function usableSnapshot(options: SearchStartOptions, preloaded: PreloadedSnapshot): Promise<LoadedSnapshot | { reason: string }> {
  if ('error' in preloaded) throw preloaded.error;
  if ('reason' in preloaded) return preloaded;
  const taken = new Set(preloaded.snapshot.header.streamArns);
  if (taken.size !== options.streamArns.length || !options.streamArns.every((arn) => taken.has(arn))) {
    return { reason: 'the snapshot was taken of other streams (the tables were created again since)' };
  }
  try {
    const positions = new Map(Object.entries(preloaded.snapshot.header.positions));
    await startStep(options, 'reading the streams after the snapshot', () => options.poller.resumeAfter(positions));
  } catch (error) {
    if (!(error instanceof StalePositionError)) throw error;
    return { reason: `the snapshot is stale (${error.message})` };
  }
  return preloaded;
}

/**
 * Fills the embedded index at start, and positions the search poller to match (the caller then starts it):
 * - from the snapshot when usableSnapshot accepts it: its documents are in the index already (preloadSearchSnapshot:
 *   `options.preloaded`, or read now), and the poller reads on after the snapshot's positions, so the changes made
 *   since it was taken (while the runtime was down, or after it was taken before a crash) are applied once it starts;
 * - else: the poller is positioned at LATEST, the streams are marked (so their positions become known and the next
 *   snapshot can be taken), and the index is rebuilt from a parallel scan of the tables (which replaces a preloaded
 *   snapshot's documents).
 * Each step that calls DynamoDB Local is tried again after a transient error (START_STEP_RETRY), so that a loaded
 * DynamoDB Local does not stop the start. Logs which path was taken, why, and how long it took. First removes the
 * temporary snapshot files that runs killed while writing one left behind (removeAbandonedSnapshotFiles).
 * @throws what the rebuild throws (ServiceUnavailableError is not expected of the embedded engine), and what reading
 *   the snapshot threw other than UnreadableSnapshotError; a transient error once START_STEP_RETRY's attempts are spent.
 */
export async function startEmbeddedSearch(options: SearchStartOptions): Promise<SearchStart> {
  const started = performance.now();
  const abandoned = await removeAbandonedSnapshotFiles(options.snapshotFile);
  if (abandoned.length > 0) {
    options.log(`Removed ${abandoned.length} unfinished search snapshot file(s) of stopped runs: ${abandoned.join(', ')}.`);
  }
  const snapshot = await usableSnapshot(options, await (options.preloaded ?? preloadSearchSnapshot(options.snapshotFile, options.index)));
  if (!('reason' in snapshot)) {
    const { documents, header } = snapshot.snapshot;
    options.log(
      `Search index loaded from the snapshot of ${header.created} (${documents.length} documents, ` +
        `${snapshot.withText ? 'with their full text' : 'full text built in the background'}) in ${seconds(snapshot.tookMs)}; ` +
        'catching up with the changes since from the streams.',
    );
    return { path: 'snapshot', documents: documents.length, tookMs: snapshot.tookMs, withText: snapshot.withText };
  }
  await startStep(options, 'positioning the search streams', () => options.poller.positionAtLatest());
  await startStep(options, 'marking the search streams', options.mark);
  // A failed rebuild keeps the live index, and the next attempt scans the tables again into a fresh one (the failed
  // attempt's other Scan segments finish their reads into the index it dropped).
  const result = await startStep(options, 'the rebuild from the tables', options.rebuild);
  const tookMs = performance.now() - started;
  options.log(
    `Search index rebuilt from a parallel scan of the tables (${result.documents} documents) in ${seconds(tookMs)}: ${snapshot.reason}.`,
  );
  return { path: 'rebuild', documents: result.documents, tookMs, reason: snapshot.reason };
}

/** Key of the anchor item of every streamed local table (functions/local/tables.ts, anchorStream). */
const STREAM_ANCHOR_KEY = 'STREAM#ANCHOR';

/**
 * Rewrites the anchor item of the devices and scenarios tables with a new `marked` time, so that each search stream
 * gets a record (ignored by the search indexer: not a searchable entity). A poller positioned at LATEST knows no
 * sequence number until it has handled a record; this gives it one within a pass.
 */
export async function markSearchStreams(endpoint: string, tables: { devices: string; scenarios: string }): Promise<void> {
  const client = new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  try {
    for (const logical of ['devices', 'scenarios'] as const) {
      const schema = TABLES[logical];
      await client.send(
        new PutItemCommand({
          TableName: tables[logical],
          Item: {
            [schema.partitionKey]: { S: STREAM_ANCHOR_KEY },
            [schema.sortKey]: { S: STREAM_ANCHOR_KEY },
            entity: { S: STREAM_ANCHOR_ENTITY },
            marked: { S: new Date().toISOString() },
          },
        }),
      );
    }
  } finally {
    client.destroy();
  }
}

/** What a snapshot attempt did. */
export type SnapshotOutcome =
  | { written: true; documents: number; bytes: number; tookMs: number; withText: boolean }
  | { written: false; why: 'unchanged' | 'position unknown' | 'not embedded' };

/**
 * Takes snapshots of the embedded index into `file`: consistent (the documents and the positions read together
 * between two batches of the search poller), and only when the index changed since the last one (another position
 * in a stream, or a rebuild swapped in) or its full text, which the last one lacked, is complete now. One at a time.
 */
export class SearchSnapshots {
  private lastKey: string | undefined;
  private running: Promise<SnapshotOutcome> | undefined;
  private timer: NodeJS.Timeout | undefined;

  /**
   * @param loaded the snapshot the index was loaded from, if it was: its positions, and whether its full text was used
   *   (SearchStart.withText). No new snapshot until the index moves on from it, or has its full text complete when the
   *   snapshot gave none (else every start would build it again).
   */
  constructor(
    private readonly options: {
      index: SwappableSearchIndex;
      poller: DynamoDbStreamPoller;
      streamArns: readonly string[];
      file: string;
      log: (message: string) => void;
      loaded?: { positions: ReadonlyMap<string, ShardPosition | undefined>; withText: boolean };
    },
  ) {
    const { loaded } = options;
    if (loaded !== undefined) this.lastKey = this.keyOf(options.index.generation, loaded.positions, loaded.withText);
  }

  /** What a snapshot holds: the index, the positions, and whether with the full text. */
  private keyOf(generation: number, positions: ReadonlyMap<string, ShardPosition | undefined>, withText: boolean): string {
    return JSON.stringify([generation, withText, [...positions].sort(([a], [b]) => (a < b ? -1 : 1))]);
  }

  /** Writes a snapshot if the index changed since the last one and every shard's position is known. */
  take(): Promise<SnapshotOutcome> {
    this.running ??= this.write().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async write(): Promise<SnapshotOutcome> {
    const { index, poller } = this.options;
    // Between two batches: the index's encoded documents are never changed (a write replaces them), so holding the
    // array keeps them as they are now while the file is written and the poller goes on. The full text is changed in
    // place: its chunks are made before the poller hands the next batch, a turn of the event loop between two.
    const captured = await poller.whenIdle(async () => {
      const positions = poller.shardPositions();
      const generation = index.generation;
      const contents = index.snapshotContents();
      const key = this.keyOf(generation, positions, contents?.text !== undefined);
      if (contents === undefined || key === this.lastKey || [...positions.values()].includes(undefined)) {
        return { positions, key, contents: undefined };
      }
      const text = await chunksOf(contents.text);
      return { positions, key: this.keyOf(generation, positions, text !== undefined), contents: { ...contents, text } };
    });
    if (captured.key === this.lastKey) return { written: false, why: 'unchanged' };
    const positions = new Map<string, ShardPosition>();
    for (const [key, position] of captured.positions) {
      if (position === undefined) return { written: false, why: 'position unknown' };
      positions.set(key, position);
    }
    if (captured.contents === undefined) return { written: false, why: 'not embedded' };
    const started = performance.now();
    const bytes = await writeSearchSnapshot(this.options.file, {
      streamArns: this.options.streamArns,
      positions,
      contents: captured.contents,
    });
    this.lastKey = captured.key;
    const { documents, text } = captured.contents;
    return { written: true, documents: documents.length, bytes, tookMs: performance.now() - started, withText: text !== undefined };
  }

  /** Takes a snapshot every `intervalMs` (when changed); failures are logged and the next tick tries again. */
  start(intervalMs: number): void {
    this.timer = setInterval(() => {
      void this.take().catch((error: unknown) => this.options.log(`search snapshot: ${(error as Error).message}`));
    }, intervalMs);
  }

  /**
   * Stops the timer and takes the last snapshot; call once the poller is stopped, so it covers every batch handled.
   * Logs what it did; failures are logged, not thrown (the next start then rebuilds or loads an older snapshot).
   */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running?.catch(() => undefined);
    try {
      const outcome = await this.take();
      if (outcome.written) {
        this.options.log(
          `Search snapshot written (${outcome.documents} documents${outcome.withText ? ' and their full text' : ''}, ` +
            `${(outcome.bytes / 1024 ** 2).toFixed(1)} MiB) in ${seconds(outcome.tookMs)}.`,
        );
      } else if (outcome.why === 'position unknown') {
        this.options.log('Search snapshot not written: the search streams were not read yet since the start.');
      }
    } catch (error) {
      this.options.log(`search snapshot: ${(error as Error).message}`);
    }
  }
}

/**
 * The chunks of a snapshot's full text (SnapshotContents.text), taken with a turn of the event loop between two so
 * that searches go on meanwhile (~0.2 s in all at 100,000 devices); undefined when the index gave none or its full
 * text changed meanwhile (the snapshot is then written without it: a load builds it from the documents).
 */
async function chunksOf(text: Iterable<Uint8Array> | undefined): Promise<Uint8Array[] | undefined> {
  if (text === undefined) return undefined;
  const chunks: Uint8Array[] = [];
  try {
    for (const chunk of text) {
      chunks.push(chunk);
      await new Promise((resolve) => setImmediate(resolve));
    }
  } catch {
    return undefined;
  }
  return chunks;
}
