/**
 * The ZIP central directory reader of the archive validator (archive.ts), the one module that knows yauzl. The
 * validator sees plain entry records (ZipEntry), records the reader refused (BrokenZipRecord) and a stream of one
 * entry's data; everything else it checks itself (names, sizes, CRCs, local headers, in one pass over the bytes).
 *
 * Written against yauzl 3.4.0, pinned exactly in package.json because this module relies on more than its
 * documented API, to list every entry of a hostile archive rather than stop at the first bad one and to read a stored
 * object by range:
 * - subclassing RandomAccessReader and overriding `_readStreamForRange` (documented, but the class shape is 3.x);
 * - `ZipFile#readEntryCursor` being the byte offset of the next central directory record (@types/yauzl says boolean);
 * - `ZipFile#reader` with its `ref()`, and the positional parameters of the `ZipFile` constructor (reader,
 *   centralDirectoryOffset, fileSize, entryCount, comment, autoClose, lazyEntries, decodeStrings, validateEntrySizes,
 *   strictFileNames), to resume the walk after a record yauzl refused;
 * - `getFileNameLowLevel` (exported but undocumented) to decode names as yauzl does.
 * Upgrading yauzl means checking these against its index.js and running test/unit/scenarios/archive-corpus.test.ts.
 */
import { Readable } from 'node:stream';
import yauzl from 'yauzl';
import type { RandomAccessSource } from './ports.js';

/** What the reader reads: the whole archive in memory, or a ranged reader over a stored object. */
export type ZipInput = Uint8Array | RandomAccessSource;

/** One central directory record, as the validator needs it. */
export interface ZipEntry {
  /** The entry's name: the Info-ZIP Unicode Path extra field when present, else the raw name decoded. */
  name: string;
  /** The raw name decoded without the Unicode Path field (what tools ignoring that field use). */
  rawName: string;
  /** The name's bytes as stored in the central directory. */
  fileNameRaw: Buffer;
  /** High byte: the host system that made the entry (3 = Unix, 19 = OS X). */
  versionMadeBy: number;
  externalFileAttributes: number;
  /** 0 = stored, 8 = deflate. */
  compressionMethod: number;
  /** Declared sizes, bytes (ZIP64 fields applied). */
  compressedSize: number;
  uncompressedSize: number;
  /** Declared CRC-32 of the uncompressed data. */
  crc32: number;
  /** Offset of the entry's local header in the archive, bytes. */
  relativeOffsetOfLocalHeader: number;
  encrypted: boolean;
}

/** A central directory record the reader refused (strong encryption, a broken ZIP64 field, a bad name). */
export interface BrokenZipRecord {
  /** The record's name when it can be decoded. */
  name: string;
  /** Why the reader refused it. */
  message: string;
}

/** The input has no readable end of central directory: it is not a ZIP archive, or a truncated one. */
export class NotAZipArchiveError extends Error {}

/** An open archive. close() it when done. */
export interface ZipArchive {
  /** Records the end of central directory declares. */
  entryCount: number;
  /** Offset of the central directory, bytes: no entry's data may reach it. */
  directoryStart: number;
  /**
   * The central directory's records in order; a refused record is yielded as `{ broken }` and the walk goes on at
   * the next one, so one bad record cannot hide the others.
   * @throws Error when the directory itself cannot be read (truncated, corrupt).
   */
  entries(): AsyncGenerator<ZipEntry | { broken: BrokenZipRecord }>;
  /** The entry's uncompressed data (read through its local header). @throws Error when it cannot be read. */
  openEntry(entry: ZipEntry): Promise<Readable>;
  close(): void;
}

// Entry sizes are not validated by yauzl (its check aborts the whole directory scan): the validator checks each entry.
const YAUZL_OPTIONS = { lazyEntries: true, autoClose: false, decodeStrings: false, validateEntrySizes: false, strictFileNames: true };
const CENTRAL_DIRECTORY_HEADER = 0x02014b50;

/** Largest central directory kept in memory so that walking it costs one ranged read, bytes. */
const CENTRAL_DIRECTORY_CACHE_BYTES = 16 * 1024 * 1024;

/**
 * yauzl reader over a RandomAccessSource: each read is one ranged stream (S3 GetObject with Range), except reads
 * inside the cached central directory, which are answered from memory (yauzl reads each record in two small reads).
 */
class SourceReader extends yauzl.RandomAccessReader {
  cache: { start: number; bytes: Buffer } | undefined;

  constructor(private readonly source: RandomAccessSource) {
    super();
  }

  override _readStreamForRange(start: number, end: number): Readable {
    const cache = this.cache;
    if (cache !== undefined && start >= cache.start && end <= cache.start + cache.bytes.length) {
      return Readable.from([cache.bytes.subarray(start - cache.start, end - cache.start)]);
    }
    return this.source.createReadStream(start, end) as Readable;
  }
}

/** Decodes an entry name as yauzl does (CP437 unless bit 11 of the flags says UTF-8), ignoring extra fields. */
export function decodeEntryName(generalPurposeBitFlag: number, raw: Buffer): string {
  return yauzl.getFileNameLowLevel(generalPurposeBitFlag, raw, [], true);
}

/** Reads `length` bytes at `position` from the archive (buffer slice or one ranged read). */
async function readBytes(input: ZipInput, position: number, length: number): Promise<Buffer> {
  if (input instanceof Uint8Array)
    return Buffer.from(input.buffer, input.byteOffset, input.byteLength).subarray(position, position + length);
  const chunks: Buffer[] = [];
  for await (const chunk of input.createReadStream(position, Math.min(position + length, input.size))) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A record yauzl refused, parsed by hand: its name (when readable) and where the next record starts. */
async function readBrokenRecord(input: ZipInput, offset: number): Promise<{ name: string; next: number } | undefined> {
  const header = await readBytes(input, offset, 46);
  if (header.length < 46 || header.readUInt32LE(0) !== CENTRAL_DIRECTORY_HEADER) return undefined;
  const nameLength = header.readUInt16LE(28);
  const variableLength = nameLength + header.readUInt16LE(30) + header.readUInt16LE(32);
  const rawName = await readBytes(input, offset + 46, nameLength);
  if (rawName.length < nameLength) return undefined;
  return { name: decodeEntryName(header.readUInt16LE(8), rawName), next: offset + 46 + variableLength };
}

/** @types/yauzl declares readEntryCursor as boolean; it is the byte offset of the next central directory record. */
const cursorOf = (zipfile: yauzl.ZipFile): number => zipfile.readEntryCursor as unknown as number;

function toZipEntry(entry: yauzl.Entry): ZipEntry {
  return {
    name: yauzl.getFileNameLowLevel(entry.generalPurposeBitFlag, entry.fileNameRaw, entry.extraFields, true),
    rawName: decodeEntryName(entry.generalPurposeBitFlag, entry.fileNameRaw),
    fileNameRaw: entry.fileNameRaw,
    versionMadeBy: entry.versionMadeBy,
    externalFileAttributes: entry.externalFileAttributes,
    compressionMethod: entry.compressionMethod,
    compressedSize: entry.compressedSize,
    uncompressedSize: entry.uncompressedSize,
    crc32: entry.crc32,
    relativeOffsetOfLocalHeader: entry.relativeOffsetOfLocalHeader,
    encrypted: entry.isEncrypted(),
  };
}

/**
 * Opens an archive: finds the end of central directory (one read of the last 65,557 bytes at most) and, for a
 * ranged source whose central directory is at most 16 MiB and declares at most `maxEntries` records, reads the
 * whole directory in one ranged read (an archive with more entries is refused without walking it).
 * @throws NotAZipArchiveError when the end of central directory cannot be found or read; whatever the source
 *   throws while the central directory is read into memory.
 */
export async function openZipArchive(input: ZipInput, options: { maxEntries: number }): Promise<ZipArchive> {
  const reader = input instanceof Uint8Array ? undefined : new SourceReader(input);
  const first = await openYauzl(input, reader);
  const size = input instanceof Uint8Array ? input.byteLength : input.size;
  const directoryStart = cursorOf(first);
  const opened = [first];
  const yauzlEntries = new WeakMap<ZipEntry, yauzl.Entry>();
  if (reader !== undefined && first.entryCount <= options.maxEntries && size - directoryStart <= CENTRAL_DIRECTORY_CACHE_BYTES) {
    try {
      reader.cache = { start: directoryStart, bytes: await readBytes(input, directoryStart, size - directoryStart) };
    } catch (error) {
      first.close();
      throw error;
    }
  }

  return {
    entryCount: first.entryCount,
    directoryStart,
    entries: () => readEntries(input, first, yauzlEntries, opened),
    openEntry: async (entry) => {
      const raw = yauzlEntries.get(entry);
      if (raw === undefined) throw new Error(`entry '${entry.name}' was not read from this archive`);
      return first.openReadStreamPromise(raw);
    },
    close: () => {
      for (const each of opened) each.close();
    },
  };
}

/** Opens the archive with yauzl, from memory or through `reader`. @throws NotAZipArchiveError when yauzl refuses it */
async function openYauzl(input: ZipInput, reader: SourceReader | undefined): Promise<yauzl.ZipFile> {
  try {
    return reader === undefined
      ? await yauzl.fromBufferPromise(
          Buffer.from((input as Uint8Array).buffer, (input as Uint8Array).byteOffset, (input as Uint8Array).byteLength),
          YAUZL_OPTIONS,
        )
      : await yauzl.fromRandomAccessReaderPromise(reader, (input as RandomAccessSource).size, YAUZL_OPTIONS);
  } catch (error) {
    throw new NotAZipArchiveError((error as Error).message, { cause: error });
  }
}

/**
 * The central directory's records in order, each as a ZipEntry (remembered in `yauzlEntries`, for openEntry) or, when
 * yauzl refuses it but it can be parsed by hand, as a broken record, after which reading resumes at the next record
 * (on a new ZipFile pushed to `opened`, to be closed with the archive).
 * @throws yauzl's error when a refused record cannot be parsed by hand either
 */
async function* readEntries(
  input: ZipInput,
  first: yauzl.ZipFile,
  yauzlEntries: WeakMap<ZipEntry, yauzl.Entry>,
  opened: yauzl.ZipFile[],
): AsyncGenerator<ZipEntry | { broken: BrokenZipRecord }> {
  let zipfile = first;
  let remaining = first.entryCount;
  for (;;) {
    let cursor = cursorOf(zipfile);
    try {
      for await (const entry of zipfile.eachEntry()) {
        remaining -= 1;
        cursor = cursorOf(zipfile);
        const plain = toZipEntry(entry);
        yauzlEntries.set(plain, entry);
        yield plain;
      }
      return;
    } catch (error) {
      const broken = await readBrokenRecord(input, cursor);
      if (broken === undefined) throw error;
      remaining -= 1;
      yield { broken: { name: broken.name, message: (error as Error).message } };
      if (remaining <= 0) return;
      zipfile = resumedZipFile(zipfile, broken.next, remaining);
      opened.push(zipfile);
    }
  }
}

/** A new ZipFile over the same reader as `zipfile`, starting at the record at `next`, with `remaining` records left. */
function resumedZipFile(zipfile: yauzl.ZipFile, next: number, remaining: number): yauzl.ZipFile {
  const shared = (zipfile as unknown as { reader: yauzl.RandomAccessReader & { ref(): void } }).reader;
  shared.ref();
  const Resumed = yauzl.ZipFile as unknown as new (...parameters: unknown[]) => yauzl.ZipFile;
  return new Resumed(shared, next, zipfile.fileSize, remaining, '', false, true, false, false, true);
}
