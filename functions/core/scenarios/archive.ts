import { createHash } from 'node:crypto';
import { once } from 'node:events';
import type { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
// ZlibOptions omits the stream options (writableHighWaterMark) that zlib streams accept, as every Transform does.
import { crc32, createInflateRaw, type ZlibOptions } from 'node:zlib';
import { InvalidArchiveError, type ProblemViolation } from '../shared/errors.js';
import { type ScenarioManifest, ScenarioManifestSchema } from './manifest.js';
import { decodeEntryName, NotAZipArchiveError, openZipArchive, type ZipArchive, type ZipEntry, type ZipInput } from './zip-reader.js';

/** Name of the manifest at the archive root. */
export const MANIFEST_NAME = 'scenario.json';
/** Required resources directory. */
export const RESOURCES_DIRECTORY = 'resources/';

/** Limits that keep a hostile archive from hurting the service. */
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
export type ArchiveInput = ZipInput;

function unsafeEntryName(name: string): string | undefined {
  if (name.includes('\\')) return 'entry name contains a backslash';
  if (name.startsWith('/')) return 'entry name is an absolute path';
  if (/^[A-Za-z]:/.test(name)) return 'entry name starts with a drive letter';
  if (name.split('/').includes('..')) return 'entry name contains a ".." segment';
  if (name.includes('\u0000')) return 'entry name contains a NUL character';
  return undefined;
}

/** Unix file type bits of an entry, when it was made on a Unix-like system (0 otherwise). */
function unixFileType(entry: ZipEntry): number {
  const madeBy = entry.versionMadeBy >> 8;
  return madeBy === 3 || madeBy === 19 ? (entry.externalFileAttributes >>> 16) & 0o170000 : 0;
}

interface ScannedEntry {
  name: string;
  entry: ZipEntry;
  directory: boolean;
  /** Whether the entry's data may be read (not encrypted, not a link, supported method, not a bomb). */
  readable: boolean;
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
 * Validates a scenario archive without holding it in memory: it reads
 * the ZIP central directory and `scenario.json` by range, and streams every entry once to check its CRC-32.
 * Collects every violation, each with its path: not a ZIP or truncated; scenario.json missing, not JSON, not
 * valid against the schema (including a version that is not semantic); resources/ missing; a referenced file
 * absent; entry names that are absolute, contain `..`, backslashes or drive letters; symbolic links; encrypted
 * entries; duplicate names; unsupported compression; more entries, more declared bytes or a higher per-entry
 * compression ratio than `limits` allow; CRC or size mismatches.
 * Every entry's data is checked in ONE sequential pass over the archive, as `unzip -t` does (local headers, gaps and
 * overlaps, inflation, CRC-32), and the same bytes feed the archive's SHA-256: a stored object costs a few ranged
 * reads whatever its number of entries.
 * @returns the manifest and the archive's hex SHA-256.
 * @throws InvalidArchiveError with `errors: [{ path, message }]`.
 */
export async function inspectScenarioArchive(
  input: ArchiveInput,
  limits: ArchiveLimits = DEFAULT_ARCHIVE_LIMITS,
): Promise<{ manifest: ScenarioManifest; sha256: string }> {
  let archive: ZipArchive;
  try {
    archive = await openZipArchive(input, { maxEntries: limits.maxEntries });
  } catch (error) {
    if (!(error instanceof NotAZipArchiveError)) throw error;
    throw new InvalidArchiveError('The upload is not a readable ZIP archive; nothing was stored.', [
      { path: '', message: `not a valid ZIP archive (${error.message})` },
    ]);
  }
  try {
    return await validateOpenArchive(input, archive, limits);
  } finally {
    archive.close();
  }
}

/** validateScenarioArchive without the hash: resolves to the manifest. @throws InvalidArchiveError. */
export async function validateScenarioArchive(
  input: ArchiveInput,
  limits: ArchiveLimits = DEFAULT_ARCHIVE_LIMITS,
): Promise<ScenarioManifest> {
  return (await inspectScenarioArchive(input, limits)).manifest;
}

/** Throws the archive's violations. @throws InvalidArchiveError (422) listing `errors` */
function failWith(errors: ProblemViolation[]): never {
  throw new InvalidArchiveError(`The scenario archive has ${errors.length} problem(s); nothing was stored.`, errors);
}

/**
 * Validates an opened archive: its central directory's entries, scenario.json and the files it references, then
 * every entry's data in one pass (checkEntriesInOnePass).
 * @returns the manifest and the archive's hex SHA-256.
 * @throws InvalidArchiveError (422) listing every violation found.
 */
async function validateOpenArchive(
  input: ArchiveInput,
  archive: ZipArchive,
  limits: ArchiveLimits,
): Promise<{ manifest: ScenarioManifest; sha256: string }> {
  const { directoryStart } = archive;
  const errors: ProblemViolation[] = [];
  if (archive.entryCount > limits.maxEntries) {
    errors.push({ path: '', message: `the archive has ${archive.entryCount} entries; at most ${limits.maxEntries} are allowed` });
    failWith(errors);
  }
  const { scanned, declaredTotal } = await scanEntries(archive, limits, errors);
  const tooLarge = declaredTotal > limits.maxUncompressedBytes;
  if (tooLarge) {
    errors.push({
      path: '',
      message: `the entries declare ${declaredTotal} uncompressed bytes; at most ${limits.maxUncompressedBytes} are allowed`,
    });
  }

  const files = new Set(scanned.filter((item) => !item.directory).map((item) => item.name));
  if (!scanned.some((item) => item.name.startsWith(RESOURCES_DIRECTORY))) {
    errors.push({ path: RESOURCES_DIRECTORY, message: 'the resources/ directory is missing' });
  }
  const manifest = await checkManifest(archive, scanned, limits, errors);
  if (manifest !== undefined) checkReferencedFiles(manifest, files, errors);

  const sha256 = tooLarge ? '' : await checkEntriesInOnePass(input, scanned, directoryStart, errors);
  if (errors.length > 0) failWith(errors);
  return { manifest: manifest as ScenarioManifest, sha256 };
}

/**
 * Reads the central directory's entries, checking each (checkEntry), and totals their declared uncompressed bytes.
 * @throws InvalidArchiveError (422) when the central directory is truncated or corrupt
 */
async function scanEntries(
  archive: ZipArchive,
  limits: ArchiveLimits,
  errors: ProblemViolation[],
): Promise<{ scanned: ScannedEntry[]; declaredTotal: number }> {
  const scanned: ScannedEntry[] = [];
  const seen = new Set<string>();
  let declaredTotal = 0;
  try {
    for await (const item of archive.entries()) {
      if ('broken' in item) {
        errors.push({ path: item.broken.name, message: `entry cannot be read safely (${item.broken.message})` });
        continue;
      }
      const entry = item;
      const directory = entry.name.endsWith('/');
      const readable = checkEntry(entry, directory, seen, limits, errors);
      declaredTotal += entry.uncompressedSize;
      scanned.push({ name: entry.name, entry, directory, readable });
    }
  } catch (error) {
    errors.push({ path: '', message: `the archive is truncated or corrupt (${(error as Error).message})` });
    failWith(errors);
  }
  return { scanned, declaredTotal };
}

/**
 * Checks one central directory entry (names, stored sizes, duplicates, links, encryption, method, compression
 * ratio), pushing its violations and adding its name to `seen`.
 * @returns whether its data may be read: a file, not encrypted, not a link, a supported method, not a bomb.
 */
function checkEntry(entry: ZipEntry, directory: boolean, seen: Set<string>, limits: ArchiveLimits, errors: ProblemViolation[]): boolean {
  const { name, rawName } = entry;
  let readable = !directory;
  // Tools that ignore the Info-ZIP Unicode Path field use the raw name: both must be safe.
  for (const candidate of new Set([name, rawName])) {
    const problem = unsafeEntryName(candidate);
    if (problem !== undefined) errors.push({ path: candidate, message: problem });
  }
  if (!directory && entry.compressionMethod === 0 && entry.compressedSize !== entry.uncompressedSize + (entry.encrypted ? 12 : 0)) {
    errors.push({
      path: name,
      message: `stored entry sizes differ: ${entry.compressedSize} compressed, ${entry.uncompressedSize} uncompressed bytes`,
    });
    readable = false;
  }
  if (seen.has(name)) errors.push({ path: name, message: 'duplicate entry name' });
  seen.add(name);
  if (unixFileType(entry) === 0o120000) {
    errors.push({ path: name, message: 'symbolic links are not allowed' });
    readable = false;
  }
  if (entry.encrypted) {
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
  return readable;
}

/** The archive's scenario.json when it is there, within maxManifestBytes, readable and valid; else pushes why not. */
async function checkManifest(
  archive: ZipArchive,
  scanned: ScannedEntry[],
  limits: ArchiveLimits,
  errors: ProblemViolation[],
): Promise<ScenarioManifest | undefined> {
  const manifestEntry = scanned.find((item) => item.name === MANIFEST_NAME);
  if (manifestEntry === undefined) {
    errors.push({ path: MANIFEST_NAME, message: 'scenario.json is missing at the archive root' });
  } else if (manifestEntry.entry.uncompressedSize > limits.maxManifestBytes) {
    errors.push({ path: MANIFEST_NAME, message: `scenario.json is larger than ${limits.maxManifestBytes} bytes` });
  } else if (manifestEntry.readable) {
    return await readManifest(archive, manifestEntry, limits, errors);
  }
  return undefined;
}

/** Pushes a violation for each thumbnail and asset of the manifest that is not a file of the archive. */
function checkReferencedFiles(manifest: ScenarioManifest, files: ReadonlySet<string>, errors: ProblemViolation[]): void {
  manifest.thumbnails.forEach((path, index) => {
    if (!files.has(path))
      errors.push({ path: `${MANIFEST_NAME}#/thumbnails/${index}`, message: `referenced file '${path}' is not in the archive` });
  });
  manifest.assets.forEach((path, index) => {
    if (!files.has(path))
      errors.push({ path: `${MANIFEST_NAME}#/assets/${index}`, message: `referenced file '${path}' is not in the archive` });
  });
}

async function readManifest(
  archive: ZipArchive,
  item: ScannedEntry,
  limits: ArchiveLimits,
  errors: ProblemViolation[],
): Promise<ScenarioManifest | undefined> {
  let text: string;
  try {
    text = (await readAll(await archive.openEntry(item.entry), limits.maxManifestBytes)).toString('utf8');
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
      for (const key of issue.keys)
        errors.push({ path: `${MANIFEST_NAME}#/${[...issue.path, key].join('/')}`, message: `unknown property '${key}'` });
    } else {
      errors.push({ path: `${MANIFEST_NAME}#/${issue.path.join('/')}`, message: issue.message });
    }
  }
  return undefined;
}

const LOCAL_FILE_HEADER = 0x04034b50;
const PASS_CHUNK_BYTES = 1024 * 1024;

/** The archive as one sequential stream of chunks (a single ranged read for stored objects). */
function wholeArchive(input: ArchiveInput): AsyncIterable<Buffer> {
  if (input instanceof Uint8Array) {
    const buffer = Buffer.from(input.buffer, input.byteOffset, input.byteLength);
    return (function* () {
      for (let offset = 0; offset < buffer.length; offset += PASS_CHUNK_BYTES) yield buffer.subarray(offset, offset + PASS_CHUNK_BYTES);
    })() as unknown as AsyncIterable<Buffer>;
  }
  return input.createReadStream(0, input.size) as unknown as AsyncIterable<Buffer>;
}

/** Checks one entry's data as it streams by: inflates (when deflated), counts and CRCs, stopping at the declared size. */
class EntryDataCheck {
  private readonly inflater: ReturnType<typeof createInflateRaw> | undefined;
  private checksum = 0;
  private size = 0;
  private failure: string | undefined;

  constructor(private readonly item: ScannedEntry) {
    // zlib inflates on the thread pool: a few MiB of input buffer lets it work while the main thread hashes the next
    // chunk, and 256 KiB output chunks cut per-chunk overhead. Memory stays bounded by the buffer.
    this.inflater =
      item.entry.compressionMethod === 8
        ? createInflateRaw({ chunkSize: 256 * 1024, writableHighWaterMark: 8 * 1024 * 1024 } as ZlibOptions)
        : undefined;
    this.inflater?.on('data', (chunk: Buffer) => this.take(chunk));
    this.inflater?.on('error', (error: Error) => {
      this.failure ??= `entry data is corrupt (${error.message})`;
    });
  }

  private take(chunk: Buffer): void {
    if (this.failure !== undefined) return;
    this.size += chunk.length;
    if (this.size > this.item.entry.uncompressedSize) {
      this.failure = `entry data expands beyond its declared ${this.item.entry.uncompressedSize} bytes`;
      this.inflater?.destroy();
      return;
    }
    this.checksum = crc32(chunk, this.checksum);
  }

  /** Feeds compressed bytes, waiting for the inflater to drain (bounded memory). */
  async write(compressed: Buffer): Promise<void> {
    if (this.failure !== undefined) return;
    if (this.inflater === undefined) return this.take(compressed);
    if (!this.inflater.write(compressed)) await Promise.race([once(this.inflater, 'drain'), once(this.inflater, 'close')]);
  }

  /** Ends the entry and returns its violation, if any. */
  async end(): Promise<string | undefined> {
    if (this.inflater !== undefined && this.failure === undefined) {
      this.inflater.end();
      await finished(this.inflater).catch(() => undefined);
    }
    if (this.failure !== undefined) return this.failure;
    if (this.size !== this.item.entry.uncompressedSize)
      return `entry data has ${this.size} bytes, not the declared ${this.item.entry.uncompressedSize}`;
    if (this.checksum >>> 0 !== this.item.entry.crc32 >>> 0) return 'CRC-32 mismatch: the entry is corrupt';
    return undefined;
  }
}

/**
 * One sequential pass over the archive, like `unzip -t`: visits the entries in offset order, checks that each
 * local header is there and names the entry as the central directory does (streaming extractors use the local
 * name), that no entry overlaps another (overlapping entries are a zip-bomb technique) or runs into the central
 * directory, and streams each readable entry's data through its size and CRC-32 check. Every byte also feeds the
 * SHA-256 of the archive, so the archive is read once in all.
 * @returns the archive's hex SHA-256.
 */
async function checkEntriesInOnePass(
  input: ArchiveInput,
  scanned: ScannedEntry[],
  directoryStart: number,
  errors: ProblemViolation[],
): Promise<string> {
  const hash = createHash('sha256');
  const ordered = [...scanned].sort((left, right) => left.entry.relativeOffsetOfLocalHeader - right.entry.relativeOffsetOfLocalHeader);
  const pass = new EntryPass(ordered, directoryStart, errors);
  for await (const raw of wholeArchive(input)) {
    const chunk = Buffer.isBuffer(raw) ? raw : Buffer.from(raw);
    hash.update(chunk);
    await pass.consume(chunk);
  }
  pass.finish();
  return hash.digest('hex');
}

/**
 * The state of checkEntriesInOnePass as the archive streams by: the entry being visited, where the stream is, and
 * which part of the entry it is in (the gap before its local header, the header, its names, its data).
 */
class EntryPass {
  private next = 0;
  /** Offset in the archive of the next byte to consume. */
  private position = 0;
  private phase: 'seek' | 'header' | 'names' | 'data' = 'seek';
  private pending: Buffer[] = [];
  private pendingLength = 0;
  private needed = 0;
  /** Data bytes of the current entry still to stream by. */
  private remaining = 0;
  /** Offset just past the data of the last entry visited: an entry starting before it overlaps. */
  private dataEnd = 0;
  private check: EntryDataCheck | undefined;
  private current: ScannedEntry | undefined;

  /** `ordered`: the entries in offset order. Violations are pushed to `errors`. */
  constructor(
    private readonly ordered: readonly ScannedEntry[],
    private readonly directoryStart: number,
    private readonly errors: ProblemViolation[],
  ) {
    this.current = ordered[0];
  }

  /** Consumes the archive's next chunk; bytes past the last entry are skipped. */
  async consume(chunk: Buffer): Promise<void> {
    let offset = 0;
    while (offset < chunk.length && this.current !== undefined) {
      const item: ScannedEntry = this.current;
      if (this.phase === 'seek') offset = this.seek(item, chunk, offset);
      else if (this.phase === 'header' || this.phase === 'names') offset = await this.readHeader(item, chunk, offset);
      else offset = await this.readData(item, chunk, offset);
    }
    this.position += chunk.length - offset;
  }

  /** Once the archive has streamed by: an entry still unvisited means the archive is truncated. */
  finish(): void {
    if (this.current !== undefined) {
      this.errors.push({ path: this.current.name, message: "the archive ends before this entry's data: it is truncated" });
    }
  }

  /** Skips the bytes before the entry's local header; returns the new offset in `chunk`. */
  private seek(item: ScannedEntry, chunk: Buffer, offset: number): number {
    const skip = Math.min(chunk.length - offset, item.entry.relativeOffsetOfLocalHeader - this.position);
    this.position += skip;
    if (this.position === item.entry.relativeOffsetOfLocalHeader) {
      this.phase = 'header';
      this.pending = [];
      this.pendingLength = 0;
      this.needed = 30;
    }
    return offset + skip;
  }

  /** Collects the local header (30 bytes), then with its names and extra field, and checks each once whole. */
  private async readHeader(item: ScannedEntry, chunk: Buffer, offset: number): Promise<number> {
    const take = Math.min(this.needed - this.pendingLength, chunk.length - offset);
    this.pending.push(chunk.subarray(offset, offset + take));
    this.pendingLength += take;
    this.position += take;
    if (this.pendingLength < this.needed) return offset + take;
    const bytes = Buffer.concat(this.pending);
    if (this.phase === 'header') this.checkLocalHeader(item, bytes);
    else await this.checkLocalName(item, bytes);
    return offset + take;
  }

  /** Checks the local header's signature; then collects its name and extra field. */
  private checkLocalHeader(item: ScannedEntry, bytes: Buffer): void {
    if (bytes.readUInt32LE(0) !== LOCAL_FILE_HEADER) {
      this.errors.push({ path: item.name, message: 'the local header is missing where the central directory points' });
      this.dataEnd = this.position;
      this.advance();
      return;
    }
    this.phase = 'names';
    this.needed = bytes.readUInt16LE(26) + bytes.readUInt16LE(28);
    this.pending = [bytes.subarray(0, 30)];
    this.needed += 30;
  }

  /**
   * Checks that the local header names the entry as the central directory does and that its data ends before the
   * central directory; then starts the data's check.
   */
  private async checkLocalName(item: ScannedEntry, bytes: Buffer): Promise<void> {
    const localName = bytes.subarray(30, 30 + bytes.readUInt16LE(26));
    if (!localName.equals(item.entry.fileNameRaw)) {
      const decoded = decodeEntryName(bytes.readUInt16LE(6), localName);
      this.errors.push({ path: item.name, message: `the local header names this entry '${decoded}': both names must be equal` });
      const problem = unsafeEntryName(decoded);
      if (problem !== undefined) this.errors.push({ path: decoded, message: problem });
    }
    this.remaining = item.entry.compressedSize;
    this.dataEnd = this.position + this.remaining;
    if (this.dataEnd > this.directoryStart) {
      this.errors.push({ path: item.name, message: 'entry data runs into the central directory' });
      this.advance();
      return;
    }
    this.check = item.readable ? new EntryDataCheck(item) : undefined;
    this.phase = 'data';
    if (this.remaining === 0) await this.endEntry(item);
  }

  /** Streams the entry's data through its check; returns the new offset in `chunk`. */
  private async readData(item: ScannedEntry, chunk: Buffer, offset: number): Promise<number> {
    const take = Math.min(this.remaining, chunk.length - offset);
    if (this.check !== undefined) await this.check.write(chunk.subarray(offset, offset + take));
    this.position += take;
    this.remaining -= take;
    if (this.remaining === 0) await this.endEntry(item);
    return offset + take;
  }

  /** Ends the entry's data check, pushing its violation, and moves to the next entry. */
  private async endEntry(item: ScannedEntry): Promise<void> {
    const failure = await this.check?.end();
    if (failure !== undefined) this.errors.push({ path: item.name, message: failure });
    this.advance();
  }

  /** Moves to the next entry, skipping (with a violation) those that start inside the data already streamed by. */
  private advance(): void {
    this.next += 1;
    this.current = this.ordered[this.next];
    this.phase = 'seek';
    if (this.current !== undefined && this.current.entry.relativeOffsetOfLocalHeader < this.dataEnd) {
      this.errors.push({ path: this.current.name, message: "entry overlaps the previous entry's data" });
      // Its bytes have already streamed by; later entries are still checked.
      while (this.current !== undefined && this.current.entry.relativeOffsetOfLocalHeader < this.dataEnd) {
        this.next += 1;
        this.current = this.ordered[this.next];
      }
    }
  }
}
