/**
 * The pure parts of the CLI's scenario, device and rollout commands: zipping a scenario folder (dotfiles left out,
 * links out of it refused), unzipping a skeleton safely, the multipart and counted upload bodies, SCENARIO@VERSION,
 * rollout targets and waves, import records and their summary.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import JSZip from 'jszip';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { entrySegments, unzipInto, zipFolder } from '../../../cli/archives.js';
import { deviceBodyOf, registrationEntryOf, summarize } from '../../../cli/commands/devices.js';
import { targetsOf, waveSizes } from '../../../cli/commands/rollouts.js';
import { UsageError } from '../../../cli/output.js';
import { parseScenarioRef } from '../../../cli/scenario-ref.js';
import { countingBody, multipartBody } from '../../../cli/upload.js';
import { MAX_ROLLOUT_IDS } from '../../../functions/core/rollouts/model.js';

let work: string;

beforeEach(async () => {
  work = await mkdtemp(join(tmpdir(), 'dss-cli-fleet-'));
});

afterEach(async () => {
  await rm(work, { recursive: true, force: true });
});

async function files(tree: Record<string, string>, under = work): Promise<void> {
  for (const [path, content] of Object.entries(tree)) {
    await mkdir(join(under, path, '..'), { recursive: true });
    await writeFile(join(under, path), content);
  }
}

async function entriesOf(bytes: Uint8Array): Promise<Record<string, string>> {
  const zip = await JSZip.loadAsync(bytes);
  const result: Record<string, string> = {};
  for (const entry of Object.values(zip.files)) if (!entry.dir) result[entry.name] = await entry.async('string');
  return result;
}

describe('zipFolder', () => {
  it('zips every file relative to the folder, sorted, leaving out dotfiles and dot-folders at any depth', async () => {
    const folder = join(work, 'lobby');
    await files(
      {
        'scenario.json': '{"id":"lobby"}',
        'resources/assets/index.html': '<h1>hi</h1>',
        'resources/thumbnails/t.svg': '<svg/>',
        '.DS_Store': 'junk',
        'resources/.DS_Store': 'junk',
        '.git/config': '[core]',
        'resources/assets/.hidden/x.txt': 'hidden',
      },
      folder,
    );
    const zipped = await zipFolder(folder);
    expect(zipped.files).toEqual(['resources/assets/index.html', 'resources/thumbnails/t.svg', 'scenario.json']);
    expect(await entriesOf(zipped.bytes)).toEqual({
      'scenario.json': '{"id":"lobby"}',
      'resources/assets/index.html': '<h1>hi</h1>',
      'resources/thumbnails/t.svg': '<svg/>',
    });
  });

  it('follows a link to a file inside the folder, and refuses one leading outside it or nowhere', async () => {
    const folder = join(work, 'scenario');
    await files({ 'scenario.json': '{}', 'resources/a.txt': 'inside' }, folder);
    await symlink(join(folder, 'resources/a.txt'), join(folder, 'resources/b.txt'));
    expect(await entriesOf((await zipFolder(folder)).bytes)).toMatchObject({ 'resources/b.txt': 'inside' });

    await files({ 'secret.txt': 'outside' });
    await symlink(join(work, 'secret.txt'), join(folder, 'resources/leak.txt'));
    await expect(zipFolder(folder)).rejects.toThrow(UsageError);
    await expect(zipFolder(folder)).rejects.toThrow(/leak\.txt is a symbolic link to .*secret\.txt, outside/);

    await rm(join(folder, 'resources/leak.txt'));
    await symlink(work, join(folder, 'up'));
    await expect(zipFolder(folder)).rejects.toThrow(/up is a symbolic link to .*, outside/);

    await rm(join(folder, 'up'));
    await symlink(join(folder, 'gone.txt'), join(folder, 'dangling.txt'));
    await expect(zipFolder(folder)).rejects.toThrow(/dangling\.txt is a symbolic link to nothing/);
  });

  it('refuses a folder with nothing but dotfiles, a missing path and a file', async () => {
    await files({ 'empty/.DS_Store': 'junk', 'file.zip': 'PK' });
    await expect(zipFolder(join(work, 'empty'))).rejects.toThrow(/holds no file/);
    await expect(zipFolder(join(work, 'missing'))).rejects.toThrow(/no such file or folder/);
    await expect(zipFolder(join(work, 'file.zip'))).rejects.toThrow(/is not a folder/);
  });
});

describe('unzipInto', () => {
  async function archive(build: (zip: JSZip) => void): Promise<Uint8Array> {
    const zip = new JSZip();
    build(zip);
    return zip.generateAsync({ type: 'uint8array', platform: 'UNIX' });
  }

  it('writes every file under the folder, creating it, and lists them', async () => {
    const bytes = await archive((zip) => {
      zip.file('scenario.json', '{"id":"x"}');
      zip.file('resources/assets/index.html', '<p>');
    });
    const target = join(work, 'out/new');
    expect(await unzipInto(bytes, target)).toEqual(['scenario.json', 'resources/assets/index.html']);
    expect(await readFile(join(target, 'resources/assets/index.html'), 'utf8')).toBe('<p>');
  });

  it.each([
    ['../evil.txt', "a '..' segment"],
    ['resources/../../evil.txt', "a '..' segment"],
    ['/etc/evil.txt', 'an absolute path'],
    ['resources\\..\\evil.txt', 'a backslash'],
  ])('refuses an archive with the entry %s and writes nothing', async (name, reason) => {
    const bytes = await archive((zip) => {
      zip.file('scenario.json', '{}');
      zip.file(name, 'evil');
    });
    const target = join(work, 'inner/out');
    await expect(unzipInto(bytes, target)).rejects.toThrow(`has ${reason}: nothing was written`);
    expect(await readdir(work)).toEqual([]);
  });

  it('refuses a symbolic link entry', async () => {
    const bytes = await archive((zip) => {
      zip.file('scenario.json', '{}');
      zip.file('resources/link', '/etc/passwd', { unixPermissions: 0o120777 });
    });
    await expect(unzipInto(bytes, join(work, 'out'))).rejects.toThrow(/'resources\/link' is a symbolic link/);
  });

  it('refuses a folder that holds files unless forced, then replaces files of the same name', async () => {
    await files({ 'out/scenario.json': 'old', 'out/notes.txt': 'mine' });
    const bytes = await archive((zip) => zip.file('scenario.json', 'new'));
    await expect(unzipInto(bytes, join(work, 'out'))).rejects.toThrow(/is not empty: .* --force/);
    expect(await readFile(join(work, 'out/scenario.json'), 'utf8')).toBe('old');
    await unzipInto(bytes, join(work, 'out'), { force: true });
    expect(await readFile(join(work, 'out/scenario.json'), 'utf8')).toBe('new');
    expect(await readFile(join(work, 'out/notes.txt'), 'utf8')).toBe('mine');
  });

  it('writes into an empty existing folder, and refuses data that is not a ZIP', async () => {
    await mkdir(join(work, 'empty'));
    await unzipInto(await archive((zip) => zip.file('a.txt', 'a')), join(work, 'empty'));
    expect(await readdir(join(work, 'empty'))).toEqual(['a.txt']);
    await expect(unzipInto(new TextEncoder().encode('not a zip'), join(work, 'other'))).rejects.toThrow(/cannot be read as a ZIP/);
  });
});

describe('entrySegments', () => {
  it('keeps ordinary names and drops empty and "." segments', () => {
    expect(entrySegments('resources/assets/index.html')).toEqual({ segments: ['resources', 'assets', 'index.html'] });
    expect(entrySegments('./resources//a.txt')).toEqual({ segments: ['resources', 'a.txt'] });
    expect(entrySegments('dir/')).toEqual({ segments: ['dir'] });
  });

  it('refuses names that could leave the folder', () => {
    expect(entrySegments('C:/Windows/x')).toEqual({ refused: 'an absolute path' });
    expect(entrySegments('a/../../b')).toEqual({ refused: "a '..' segment" });
    expect(entrySegments('./')).toEqual({ refused: 'an empty name' });
  });
});

describe('upload bodies', () => {
  it('a multipart body holds the archive as the file part payload', async () => {
    const archive = new Uint8Array([0x50, 0x4b, 3, 4, 0, 13, 10, 255]);
    const { body, contentType } = multipartBody(archive, 'lobby "v1".zip');
    const form = await new Response(body, { headers: { 'content-type': contentType } }).formData();
    const payload = form.get('payload') as File;
    expect(payload.name).toBe('lobby _v1_.zip');
    expect(new Uint8Array(await payload.arrayBuffer())).toEqual(archive);
    expect([...form.keys()]).toEqual(['payload']);
  });

  it('a counting body delivers every byte and reports the running total', async () => {
    async function* pieces() {
      yield new Uint8Array(3);
      yield new Uint8Array(5);
      yield new Uint8Array(2);
    }
    const seen: number[] = [];
    const stream = countingBody(pieces(), (sent) => seen.push(sent));
    expect((await new Response(stream).arrayBuffer()).byteLength).toBe(10);
    expect(seen).toEqual([3, 8, 10]);
  });
});

describe('parseScenarioRef', () => {
  it('splits SCENARIO@VERSION, with SemVer pre-release and build parts', () => {
    expect(parseScenarioRef('acme-welcome@1.1.0')).toEqual({ scenarioId: 'acme-welcome', version: '1.1.0' });
    expect(parseScenarioRef('a.b_c@2.0.0-rc.1+build.5')).toEqual({ scenarioId: 'a.b_c', version: '2.0.0-rc.1+build.5' });
  });

  it.each(['acme-welcome', 'acme-welcome@', '@1.0.0', 'a@b@1.0.0', 'bad id@1.0.0', 'acme@1.0', 'acme@latest'])(
    'refuses %s as bad usage',
    (text) => {
      expect(() => parseScenarioRef(text)).toThrow(UsageError);
    },
  );
});

describe('rollout create options', () => {
  it('takes exactly one of --query, --devices and --from', async () => {
    await expect(targetsOf({})).rejects.toThrow('Give exactly one of --query, --devices or --from.');
    await expect(targetsOf({ query: 'a=b', devices: 'k1' })).rejects.toThrow(UsageError);
    expect(await targetsOf({ query: '?connection.state=CONNECTED' })).toEqual({ query: 'connection.state=CONNECTED' });
    expect(await targetsOf({ query: '' })).toEqual({ query: '' });
  });

  it('lists --devices once each, and refuses an empty or too long list', async () => {
    expect(await targetsOf({ devices: 'k2, k1,k2,,' })).toEqual({ ids: ['k2', 'k1'] });
    await expect(targetsOf({ devices: ' , ' })).rejects.toThrow('No device id given.');
    const many = Array.from({ length: MAX_ROLLOUT_IDS + 1 }, (_, index) => `k${index}`).join(',');
    await expect(targetsOf({ devices: many })).rejects.toThrow(/select them with --query/);
  });

  it('reads --from a CSV file', async () => {
    await files({ 'ids.csv': 'id,serial\nk1,S1\nk2,S2\nk1,S1\n' });
    expect(await targetsOf({ from: join(work, 'ids.csv') })).toEqual({ ids: ['k1', 'k2'] });
  });

  it('parses --waves as sizes of 1 or more', () => {
    expect(waveSizes('10, 100,1000')).toEqual([10, 100, 1000]);
    for (const bad of ['0,10', '10,,20', '1.5', 'ten', '-1']) expect(() => waveSizes(bad)).toThrow(UsageError);
  });
});

describe('devices', () => {
  it('register sends only the fields given', () => {
    expect(deviceBodyOf({ serial: 'SN-1' })).toEqual({ serial: 'SN-1' });
    expect(deviceBodyOf({ locationName: 'Door', latitude: 0, altitude: -3 })).toEqual({
      location: { name: 'Door' },
      geoLocation: { latitude: 0, altitude: -3 },
    });
    expect(deviceBodyOf({})).toEqual({});
  });

  it('an import record gets numeric coordinates from CSV text, other values as they are', () => {
    const record = { id: 'k1', serial: '007', geoLocation: { latitude: '52.5', longitude: ' -13.4 ', altitude: 'high' } };
    expect(registrationEntryOf(record)).toEqual({
      id: 'k1',
      serial: '007',
      geoLocation: { latitude: 52.5, longitude: -13.4, altitude: 'high' },
    });
    expect(record.geoLocation.latitude).toBe('52.5');
    expect(registrationEntryOf({ id: 'k2' })).toEqual({ id: 'k2' });
  });

  it('an import summary counts each state and gives each failure its record and paths within it', () => {
    const summary = summarize([
      { id: 'k1', state: 'CREATED' },
      { id: 'k2', state: 'UPDATED' },
      { id: 'k3', state: 'FAILURE', errors: [{ path: '/2/serial', message: 'Required to register a new device.' }] },
      {
        id: null,
        state: 'FAILURE',
        errors: [
          { path: '/3', message: 'Expected an object.' },
          { path: '/3/id', message: 'Required.' },
        ],
      },
    ]);
    expect(summary.counts).toEqual({ CREATED: 1, UPDATED: 1, FAILURE: 2 });
    expect(summary.failures).toEqual([
      { record: 3, id: 'k3', errors: ['/serial: Required to register a new device.'] },
      { record: 4, id: null, errors: ['/: Expected an object.', '/id: Required.'] },
    ]);
  });
});
