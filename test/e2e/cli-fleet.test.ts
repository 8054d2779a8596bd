/**
 * End-to-end over `npm start` (bin/local.ts), as an operator uses the `dss` CLI (a child process per command through
 * cli-runner.ts, each user with a config folder of their own): a skeleton is unzipped, edited and uploaded (201), refused a second time
 * (409), a broken one refused with every violation; uploads through a presigned slot, stored or rejected; the
 * catalogue and the storage usage; devices registered, imported (a bad record listed as FAILURE), given credentials
 * a device logs in with, deleted; a rollout created over a few devices, paused, resumed and cancelled.
 */
import { createHash, randomBytes } from 'node:crypto';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import JSZip from 'jszip';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zipFolder } from '../../cli/archives.js';
import { type DssClient, expectOk } from '../../client/index.js';
import { type DssUser, dssJson, dssUser, runDss } from './cli-runner.js';
import { clientFor, DEMO_PASSWORDS, uploadArchive, useLocalService } from './harness.js';

const local = useLocalService({ users: ['alice'], environment: { ROLLOUT_SWEEP_INTERVAL_MS: '200' } });
/** The typed client as alice, to compare what the CLI prints with what the API answers. */
let api: DssClient;
/** Scratch folder: the CLI's config folders, skeletons, import files. */
let work: string;
/** Alice at the CLI (her stored login in work/config-alice). */
let alice: DssUser;

/** Runs `dss …` as alice, `stdin` written to its input. */
const dss = (args: readonly string[], stdin?: string) => runDss(alice, args, stdin === undefined ? {} : { stdin });

/** A version of an acme scenario, as the API answers it. */
const scenarioVersion = async (scenarioId: string, version: string) =>
  expectOk(
    await api.main.GET('/companies/{companyId}/resources/scenarios/{scenarioId}/versions/{version}', {
      params: { path: { companyId: 'acme', scenarioId, version } },
    }),
  );

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

beforeAll(async () => {
  api = clientFor(local.service, local.tokens.alice);
  work = await mkdtemp(join(tmpdir(), 'dss-cli-fleet-'));
  alice = await dssUser(local.service, { configDirectory: join(work, 'config-alice') });
  const login = await dss(['login', '--username', 'alice', '--password-stdin'], `${DEMO_PASSWORDS.alice}\n`);
  expect(login.code, login.stderr).toBe(0);
}, 120_000);

afterAll(async () => {
  if (work !== undefined) await rm(work, { recursive: true, force: true });
}, 120_000);

describe('scenario packages', () => {
  let scenarioId: string;
  let folder: string;

  it('skeleton unzips a fresh scenario into a folder, and refuses a folder that holds files', async () => {
    folder = join(work, 'lobby');
    const run = await dss(['skeleton', '--version', '1.0.0', '-o', folder]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`files into ${folder}:`);
    expect(run.stdout).toMatch(/^ {2}scenario\.json$/m);
    const manifest = JSON.parse(await readFile(join(folder, 'scenario.json'), 'utf8'));
    expect(manifest.version).toBe('1.0.0');
    scenarioId = manifest.id;

    const again = await dss(['skeleton', '-o', folder]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('is not empty');

    const zipped = await dss(['skeleton', '--zip', join(work, 'skeleton.zip')]);
    expect(zipped.code, zipped.stderr).toBe(0);
    const zip = await JSZip.loadAsync(await readFile(join(work, 'skeleton.zip')));
    expect(zip.file('scenario.json')).not.toBeNull();
  }, 60_000);

  it('upload zips the edited folder without its dotfiles and stores it (201), then refuses the same version (409)', async () => {
    const manifest = JSON.parse(await readFile(join(folder, 'scenario.json'), 'utf8'));
    await writeFile(join(folder, 'scenario.json'), JSON.stringify({ ...manifest, name: 'Lobby loop' }));
    await writeFile(join(folder, '.DS_Store'), 'finder junk');

    const run = await dss(['upload', folder]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`Stored ${scenarioId} 1.0.0.`);
    expect(run.stdout).toContain(`${local.service.api}/companies/acme/resources/scenarios/${scenarioId}/versions/1.0.0`);
    expect(run.stderr).toMatch(/Uploading: .* of /);

    const version = await scenarioVersion(scenarioId, '1.0.0');
    expect(run.stdout).toContain(version.sha256);
    const stored = await JSZip.loadAsync(await (await fetch(version.download.url)).arrayBuffer());
    const names = Object.keys(stored.files);
    expect(names).toContain('scenario.json');
    expect(names.some((name) => name.includes('.DS_Store'))).toBe(false);

    const again = await dss(['upload', folder]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^error: 409 Conflict: .*already exists/m);
  }, 60_000);

  it('a broken folder is refused (422) with every violation printed, exit code 1', async () => {
    const broken = join(work, 'broken');
    await cp(folder, broken, { recursive: true });
    const manifest = JSON.parse(await readFile(join(broken, 'scenario.json'), 'utf8'));
    await writeFile(
      join(broken, 'scenario.json'),
      JSON.stringify({
        ...manifest,
        version: '1.0.2',
        thumbnails: ['resources/thumbnails/missing.png'],
        assets: ['resources/assets/gone.html', 'resources/assets/also-gone.js'],
      }),
    );
    // The problem the service gives for this very archive, to compare with what the CLI prints.
    const uploaded = await uploadArchive(local.service, local.tokens.alice, 'acme', (await zipFolder(broken)).bytes);
    expect(uploaded.response.status).toBe(422);
    const expected = { body: uploaded.error as { title: string; detail: string; errors: Array<{ path: string; message: string }> } };
    expect(expected.body.errors.length).toBeGreaterThanOrEqual(3);

    const run = await dss(['upload', broken]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`error: 422 ${expected.body.title}: ${expected.body.detail}`);
    for (const violation of expected.body.errors) expect(run.stderr).toContain(`  ${violation.path}: ${violation.message}`);

    const presigned = await dss(['upload', broken, '--presigned']);
    expect(presigned.code).toBe(1);
    for (const violation of expected.body.errors) expect(presigned.stderr).toContain(`  ${violation.path}: ${violation.message}`);
  }, 60_000);

  it('upload --presigned stores the archive through an upload slot', async () => {
    const manifest = JSON.parse(await readFile(join(folder, 'scenario.json'), 'utf8'));
    await writeFile(join(folder, 'scenario.json'), JSON.stringify({ ...manifest, version: '1.0.1' }));
    const status = await dssJson(alice, ['upload', folder, '--presigned']);
    expect(status).toMatchObject({ status: 'STORED', result: { id: scenarioId, version: '1.0.1', name: 'Lobby loop' } });
    expect((await scenarioVersion(scenarioId, '1.0.1')).sha256).toBe(status.result.sha256);
  }, 60_000);

  it('an archive above the company quota is refused (413) with the quota figures', async () => {
    // globex's quota is 5 MiB: 6 MB of random bytes cannot fit, and take the presigned path on their own.
    const bob = await dssUser(local.service, { configDirectory: join(work, 'config-bob') });
    expect((await runDss(bob, ['login', '--username', 'bob', '--password-stdin'], { stdin: `${DEMO_PASSWORDS.bob}\n` })).code).toBe(0);
    const big = join(work, 'big');
    await cp(folder, big, { recursive: true });
    await writeFile(join(big, 'resources/assets/video.bin'), randomBytes(6_000_000));
    const run = await runDss(bob, ['upload', big]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('waiting for upload');
    expect(run.stderr).toMatch(/^error: 413 /m);
    expect(run.stderr).toMatch(/quota: 5\.0 MiB \(5,242,880 bytes\); used: .*; available: /);
    expect(run.stderr).toMatch(/archive: 5\.\d MiB \(6,\d{3},\d{3} bytes\)/);
  }, 60_000);

  it('scenarios lists, shows a scenario with its versions and one version with its download URL; usage shows the account', async () => {
    const list = await dssJson<{ items: { id: string; versions: string[] }[] }>(alice, ['scenarios', '--all']);
    expect(list.items.find((scenario) => scenario.id === scenarioId)?.versions).toEqual(['1.0.0', '1.0.1']);

    const table = await dss(['scenarios', '--limit', '1']);
    expect(table.code).toBe(0);
    expect(table.stdout).toContain('acme-welcome');
    expect(table.stderr).toMatch(/More scenarios: add --all, or --cursor \S+/);

    const detail = await dss(['scenarios', scenarioId]);
    expect(detail.code, detail.stderr).toBe(0);
    expect(detail.stdout).toContain('Lobby loop');
    expect(detail.stdout).toMatch(/│ 1\.0\.0 +│/);
    expect(detail.stdout).toMatch(/│ 1\.0\.1 +│/);

    const version = await dss(['scenarios', scenarioId, '--version', '1.0.1']);
    expect(version.code, version.stderr).toBe(0);
    const url = version.stdout.split('\n').find((line) => line.startsWith('http'));
    expect(url).toBeDefined();
    const archive = new Uint8Array(await (await fetch(url as string)).arrayBuffer());
    expect(version.stdout).toContain(sha256(archive));

    const missing = await dss(['scenarios', scenarioId, '--version', '9.9.9']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^error: 404 /m);

    const usage = await dssJson(alice, ['usage']);
    expect(usage).toEqual(
      expectOk(await api.main.GET('/companies/{companyId}/resources/scenarios/usage', { params: { path: { companyId: 'acme' } } })),
    );
    const text = await dss(['usage']);
    expect(text.stdout).toContain(`${usage.usedBytes.toLocaleString('en-US')} bytes`);
  }, 60_000);
});

describe('devices', () => {
  it('register creates a device, then updates it; get shows it', async () => {
    const created = await dss([
      'devices',
      'register',
      'cli-kiosk-1',
      '--serial',
      'SN-CLI-1',
      '--location-name',
      'Entrance',
      '--latitude',
      '52.52',
    ]);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toContain('Registered device cli-kiosk-1.');
    const updated = await dss(['devices', 'register', 'cli-kiosk-1', '--location-name', 'Back door']);
    expect(updated.stdout).toContain('Updated device cli-kiosk-1.');
    const device = await dssJson(alice, ['devices', 'get', 'cli-kiosk-1']);
    expect(device).toMatchObject({
      id: 'cli-kiosk-1',
      serial: 'SN-CLI-1',
      location: { name: 'Back door' },
      geoLocation: { latitude: 52.52 },
      connection: { state: 'UNKNOWN' },
    });
    const bad = await dss(['devices', 'register', 'cli-kiosk-1', '--latitude', 'north']);
    expect(bad.code).toBe(2);
  }, 60_000);

  it('import registers the good records of a CSV, lists the bad one as FAILURE with its errors, and exits 1', async () => {
    const file = join(work, 'devices.csv');
    await writeFile(
      file,
      'id,serial,location.name,geoLocation.latitude\ncli-kiosk-2,SN-CLI-2,Door,48.85\ncli-kiosk-3,SN-CLI-3,,\ncli-kiosk-4,,No serial,\ncli-kiosk-1,SN-CLI-1,Hall,\n',
    );
    const run = await dss(['devices', 'import', file]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/│ CREATED +│ 2 +│/);
    expect(run.stdout).toMatch(/│ UPDATED +│ 1 +│/);
    expect(run.stdout).toMatch(/│ FAILURE +│ 1 +│/);
    expect(run.stdout).toMatch(/│ 3 +│ cli-kiosk-4 +│ \/serial: /);
    expect(run.stderr).toContain('error: 1 of 4 devices were not registered (FAILURE).');
    expect(await dssJson(alice, ['devices', 'get', 'cli-kiosk-2'])).toMatchObject({
      location: { name: 'Door' },
      geoLocation: { latitude: 48.85 },
    });
    expect((await dss(['devices', 'get', 'cli-kiosk-4'])).code).toBe(1);
  }, 60_000);

  it('credentials issues a client id and secret once, and a device logs in with the printed command', async () => {
    const run = await dss(['devices', 'credentials', 'cli-kiosk-3']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('The secret is shown only now');
    const line = run.stdout.split('\n').find((text) => text.startsWith('dss login --client-id '));
    expect(line).toMatch(/^dss login --client-id acme~cli-kiosk-3 --client-secret [A-Za-z0-9_-]{43}$/);

    const kiosk = await dssUser(local.service, { configDirectory: join(work, 'config-device') });
    const login = await runDss(kiosk, (line as string).split(' ').slice(1));
    expect(login.code, login.stderr).toBe(0);
    const whoami = await dssJson(kiosk, ['whoami']);
    expect(whoami).toMatchObject({ subject: 'cli-kiosk-3', clientId: 'acme~cli-kiosk-3', companies: ['acme'], scope: ['device'] });
  }, 60_000);

  it('delete removes a device: get then answers 404, exit code 1', async () => {
    const run = await dss(['devices', 'delete', 'cli-kiosk-2']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('Deleted device cli-kiosk-2.');
    const get = await dss(['devices', 'get', 'cli-kiosk-2']);
    expect(get.code).toBe(1);
    expect(get.stderr).toMatch(/^error: 404 /m);
  }, 60_000);
});

describe('rollouts', () => {
  it('create over a few devices, get, pause, resume, cancel; a second cancel is refused (409) naming the state', async () => {
    const created = await dssJson(alice, [
      'rollout',
      'create',
      'acme-welcome@1.1.0',
      '--devices',
      'cli-kiosk-1,cli-kiosk-3,acme-kiosk-0001',
      '--waves',
      '1',
      '--failure-threshold',
      '0.5',
      '--wave-timeout',
      '600',
      '--note',
      'cli e2e',
    ]);
    expect(created).toMatchObject({
      state: 'RUNNING',
      action: 'DEPLOY',
      what: { type: 'SCENARIO', id: 'acme-welcome', subId: '1.1.0' },
      targets: 3,
      failureThreshold: 0.5,
      waveTimeoutSeconds: 600,
      note: 'cli e2e',
    });
    expect(created.waves.map((wave: { size: number }) => wave.size)).toEqual([1, 2]);
    const id: string = created.id;

    const get = await dss(['rollout', 'get', id]);
    expect(get.code, get.stderr).toBe(0);
    expect(get.stdout).toMatch(/│ state +│ RUNNING/);
    expect(get.stdout).toMatch(/│ 1 +│ 1 +│ RUNNING +│/);
    expect(get.stdout).toMatch(/│ 2 +│ 2 +│ PENDING +│/);

    const paused = await dss(['rollout', 'pause', id]);
    expect(paused.code, paused.stderr).toBe(0);
    expect(paused.stdout).toContain(`Rollout ${id} is PAUSED.`);
    expect(paused.stdout).toMatch(/│ pausedReason +│ Paused by alice/);
    const watched = await dss(['rollout', 'get', id, '--watch']);
    expect(watched.code).toBe(1);
    expect(watched.stderr).toContain(`error: Rollout ${id} is PAUSED: Paused by alice`);

    const resumed = await dss(['rollout', 'resume', id]);
    expect(resumed.stdout).toContain(`Rollout ${id} is RUNNING.`);
    expect((await dssJson(alice, ['rollout', 'list'])).items.find((item: { id: string }) => item.id === id)?.state).toBe('RUNNING');

    const cancelled = await dss(['rollout', 'cancel', id]);
    expect(cancelled.stdout).toContain(`Rollout ${id} is CANCELLED.`);
    const again = await dss(['rollout', 'cancel', id]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^error: 409 Conflict: .*CANCELLED/m);
    expect((await dssJson(alice, ['rollout', 'get', id])).state).toBe('CANCELLED');
  }, 90_000);

  it('refuses bad usage with exit code 2 and an unknown version with 1', async () => {
    expect((await dss(['rollout', 'create', 'acme-welcome', '--devices', 'k1'])).code).toBe(2);
    expect((await dss(['rollout', 'create', 'acme-welcome@1.1.0'])).code).toBe(2);
    const unknown = await dss(['rollout', 'create', 'acme-welcome@9.9.9', '--devices', 'cli-kiosk-1']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^error: 422 /m);
  }, 60_000);
});
