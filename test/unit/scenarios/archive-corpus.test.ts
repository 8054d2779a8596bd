/**
 * A corpus of malicious and broken scenario archives, built byte by byte by the small ZIP writer
 * below where libraries refuse to write them, each run through validateScenarioArchive: every case must be an
 * InvalidArchiveError (422) whose `errors` name the right path with the right message, and one archive that combines
 * many violations must list every one. The RandomAccessSource path (ranged reads, as over S3) is checked too: same
 * verdicts, read by ranges, the zip bomb's data never read.
 */
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { crc32, createDeflateRaw, deflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  type ArchiveLimits,
  DEFAULT_ARCHIVE_LIMITS,
  inspectScenarioArchive,
  validateScenarioArchive,
} from '../../../functions/core/scenarios/archive.js';
import type { RandomAccessSource } from '../../../functions/core/scenarios/ports.js';
import { InvalidArchiveError, type ProblemViolation } from '../../../functions/core/shared/errors.js';
import { statusOf } from '../../../functions/platform/problem.js';

// ---------------------------------------------------------------------------------------------------------------
// A tiny ZIP writer: local file headers, central directory, end of central directory record. It writes whatever it
// is told (bad names, wrong CRCs, unknown methods, link attributes, encryption flags), as a hostile client would.
// ---------------------------------------------------------------------------------------------------------------

interface RawEntry {
  /** Name in the central directory (and in the local header unless `localName` is given). */
  name: string;
  /** Uncompressed content (default: empty). */
  data?: Uint8Array;
  /** 0 stored (default), 8 deflate; any other method is written as-is with `payload` as its data. */
  method?: number;
  /** Bytes written as the entry data (default: `data` stored or deflated according to `method`). */
  payload?: Uint8Array;
  /** CRC-32 written in both headers (default: the real CRC of `data`). */
  crc?: number;
  /** Declared uncompressed size (default: `data.length`). */
  uncompressedSize?: number;
  /** General purpose bit flag (default: 0x0800, UTF-8 names). */
  flags?: number;
  /** Version made by: host system in the high byte (0 MS-DOS, 3 Unix). Default 20 (MS-DOS, 2.0). */
  madeBy?: number;
  /** External file attributes (Unix mode in the high 16 bits when made on Unix). */
  externalAttributes?: number;
  /** Name written in the local header only (central directory keeps `name`). */
  localName?: string;
  /** Extra field bytes written in the central directory. */
  extra?: Uint8Array;
}

/** Where an entry's bytes ended up in the archive. */
interface EntrySpan {
  name: string;
  headerOffset: number;
  dataStart: number;
  dataEnd: number;
}

interface BuiltZip {
  bytes: Buffer;
  spans: EntrySpan[];
  /** Offset of the end of central directory record. */
  endRecordOffset: number;
  centralDirectoryOffset: number;
}

const DOS_DATE = ((2024 - 1980) << 9) | (1 << 5) | 1; // 2024-01-01
const UNIX = 3 << 8;

function u16(value: number): Buffer {
  const buffer = Buffer.alloc(2);
  buffer.writeUInt16LE(value);
  return buffer;
}
function u32(value: number): Buffer {
  const buffer = Buffer.alloc(4);
  buffer.writeUInt32LE(value >>> 0);
  return buffer;
}

function writeZipWithLayout(entries: RawEntry[], options: { declaredEntryCount?: number } = {}): BuiltZip {
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  const spans: EntrySpan[] = [];
  let offset = 0;
  for (const entry of entries) {
    const data = Buffer.from(entry.data ?? new Uint8Array());
    const method = entry.method ?? 0;
    const payload = Buffer.from(entry.payload ?? (method === 8 ? deflateRawSync(data) : data));
    const crc = entry.crc ?? crc32(data);
    const uncompressedSize = entry.uncompressedSize ?? data.length;
    const flags = entry.flags ?? 0x0800;
    const name = Buffer.from(entry.name, 'utf8');
    const localName = Buffer.from(entry.localName ?? entry.name, 'utf8');
    const extra = Buffer.from(entry.extra ?? new Uint8Array());
    const local = Buffer.concat([
      u32(0x04034b50),
      u16(20),
      u16(flags),
      u16(method),
      u16(0),
      u16(DOS_DATE),
      u32(crc),
      u32(payload.length),
      u32(uncompressedSize),
      u16(localName.length),
      u16(0),
      localName,
    ]);
    spans.push({
      name: entry.name,
      headerOffset: offset,
      dataStart: offset + local.length,
      dataEnd: offset + local.length + payload.length,
    });
    central.push(
      Buffer.concat([
        u32(0x02014b50),
        u16(entry.madeBy ?? 20),
        u16(20),
        u16(flags),
        u16(method),
        u16(0),
        u16(DOS_DATE),
        u32(crc),
        u32(payload.length),
        u32(uncompressedSize),
        u16(name.length),
        u16(extra.length),
        u16(0),
        u16(0),
        u16(0),
        u32(entry.externalAttributes ?? (entry.name.endsWith('/') ? 0x10 : 0)),
        u32(offset),
        name,
        extra,
      ]),
    );
    parts.push(local, payload);
    offset += local.length + payload.length;
  }
  const centralDirectory = Buffer.concat(central);
  const count = options.declaredEntryCount ?? entries.length;
  const end = Buffer.concat([u32(0x06054b50), u16(0), u16(0), u16(count), u16(count), u32(centralDirectory.length), u32(offset), u16(0)]);
  return {
    bytes: Buffer.concat([...parts, centralDirectory, end]),
    spans,
    endRecordOffset: offset + centralDirectory.length,
    centralDirectoryOffset: offset,
  };
}

function writeZip(entries: RawEntry[], options: { declaredEntryCount?: number } = {}): Buffer {
  return writeZipWithLayout(entries, options).bytes;
}

// ---------------------------------------------------------------------------------------------------------------
// Corpus material
// ---------------------------------------------------------------------------------------------------------------

const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
const HTML = Buffer.from('<!doctype html><title>corpus</title><h1>hello</h1>');

const MANIFEST = {
  id: 'corpus-scenario',
  name: 'Corpus scenario',
  version: '1.2.3',
  thumbnails: ['resources/thumbnails/t.png'],
  assets: ['resources/assets/index.html'],
};

const text = (value: string): Buffer => Buffer.from(value, 'utf8');

/** A valid archive's entries (manifest overridable), stored or deflated. */
function validEntries(manifest: unknown = MANIFEST, method = 8): RawEntry[] {
  return [
    { name: 'scenario.json', data: text(JSON.stringify(manifest)), method },
    { name: 'resources/' },
    { name: 'resources/thumbnails/t.png', data: PNG, method },
    { name: 'resources/assets/index.html', data: HTML, method },
  ];
}

const symlink = (name: string, target = '../../../../etc/passwd'): RawEntry => ({
  name,
  data: text(target),
  madeBy: UNIX | 20,
  externalAttributes: (0o120777 << 16) >>> 0,
});

/** Traditional PKWARE encryption: bit 0 set, 12-byte encryption header before the (here stored) data. */
const encrypted = (name: string): RawEntry => {
  const data = text('top secret kiosk content');
  return { name, data, flags: 0x0801, payload: Buffer.concat([randomBytes(12), data]) };
};

const crcFlipped = (name: string, data = HTML): RawEntry => ({ name, data, method: 8, crc: (crc32(data) ^ 0x00010000) >>> 0 });

const bzip2 = (name: string): RawEntry => ({
  name,
  data: text('pretend bzip2 data'),
  method: 12,
  payload: Buffer.concat([text('BZh9'), randomBytes(60)]),
});

const MiB = 1024 * 1024;
/** yauzl's end-record search reads the last 22 + 65,535 (comment) + 20 (ZIP64 locator) bytes in one read. */
const END_WINDOW = 22 + 0xffff + 20;
const BOMB_BYTES = 64 * MiB;

/** 64 MiB of zeros deflated (≈64 KiB), streamed so that the test never holds the 64 MiB either. */
let bombCache: { payload: Buffer; crc: number } | undefined;
async function bombMaterial(): Promise<{ payload: Buffer; crc: number }> {
  if (bombCache !== undefined) return bombCache;
  const zeros = Buffer.alloc(MiB);
  const deflate = createDeflateRaw({ level: 9 });
  const chunks: Buffer[] = [];
  deflate.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<void>((resolve, reject) => {
    deflate.on('end', resolve);
    deflate.on('error', reject);
  });
  let crc = 0;
  for (let written = 0; written < BOMB_BYTES; written += MiB) {
    crc = crc32(zeros, crc);
    if (!deflate.write(zeros)) await new Promise((resolve) => deflate.once('drain', resolve));
  }
  deflate.end();
  await done;
  bombCache = { payload: Buffer.concat(chunks), crc: crc >>> 0 };
  return bombCache;
}

async function bomb(name: string): Promise<RawEntry> {
  const { payload, crc } = await bombMaterial();
  return { name, method: 8, payload, crc, uncompressedSize: BOMB_BYTES };
}

// ---------------------------------------------------------------------------------------------------------------
// Assertions
// ---------------------------------------------------------------------------------------------------------------

interface Expected {
  path: string;
  message: RegExp;
}

/** Validates and returns the violations; fails the test when the archive is accepted or the error is not a 422. */
async function violationsOf(
  input: Uint8Array | RandomAccessSource,
  limits: ArchiveLimits = DEFAULT_ARCHIVE_LIMITS,
): Promise<ProblemViolation[]> {
  let accepted: unknown;
  try {
    accepted = await validateScenarioArchive(input, limits);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidArchiveError);
    const problem = error as InvalidArchiveError;
    expect(statusOf(problem)).toBe(422);
    const errors: ProblemViolation[] = problem.violations;
    expect(errors).toBeInstanceOf(Array);
    for (const violation of errors) expect(violation).toEqual({ path: expect.any(String), message: expect.any(String) });
    expect(problem.message).toMatch(/nothing was stored/);
    return errors;
  }
  throw new Error(`expected the archive to be rejected, but it was accepted: ${JSON.stringify(accepted)}`);
}

/** Asserts that exactly the `expected` violations (any order) are reported. */
async function expectViolations(
  input: Uint8Array | RandomAccessSource,
  expected: Expected[],
  limits?: ArchiveLimits,
): Promise<ProblemViolation[]> {
  const errors = await violationsOf(input, limits);
  expect(errors, JSON.stringify(errors, null, 1)).toEqual(
    expect.arrayContaining(expected.map(({ path, message }) => ({ path, message: expect.stringMatching(message) }))),
  );
  expect(errors.length, `unexpected extra violations: ${JSON.stringify(errors, null, 1)}`).toBe(expected.length);
  return errors;
}

const NOT_A_ZIP: Expected = { path: '', message: /not a valid ZIP archive/ };

// ---------------------------------------------------------------------------------------------------------------
// The corpus
// ---------------------------------------------------------------------------------------------------------------

describe('the ZIP writer itself', () => {
  it('writes archives the validator accepts (stored and deflated), so every rejection below is due to the defect', async () => {
    expect(await validateScenarioArchive(writeZip(validEntries()))).toEqual(MANIFEST);
    expect(await validateScenarioArchive(writeZip(validEntries(MANIFEST, 0)))).toEqual(MANIFEST);
  });
});

describe('archive corpus: each malicious or broken archive → 422 naming the path', () => {
  it('not a ZIP: text, random bytes, a PNG, empty input', async () => {
    await expectViolations(text('definitely not a zip archive'), [NOT_A_ZIP]);
    await expectViolations(randomBytes(8192), [NOT_A_ZIP]);
    await expectViolations(PNG, [NOT_A_ZIP]);
    await expectViolations(new Uint8Array(), [NOT_A_ZIP]);
  });

  it('truncated in the middle (end record lost)', async () => {
    const archive = writeZip(validEntries());
    await expectViolations(archive.subarray(0, Math.floor(archive.length / 2)), [NOT_A_ZIP]);
  });

  it('cut just before the end of central directory record', async () => {
    const { bytes, endRecordOffset } = writeZipWithLayout(validEntries());
    await expectViolations(bytes.subarray(0, endRecordOffset), [NOT_A_ZIP]);
    // ...and a few bytes into it.
    await expectViolations(bytes.subarray(0, endRecordOffset + 10), [NOT_A_ZIP]);
  });

  it('entry data cut out while the central directory and end record survive (offsets point past the data)', async () => {
    const { bytes, spans, centralDirectoryOffset } = writeZipWithLayout(validEntries());
    const last = spans.at(-1)!;
    const cut = Buffer.concat([bytes.subarray(0, last.dataStart + 4), bytes.subarray(centralDirectoryOffset)]);
    await expectViolations(cut, [{ path: '', message: /truncated or corrupt/ }]);
  });

  it('end record announcing more entries than the central directory holds', async () => {
    await expectViolations(writeZip(validEntries(), { declaredEntryCount: 6 }), [{ path: '', message: /truncated or corrupt/ }]);
  });

  it('scenario.json missing (also when it is only in a subfolder)', async () => {
    const [manifest, ...rest] = validEntries();
    await expectViolations(writeZip(rest), [{ path: 'scenario.json', message: /missing/ }]);
    await expectViolations(writeZip([...rest, { ...manifest!, name: 'nested/scenario.json' }]), [
      { path: 'scenario.json', message: /missing/ },
    ]);
  });

  it('scenario.json not JSON', async () => {
    const [, ...rest] = validEntries();
    await expectViolations(writeZip([{ name: 'scenario.json', data: text('{ "id": "corpus-scenario", '), method: 8 }, ...rest]), [
      { path: 'scenario.json', message: /not valid JSON/ },
    ]);
    await expectViolations(writeZip([{ name: 'scenario.json', data: randomBytes(64) }, ...rest]), [
      { path: 'scenario.json', message: /not valid JSON/ },
    ]);
  });

  it('scenario.json not valid against the schema: every violation at its JSON pointer', async () => {
    const manifest = {
      id: 'has spaces',
      version: '1.0.0',
      thumbnails: ['../t.png'],
      assets: 'resources/assets/index.html',
      colour: 'blue',
    };
    await expectViolations(writeZip(validEntries(manifest)), [
      { path: 'scenario.json#/id', message: /letters, digits/ },
      { path: 'scenario.json#/name', message: /expected string|required/i },
      { path: 'scenario.json#/thumbnails/0', message: /under resources\// },
      { path: 'scenario.json#/thumbnails/0', message: /must not contain "\.\." segments/ },
      { path: 'scenario.json#/assets', message: /expected array/i },
      { path: 'scenario.json#/colour', message: /unknown property 'colour'/ },
    ]);
  });

  it.each(['1.0', 'v1.2.3', '01.2.3', '1.2.3.4', 'latest', '1.2.3-'])('version %j is not a semantic version', async (version) => {
    await expectViolations(writeZip(validEntries({ ...MANIFEST, version })), [
      { path: 'scenario.json#/version', message: /semantic version/ },
    ]);
  });

  it('resources/ missing', async () => {
    await expectViolations(
      writeZip([
        { name: 'scenario.json', data: text(JSON.stringify({ id: 'a', name: 'A', version: '1.0.0' })) },
        { name: 'README.md', data: text('hi') },
      ]),
      [{ path: 'resources/', message: /resources\/ directory is missing/ }],
    );
  });

  it('a referenced thumbnail and a referenced asset absent', async () => {
    const manifest = {
      ...MANIFEST,
      thumbnails: ['resources/thumbnails/t.png', 'resources/thumbnails/missing.png'],
      assets: ['resources/assets/app.js'],
    };
    await expectViolations(writeZip(validEntries(manifest)), [
      { path: 'scenario.json#/thumbnails/1', message: /'resources\/thumbnails\/missing\.png' is not in the archive/ },
      { path: 'scenario.json#/assets/0', message: /'resources\/assets\/app\.js' is not in the archive/ },
    ]);
  });

  it.each([
    ['absolute name', '/etc/cron.d/evil', /absolute path/],
    ['absolute name inside resources', '/resources/assets/x.html', /absolute path/],
    ['".." name', 'resources/../../evil.sh', /"\.\." segment/],
    ['".." as the first segment', '../evil.sh', /"\.\." segment/],
    ['backslash name', 'resources\\assets\\evil.dll', /backslash/],
    ['backslash ".." name', '..\\..\\evil.bat', /backslash/],
    ['drive letter name', 'C:/Windows/evil.dll', /drive letter/],
    ['drive-relative name', 'c:evil.dll', /drive letter/],
  ])('%s (%s)', async (_, name, message) => {
    await expectViolations(writeZip([...validEntries(), { name, data: text('#!/bin/sh\nrm -rf /\n'), method: 8 }]), [
      { path: name, message },
    ]);
  });

  it('a symbolic link (Unix made-by, mode 0o120777)', async () => {
    await expectViolations(writeZip([...validEntries(), symlink('resources/assets/passwd')]), [
      { path: 'resources/assets/passwd', message: /symbolic links are not allowed/ },
    ]);
  });

  it('a symbolic link that the manifest references', async () => {
    const manifest = { ...MANIFEST, assets: ['resources/assets/index.html', 'resources/assets/link.html'] };
    await expectViolations(writeZip([...validEntries(manifest), symlink('resources/assets/link.html')]), [
      { path: 'resources/assets/link.html', message: /symbolic links are not allowed/ },
    ]);
  });

  it('an encrypted entry (general purpose bit 0)', async () => {
    await expectViolations(writeZip([...validEntries(), encrypted('resources/assets/secret.txt')]), [
      { path: 'resources/assets/secret.txt', message: /encrypted entries are not allowed/ },
    ]);
  });

  it('an encrypted scenario.json is reported as encrypted (and not read)', async () => {
    const [, ...rest] = validEntries();
    const manifest = { ...encrypted('scenario.json'), data: text(JSON.stringify(MANIFEST)) };
    manifest.payload = Buffer.concat([randomBytes(12), manifest.data]);
    await expectViolations(writeZip([manifest, ...rest]), [{ path: 'scenario.json', message: /encrypted entries are not allowed/ }]);
  });

  it('duplicate names (a second scenario.json, a second asset)', async () => {
    const errors = await expectViolations(
      writeZip([
        ...validEntries(),
        { name: 'scenario.json', data: text(JSON.stringify({ ...MANIFEST, name: 'Shadow manifest' })) },
        { name: 'resources/assets/index.html', data: text('<script>evil()</script>') },
      ]),
      [
        { path: 'scenario.json', message: /duplicate entry name/ },
        { path: 'resources/assets/index.html', message: /duplicate entry name/ },
      ],
    );
    expect(errors).toHaveLength(2);
  });

  it('more entries than maxEntries (custom limits)', async () => {
    const entries = [
      ...validEntries(),
      ...Array.from({ length: 4 }, (_, index) => ({ name: `resources/assets/${index}.txt`, data: text(String(index)) })),
    ];
    const limits = { ...DEFAULT_ARCHIVE_LIMITS, maxEntries: 7 };
    await expectViolations(writeZip(entries), [{ path: '', message: /8 entries; at most 7/ }], limits);
    // At the limit it passes.
    expect(await validateScenarioArchive(writeZip(entries.slice(0, 7)), limits)).toEqual(MANIFEST);
  });

  it('declared uncompressed total above maxUncompressedBytes (custom limits)', async () => {
    const blob = randomBytes(3000);
    const entries = [...validEntries(), { name: 'resources/assets/blob.bin', data: blob }];
    const total = entries.reduce((sum, entry) => sum + (entry.data?.length ?? 0), 0);
    const limits = { ...DEFAULT_ARCHIVE_LIMITS, maxUncompressedBytes: 2048 };
    await expectViolations(
      writeZip(entries),
      [{ path: '', message: new RegExp(`declare ${total} uncompressed bytes; at most 2048`) }],
      limits,
    );
    expect(await validateScenarioArchive(writeZip(entries), { ...limits, maxUncompressedBytes: total })).toEqual(MANIFEST);
  });

  it('a deflated zip bomb (64 MiB of zeros in ≈64 KiB) is refused by its ratio without being inflated', async () => {
    const entry = await bomb('resources/assets/bomb.bin');
    expect(entry.payload!.length).toBeLessThan(MiB);
    // The bomb comes early and 128 KiB of padding follow it, so that yauzl's end-record search (the last 65,557
    // bytes) does not cover the bomb's data: any read of that data would be an attempt to inflate it.
    const [manifest, directory, ...resources] = validEntries();
    const { bytes, spans } = writeZipWithLayout([
      manifest!,
      directory!,
      entry,
      ...resources,
      { name: 'resources/assets/pad.bin', data: randomBytes(128 * 1024) },
    ]);
    const span = spans.find((item) => item.name === 'resources/assets/bomb.bin')!;

    // Through the ranged source: no read touches the bomb's compressed data (so nothing inflated it).
    const { source, calls } = rangedSource(bytes);
    const rssBefore = process.memoryUsage.rss();
    let rssPeak = rssBefore;
    const sampler = setInterval(() => {
      rssPeak = Math.max(rssPeak, process.memoryUsage.rss());
    }, 2);
    const started = performance.now();
    try {
      await expectViolations(source, [
        { path: 'resources/assets/bomb.bin', message: /compression ratio \d+:1 exceeds the limit of 100:1/ },
      ]);
    } finally {
      clearInterval(sampler);
    }
    const elapsed = performance.now() - started;
    rssPeak = Math.max(rssPeak, process.memoryUsage.rss());
    expect(span.dataEnd).toBeLessThan(bytes.length - END_WINDOW);
    // The one sequential pass streams the bomb's compressed bytes past without inflating them: inflating 64 MiB
    // would show in time and memory. Reads stay few (end record, central directory, one pass).
    expect(calls.length, JSON.stringify(calls)).toBeLessThanOrEqual(6);
    expect(elapsed, 'validation time, ms').toBeLessThan(1_000);
    expect(rssPeak - rssBefore, 'RSS growth while validating, bytes').toBeLessThan(32 * MiB);

    // Through the in-memory path: same verdict, fast.
    const started2 = performance.now();
    await expectViolations(bytes, [{ path: 'resources/assets/bomb.bin', message: /compression ratio/ }]);
    expect(performance.now() - started2).toBeLessThan(1_000);
  });

  it('a zip bomb that lies about its size (declares 100 bytes) is stopped at the declared size, not inflated to 64 MiB', async () => {
    const entry = { ...(await bomb('resources/assets/liar.bin')), uncompressedSize: 100 };
    const rssBefore = process.memoryUsage.rss();
    const started = performance.now();
    await expectViolations(writeZip([...validEntries(), entry]), [
      { path: 'resources/assets/liar.bin', message: /expands beyond its declared 100 bytes/ },
    ]);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(process.memoryUsage.rss() - rssBefore).toBeLessThan(32 * MiB);
  });

  it('a CRC mismatch (one CRC flipped in both the local header and the central directory)', async () => {
    const [manifest, directory, thumbnail] = validEntries();
    await expectViolations(writeZip([manifest!, directory!, thumbnail!, crcFlipped('resources/assets/index.html')]), [
      { path: 'resources/assets/index.html', message: /CRC-32 mismatch/ },
    ]);
    // A stored (uncompressed) entry too.
    await expectViolations(writeZip([manifest!, directory!, thumbnail!, { ...crcFlipped('resources/assets/index.html'), method: 0 }]), [
      { path: 'resources/assets/index.html', message: /CRC-32 mismatch/ },
    ]);
  });

  it('a corrupt CRC on scenario.json is reported even though the manifest itself parses', async () => {
    const [manifest, ...rest] = validEntries();
    await expectViolations(writeZip([{ ...manifest!, crc: (crc32(manifest!.data!) ^ 1) >>> 0 }, ...rest]), [
      { path: 'scenario.json', message: /CRC-32 mismatch/ },
    ]);
  });

  it('an unsupported compression method (12, bzip2)', async () => {
    await expectViolations(writeZip([...validEntries(), bzip2('resources/assets/data.bz2')]), [
      { path: 'resources/assets/data.bz2', message: /unsupported compression method 12/ },
    ]);
  });

  it('ONE archive with many violations lists every one of them', async () => {
    const entries: RawEntry[] = [
      // Schema-invalid manifest: version not semver and an unknown property.
      {
        name: 'scenario.json',
        data: text(JSON.stringify({ id: 'corpus-combined', name: 'Combined', version: '1.0', colour: 'blue' })),
        method: 8,
      },
      // No entry under resources/ at all.
      { name: '/etc/passwd', data: text('root:x:0:0') },
      { name: 'assets/../../evil.sh', data: text('rm -rf /') },
      { name: 'assets\\evil.txt', data: text('backslash') },
      { name: 'C:/autoexec.bat', data: text('echo') },
      symlink('assets/link'),
      encrypted('assets/secret.txt'),
      { name: 'assets/dup.txt', data: text('first') },
      { name: 'assets/dup.txt', data: text('second') },
      await bomb('assets/bomb.bin'),
      crcFlipped('assets/corrupt.html'),
      bzip2('assets/data.bz2'),
    ];
    const started = performance.now();
    const errors = await expectViolations(writeZip(entries), [
      { path: 'scenario.json#/version', message: /semantic version/ },
      { path: 'scenario.json#/colour', message: /unknown property 'colour'/ },
      { path: 'resources/', message: /missing/ },
      { path: '/etc/passwd', message: /absolute path/ },
      { path: 'assets/../../evil.sh', message: /"\.\." segment/ },
      { path: 'assets\\evil.txt', message: /backslash/ },
      { path: 'C:/autoexec.bat', message: /drive letter/ },
      { path: 'assets/link', message: /symbolic link/ },
      { path: 'assets/secret.txt', message: /encrypted/ },
      { path: 'assets/dup.txt', message: /duplicate entry name/ },
      { path: 'assets/bomb.bin', message: /compression ratio/ },
      { path: 'assets/corrupt.html', message: /CRC-32 mismatch/ },
      { path: 'assets/data.bz2', message: /unsupported compression method 12/ },
    ]);
    expect(errors).toHaveLength(13);
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Entry-name smuggling: the name a validator checks must be the name every extractor uses.
// ---------------------------------------------------------------------------------------------------------------

describe('archive corpus: names that differ between the places a ZIP stores them', () => {
  // A streaming extractor (kiosk firmware, Java ZipInputStream, `bsdtar`, `unzip -` on a pipe) reads names from the
  // local headers, so `../../evil.sh` written there would escape the extraction folder: both names are checked.
  it('a local header name with ".." behind a harmless central directory name is refused', async () => {
    const archive = writeZip([
      ...validEntries({ ...MANIFEST, assets: ['resources/assets/index.html', 'resources/assets/app.sh'] }),
      { name: 'resources/assets/app.sh', localName: '../../../../evil.sh', data: text('#!/bin/sh\nrm -rf /\n') },
    ]);
    const errors = await violationsOf(archive);
    expect(
      errors.some((error) => error.path.includes('..') || error.path === 'resources/assets/app.sh'),
      JSON.stringify(errors),
    ).toBe(true);
  });

  // With an Info-ZIP Unicode Path extra field (0x7075), extractors that ignore it (Python zipfile, Java, many embedded
  // unzippers) write to the raw name: every name an extractor may use must be checked.
  it('a raw name with ".." hidden behind an Info-ZIP Unicode Path extra field is refused', async () => {
    const raw = '../../../../evil.sh';
    const shown = 'resources/assets/ok.sh';
    const field = Buffer.concat([Buffer.from([1]), u32(crc32(Buffer.from(raw))), Buffer.from(shown)]);
    const archive = writeZip([
      ...validEntries(),
      { name: raw, data: text('#!/bin/sh\nrm -rf /\n'), extra: Buffer.concat([u16(0x7075), u16(field.length), field]) },
    ]);
    const errors = await violationsOf(archive);
    expect(
      errors.some((error) => error.path.includes('..')),
      JSON.stringify(errors),
    ).toBe(true);
  });

  it('a Unicode Path extra field carrying ".." behind a harmless raw name is refused', async () => {
    const raw = 'resources/assets/ok.sh';
    const shown = '../../../../evil.sh';
    const field = Buffer.concat([Buffer.from([1]), u32(crc32(Buffer.from(raw))), Buffer.from(shown)]);
    const archive = writeZip([
      ...validEntries(),
      { name: raw, data: text('x'), extra: Buffer.concat([u16(0x7075), u16(field.length), field]) },
    ]);
    const errors = await violationsOf(archive);
    expect(
      errors.some((error) => error.path.includes('..')),
      JSON.stringify(errors),
    ).toBe(true);
  });
});

describe('archive corpus: entries that stop the directory scan must not hide the other violations', () => {
  // yauzl refuses such records outright; the validator must name the entry and go on listing the other violations.
  it.each([
    ['strong encryption (bit 6)', { ...encrypted('resources/assets/strong.bin'), flags: 0x0841 }, /encrypt/],
    [
      'stored entry with compressed size ≠ uncompressed size',
      { name: 'resources/assets/sizes.bin', data: text('abc'), uncompressedSize: 9 },
      /size/,
    ],
  ])('%s is named, and the other violations are still listed', async (_, entry, message) => {
    const errors = await violationsOf(
      writeZip([...validEntries(), symlink('resources/assets/link'), entry, { name: 'resources/../../evil.sh', data: text('x') }]),
    );
    expect(errors, JSON.stringify(errors)).toEqual(
      expect.arrayContaining([
        { path: entry.name, message: expect.stringMatching(message) },
        { path: 'resources/assets/link', message: expect.stringMatching(/symbolic link/) },
        { path: 'resources/../../evil.sh', message: expect.stringMatching(/\.\./) },
      ]),
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// The RandomAccessSource path (what the S3-triggered validation uses)
// ---------------------------------------------------------------------------------------------------------------

interface RangeCall {
  start: number;
  end: number;
}

/** A RandomAccessSource over a Buffer that records every ranged read and streams it in 16 KiB chunks. */
function rangedSource(bytes: Buffer): { source: RandomAccessSource; calls: RangeCall[] } {
  const calls: RangeCall[] = [];
  const source: RandomAccessSource = {
    size: bytes.length,
    createReadStream(start: number, end: number) {
      expect(start).toBeGreaterThanOrEqual(0);
      expect(end).toBeLessThanOrEqual(bytes.length);
      expect(end).toBeGreaterThanOrEqual(start);
      calls.push({ start, end });
      const slice = bytes.subarray(start, end);
      return Readable.from(
        (function* chunks() {
          for (let offset = 0; offset < slice.length; offset += 16 * 1024) yield slice.subarray(offset, offset + 16 * 1024);
        })(),
        { objectMode: false },
      );
    },
  };
  return { source, calls };
}

describe('validateScenarioArchive over a RandomAccessSource', () => {
  /** A valid archive comfortably larger than yauzl's end-record search window (65,557 bytes). */
  const largeValid = () =>
    writeZipWithLayout([
      ...validEntries({ ...MANIFEST, assets: ['resources/assets/index.html', 'resources/assets/video.bin'] }),
      { name: 'resources/assets/video.bin', data: randomBytes(512 * 1024) },
    ]);

  it('accepts a valid archive in a few ranged reads whatever its number of entries (S3 GETs cost latency)', async () => {
    const { bytes } = largeValid();
    const { source, calls } = rangedSource(bytes);
    expect(await validateScenarioArchive(source)).toEqual(await validateScenarioArchive(bytes));
    // End record, central directory (cached), scenario.json header and data, and ONE sequential pass for the rest.
    expect(calls.length, JSON.stringify(calls)).toBeLessThanOrEqual(6);
    expect(
      calls.filter((call) => call.end - call.start === bytes.length),
      'one sequential pass over the whole archive',
    ).toHaveLength(1);
  });

  it('returns the SHA-256 of the archive from the same pass', async () => {
    const { bytes } = largeValid();
    const { source, calls } = rangedSource(bytes);
    const { sha256 } = await inspectScenarioArchive(source);
    expect(sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
    expect(calls.filter((call) => call.end - call.start === bytes.length)).toHaveLength(1);
  });

  it('rejects a CRC-broken archive exactly as the in-memory path does', async () => {
    const [manifest, directory, thumbnail] = validEntries();
    const bytes = writeZip([
      manifest!,
      directory!,
      thumbnail!,
      crcFlipped('resources/assets/index.html'),
      { name: 'resources/assets/pad.bin', data: randomBytes(128 * 1024) },
    ]);
    const { source, calls } = rangedSource(bytes);
    const fromSource = await expectViolations(source, [{ path: 'resources/assets/index.html', message: /CRC-32 mismatch/ }]);
    expect(fromSource).toEqual(await violationsOf(bytes));
    expect(calls.length).toBeGreaterThan(1);
  });

  it('rejects the other corpus cases the same way through the source (symlink, encrypted, duplicate, truncated, not a ZIP)', async () => {
    const cases = [
      writeZip([...validEntries(), symlink('resources/assets/passwd')]),
      writeZip([...validEntries(), encrypted('resources/assets/secret.txt')]),
      writeZip([...validEntries(), { name: 'resources/assets/index.html', data: HTML }]),
      writeZip([...validEntries(), bzip2('resources/assets/data.bz2')]),
      writeZip(validEntries()).subarray(0, 100),
      randomBytes(2048),
    ];
    for (const bytes of cases) expect(await violationsOf(rangedSource(bytes).source)).toEqual(await violationsOf(bytes));
  });

  it('too many entries: only the end of the archive is read (one ranged read of the end-record window), no entry data', async () => {
    const entries = [
      ...validEntries(),
      ...Array.from({ length: 8 }, (_, index) => ({ name: `resources/assets/${index}.bin`, data: randomBytes(64 * 1024) })),
    ];
    const { bytes, centralDirectoryOffset } = writeZipWithLayout(entries);
    const { source, calls } = rangedSource(bytes);
    await expectViolations(source, [{ path: '', message: /12 entries; at most 5/ }], { ...DEFAULT_ARCHIVE_LIMITS, maxEntries: 5 });
    expect(calls.length, JSON.stringify(calls)).toBeGreaterThanOrEqual(1);
    for (const call of calls)
      expect(call.end - call.start, `a read of the whole archive: ${JSON.stringify(call)}`).toBeLessThan(bytes.length);
    const bytesRead = calls.reduce((sum, call) => sum + (call.end - call.start), 0);
    expect(bytesRead, `read ${bytesRead} of ${bytes.length} bytes`).toBeLessThanOrEqual(END_WINDOW);
    // Nothing before the last 64 KiB window (i.e. no local header or entry data of the first entries) was read.
    expect(Math.min(...calls.map((call) => call.start))).toBeGreaterThanOrEqual(bytes.length - END_WINDOW);
    expect(centralDirectoryOffset).toBeGreaterThan(0);
  });
});
