/**
 * End-to-end archive corpus and quota race over real HTTP against one local service (`bin/local.ts`):
 * - a representative subset of the malicious/broken archive corpus (built byte by byte below; the full corpus is in
 *   test/unit/scenarios/archive-corpus.test.ts) is uploaded as alice: each answer is a 422 problem+json listing the expected
 *   violations; afterwards the service still answers and nothing was stored (search, listing, S3 folder, usage);
 * - 20 concurrent uploads of ~400 KiB versions by bob into globex's 5 MiB quota: some 201, the rest 413 with the
 *   figures, the stored total never exceeds the quota, and usage moves by exactly the sum of stored sizes.
 */
import { randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { crc32, createDeflateRaw, deflateRawSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectOk } from '../../client/index.js';
import { answerOf, clientFor, eventually, type TypedResult, tokenFor, uploadArchive, useLocalService } from './harness.js';

const GLOBEX_QUOTA = 5_242_880;
const MiB = 1024 * 1024;

// The race is on the quota, not on the upload address's admission: all 20 uploads are served at once (the default
// serves 8 and queues the rest, and on a busy machine the last ones may wait past the queue's bound and get 503).
const local = useLocalService({ users: ['alice', 'bob'], environment: { MAX_IN_FLIGHT_UPLOAD: '20' } });

// ---------------------------------------------------------------------------------------------------------------
// A tiny ZIP writer (same as the unit corpus): writes whatever it is told, as a hostile client would.
// ---------------------------------------------------------------------------------------------------------------

interface RawEntry {
  name: string;
  data?: Uint8Array;
  /** 0 stored (default), 8 deflate; other methods are written as-is with `payload`. */
  method?: number;
  payload?: Uint8Array;
  crc?: number;
  uncompressedSize?: number;
  flags?: number;
  madeBy?: number;
  externalAttributes?: number;
}

const u16 = (value: number): Buffer => {
  const buffer = Buffer.alloc(2);
  buffer.writeUInt16LE(value);
  return buffer;
};
const u32 = (value: number): Buffer => {
  const buffer = Buffer.alloc(4);
  buffer.writeUInt32LE(value >>> 0);
  return buffer;
};
const DOS_DATE = ((2024 - 1980) << 9) | (1 << 5) | 1;

function writeZip(entries: RawEntry[]): Buffer {
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const data = Buffer.from(entry.data ?? new Uint8Array());
    const method = entry.method ?? 0;
    const payload = Buffer.from(entry.payload ?? (method === 8 ? deflateRawSync(data) : data));
    const crc = entry.crc ?? crc32(data);
    const size = entry.uncompressedSize ?? data.length;
    const flags = entry.flags ?? 0x0800;
    const name = Buffer.from(entry.name, 'utf8');
    const local = Buffer.concat([
      u32(0x04034b50),
      u16(20),
      u16(flags),
      u16(method),
      u16(0),
      u16(DOS_DATE),
      u32(crc),
      u32(payload.length),
      u32(size),
      u16(name.length),
      u16(0),
      name,
    ]);
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
        u32(size),
        u16(name.length),
        u16(0),
        u16(0),
        u16(0),
        u16(0),
        u32(entry.externalAttributes ?? (entry.name.endsWith('/') ? 0x10 : 0)),
        u32(offset),
        name,
      ]),
    );
    parts.push(local, payload);
    offset += local.length + payload.length;
  }
  const directory = Buffer.concat(central);
  const end = Buffer.concat([
    u32(0x06054b50),
    u16(0),
    u16(0),
    u16(entries.length),
    u16(entries.length),
    u32(directory.length),
    u32(offset),
    u16(0),
  ]);
  return Buffer.concat([...parts, directory, end]);
}

const text = (value: string): Buffer => Buffer.from(value, 'utf8');
const SVG = text('<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><rect width="8" height="8"/></svg>');
const HTML = text('<!doctype html><title>corpus</title><h1>corpus</h1>');

/** A valid archive's entries for scenario `id`; its manifest is valid so that only the planted defect can refuse it. */
function validEntries(id: string, version = '1.0.0', extraAssets: string[] = [], method = 8): RawEntry[] {
  const manifest = {
    id,
    name: `Corpus ${id}`,
    version,
    thumbnails: ['resources/thumbnails/t.svg'],
    assets: ['resources/assets/index.html', ...extraAssets],
  };
  return [
    { name: 'scenario.json', data: text(JSON.stringify(manifest)), method },
    { name: 'resources/' },
    { name: 'resources/thumbnails/t.svg', data: SVG, method },
    { name: 'resources/assets/index.html', data: HTML, method },
  ];
}

async function zipBomb(name: string): Promise<RawEntry> {
  const zeros = Buffer.alloc(MiB);
  const deflate = createDeflateRaw({ level: 9 });
  const chunks: Buffer[] = [];
  deflate.on('data', (chunk: Buffer) => chunks.push(chunk));
  const ended = new Promise<void>((resolve, reject) => deflate.on('end', resolve).on('error', reject));
  let crc = 0;
  for (let index = 0; index < 64; index += 1) {
    crc = crc32(zeros, crc);
    if (!deflate.write(zeros)) await new Promise((resolve) => deflate.once('drain', resolve));
  }
  deflate.end();
  await ended;
  return { name, method: 8, payload: Buffer.concat(chunks), crc: crc >>> 0, uncompressedSize: 64 * MiB };
}

const symlink = (name: string): RawEntry => ({
  name,
  data: text('../../../../etc/passwd'),
  madeBy: (3 << 8) | 20,
  externalAttributes: (0o120777 << 16) >>> 0,
});
const encrypted = (name: string): RawEntry => {
  const data = text('secret');
  return { name, data, flags: 0x0801, payload: Buffer.concat([randomBytes(12), data]) };
};
const crcFlipped = (name: string): RawEntry => ({ name, data: HTML, method: 8, crc: (crc32(HTML) ^ 0x00010000) >>> 0 });
const bzip2 = (name: string): RawEntry => ({ name, data: text('x'), method: 12, payload: Buffer.concat([text('BZh9'), randomBytes(40)]) });

// ---------------------------------------------------------------------------------------------------------------
// Problem assertions
// ---------------------------------------------------------------------------------------------------------------

interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  errors?: { path: string; message: string }[];
  [extension: string]: unknown;
}

function expectProblem(typed: TypedResult, status: number): Problem {
  const result = answerOf(typed);
  expect(result.status, `unexpected status; body: ${JSON.stringify(result.body)}`).toBe(status);
  expect(result.headers.get('content-type') ?? '').toMatch(/^application\/problem\+json\b/);
  const body = result.body as Problem;
  expect(body).toMatchObject({
    status,
    type: expect.stringMatching(/^https?:\/\//),
    title: expect.any(String),
    detail: expect.any(String),
  });
  return body;
}

interface Expected {
  path: string;
  message: RegExp;
}

// ---------------------------------------------------------------------------------------------------------------
// 1. The corpus over HTTP
// ---------------------------------------------------------------------------------------------------------------

interface CorpusCase {
  label: string;
  /** Scenario id in the archive's (valid) manifest: it must never show up anywhere. */
  id: string;
  archive: Buffer;
  expected: Expected[];
}

async function corpus(): Promise<CorpusCase[]> {
  const valid = (id: string, extra: RawEntry[] = [], extraAssets: string[] = []) =>
    writeZip([...validEntries(id, '1.0.0', extraAssets), ...extra]);
  const truncated = valid('corpus-truncated');
  const dotDot = 'resources/../../../evil.sh';
  return [
    {
      label: 'zip bomb (64 MiB of zeros in ~64 KiB)',
      id: 'corpus-bomb',
      archive: valid('corpus-bomb', [await zipBomb('resources/assets/bomb.bin')]),
      expected: [{ path: 'resources/assets/bomb.bin', message: /compression ratio \d+:1 exceeds the limit/ }],
    },
    {
      label: 'symbolic link',
      id: 'corpus-symlink',
      archive: valid('corpus-symlink', [symlink('resources/assets/passwd')]),
      expected: [{ path: 'resources/assets/passwd', message: /symbolic links are not allowed/ }],
    },
    {
      label: 'encrypted entry',
      id: 'corpus-encrypted',
      archive: valid('corpus-encrypted', [encrypted('resources/assets/secret.txt')]),
      expected: [{ path: 'resources/assets/secret.txt', message: /encrypted entries are not allowed/ }],
    },
    {
      label: 'duplicate names',
      id: 'corpus-duplicate',
      archive: valid('corpus-duplicate', [{ name: 'resources/assets/index.html', data: text('<script>evil()</script>') }]),
      expected: [{ path: 'resources/assets/index.html', message: /duplicate entry name/ }],
    },
    {
      label: 'CRC mismatch',
      id: 'corpus-crc',
      archive: writeZip([...validEntries('corpus-crc').slice(0, 3), crcFlipped('resources/assets/index.html')]),
      expected: [{ path: 'resources/assets/index.html', message: /CRC-32 mismatch/ }],
    },
    {
      label: 'truncated in the middle',
      id: 'corpus-truncated',
      archive: truncated.subarray(0, Math.floor(truncated.length / 2)),
      expected: [{ path: '', message: /not a valid ZIP archive/ }],
    },
    {
      label: 'cut before the end record',
      id: 'corpus-truncated',
      archive: truncated.subarray(0, truncated.length - 22),
      expected: [{ path: '', message: /not a valid ZIP archive/ }],
    },
    {
      label: '".." entry name',
      id: 'corpus-dotdot',
      archive: valid('corpus-dotdot', [{ name: dotDot, data: text('#!/bin/sh\nrm -rf /\n') }]),
      expected: [{ path: dotDot, message: /"\.\." segment/ }],
    },
    {
      label: 'unsupported compression method 12',
      id: 'corpus-bzip2',
      archive: valid('corpus-bzip2', [bzip2('resources/assets/data.bz2')]),
      expected: [{ path: 'resources/assets/data.bz2', message: /unsupported compression method 12/ }],
    },
    {
      label: 'many violations in one archive',
      id: 'corpus-combined',
      archive: writeZip([
        {
          name: 'scenario.json',
          data: text(JSON.stringify({ id: 'corpus-combined', name: 'Combined', version: '1.0', colour: 'blue' })),
          method: 8,
        },
        { name: '/etc/passwd', data: text('root:x:0:0') },
        { name: 'assets/../../evil.sh', data: text('rm -rf /') },
        { name: 'assets\\evil.txt', data: text('backslash') },
        { name: 'C:/autoexec.bat', data: text('echo') },
        symlink('assets/link'),
        encrypted('assets/secret.txt'),
        { name: 'assets/dup.txt', data: text('first') },
        { name: 'assets/dup.txt', data: text('second') },
        await zipBomb('assets/bomb.bin'),
        crcFlipped('assets/corrupt.html'),
        bzip2('assets/data.bz2'),
      ]),
      expected: [
        { path: 'scenario.json#/version', message: /semantic version/ },
        { path: 'scenario.json#/colour', message: /colour/ },
        { path: 'resources/', message: /missing/ },
        { path: '/etc/passwd', message: /absolute/ },
        { path: 'assets/../../evil.sh', message: /\.\./ },
        { path: 'assets\\evil.txt', message: /backslash/ },
        { path: 'C:/autoexec.bat', message: /drive letter/ },
        { path: 'assets/link', message: /symbolic link/ },
        { path: 'assets/secret.txt', message: /encrypted/ },
        { path: 'assets/dup.txt', message: /duplicate/ },
        { path: 'assets/bomb.bin', message: /compression ratio/ },
        { path: 'assets/corrupt.html', message: /CRC-32 mismatch/ },
        { path: 'assets/data.bz2', message: /unsupported compression method 12/ },
      ],
    },
  ];
}

/** Every file path under the local S3 folder (s3rver), relative to it. */
async function s3Files(): Promise<string[]> {
  const root = join(local.settings.dataDirectory, 's3');
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => relative(root, join(entry.parentPath, entry.name)));
}

async function scenarioSearchIds(token: string): Promise<string[]> {
  const result = expectOk(
    await clientFor(local.service, token).main.GET('/resources/search', { params: { query: { type: ['SCENARIO'], pageSize: 100 } } }),
  );
  expect(result.total, 'all scenarios fit in one page').toBeLessThanOrEqual(100);
  return result.resources.map((resource) => resource.id);
}

/** The company's storage usage (quota, used and available bytes). */
async function usage(token: string, company: string) {
  return expectOk(
    await clientFor(local.service, token).main.GET('/companies/{companyId}/resources/scenarios/usage', {
      params: { path: { companyId: company } },
    }),
  );
}

describe('archive corpus over HTTP: every malicious or broken archive → 422, the service keeps answering, nothing stored', () => {
  let cases: CorpusCase[];
  let usageBefore: { quotaBytes: number; usedBytes: number };

  beforeAll(async () => {
    cases = await corpus();
    usageBefore = await usage(local.tokens.alice, 'acme');
  });

  it('each archive gets a 422 problem+json listing exactly the expected violations', async () => {
    const failures: string[] = [];
    for (const item of cases) {
      expect(item.archive.length, `${item.label}: under the direct upload limit`).toBeLessThan(4 * MiB);
      const result = await uploadArchive(local.service, local.tokens.alice, 'acme', item.archive, `${item.id}.zip`);
      if (result.response.status !== 422) {
        failures.push(`${item.label}: ${result.response.status} ${JSON.stringify(answerOf(result).body)}`);
        continue;
      }
      const problem = expectProblem(result, 422);
      expect(problem.detail).toMatch(/nothing was stored/);
      expect(problem.errors, item.label).toEqual(
        expect.arrayContaining(item.expected.map(({ path, message }) => ({ path, message: expect.stringMatching(message) }))),
      );
      expect(problem.errors?.length, `${item.label}: ${JSON.stringify(problem.errors)}`).toBe(item.expected.length);
    }
    expect(failures, 'archives not refused with 422').toEqual([]);
  });

  it('the service still answers: a fresh token, search and a valid upload work', async () => {
    const token = await tokenFor(local.service, 'alice');
    const search = expectOk(
      await clientFor(local.service, token).main.GET('/resources/search', { params: { query: { type: ['DEVICE'], pageSize: 1 } } }),
    );
    expect(search.total).toBeGreaterThan(0);
    const control = await uploadArchive(local.service, token, 'acme', writeZip(validEntries('corpus-control')));
    expect(control.response.status, JSON.stringify(control.error)).toBe(201);
    expect(control.data).toMatchObject({ id: 'corpus-control', version: '1.0.0' });
  });

  it('nothing was stored: no rejected id in search (after the control upload shows up), listing, scenario GET or S3; usage unchanged', async () => {
    // The control upload came after every rejected one: once it is searchable, the stream has caught up.
    await eventually(async () => (await scenarioSearchIds(local.tokens.alice)).includes('corpus-control'), 'corpus-control in search');
    const rejectedIds = [...new Set(cases.map((item) => item.id))];
    const searched = await scenarioSearchIds(local.tokens.alice);
    expect(searched.filter((id) => rejectedIds.includes(id))).toEqual([]);

    const dss = clientFor(local.service, local.tokens.alice);
    const listing = expectOk(
      await dss.main.GET('/companies/{companyId}/resources/scenarios', { params: { path: { companyId: 'acme' }, query: { limit: 1000 } } }),
    );
    const ids = listing.items.map((item) => item.id);
    expect(ids).toContain('corpus-control');
    expect(ids.filter((id) => rejectedIds.includes(id))).toEqual([]);
    for (const id of rejectedIds) {
      const scenario = await dss.main.GET('/companies/{companyId}/resources/scenarios/{scenarioId}', {
        params: { path: { companyId: 'acme', scenarioId: id } },
      });
      expect(scenario.response.status, id).toBe(404);
    }

    const files = await s3Files();
    expect(
      files.some((file) => file.includes('corpus-control')),
      `control archive in S3: ${JSON.stringify(files)}`,
    ).toBe(true);
    expect(files.filter((file) => rejectedIds.some((id) => file.includes(id)))).toEqual([]);

    const usageAfter = await usage(local.tokens.alice, 'acme');
    const controlSize = writeZip(validEntries('corpus-control')).length;
    expect(usageAfter.usedBytes, 'only the control upload was charged').toBe(usageBefore.usedBytes + controlSize);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// 2. Quota race: 20 concurrent uploads into globex's 5 MiB quota
// ---------------------------------------------------------------------------------------------------------------

describe('quota race: 20 concurrent ~400 KiB uploads into a 5 MiB quota', () => {
  it('stores some, refuses the rest with 413 and the figures, never exceeds the quota, and charges exactly what it stored', async () => {
    const SCENARIO = 'corpus-race';
    const archives = Array.from({ length: 20 }, (_, index) =>
      writeZip([
        ...validEntries(SCENARIO, `1.0.${index}`, ['resources/assets/blob.bin'], 0),
        // Incompressible and stored: the archive is ~400 KiB; sizes differ so that any sum identifies its parts.
        { name: 'resources/assets/blob.bin', data: randomBytes(400 * 1024 + index * 37) },
      ]),
    );
    const sizes = archives.map((archive) => archive.length);
    expect(
      sizes.reduce((sum, size) => sum + size, 0),
      'the 20 archives together do not fit',
    ).toBeGreaterThan(GLOBEX_QUOTA);

    const before = await usage(local.tokens.bob, 'globex');
    expect(before.quotaBytes).toBe(GLOBEX_QUOTA);
    expect(before.usedBytes, 'demo data uses a few KB').toBeLessThan(64 * 1024);

    const results = await Promise.all(
      archives.map((archive, index) => uploadArchive(local.service, local.tokens.bob, 'globex', archive, `race-${index}.zip`)),
    );

    const unexpected = results
      .map((result, index) => ({ index, status: result.response.status, body: answerOf(result).body }))
      .filter(({ status }) => status !== 201 && status !== 413);
    expect(unexpected, 'every concurrent upload must end 201 or 413').toEqual([]);
    const stored = results.flatMap((result, index) => (result.response.status === 201 ? [{ index, result: expectOk(result) }] : []));
    const refused = results.flatMap((result, index) =>
      result.response.status === 413 ? [{ index, problem: expectProblem(result, 413) }] : [],
    );
    expect(stored.length, 'some uploads succeed').toBeGreaterThan(0);
    expect(refused.length, 'some uploads are refused').toBeGreaterThan(0);

    for (const { index, result } of stored) {
      expect(result).toMatchObject({ id: SCENARIO, version: `1.0.${index}`, size: sizes[index] });
    }
    const storedBytes = stored.reduce((sum, { index }) => sum + (sizes[index] as number), 0);
    for (const { index, problem } of refused) {
      expect(problem.quotaBytes).toBe(GLOBEX_QUOTA);
      expect(problem.archiveBytes).toBe(sizes[index]);
      expect(problem.usedBytes).toEqual(expect.any(Number));
      // The refusal was justified when it was decided.
      expect((problem.usedBytes as number) + (sizes[index] as number), `refusal of #${index}: ${JSON.stringify(problem)}`).toBeGreaterThan(
        GLOBEX_QUOTA,
      );
    }

    const usedAfter = (await usage(local.tokens.bob, 'globex')).usedBytes;
    const usedBefore = before.usedBytes;
    const summary = `before ${usedBefore}, stored ${stored.length} (${storedBytes} bytes), refused ${refused.length}, after ${usedAfter}`;
    expect(usedBefore + storedBytes, `quota never exceeded: ${summary}`).toBeLessThanOrEqual(GLOBEX_QUOTA);
    expect(usedAfter, `usage = before + sum of stored sizes: ${summary}`).toBe(usedBefore + storedBytes);
    expect(usedBefore, summary).toBeGreaterThanOrEqual(0);
    expect(usedBefore, summary).toBeLessThan(64 * 1024);
    for (const { problem } of refused) {
      expect(problem.usedBytes as number).toBeGreaterThanOrEqual(usedBefore);
      expect(problem.usedBytes as number).toBeLessThanOrEqual(usedAfter);
    }
    // The race did not under-fill: the smallest refused archive still does not fit.
    const smallestRefused = Math.min(...refused.map(({ index }) => sizes[index] as number));
    expect(usedAfter + smallestRefused, summary).toBeGreaterThan(GLOBEX_QUOTA);

    // The versions recorded are exactly the 201s, with their sizes.
    const detail = expectOk(
      await clientFor(local.service, local.tokens.bob).main.GET('/companies/{companyId}/resources/scenarios/{scenarioId}', {
        params: { path: { companyId: 'globex', scenarioId: SCENARIO } },
      }),
    );
    const versions = detail.versions.map(({ version, size }) => ({ version, size }));
    expect(versions.sort((a, b) => a.version.localeCompare(b.version))).toEqual(
      stored.map(({ index }) => ({ version: `1.0.${index}`, size: sizes[index] })).sort((a, b) => a.version.localeCompare(b.version)),
    );
    // Exactly one archive object per stored version; refused archives left no object behind.
    const objectVersions = (await s3Files())
      .filter((file) => file.endsWith('._S3rver_object') && file.includes(`/globex/scenarios/${SCENARIO}/`))
      .map((file) => file.split(`/${SCENARIO}/`)[1]?.split('/')[0] ?? '')
      .sort();
    expect(objectVersions).toEqual(stored.map(({ index }) => `1.0.${index}`).sort());
  }, 120_000);
});
