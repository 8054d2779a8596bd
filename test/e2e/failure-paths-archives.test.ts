/**
 * End-to-end failure paths of scenario uploads over real HTTP against one local service (`bin/local.ts`): archive
 * validation (422), immutability (409), the direct upload limit and the storage quota (413).
 *
 * Requests the typed client can express go through it (clientFor); the others are hand-built with `call` on purpose:
 * missing, forged or foreign-scheme tokens, bodies that are not JSON or not of the documented shape, parameters the
 * document does not have or values of the wrong type, routes sent to the wrong address or with the wrong method.
 * Every error must be an RFC 9457 problem (docs/contract.md, "Errors").
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectOk } from '../../client/index.js';
import { DIRECT_UPLOAD_LIMIT_TEXT } from '../../functions/contract/archives.js';
import {
  buildZip,
  deploymentHelpers,
  entry,
  expectProblem,
  expectViolation,
  INDEX_HTML,
  type Manifest,
  MiB,
  type Problem,
  THUMBNAIL_SVG,
  validArchive,
} from './failure-paths.js';
import { answerOf, call, uploadArchive, useLocalService } from './harness.js';

const local = useLocalService({ users: ['alice', 'bob'] });

const { deploy } = deploymentHelpers(() => local.service);

const GLOBEX_QUOTA = 5_242_880;

// ---------------------------------------------------------------------------------------------------------------
// Archive validation (422) and immutability (409)
// ---------------------------------------------------------------------------------------------------------------

describe('422: invalid scenario archives are refused with every violation, and nothing is stored', () => {
  /** (id, version) used by rejected archives whose manifest is valid; uploaded for real at the end. */
  const REJECTED = { id: 'e2e-rejected', version: '2.0.0' } as const;
  const manifest = (overrides: Manifest = {}): string =>
    JSON.stringify({
      id: REJECTED.id,
      name: 'Rejected',
      version: REJECTED.version,
      thumbnails: ['resources/thumbnails/t.svg'],
      assets: ['resources/assets/index.html'],
      ...overrides,
    });
  const resources = { 'resources/thumbnails/t.svg': THUMBNAIL_SVG, 'resources/assets/index.html': INDEX_HTML };

  async function expectInvalid(archive: Uint8Array): Promise<Problem> {
    const problem = expectProblem(
      await uploadArchive(local.service, local.tokens.alice, 'acme', archive),
      422,
      /nothing was stored|not a readable ZIP/,
    );
    expect(problem.errors, JSON.stringify(problem)).toBeInstanceOf(Array);
    expect(problem.errors?.length).toBeGreaterThan(0);
    for (const error of problem.errors ?? []) expect(error).toEqual({ path: expect.any(String), message: expect.any(String) });
    return problem;
  }

  it('not a ZIP (random bytes)', async () => {
    const problem = await expectInvalid(randomBytes(4096));
    expect(problem.detail).toMatch(/not a readable ZIP/);
    expect(problem.errors?.[0]?.message).toMatch(/not a valid ZIP/);
  });

  it('scenario.json missing', async () => {
    const problem = await expectInvalid(await buildZip({ 'README.md': 'no manifest', ...resources }));
    expect(problem.errors).toEqual([{ path: 'scenario.json', message: expect.stringMatching(/missing/) }]);
  });

  it('scenario.json not JSON', async () => {
    const problem = await expectInvalid(await buildZip({ 'scenario.json': '{ "id": "e2e-rejected", ', ...resources }));
    expect(problem.errors).toEqual([{ path: 'scenario.json', message: expect.stringMatching(/not valid JSON/) }]);
  });

  it('scenario.json schema violations: missing name, version "1.0", unknown property', async () => {
    const missingName = JSON.parse(manifest()) as Manifest;
    delete missingName.name;
    let problem = await expectInvalid(await buildZip({ 'scenario.json': JSON.stringify(missingName), ...resources }));
    expect(problem.errors?.map((error) => error.path)).toEqual(['scenario.json#/name']);

    problem = await expectInvalid(await buildZip({ 'scenario.json': manifest({ version: '1.0' }), ...resources }));
    expect(problem.errors).toEqual([{ path: 'scenario.json#/version', message: expect.stringMatching(/semantic version/) }]);

    problem = await expectInvalid(await buildZip({ 'scenario.json': manifest({ colour: 'blue' }), ...resources }));
    expect(problem.errors).toHaveLength(1);
    expect(problem.errors?.[0]?.path).toMatch(/^scenario\.json#\//);
    expect(problem.errors?.[0]?.message, 'the unknown property is named').toContain('colour');
  });

  it('resources/ missing', async () => {
    const problem = await expectInvalid(await buildZip({ 'scenario.json': manifest({ thumbnails: [], assets: [] }) }));
    expect(problem.errors).toEqual([{ path: 'resources/', message: expect.stringMatching(/resources\/ directory is missing/) }]);
  });

  it('a referenced thumbnail absent', async () => {
    const problem = await expectInvalid(
      await buildZip({ 'scenario.json': manifest({ thumbnails: ['resources/thumbnails/missing.png'] }), ...resources }),
    );
    expect(problem.errors).toEqual([
      { path: 'scenario.json#/thumbnails/0', message: expect.stringContaining('resources/thumbnails/missing.png') },
    ]);
  });

  it('an entry name with a ".." segment (zip slip) is refused', async () => {
    // JSZip writes the raw name (checked below), so the stored archive really holds "resources/../../evil.sh".
    const archive = await buildZip({
      'scenario.json': JSON.stringify({ id: 'e2e-zip-slip', name: 'Zip slip', version: '1.0.0' }),
      ...resources,
      'resources/../../evil.sh': '#!/bin/sh\nrm -rf /\n',
    });
    expect(Buffer.from(archive).includes(Buffer.from('resources/../../evil.sh')), 'the raw ".." name is in the ZIP bytes').toBe(true);
    const result = await uploadArchive(local.service, local.tokens.alice, 'acme', archive);
    // Regression guard for a product bug found at HEAD (functions/core/scenarios/archive.ts, validateScenarioArchive):
    // JSZip >= 3.8 loadAsync sanitizes entry names (`resources/../../evil.sh` becomes `evil.sh`; the raw name is only in
    // `unsafeOriginalName`), so checking Object.keys(zip.files) never saw "..", and the archive was stored (201) with its
    // zip-slip entry intact. The check must run on unsafeOriginalName.
    expect(result.response.status, `a ".." entry must be refused with 422; got ${JSON.stringify(answerOf(result))}`).toBe(422);
    const problem = expectProblem(result, 422);
    expect(
      problem.errors?.some((error) => error.path.includes('..')),
      JSON.stringify(problem.errors),
    ).toBe(true);
  });

  it('one archive with many violations lists every one with its path', async () => {
    const archive = await buildZip({
      // name missing, version not semver, unknown property, a thumbnail path with "..", an asset outside resources/
      'scenario.json': JSON.stringify({
        id: REJECTED.id,
        version: '1.0',
        colour: 'blue',
        thumbnails: ['resources/../secret.png'],
        assets: ['assets/index.html'],
      }),
      '/etc/passwd': 'root:x:0:0', // absolute path
      'C:/autoexec.bat': 'echo', // drive letter
      'dir\\evil.txt': 'backslash', // backslash
      // and no resources/ directory at all
    });
    const problem = await expectInvalid(archive);
    const paths = (problem.errors ?? []).map((error) => error.path).sort();
    expect(paths).toEqual(
      [
        '/etc/passwd',
        'C:/autoexec.bat',
        'dir\\evil.txt',
        'resources/',
        'scenario.json#/colour',
        'scenario.json#/assets/0',
        'scenario.json#/name',
        'scenario.json#/thumbnails/0',
        'scenario.json#/version',
      ].sort(),
    );
    const message = (path: string) => problem.errors?.find((error) => error.path === path)?.message ?? '';
    expect(message('/etc/passwd')).toMatch(/absolute/);
    expect(message('C:/autoexec.bat')).toMatch(/drive letter/);
    expect(message('dir\\evil.txt')).toMatch(/backslash/);
    expect(message('scenario.json#/colour')).toContain('colour');
    expect(message('scenario.json#/thumbnails/0')).toMatch(/\.\./);
    expect(message('scenario.json#/assets/0')).toMatch(/resources\//);
    expect(problem.detail).toContain(`${problem.errors?.length} problem(s)`);
  });

  it('multipart without a payload part → 400', async () => {
    const form = new FormData();
    form.append('other', new Blob([await validArchive(REJECTED.id, REJECTED.version)], { type: 'application/zip' }), 'x.zip');
    const problem = expectProblem(
      await call(`${local.service.upload}/companies/acme/resources/scenarios`, { token: local.tokens.alice, body: form }),
      400,
      /payload/,
    );
    expectViolation(problem, 'payload');
  });

  it('multipart with the payload part given twice → 400', async () => {
    const archive = await validArchive(REJECTED.id, REJECTED.version);
    const form = new FormData();
    form.append('payload', new Blob([archive], { type: 'application/zip' }), 'a.zip');
    form.append('payload', new Blob([archive], { type: 'application/zip' }), 'b.zip');
    const problem = expectProblem(
      await call(`${local.service.upload}/companies/acme/resources/scenarios`, { token: local.tokens.alice, body: form }),
      400,
      /payload/,
    );
    expectViolation(problem, 'payload', /more than once/);
  });

  it('after all rejections the service still answers and nothing was stored: the rejected (id, version) uploads with 201', async () => {
    const stored = await uploadArchive(local.service, local.tokens.alice, 'acme', await validArchive(REJECTED.id, REJECTED.version));
    expect(stored.response.status, JSON.stringify(stored.error)).toBe(201);
    expect(stored.data).toMatchObject({
      id: REJECTED.id,
      version: REJECTED.version,
      size: expect.any(Number),
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(stored.response.headers.get('location')).toContain(`/scenarios/${REJECTED.id}/versions/${REJECTED.version}`);
    // And it is deployable now (it was not before).
    const [item] = await deploy(local.tokens.alice, 'acme', [entry('acme-kiosk-0004', REJECTED.id, REJECTED.version)]);
    expect(item).toMatchObject({ state: 'SUCCESS', cause: null });
  });

  it('409 on re-upload of an existing (id, version): the demo acme-welcome 1.0.0 rebuilt', async () => {
    const archive = await buildZip({
      'scenario.json': JSON.stringify({
        id: 'acme-welcome',
        name: 'Acme welcome screen',
        version: '1.0.0',
        thumbnails: ['resources/thumbnails/thumbnail.svg'],
        assets: ['resources/assets/index.html'],
      }),
      'resources/thumbnails/thumbnail.svg': THUMBNAIL_SVG,
      'resources/assets/index.html': '<!doctype html><title>overwrite attempt</title>',
    });
    expectProblem(await uploadArchive(local.service, local.tokens.alice, 'acme', archive), 409, /acme-welcome.*1\.0\.0.*already exists/);
    // Same for a version this file stored itself.
    expectProblem(
      await uploadArchive(local.service, local.tokens.alice, 'acme', await validArchive(REJECTED.id, REJECTED.version)),
      409,
      /immutable/,
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Quota (413)
// ---------------------------------------------------------------------------------------------------------------

describe('413: archives too large for a direct upload', () => {
  it('refuses an archive above 4 MiB in the handler, and a body above the Lambda payload limit in the gateway; nothing is stored', async () => {
    const overArchiveLimit = await validArchive(
      'e2e-too-large',
      '1.0.0',
      { 'resources/assets/blob.bin': randomBytes(4 * MiB + 64 * 1024) },
      true,
    );
    const refused = await uploadArchive(local.service, local.tokens.alice, 'acme', overArchiveLimit);
    expect(refused.response.status).toBe(413);
    expect(refused.response.headers.get('content-type')).toBe('application/problem+json');
    expect(refused.error).toMatchObject({ title: 'Payload Too Large', status: 413 });
    expect(refused.error?.detail).toMatch(/presigned upload slot/);
    // The limit is stated in the same words by the 413 and by docs/contract.md.
    const contract = await readFile(join(import.meta.dirname, '../../docs/contract.md'), 'utf8');
    expect(refused.error?.detail).toContain(DIRECT_UPLOAD_LIMIT_TEXT);
    expect(contract).toContain(`limited to ${DIRECT_UPLOAD_LIMIT_TEXT}:`);

    const overEventLimit = await validArchive('e2e-too-large', '1.0.0', { 'resources/assets/blob.bin': randomBytes(5 * MiB) }, true);
    const gateway = await uploadArchive(local.service, local.tokens.alice, 'acme', overEventLimit);
    expect(gateway.response.status).toBe(413);
    expect(gateway.error).toMatchObject({ title: 'Payload Too Large', status: 413 });

    const small = await uploadArchive(local.service, local.tokens.alice, 'acme', await validArchive('e2e-too-large', '1.0.0'));
    expect(small.response.status).toBe(201);
  });
});

describe('413: globex storage quota (5 MiB)', () => {
  const bigArchive = (version: string, bytes: number) =>
    validArchive('e2e-quota', version, { 'resources/assets/blob.bin': randomBytes(bytes) }, true);

  it('3 MiB fits, a second 3 MiB is refused with the figures, and the refusal consumed nothing', async () => {
    const first = await uploadArchive(local.service, local.tokens.bob, 'globex', await bigArchive('1.0.0', 3 * MiB));
    expect(first.response.status, JSON.stringify(first.error)).toBe(201);
    const firstSize = expectOk(first).size;
    expect(firstSize).toBeGreaterThanOrEqual(3 * MiB);

    const secondArchive = await bigArchive('2.0.0', 3 * MiB);
    const refused = expectProblem(await uploadArchive(local.service, local.tokens.bob, 'globex', secondArchive), 413, /quota/);
    expect(refused.quotaBytes).toBe(GLOBEX_QUOTA);
    expect(refused.usedBytes).toEqual(expect.any(Number));
    const usedAfterFirst = refused.usedBytes as number;
    expect(usedAfterFirst).toBeGreaterThanOrEqual(3 * MiB);
    expect(usedAfterFirst, 'used = demo archives (a few KB) + the first upload').toBeLessThan(firstSize + 64 * 1024);
    expect(refused.archiveBytes).toBe(secondArchive.byteLength);

    // A small version (the same version number that was refused) fits: the refused one stored and charged nothing.
    const small = await uploadArchive(local.service, local.tokens.bob, 'globex', await validArchive('e2e-quota', '2.0.0'));
    expect(small.response.status, JSON.stringify(small.error)).toBe(201);
    const smallSize = expectOk(small).size;

    // usedBytes moved by exactly the small archive.
    const again = expectProblem(await uploadArchive(local.service, local.tokens.bob, 'globex', await bigArchive('3.0.0', 3 * MiB)), 413);
    expect(again.usedBytes).toBe(usedAfterFirst + smallSize);
    expect(again.quotaBytes).toBe(GLOBEX_QUOTA);
  });
});
