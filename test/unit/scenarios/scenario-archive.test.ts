import JSZip from 'jszip';
import { describe, expect, it } from 'vitest';
import { validateScenarioArchive } from '../../../functions/core/scenarios/archive.js';
import { ScenarioManifestSchema, scenarioManifestJsonSchema } from '../../../functions/core/scenarios/manifest.js';
import { DEFAULT_SKELETON_VERSION } from '../../../functions/core/scenarios/model.js';
import { buildSkeletonArchive } from '../../../functions/core/scenarios/skeleton.js';
import { BadRequestError, InvalidArchiveError, type ProblemViolation } from '../../../functions/core/shared/errors.js';
import { statusOf } from '../../../functions/platform/problem.js';

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

const GOOD_MANIFEST = {
  id: 'lobby-welcome',
  name: 'Lobby welcome',
  version: '2.1.0',
  thumbnails: ['resources/thumbnails/t.png'],
  assets: ['resources/assets/index.html'],
};

/** A zip built from `entries` (name → content; a name ending in `/` is a folder). */
async function zipOf(entries: Record<string, string | Uint8Array>): Promise<Uint8Array> {
  const zip = new JSZip();
  for (const [name, content] of Object.entries(entries)) {
    if (name.endsWith('/')) zip.file(name, null, { dir: true, createFolders: false });
    else zip.file(name, content, { createFolders: false });
  }
  return zip.generateAsync({ type: 'uint8array', compression: 'DEFLATE' });
}

function goodEntries(manifest: unknown = GOOD_MANIFEST): Record<string, string | Uint8Array> {
  return {
    'scenario.json': JSON.stringify(manifest),
    'resources/thumbnails/t.png': new Uint8Array(PNG_SIGNATURE),
    'resources/assets/index.html': '<p>hi</p>',
  };
}

/**
 * Renames entries of a generated zip by patching their name bytes (local header and central directory). JSZip
 * refuses nothing when writing, but this keeps the names byte-exact, as a hostile client's archive would be.
 * Placeholder and real name must have the same length.
 */
function renameEntries(archive: Uint8Array, renames: Record<string, string>): Uint8Array {
  let text = Buffer.from(archive).toString('latin1');
  for (const [placeholder, real] of Object.entries(renames)) {
    expect(real.length).toBe(placeholder.length);
    const occurrences = text.split(placeholder).length - 1;
    expect(occurrences, `placeholder ${placeholder} in local header and central directory`).toBe(2);
    text = text.split(placeholder).join(real);
  }
  return new Uint8Array(Buffer.from(text, 'latin1'));
}

async function violationsOf(archive: Uint8Array): Promise<ProblemViolation[]> {
  try {
    await validateScenarioArchive(archive);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidArchiveError);
    const problem = error as InvalidArchiveError;
    expect(statusOf(problem)).toBe(422);
    const errors: ProblemViolation[] = problem.violations;
    expect(errors.length).toBeGreaterThan(0);
    return errors;
  }
  throw new Error('expected the archive to be rejected');
}

async function violationPaths(archive: Uint8Array): Promise<string[]> {
  return (await violationsOf(archive)).map((violation) => violation.path);
}

describe('buildSkeletonArchive', () => {
  it('validates as shipped and defaults to version 1.0.0', async () => {
    const { archive, manifest } = await buildSkeletonArchive();
    expect(manifest.version).toBe('1.0.0');
    expect(DEFAULT_SKELETON_VERSION).toBe('1.0.0');
    const validated = await validateScenarioArchive(archive);
    expect(validated).toEqual(manifest);
  });

  it('carries the requested version inside the archive scenario.json', async () => {
    const { archive, manifest } = await buildSkeletonArchive('3.4.5-beta.1+build.7');
    expect(manifest.version).toBe('3.4.5-beta.1+build.7');
    const zip = await JSZip.loadAsync(archive);
    const inside = JSON.parse(await zip.file('scenario.json')!.async('string')) as { version: string; id: string };
    expect(inside.version).toBe('3.4.5-beta.1+build.7');
    expect(inside.id).toBe(manifest.id);
  });

  it('generates a fresh, valid scenario id on every call', async () => {
    const first = await buildSkeletonArchive();
    const second = await buildSkeletonArchive();
    expect(first.manifest.id).not.toBe(second.manifest.id);
    for (const { manifest } of [first, second]) expect(ScenarioManifestSchema.shape.id.safeParse(manifest.id).success).toBe(true);
  });

  it('contains README.md, a real PNG thumbnail, resources/assets/ and every file the manifest references', async () => {
    const { archive, manifest } = await buildSkeletonArchive();
    const zip = await JSZip.loadAsync(archive);
    expect(zip.file('README.md')).not.toBeNull();
    expect((await zip.file('README.md')!.async('string')).length).toBeGreaterThan(50);
    const thumbnail = await zip.file('resources/thumbnails/thumbnail.png')!.async('uint8array');
    expect([...thumbnail.subarray(0, 8)]).toEqual(PNG_SIGNATURE);
    expect(Object.keys(zip.files).some((name) => name.startsWith('resources/assets/'))).toBe(true);
    for (const path of [...manifest.thumbnails, ...manifest.assets]) expect(zip.file(path), path).not.toBeNull();
    expect(manifest.thumbnails).toContain('resources/thumbnails/thumbnail.png');
  });

  it.each(['1.0', 'v1.0.0', '01.0.0', '', 'latest', '1.0.0 '])('refuses version %j with 400', async (version) => {
    const attempt = buildSkeletonArchive(version);
    await expect(attempt).rejects.toBeInstanceOf(BadRequestError);
    await expect(attempt).rejects.toMatchObject({ kind: 'bad-request', violations: [{ path: 'version' }] });
  });
});

describe('validateScenarioArchive accepts', () => {
  it('a well-formed archive and returns its manifest with defaults applied', async () => {
    const manifest = await validateScenarioArchive(await zipOf(goodEntries()));
    expect(manifest).toEqual(GOOD_MANIFEST);
  });

  it('a manifest without thumbnails/assets (defaults to empty lists) when resources/ exists as a folder entry', async () => {
    const manifest = await validateScenarioArchive(
      await zipOf({ 'scenario.json': JSON.stringify({ id: 'a', name: 'A', version: '1.0.0' }), 'resources/': '' }),
    );
    expect(manifest).toEqual({ id: 'a', name: 'A', version: '1.0.0', thumbnails: [], assets: [] });
  });
});

describe('validateScenarioArchive rejects', () => {
  it('bytes that are not a zip', async () => {
    expect(await violationPaths(new TextEncoder().encode('this is not a zip archive at all'))).toEqual(['']);
    expect(await violationPaths(new Uint8Array())).toEqual(['']);
  });

  it('a truncated zip', async () => {
    const archive = await zipOf(goodEntries());
    expect(await violationPaths(archive.subarray(0, archive.length - 30))).toEqual(['']);
  });

  it('an archive without scenario.json', async () => {
    const entries = goodEntries();
    delete entries['scenario.json'];
    expect(await violationPaths(await zipOf(entries))).toEqual(['scenario.json']);
  });

  it('scenario.json that is only in a subfolder (it must be at the root)', async () => {
    const entries = goodEntries();
    entries['nested/scenario.json'] = entries['scenario.json']!;
    delete entries['scenario.json'];
    expect(await violationPaths(await zipOf(entries))).toEqual(['scenario.json']);
  });

  it('scenario.json that is not JSON', async () => {
    const violations = await violationsOf(await zipOf({ ...goodEntries(), 'scenario.json': '{ "id": "a", ' }));
    expect(violations.map((v) => v.path)).toEqual(['scenario.json']);
    expect(violations[0]?.message).toMatch(/JSON/);
  });

  it('every schema violation, each at its JSON pointer', async () => {
    const manifest = {
      id: 'has spaces',
      name: '',
      version: '1.0',
      thumbnails: ['thumbs/t.png', 'resources/ok.png'],
      assets: ['resources/../secret.txt', 'resources/dir/'],
      colour: 'blue',
    };
    const paths = await violationPaths(await zipOf({ ...goodEntries(manifest), 'resources/ok.png': 'x' }));
    expect(paths).toEqual(
      expect.arrayContaining([
        'scenario.json#/id',
        'scenario.json#/name',
        'scenario.json#/version',
        'scenario.json#/thumbnails/0',
        'scenario.json#/assets/0',
        'scenario.json#/assets/1',
        'scenario.json#/colour',
      ]),
    );
    expect(paths).not.toContain('scenario.json#/thumbnails/1');
  });

  it('a name or description holding control characters, naming the member, the character and where it is', async () => {
    const manifest = { id: 'kiosk-menu', name: 'Menu\u001b[2J', version: '1.0.0', description: 'Line one\nline two\u0007' };
    const violations = await violationsOf(await zipOf(goodEntries(manifest)));
    expect(violations).toEqual([
      { path: 'scenario.json#/name', message: expect.stringContaining('U+001B at character 5') },
      { path: 'scenario.json#/description', message: expect.stringContaining('U+0007 at character 18') },
    ]);
    const fine = { ...manifest, name: 'Menu \u202Bعربي\u202C', description: 'Line one\r\n\tline two' };
    expect(await validateScenarioArchive(await zipOf(goodEntries(fine)))).toMatchObject({ name: fine.name, description: fine.description });
  });

  it('a manifest that is not an object', async () => {
    expect(await violationPaths(await zipOf(goodEntries(['not', 'an', 'object'])))).toEqual(['scenario.json#/']);
  });

  it('an archive without resources/', async () => {
    const violations = await violationsOf(await zipOf({ 'scenario.json': JSON.stringify({ id: 'a', name: 'A', version: '1.0.0' }) }));
    expect(violations).toEqual([{ path: 'resources/', message: expect.stringContaining('resources') }]);
  });

  it('referenced thumbnails and assets that are not in the archive', async () => {
    const manifest = {
      ...GOOD_MANIFEST,
      thumbnails: ['resources/thumbnails/t.png', 'resources/thumbnails/missing.png'],
      assets: ['resources/assets/missing.js', 'resources/assets/index.html', 'resources/assets'],
    };
    const violations = await violationsOf(await zipOf({ ...goodEntries(manifest), 'resources/assets/': '' }));
    expect(violations.map((v) => v.path)).toEqual(['scenario.json#/thumbnails/1', 'scenario.json#/assets/0', 'scenario.json#/assets/2']);
    expect(violations[0]?.message).toContain('resources/thumbnails/missing.png');
  });

  it('collects violations of different kinds together (missing manifest and missing resources/)', async () => {
    expect((await violationPaths(await zipOf({ 'README.md': 'hello' }))).sort()).toEqual(['resources/', 'scenario.json']);
  });

  it('an entry with a backslash, an absolute entry and a drive-letter entry, keeping their names (JSZip keeps these as-is)', async () => {
    const archive = renameEntries(await zipOf({ ...goodEntries(), 'resourcesQa.txt': 'a', 'Qetc/passwd': 'b', 'QQ/win.ini': 'c' }), {
      resourcesQa: 'resources\\a',
      'Qetc/passwd': '/etc/passwd',
      'QQ/win.ini': 'C:/win.ini',
    });
    const violations = await violationsOf(archive);
    expect(violations.map((v) => v.path).sort()).toEqual(['/etc/passwd', 'C:/win.ini', 'resources\\a.txt'].sort());
    expect(violations.find((v) => v.path === '/etc/passwd')?.message).toMatch(/absolute/);
    expect(violations.find((v) => v.path === 'C:/win.ini')?.message).toMatch(/drive letter/);
    expect(violations.find((v) => v.path === 'resources\\a.txt')?.message).toMatch(/backslash/);
  });

  it('documents that JSZip resolves ".." segments on load: the entry is seen under its normalised name', async () => {
    const archive = renameEntries(await zipOf({ 'scenario.json': '{}', 'QQ/QQ/evil.sh': 'rm -rf /' }), {
      'QQ/QQ/evil.sh': '../../evil.sh',
    });
    const zip = await JSZip.loadAsync(archive);
    expect(Object.keys(zip.files)).toContain('evil.sh');
    expect(Object.keys(zip.files)).not.toContain('../../evil.sh');
    expect(zip.file('evil.sh')?.unsafeOriginalName).toBe('../../evil.sh');
  });

  // BUG (functions/core/scenarios/archive.ts, validateScenarioArchive, the `unsafeEntryName(name)` loop over
  // `Object.keys(zip.files)`): JSZip.loadAsync already resolves ".." segments (`../../evil.sh` → `evil.sh`), so the
  // '".." segment' check never fires and an archive with a path-traversal entry is accepted; upload.ts then stores the
  // original bytes unchanged. The check must use each entry's `unsafeOriginalName`.
  it('an entry with a ".." segment (path traversal)', async () => {
    const archive = renameEntries(await zipOf({ ...goodEntries(), 'QQ/QQ/evil.sh': 'rm -rf /' }), { 'QQ/QQ/evil.sh': '../../evil.sh' });
    const violations = await violationsOf(archive);
    expect(violations).toEqual([{ path: '../../evil.sh', message: expect.stringContaining('..') }]);
  });

  it('a ".." segment hidden inside resources/ (resources/../../x)', async () => {
    const archive = renameEntries(await zipOf({ ...goodEntries(), 'resources/QQ/QQ/x.txt': 'x' }), {
      'resources/QQ/QQ/x.txt': 'resources/../../x.txt',
    });
    expect(await violationPaths(archive)).toEqual(['resources/../../x.txt']);
  });
});

describe('scenarioManifestJsonSchema', () => {
  it('is a JSON Schema object requiring id, name and version, with the optional fields as properties', () => {
    const schema = scenarioManifestJsonSchema();
    expect(schema.type).toBe('object');
    expect(String(schema.$schema)).toMatch(/json-schema\.org/);
    expect(schema.required).toEqual(expect.arrayContaining(['id', 'name', 'version']));
    expect(schema.required).not.toContain('description');
    const properties = schema.properties as Record<string, { pattern?: string; type?: string }>;
    expect(Object.keys(properties)).toEqual(expect.arrayContaining(['id', 'name', 'version', 'description', 'thumbnails', 'assets']));
    expect(properties.version?.pattern).toBeTypeOf('string');
    expect(new RegExp(properties.version!.pattern!).test('1.2.3')).toBe(true);
    expect(new RegExp(properties.version!.pattern!).test('1.2')).toBe(false);
    expect(schema.additionalProperties).toBe(false);
  });

  it('is serialisable and stable (published as-is)', () => {
    expect(JSON.parse(JSON.stringify(scenarioManifestJsonSchema()))).toEqual(scenarioManifestJsonSchema());
  });
});
