/**
 * The one sequential pass over a scenario archive, as `unzip -t` does: every entry's local header and data checked in
 * offset order (gaps, overlaps, names, inflation, size, CRC-32) while the same bytes feed the archive's SHA-256.
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
// ZlibOptions omits the stream options (writableHighWaterMark) that zlib streams accept, as every Transform does.
import { crc32, createInflateRaw, type ZlibOptions } from 'node:zlib';
import type { ProblemViolation } from '../shared/errors.js';
import { type ScannedEntry, unsafeEntryName } from './archive-entry.js';
import { decodeEntryName, type ZipInput } from './zip-reader.js';

const LOCAL_FILE_HEADER = 0x04034b50;
const PASS_CHUNK_BYTES = 1024 * 1024;

/** The archive as one sequential stream of chunks (a single ranged read for stored objects). */
function wholeArchive(input: ZipInput): AsyncIterable<Buffer> {
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
export async function checkEntriesInOnePass(
  input: ZipInput,
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
