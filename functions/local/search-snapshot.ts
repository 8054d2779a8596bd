/**
 * The embedded search index's snapshot in the data folder (`{data}/search/snapshot.bin`), so that a large local
 * fleet starts without scanning its tables: one line of JSON, the header (format, version, the search streams and
 * the position in each of their shards the documents cover, and the string table of the index's document codec),
 * then each document as the engine keeps it (functions/adapters/embedded/document-codec.ts), its length (an unsigned
 * LEB128 varint) before it, then the engine's full text in its snapshot form (FullTextIndex.snapshot: the term
 * dictionary and the postings, documents numbered by their position in the file); the whole written through gzip at
 * level 1 (RFC 1952; a file without gzip's magic bytes is read as it is, as the runtime wrote them before).
 *
 * The engine's encoded documents and full text rather than its other structures: the documents are about a quarter of
 * their JSON, and gzip takes them to about a fifth of that (100,000 seeded kiosks: 284 MiB of JSON lines, 71 MiB
 * encoded, 13.5 MiB compressed without the full text; half a second to compress or decompress, on libuv's threads);
 * the file is read without parsing any JSON but the header. Filters and sorts are rebuilt from the documents at load;
 * the full text is read as it is, which takes a fraction of the time building it from the documents takes (that is
 * still done, in the background, for a snapshot without it or whose full text is of another version).
 * Version 2 files (without the full text) are read; version 1 files (JSON lines of documents, `snapshot.jsonl`) are
 * not: the runtime rebuilds from the tables once, writes a version 3 snapshot and removes the old file.
 */

import { once } from 'node:events';
import { mkdir, open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { createGunzip, createGzip } from 'node:zlib';
import { ByteWriter } from '../adapters/embedded/snapshot-bytes.js';
import type { ShardPosition } from './stream-poller.js';

/** `format` of the header line. */
export const SEARCH_SNAPSHOT_FORMAT = 'device-scenario-service/search-snapshot';
/** `version` of the header line written: a snapshot of a version not in READABLE_VERSIONS is not read (the runtime rebuilds instead). */
export const SEARCH_SNAPSHOT_VERSION = 3;
/** Versions read: 2 has no full text after the documents. */
const READABLE_VERSIONS: readonly number[] = [2, 3];
/** Documents written per write call while a snapshot is written (the event loop runs between two). */
const WRITE_CHUNK = 5_000;
/** gzip's level: the fastest (level 1 already takes the encoded documents to a fifth; 6 saves little more). */
const GZIP_LEVEL = 1;

/** Bytes gunzipWhole decompresses per step. */
const GUNZIP_CHUNK = 1024 * 1024;

/**
 * The decompressed bytes of a gzip file (RFC 1952), in buffers allocated once with the size its trailer gives (ISIZE:
 * the size modulo 2^32): zlib's `gunzip` gathers the chunks and then copies them into one buffer, twice the memory at
 * the start's peak (~90 MiB more at 100,000 devices). The last `tailBytes(first)` bytes (`first`: the first chunk
 * decompressed) are a buffer of their own, `tail`, so that views of `head` kept do not keep them in memory; when the
 * trailer's size is not the bytes' (a file of several members), they are all in `head`.
 * @throws Error when the bytes are not gzip, damaged or truncated.
 */
async function gunzipWhole(compressed: Buffer, tailBytes: (first: Buffer) => number): Promise<{ head: Buffer; tail?: Buffer }> {
  const size = compressed.length >= 18 ? compressed.readUInt32LE(compressed.length - 4) : 0;
  let parts: [head: Buffer, tail: Buffer] | undefined;
  let length = 0;
  const gunzip = createGunzip({ chunkSize: GUNZIP_CHUNK });
  gunzip.end(compressed);
  for await (const chunk of gunzip as AsyncIterable<Buffer>) {
    const tailSize = parts === undefined ? Math.min(size, Math.max(0, tailBytes(chunk))) : 0;
    parts ??= [Buffer.allocUnsafe(size - tailSize), Buffer.allocUnsafe(tailSize)];
    const [head] = parts;
    const inHead = Math.max(0, Math.min(chunk.length, head.length - length));
    chunk.copy(head, length, 0, inHead);
    if (inHead < chunk.length) {
      // Past the head: into the tail, grown should the trailer's size be wrong.
      const at = length + inHead - head.length;
      if (at + chunk.length - inHead > parts[1].length) {
        const larger = Buffer.allocUnsafe(Math.max(parts[1].length * 2, at + chunk.length - inHead));
        parts[1].copy(larger, 0, 0, at);
        parts[1] = larger;
      }
      chunk.copy(parts[1], at, inHead);
    }
    length += chunk.length;
  }
  const [head, tail] = parts ?? [Buffer.alloc(0), Buffer.alloc(0)];
  if (length === size) return { head, tail };
  // The tail's start is not known then: one buffer, of the bytes' size.
  return { head: Buffer.concat([head.subarray(0, length), tail.subarray(0, Math.max(0, length - head.length))]) };
}

/** The bytes of full text that a snapshot's header line, at the start of `first`, announces (0 when it cannot tell). */
function textBytesOf(first: Buffer): number {
  const end = first.indexOf(0x0a);
  try {
    const text = end < 0 ? undefined : (JSON.parse(first.subarray(0, end).toString('utf8')) as { text?: unknown }).text;
    return typeof text === 'number' && Number.isInteger(text) && text >= 0 ? text : 0;
  } catch {
    return 0;
  }
}

/** The file version 1 snapshots were written to, removed once a version 2 snapshot is written beside it. */
const VERSION_1_FILE = 'snapshot.jsonl';

/** The first line of a snapshot. */
export interface SearchSnapshotHeader {
  format: typeof SEARCH_SNAPSHOT_FORMAT;
  version: 2 | typeof SEARCH_SNAPSHOT_VERSION;
  /** ISO-8601: when the documents were taken. */
  created: string;
  /** The search streams (devices and scenarios tables) the positions are in. */
  streamArns: string[];
  /**
   * Per shard (`{streamArn}|{shardId}`), the sequence number of the last record applied to the documents, or
   * FROM_OLDEST when none of that shard's records was read (see ShardPosition).
   */
  positions: Record<string, ShardPosition>;
  /** Documents that follow. */
  documents: number;
  /** The string table of the codec the documents were encoded with (DocumentCodec.strings). */
  strings: string[];
  /** Bytes of full text after the documents (0: none, the index had part of it still to build); version 3. */
  text?: number;
}

/**
 * A snapshot as read back: the documents as the index's codec encoded them, in the header's table, and the full text
 * in its snapshot form when the file has it.
 */
export interface SearchSnapshot {
  header: SearchSnapshotHeader;
  documents: Uint8Array[];
  text?: Uint8Array;
}

/**
 * What a snapshot is written from: the index's encoded documents and its codec's table, taken together, and its full
 * text's snapshot form in chunks, taken with them (none when the index could not give it).
 */
export interface SearchSnapshotContents {
  strings: readonly string[];
  documents: readonly Uint8Array[];
  text?: readonly Uint8Array[];
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
  return join(dataDirectory, 'search', 'snapshot.bin');
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
 * (`snapshot.bin.<pid>.tmp`; each as large as a snapshot). A file whose writer is
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
 * crash at any moment leaves the previous snapshot or the new one, never part of one; then removes a version 1
 * snapshot left beside it. The contents must not change while it runs (the index's encoded documents never change:
 * pass the arrays taken between two stream batches).
 * @returns the file's size, bytes.
 * @throws what the file system throws (the temporary file is removed).
 */
export async function writeSearchSnapshot(
  file: string,
  snapshot: { streamArns: readonly string[]; positions: ReadonlyMap<string, ShardPosition>; contents: SearchSnapshotContents },
  now: Date = new Date(),
): Promise<number> {
  const { contents } = snapshot;
  const header: SearchSnapshotHeader = {
    format: SEARCH_SNAPSHOT_FORMAT,
    version: SEARCH_SNAPSHOT_VERSION,
    created: now.toISOString(),
    streamArns: [...snapshot.streamArns],
    positions: Object.fromEntries(snapshot.positions),
    documents: contents.documents.length,
    strings: [...contents.strings],
    text: (contents.text ?? []).reduce((bytes, chunk) => bytes + chunk.length, 0),
  };
  await mkdir(dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  const handle = await open(temporary, 'w');
  function* chunks(): Generator<Buffer> {
    yield Buffer.from(`${JSON.stringify(header)}\n`);
    const out = new ByteWriter();
    for (let start = 0; start < contents.documents.length; start += WRITE_CHUNK) {
      for (const document of contents.documents.slice(start, start + WRITE_CHUNK)) {
        out.varint(document.length);
        out.raw(document);
      }
      const chunk = out.take();
      yield Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
    }
    for (const chunk of contents.text ?? []) yield Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
  }
  try {
    const gzip = createGzip({ level: GZIP_LEVEL });
    const written = (async () => {
      for await (const compressed of gzip) await handle.write(compressed as Buffer);
    })();
    try {
      for (const chunk of chunks()) if (!gzip.write(chunk)) await once(gzip, 'drain');
      gzip.end();
    } catch (error) {
      // Stop the writes in flight before the handle is closed below.
      gzip.destroy();
      await written.catch(() => undefined);
      throw error;
    }
    await written;
    await handle.sync();
  } catch (error) {
    await handle.close();
    await rm(temporary, { force: true });
    throw error;
  }
  await handle.close();
  await rename(temporary, file);
  await rm(join(dirname(file), VERSION_1_FILE), { force: true });
  return (await stat(file)).size;
}

function checkHeader(value: unknown, file: string): SearchSnapshotHeader {
  const header = value as Partial<SearchSnapshotHeader> | null;
  if (header === null || typeof header !== 'object' || header.format !== SEARCH_SNAPSHOT_FORMAT) {
    throw new UnreadableSnapshotError(`${file} is not a search snapshot.`);
  }
  if (!READABLE_VERSIONS.includes(header.version as number)) {
    throw new UnreadableSnapshotError(
      `${file} is a version ${String(header.version)} snapshot; this runtime reads versions ${READABLE_VERSIONS.join(' and ')}.`,
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
    typeof header.created !== 'string' ||
    !Array.isArray(header.strings) ||
    !header.strings.every((text) => typeof text === 'string') ||
    (header.text !== undefined && !(Number.isInteger(header.text) && header.text >= 0))
  ) {
    throw new UnreadableSnapshotError(`${file} has a malformed header.`);
  }
  return header as SearchSnapshotHeader;
}

/**
 * Reads a snapshot written by writeSearchSnapshot (the whole file at once: ~70 MiB for 100,000 devices, and the full
 * text). The documents and the full text are views of the file's bytes, undecoded.
 * @returns undefined when there is no snapshot file.
 * @throws UnreadableSnapshotError when the file is of another format or version, damaged, or holds another number of
 *   documents or bytes of full text than its header says (truncated); other file system errors as thrown.
 */
export async function readSearchSnapshot(file: string): Promise<SearchSnapshot | undefined> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  if (bytes.length === 0) throw new UnreadableSnapshotError(`${file} is empty.`);
  // With the full text apart: the documents are views of `bytes`, which the index keeps as long as it keeps one.
  let tail: Buffer | undefined;
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) {
    try {
      ({ head: bytes, tail } = await gunzipWhole(bytes, textBytesOf));
    } catch (error) {
      throw new UnreadableSnapshotError(`${file} cannot be decompressed (${(error as Error).message}): truncated or damaged.`);
    }
  }
  const end = bytes.indexOf(0x0a);
  let value: unknown;
  try {
    value = JSON.parse(bytes.subarray(0, end < 0 ? bytes.length : end).toString('utf8'));
  } catch {
    throw new UnreadableSnapshotError(`${file} is not a search snapshot (its first line is not JSON).`);
  }
  const header = checkHeader(value, file);
  if (end < 0) throw new UnreadableSnapshotError(`${file} holds no documents after its header (truncated).`);
  const documents: Uint8Array[] = [];
  let position = end + 1;
  while (documents.length < header.documents && position < bytes.length) {
    let length = 0;
    let shift = 0;
    for (;;) {
      if (position >= bytes.length || shift > 28)
        throw new UnreadableSnapshotError(`${file}: a document's length is cut short (truncated).`);
      const byte = bytes[position++] as number;
      length += (byte & 0x7f) * 2 ** shift;
      shift += 7;
      if (byte < 0x80) break;
    }
    if (position + length > bytes.length) {
      throw new UnreadableSnapshotError(`${file}: document ${documents.length + 1} is cut short (truncated).`);
    }
    documents.push(bytes.subarray(position, position + length));
    position += length;
  }
  if (documents.length !== header.documents) {
    throw new UnreadableSnapshotError(`${file} holds ${documents.length} documents; its header says ${header.documents} (truncated).`);
  }
  const text = tail ?? bytes.subarray(position);
  const textLength = bytes.length - position + (tail?.length ?? 0);
  if (textLength !== (header.text ?? 0)) {
    throw new UnreadableSnapshotError(
      `${file} holds ${textLength} bytes of full text after its documents; its header says ${header.text ?? 0} (truncated or damaged).`,
    );
  }
  return text.length === 0 ? { header, documents } : { header, documents, text };
}
