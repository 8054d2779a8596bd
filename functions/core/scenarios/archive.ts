import { crc32 } from 'node:zlib';
import type { Readable } from 'node:stream';
import pLimit from 'p-limit';
import yauzl from 'yauzl';
import { InvalidArchiveError, type ProblemViolation } from '../errors.js';
import type { RandomAccessSource } from '../ports.js';
import { type ScenarioManifest, ScenarioManifestSchema } from './manifest.js';

/** Name of the manifest at the archive root. */
export const MANIFEST_NAME = 'scenario.json';
/** Required resources directory. */
export const RESOURCES_DIRECTORY = 'resources/';

/** Limits that keep a hostile archive from hurting the service (issue 3, point 2). */
export interface ArchiveLimits {
  /** Most entries (files and directories) in one archive. */
  maxEntries: number;
  /** Most declared uncompressed bytes, all entries together. */
  maxUncompressedBytes: number;
  /** Highest uncompressed/compressed ratio of one entry (zip bombs)... */
  maxCompressionRatio: number;
  /** ...checked only on entries whose declared uncompressed size exceeds this many bytes (small text compresses well). */
  compressionRatioMinBytes: number;
  /** Largest scenario.json, bytes. */
  maxManifestBytes: number;
  /** Entries whose data is read (CRC check) at the same time. */
  readConcurrency: number;
}

/** The limits in force unless a caller passes others. */
export const DEFAULT_ARCHIVE_LIMITS: ArchiveLimits = {
  maxEntries: 10_000,
  maxUncompressedBytes: 4 * 1024 ** 3,
  maxCompressionRatio: 100,
  compressionRatioMinBytes: 1024 * 1024,
  maxManifestBytes: 1024 * 1024,
  readConcurrency: 4,
};

/** What the validator reads: the whole archive in memory, or a ranged reader over a stored object. */
export type ArchiveInput = Uint8Array | RandomAccessSource;

// Sizes are checked here, per entry, rather than by yauzl: its check aborts the whole directory scan.
const YAUZL_OPTIONS = { lazyEntries: true, autoClose: false, decodeStrings: false, validateEntrySizes: false, strictFileNames: true };
const CENTRAL_DIRECTORY_HEADER = 0x02014b50;

/** yauzl reader over a RandomAccessSource: every read is one ranged stream (S3 GetObject with Range). */
class SourceReader extends yauzl.RandomAccessReader {
  constructor(private readonly source: RandomAccessSource) {
    super();
  }

  override _readStreamForRange(start: number, end: number): Readable {
    return this.source.createReadStream(start, end) as Readable;
  }
}

function unsafeEntryName(name: string): string | undefined {
  if (name.includes('\\')) return 'entry name contains a backslash';
  if (name.startsWith('/')) return 'entry name is an absolute path';
  if (/^[A-Za-z]:/.test(name)) return 'entry name starts with a drive letter';
  if (name.split('/').includes('..')) return 'entry name contains a ".." segment';
  if (name.includes('\u0000')) return 'entry name contains a NUL character';
  return undefined;
}

/** Unix file type bits of an entry, when it was made on a Unix-like system (0 otherwise). */
function unixFileType(entry: yauzl.Entry): number {
  const madeBy = entry.versionMadeBy >> 8;
  return madeBy === 3 || madeBy === 19 ? (entry.externalFileAttributes >>> 16) & 0o170000 : 0;
}

interface ScannedEntry {
  name: string;
  entry: yauzl.Entry;
  directory: boolean;
  /** Whether the entry's data may be read (not encrypted, not a link, supported method, not a bomb). */
  readable: boolean;
}

/** Reads `length` bytes at `position` from the archive (buffer slice or one ranged read). */
async function readBytes(input: ArchiveInput, position: number, length: number): Promise<Buffer> {
  if (input instanceof Uint8Array) return Buffer.from(input.buffer, input.byteOffset, input.byteLength).subarray(position, position + length);
  const chunks: Buffer[] = [];
  for await (const chunk of input.createReadStream(position, Math.min(position + length, input.size))) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A central directory record yauzl refused: its name (when readable) and where the next record starts. */
interface BrokenRecord {
  name: string;
  next: number;
}

async function readBrokenRecord(input: ArchiveInput, offset: number): Promise<BrokenRecord | undefined> {
  const header = await readBytes(input, offset, 46);
  if (header.length < 46 || header.readUInt32LE(0) !== CENTRAL_DIRECTORY_HEADER) return undefined;
  const nameLength = header.readUInt16LE(28);
  const variableLength = nameLength + header.readUInt16LE(30) + header.readUInt16LE(32);
  const rawName = await readBytes(input, offset + 46, nameLength);
  if (rawName.length < nameLength) return undefined;
  return { name: yauzl.getFileNameLowLevel(header.readUInt16LE(8), rawName, [], true), next: offset + 46 + variableLength };
}

/**
 * Walks the central directory. When yauzl refuses one record (strong encryption, a broken zip64 field, a bad
 * name), that record is reported by name and the walk resumes at the next record, so one bad entry cannot hide
 * the others. Yields entries, and `{ broken }` for refused records. @throws when the directory itself is unreadable.
 */
async function* walkCentralDirectory(
  input: ArchiveInput,
  first: yauzl.ZipFile,
  track: (zipfile: yauzl.ZipFile) => void,
): AsyncGenerator<yauzl.Entry | { broken: BrokenRecord; message: string }> {
  let zipfile = first;
  let remaining = first.entryCount;
  for (;;) {
    // @types/yauzl declares readEntryCursor as boolean; it is the byte offset of the next central directory record.
    const cursorOf = (file: yauzl.ZipFile) => file.readEntryCursor as unknown as number;
    let cursor = cursorOf(zipfile);
    try {
      for await (const entry of zipfile.eachEntry()) {
        remaining -= 1;
        cursor = cursorOf(zipfile);
        yield entry;
      }
      return;
    } catch (error) {
      const broken = await readBrokenRecord(input, cursor);
      if (broken === undefined) throw error;
      remaining -= 1;
      yield { broken, message: (error as Error).message };
      if (remaining <= 0) return;
      const reader = (zipfile as unknown as { reader: yauzl.RandomAccessReader & { ref(): void } }).reader;
      reader.ref();
      const Resumed = yauzl.ZipFile as unknown as new (...parameters: unknown[]) => yauzl.ZipFile;
      zipfile = new Resumed(reader, broken.next, zipfile.fileSize, remaining, '', false, true, false, false, true);
      track(zipfile);
    }
  }
}

async function readAll(stream: Readable, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      stream.destroy();
      throw new Error(`more than ${limit} bytes`);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/**
 * Validates a scenario archive (spec "Scenario package"; issue 3 point 2) without holding it in memory: it reads
 * the ZIP central directory and `scenario.json` by range, and streams every entry once to check its CRC-32.
 * Collects every violation, each with its path: not a ZIP or truncated; scenario.json missing, not JSON, not
 * valid against the schema (including a version that is not semantic); resources/ missing; a referenced file
 * absent; entry names that are absolute, contain `..`, backslashes or drive letters; symbolic links; encrypted
 * entries; duplicate names; unsupported compression; more entries, more declared bytes or a higher per-entry
 * compression ratio than `limits` allow; CRC or size mismatches.
 * @returns the manifest.
 * @throws InvalidArchiveError (422) with `errors: [{ path, message }]`.
 */
export async function validateScenarioArchive(input: ArchiveInput, limits: ArchiveLimits = DEFAULT_ARCHIVE_LIMITS): Promise<ScenarioManifest> {
  let zipfile: yauzl.ZipFile;
  try {
    zipfile =
      input instanceof Uint8Array
        ? await yauzl.fromBufferPromise(Buffer.from(input.buffer, input.byteOffset, input.byteLength), YAUZL_OPTIONS)
        : await yauzl.fromRandomAccessReaderPromise(new SourceReader(input), input.size, YAUZL_OPTIONS);
  } catch (error) {
    throw new InvalidArchiveError('The upload is not a readable ZIP archive; nothing was stored.', [
      { path: '', message: `not a valid ZIP archive (${(error as Error).message})` },
    ]);
  }
  const opened = [zipfile];
  try {
    return await validateOpenArchive(input, zipfile, (resumed) => opened.push(resumed), limits);
  } finally {
    for (const each of opened) each.close();
  }
}

async function validateOpenArchive(
  input: ArchiveInput,
  zipfile: yauzl.ZipFile,
  track: (zipfile: yauzl.ZipFile) => void,
  limits: ArchiveLimits,
): Promise<ScenarioManifest> {
  const errors: ProblemViolation[] = [];
  const fail = (): never => {
    throw new InvalidArchiveError(`The scenario archive has ${errors.length} problem(s); nothing was stored.`, errors);
  };
  if (zipfile.entryCount > limits.maxEntries) {
    errors.push({ path: '', message: `the archive has ${zipfile.entryCount} entries; at most ${limits.maxEntries} are allowed` });
    fail();
  }

  const scanned: ScannedEntry[] = [];
  const seen = new Set<string>();
  let declaredTotal = 0;
  try {
    for await (const item of walkCentralDirectory(input, zipfile, track)) {
      if ('broken' in item) {
        errors.push({ path: item.broken.name, message: `entry cannot be read safely (${item.message})` });
        continue;
      }
      const entry = item;
      const name = yauzl.getFileNameLowLevel(entry.generalPurposeBitFlag, entry.fileNameRaw, entry.extraFields, true);
      // Tools that ignore the Info-ZIP Unicode Path field use the raw name: both must be safe.
      const rawName = yauzl.getFileNameLowLevel(entry.generalPurposeBitFlag, entry.fileNameRaw, [], true);
      const directory = name.endsWith('/');
      let readable = !directory;
      for (const candidate of new Set([name, rawName])) {
        const problem = unsafeEntryName(candidate);
        if (problem !== undefined) errors.push({ path: candidate, message: problem });
      }
      if (!directory && entry.compressionMethod === 0 && entry.compressedSize !== entry.uncompressedSize + (entry.isEncrypted() ? 12 : 0)) {
        errors.push({ path: name, message: `stored entry sizes differ: ${entry.compressedSize} compressed, ${entry.uncompressedSize} uncompressed bytes` });
        readable = false;
      }
      if (seen.has(name)) errors.push({ path: name, message: 'duplicate entry name' });
      seen.add(name);
      if (unixFileType(entry) === 0o120000) {
        errors.push({ path: name, message: 'symbolic links are not allowed' });
        readable = false;
      }
      if (entry.isEncrypted()) {
        errors.push({ path: name, message: 'encrypted entries are not allowed' });
        readable = false;
      } else if (!directory && entry.compressionMethod !== 0 && entry.compressionMethod !== 8) {
        errors.push({ path: name, message: `unsupported compression method ${entry.compressionMethod} (use stored or deflate)` });
        readable = false;
      }
      if (
        !directory &&
        entry.uncompressedSize > limits.compressionRatioMinBytes &&
        entry.uncompressedSize > Math.max(entry.compressedSize, 1) * limits.maxCompressionRatio
      ) {
        const ratio = Math.round(entry.uncompressedSize / Math.max(entry.compressedSize, 1));
        errors.push({ path: name, message: `compression ratio ${ratio}:1 exceeds the limit of ${limits.maxCompressionRatio}:1` });
        readable = false;
      }
      declaredTotal += entry.uncompressedSize;
      scanned.push({ name, entry, directory, readable });
    }
  } catch (error) {
    errors.push({ path: '', message: `the archive is truncated or corrupt (${(error as Error).message})` });
    fail();
  }
  const tooLarge = declaredTotal > limits.maxUncompressedBytes;
  if (tooLarge) {
    errors.push({ path: '', message: `the entries declare ${declaredTotal} uncompressed bytes; at most ${limits.maxUncompressedBytes} are allowed` });
  }

  const files = new Set(scanned.filter((item) => !item.directory).map((item) => item.name));
  if (!scanned.some((item) => item.name.startsWith(RESOURCES_DIRECTORY))) {
    errors.push({ path: RESOURCES_DIRECTORY, message: 'the resources/ directory is missing' });
  }

  let manifest: ScenarioManifest | undefined;
  const manifestEntry = scanned.find((item) => item.name === MANIFEST_NAME);
  if (manifestEntry === undefined) {
    errors.push({ path: MANIFEST_NAME, message: 'scenario.json is missing at the archive root' });
  } else if (manifestEntry.entry.uncompressedSize > limits.maxManifestBytes) {
    errors.push({ path: MANIFEST_NAME, message: `scenario.json is larger than ${limits.maxManifestBytes} bytes` });
  } else if (manifestEntry.readable) {
    manifest = await readManifest(zipfile, manifestEntry, limits, errors);
  }
  if (manifest !== undefined) {
    manifest.thumbnails.forEach((path, index) => {
      if (!files.has(path)) errors.push({ path: `${MANIFEST_NAME}#/thumbnails/${index}`, message: `referenced file '${path}' is not in the archive` });
    });
    manifest.assets.forEach((path, index) => {
      if (!files.has(path)) errors.push({ path: `${MANIFEST_NAME}#/assets/${index}`, message: `referenced file '${path}' is not in the archive` });
    });
  }

  await checkEntryData(zipfile, scanned, limits, errors, tooLarge);
  if (errors.length > 0) fail();
  return manifest as ScenarioManifest;
}

async function readManifest(zipfile: yauzl.ZipFile, item: ScannedEntry, limits: ArchiveLimits, errors: ProblemViolation[]): Promise<ScenarioManifest | undefined> {
  let text: string;
  try {
    text = (await readAll(await zipfile.openReadStreamPromise(item.entry), limits.maxManifestBytes)).toString('utf8');
  } catch (error) {
    errors.push({ path: MANIFEST_NAME, message: `scenario.json cannot be read (${(error as Error).message})` });
    return undefined;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    errors.push({ path: MANIFEST_NAME, message: `not valid JSON (${(error as Error).message})` });
    return undefined;
  }
  const result = ScenarioManifestSchema.safeParse(parsed);
  if (result.success) return result.data;
  for (const issue of result.error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) errors.push({ path: `${MANIFEST_NAME}#/${[...issue.path, key].join('/')}`, message: `unknown property '${key}'` });
    } else {
      errors.push({ path: `${MANIFEST_NAME}#/${issue.path.join('/')}`, message: issue.message });
    }
  }
  return undefined;
}

/**
 * Reads every entry's local header (its name must equal the central directory's: streaming extractors use the
 * local one) and streams each readable entry's data once, checking its size and CRC-32. Inflation stops at the
 * declared size, so an entry that lies about its size cannot expand further.
 */
async function checkEntryData(zipfile: yauzl.ZipFile, entries: ScannedEntry[], limits: ArchiveLimits, errors: ProblemViolation[], skipData: boolean): Promise<void> {
  const limit = pLimit(limits.readConcurrency);
  await Promise.all(
    entries.map((item) =>
      limit(async () => {
        let header: yauzl.LocalFileHeader;
        try {
          header = await zipfile.readLocalFileHeaderPromise(item.entry);
        } catch (error) {
          errors.push({ path: item.name, message: `local header cannot be read (${(error as Error).message})` });
          return;
        }
        if (!header.fileName.equals(item.entry.fileNameRaw)) {
          const localName = yauzl.getFileNameLowLevel(header.generalPurposeBitFlag, header.fileName, [], true);
          errors.push({ path: item.name, message: `the local header names this entry '${localName}': both names must be equal` });
          const problem = unsafeEntryName(localName);
          if (problem !== undefined) errors.push({ path: localName, message: problem });
          return;
        }
        if (!item.readable || skipData) return;
        let checksum = 0;
        let size = 0;
        try {
          // yauzl 3.4's openReadStreamLowLevelPromise calls the wrong method; use the callback form.
          const stream = await new Promise<Readable>((resolve, reject) => {
            zipfile.openReadStreamLowLevel(
              header.fileDataStart, item.entry.compressedSize, 0, item.entry.compressedSize, item.entry.compressionMethod === 8, null as unknown as number,
              (error, opened) => (error === null ? resolve(opened) : reject(error)),
            );
          });
          for await (const chunk of stream) {
            size += (chunk as Buffer).length;
            if (size > item.entry.uncompressedSize) {
              stream.destroy();
              errors.push({ path: item.name, message: `entry data expands beyond its declared ${item.entry.uncompressedSize} bytes` });
              return;
            }
            checksum = crc32(chunk as Buffer, checksum);
          }
        } catch (error) {
          errors.push({ path: item.name, message: `entry data is corrupt (${(error as Error).message})` });
          return;
        }
        if (size !== item.entry.uncompressedSize) {
          errors.push({ path: item.name, message: `entry data has ${size} bytes, not the declared ${item.entry.uncompressedSize}` });
        } else if (checksum >>> 0 !== item.entry.crc32 >>> 0) {
          errors.push({ path: item.name, message: 'CRC-32 mismatch: the entry is corrupt' });
        }
      }),
    ),
  );
}
