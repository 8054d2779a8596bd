/**
 * The embedded search index's snapshot in the data folder (`{data}/search/snapshot.jsonl`), so that a large local
 * fleet starts without scanning its tables: JSON lines, first a header (format, version, the search streams and the
 * position in each of their shards the documents cover), then one search document per line.
 *
 * Documents rather than the engine's internal state: loading 100,000 documents into the engine (adopt) costs about
 * as much as parsing them, its structures are rebuilt from them, and the file stays readable by any later engine
 * version that keeps the document shape.
 */
import { createReadStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { SearchDocument } from '../core/search/documents.js';
import type { ShardPosition } from './stream-poller.js';

/** `format` of the header line. */
export const SEARCH_SNAPSHOT_FORMAT = 'device-scenario-service/search-snapshot';
/** `version` of the header line: a snapshot of another version is not read (the runtime rebuilds instead). */
export const SEARCH_SNAPSHOT_VERSION = 1;
/** Documents serialized per write while a snapshot is written (the event loop runs between two). */
const WRITE_CHUNK = 1_000;

/** The first line of a snapshot. */
export interface SearchSnapshotHeader {
  format: typeof SEARCH_SNAPSHOT_FORMAT;
  version: typeof SEARCH_SNAPSHOT_VERSION;
  /** ISO-8601: when the documents were taken. */
  created: string;
  /** The search streams (devices and scenarios tables) the positions are in. */
  streamArns: string[];
  /**
   * Per shard (`{streamArn}|{shardId}`), the sequence number of the last record applied to the documents, or
   * FROM_OLDEST when none of that shard's records was read (see ShardPosition).
   */
  positions: Record<string, ShardPosition>;
  /** Document lines that follow. */
  documents: number;
}

/** A snapshot as read back. */
export interface SearchSnapshot {
  header: SearchSnapshotHeader;
  documents: SearchDocument[];
}

/** The snapshot file is there but cannot be used: another format or version, damaged, or truncated. */
export class UnreadableSnapshotError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnreadableSnapshotError';
  }
}

/** The snapshot file of a data folder. */
export function searchSnapshotFile(dataDirectory: string): string {
  return join(dataDirectory, 'search', 'snapshot.jsonl');
}

/** Whether a process with this pid is running (signal 0 probes without sending anything; EPERM means it exists). */
function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes the temporary files that writeSearchSnapshot left beside `file` when its process died mid-write
 * (`snapshot.jsonl.<pid>.tmp`; each as large as a snapshot, ~284 MiB for 100,000 devices). A file whose writer is
 * still running is kept, so that two runtimes started on one data folder by mistake do not break each other's write;
 * the current process's own file is removed (it is not writing yet when this runs at start).
 * @param isAlive whether a pid is running; injectable for tests.
 * @returns the names of the files removed (none when the folder does not exist).
 * @throws what the file system throws, but for a missing folder or a file removed meanwhile.
 */
export async function removeAbandonedSnapshotFiles(file: string, isAlive: (pid: number) => boolean = processIsAlive): Promise<string[]> {
  const pattern = new RegExp(`^${basename(file).replaceAll('.', '\\.')}\\.(\\d+)\\.tmp$`);
  let names: string[];
  try {
    names = await readdir(dirname(file));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const abandoned = names.filter((name) => {
    const pid = Number(pattern.exec(name)?.[1] ?? Number.NaN);
    return Number.isInteger(pid) && (pid === process.pid || !isAlive(pid));
  });
  await Promise.all(abandoned.map((name) => rm(join(dirname(file), name), { force: true })));
  return abandoned;
}

/**
 * Writes a snapshot atomically: to a temporary file beside `file` (flushed to disk), then renamed over it, so a
 * crash at any moment leaves the previous snapshot or the new one, never part of one. `documents` must not change
 * while it runs (the index's own documents are frozen: pass the array of them taken between two stream batches).
 * @returns the file's size, bytes.
 * @throws what the file system throws (the temporary file is removed).
 */
export async function writeSearchSnapshot(
  file: string,
  snapshot: { streamArns: readonly string[]; positions: ReadonlyMap<string, ShardPosition>; documents: readonly SearchDocument[] },
  now: Date = new Date(),
): Promise<number> {
  const header: SearchSnapshotHeader = {
    format: SEARCH_SNAPSHOT_FORMAT,
    version: SEARCH_SNAPSHOT_VERSION,
    created: now.toISOString(),
    streamArns: [...snapshot.streamArns],
    positions: Object.fromEntries(snapshot.positions),
    documents: snapshot.documents.length,
  };
  await mkdir(dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  const handle = await open(temporary, 'w');
  try {
    await handle.write(`${JSON.stringify(header)}\n`);
    for (let start = 0; start < snapshot.documents.length; start += WRITE_CHUNK) {
      const lines = snapshot.documents.slice(start, start + WRITE_CHUNK).map((document) => `${JSON.stringify(document)}\n`);
      await handle.write(lines.join(''));
    }
    await handle.sync();
  } catch (error) {
    await handle.close();
    await rm(temporary, { force: true });
    throw error;
  }
  await handle.close();
  await rename(temporary, file);
  return (await stat(file)).size;
}

function checkHeader(value: unknown, file: string): SearchSnapshotHeader {
  const header = value as Partial<SearchSnapshotHeader> | null;
  if (header === null || typeof header !== 'object' || header.format !== SEARCH_SNAPSHOT_FORMAT) {
    throw new UnreadableSnapshotError(`${file} is not a search snapshot.`);
  }
  if (header.version !== SEARCH_SNAPSHOT_VERSION) {
    throw new UnreadableSnapshotError(
      `${file} is a version ${String(header.version)} snapshot; this runtime reads version ${SEARCH_SNAPSHOT_VERSION}.`,
    );
  }
  const positions = header.positions;
  if (
    !Array.isArray(header.streamArns) ||
    !header.streamArns.every((arn) => typeof arn === 'string') ||
    positions === null ||
    typeof positions !== 'object' ||
    !Object.values(positions).every((position) => typeof position === 'string') ||
    !Number.isInteger(header.documents) ||
    typeof header.created !== 'string'
  ) {
    throw new UnreadableSnapshotError(`${file} has a malformed header.`);
  }
  return header as SearchSnapshotHeader;
}

/**
 * Reads a snapshot written by writeSearchSnapshot.
 * @returns undefined when there is no snapshot file.
 * @throws UnreadableSnapshotError when the file is of another format or version, damaged, or holds another number of
 *   documents than its header says (truncated); other file system errors as thrown.
 */
export async function readSearchSnapshot(file: string): Promise<SearchSnapshot | undefined> {
  let header: SearchSnapshotHeader | undefined;
  const documents: SearchDocument[] = [];
  let lineNumber = 0;
  const take = (line: string) => {
    lineNumber += 1;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new UnreadableSnapshotError(`${file}: line ${lineNumber} is not JSON (damaged or truncated).`);
    }
    if (header === undefined) header = checkHeader(value, file);
    else documents.push(value as SearchDocument);
  };
  try {
    let rest = '';
    for await (const chunk of createReadStream(file, { encoding: 'utf8', highWaterMark: 1024 * 1024 })) {
      const text = rest + (chunk as string);
      let start = 0;
      for (let end = text.indexOf('\n'); end >= 0; end = text.indexOf('\n', start)) {
        take(text.slice(start, end));
        start = end + 1;
      }
      rest = text.slice(start);
    }
    if (rest !== '') take(rest);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  if (header === undefined) throw new UnreadableSnapshotError(`${file} is empty.`);
  if (documents.length !== header.documents) {
    throw new UnreadableSnapshotError(`${file} holds ${documents.length} documents; its header says ${header.documents} (truncated).`);
  }
  return { header, documents };
}
