/**
 * The CLI as an integrator's first hour uses it, as child processes against `npm start`: log in, download the skeleton,
 * upload the folder, register 2,000 kiosks from a CSV, deploy to all of them in chunks, list the deployments, search
 * with filters; and a chunked deploy killed half-way then run again, which must not deploy anything twice.
 */
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DssUser, dssJson, dssUser, killWhen, runDss } from './cli-runner.js';
import { eventually, useLocalService } from './harness.js';

const FLEET_SIZE = 2_000;
const deviceId = (index: number) => `cli-kiosk-${String(index).padStart(4, '0')}`;

const local = useLocalService();
let user: DssUser;
let scenarioDirectory: string;
let devicesCsv: string;
let scenarioId: string;

beforeAll(async () => {
  user = await dssUser(local.service);
  scenarioDirectory = join(user.configDirectory, 'my-scenario');
  devicesCsv = join(user.configDirectory, 'devices.csv');
  const rows = Array.from({ length: FLEET_SIZE }, (_, index) => `${deviceId(index)},SN-CLI-${index},Store ${index % 7}`);
  await writeFile(devicesCsv, `id,serial,location.name\n${rows.join('\n')}\n`);
}, 120_000);

afterAll(async () => {
  if (user) await rm(user.configDirectory, { recursive: true, force: true });
});

/** The devices with an active deployment of a scenario version, through the CLI (read after the conditional writes). */
async function activeOn(version: string): Promise<string[]> {
  return (await dssJson<Array<{ target: { id: string }; what: { id: string; subId: string } }>>(user, ['deployments', '--all']))
    .filter((item) => item.what.id === scenarioId && item.what.subId === version)
    .map((item) => item.target.id);
}

/** Every action on a scenario version in the history (derived from the table's stream, so a little behind). */
async function actionsOn(version: string): Promise<Array<{ action: string; state: string; target: { id: string } }>> {
  const entries = await dssJson<Array<{ kind: string; action: string; state: string; target: { id: string } }>>(user, [
    'history',
    '--scenario',
    scenarioId,
    '--version',
    version,
    '--all',
  ]);
  return entries.filter((entry) => entry.kind === 'ACTION');
}

describe('dss, from a token to 2,000 deployed kiosks', () => {
  it('logs in and stores the token for the user only', async () => {
    const wrong = await runDss(user, ['login', '--username', 'alice', '--password-stdin'], { stdin: 'not-her-password\n' });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('401');
    expect(wrong.stderr).not.toMatch(/\n\s+at /);

    const login = await runDss(user, ['login', '--username', 'alice', '--password-stdin'], { stdin: 'alice-demo-password\n' });
    expect(login.code, login.stderr).toBe(0);
    expect(login.stdout).toContain('Logged in as alice (acme)');

    const whoami = await runDss(user, ['whoami', '--json']);
    expect(whoami.code).toBe(0);
    expect(JSON.parse(whoami.stdout)).toMatchObject({ subject: 'alice', companies: ['acme'] });
  });

  it('downloads the skeleton into a folder and uploads the folder', async () => {
    const skeleton = await runDss(user, ['skeleton', '--version', '1.0.0', '-o', scenarioDirectory]);
    expect(skeleton.code, skeleton.stderr).toBe(0);
    expect(await readdir(scenarioDirectory)).toEqual(expect.arrayContaining(['scenario.json', 'resources']));
    const manifest = JSON.parse(await readFile(join(scenarioDirectory, 'scenario.json'), 'utf8')) as { id: string; version: string };
    expect(manifest.version).toBe('1.0.0');
    scenarioId = manifest.id;

    const upload = await runDss(user, ['upload', scenarioDirectory]);
    expect(upload.code, upload.stderr).toBe(0);
    expect(upload.stdout).toContain(scenarioId);
    expect(upload.stdout).toContain('1.0.0');

    const again = await runDss(user, ['upload', scenarioDirectory]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('409');

    const listed = await runDss(user, ['scenarios', scenarioId, '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain('1.0.0');
  });

  it(`registers ${FLEET_SIZE.toLocaleString('en-US')} kiosks from a CSV`, async () => {
    const imported = await runDss(user, ['devices', 'import', devicesCsv, '--json']);
    expect(imported.code, imported.stderr).toBe(0);
    const summary = JSON.stringify(JSON.parse(imported.stdout));
    expect(summary).toContain('CREATED');
    const device = await runDss(user, ['devices', 'get', deviceId(1999), '--json']);
    expect(device.code, device.stderr).toBe(0);
    expect(JSON.parse(device.stdout)).toMatchObject({ id: deviceId(1999), serial: 'SN-CLI-1999' });
  }, 180_000);

  it('deploys to every kiosk of the CSV in chunks, with progress, and lists the deployments', async () => {
    const deploy = await runDss(user, [
      'deploy',
      `${scenarioId}@1.0.0`,
      '--from',
      devicesCsv,
      '--chunk-size',
      '500',
      '--note',
      'first hour',
    ]);
    expect(deploy.code, deploy.stderr).toBe(0);
    // One progress line per chunk answered: 500, 1,000, 1,500, 2,000 of 2,000.
    for (const done of ['500', '1,000', '1,500', '2,000']) expect(deploy.stderr).toContain(`${done} of 2,000`);
    expect(deploy.stdout).toContain('SUCCESS');
    expect(deploy.stdout).toContain('2,000');

    const deployments = await runDss(user, ['deployments', '--all', '--json']);
    expect(deployments.code, deployments.stderr).toBe(0);
    const active = (JSON.parse(deployments.stdout) as Array<{ target: { id: string }; what: { id: string; subId: string } }>).filter(
      (item) => item.what.id === scenarioId,
    );
    expect(active).toHaveLength(FLEET_SIZE);
    expect(new Set(active.map((item) => item.target.id)).size).toBe(FLEET_SIZE);

    const table = await runDss(user, ['deployments', '--device', deviceId(7)]);
    expect(table.code).toBe(0);
    expect(table.stdout).toContain(scenarioId);
    expect(table.stdout).toContain('1.0.0');
  }, 240_000);

  it('searches the fleet with filters, as a table and as JSON', async () => {
    // The search index follows the device table's stream: the kiosks imported above are there within moments.
    let found: Array<{ id: string; serial: string }> = [];
    await eventually(async () => {
      const json = await runDss(user, ['search', 'type=DEVICE', 'company=acme', '--global', 'SN-CLI-1234', '--json']);
      expect(json.code, json.stderr).toBe(0);
      found = (JSON.parse(json.stdout) as { resources: Array<{ id: string; serial: string }> }).resources;
      return found.length > 0;
    }, 'kiosk 1234 in the search index');
    expect(found[0]).toMatchObject({ id: deviceId(1234), serial: 'SN-CLI-1234' });

    // One kiosk indexed is not all of them: the imported kiosks sit in different partitions, each its own stream shard.
    type Page = { total: number; resources: Array<{ serial: string; connection: { state: string } }> };
    let page: Page = { total: 0, resources: [] };
    await eventually(
      async () => {
        const filtered = await runDss(user, ['search', 'type=DEVICE', 'connection.state=UNKNOWN', '--sort', 'serial', '--json']);
        expect(filtered.code, filtered.stderr).toBe(0);
        page = JSON.parse(filtered.stdout) as Page;
        return page.total >= FLEET_SIZE;
      },
      'every imported kiosk in the search index',
      60_000,
      500,
    );
    expect(page.resources.every((resource) => resource.connection.state === 'UNKNOWN')).toBe(true);
    const serials = page.resources.map((resource) => resource.serial);
    expect(serials).toEqual([...serials].sort());

    const table = await runDss(user, ['search', 'type=DEVICE', '--global', 'SN-CLI-42']);
    expect(table.code).toBe(0);
    expect(table.stdout).toContain(deviceId(42));

    const unknownFilter = await runDss(user, ['search', 'colour=blue']);
    expect(unknownFilter.code).toBe(1);
    expect(unknownFilter.stderr).toContain('colour');
    expect(unknownFilter.stderr).not.toMatch(/\n\s+at /);
  });

  it('an interrupted chunked deploy, run again, deploys each kiosk exactly once', async () => {
    const manifestPath = join(scenarioDirectory, 'scenario.json');
    const manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as Record<string, unknown>;
    await writeFile(manifestPath, JSON.stringify({ ...manifest, version: '1.1.0' }, null, 2));
    const upload = await runDss(user, ['upload', scenarioDirectory]);
    expect(upload.code, upload.stderr).toBe(0);

    const command = ['deploy', `${scenarioId}@1.1.0`, '--from', devicesCsv, '--chunk-size', '250'];
    // Killed as soon as the first chunk is answered: the process cannot say goodbye.
    const interrupted = await runDss(user, command, { onStderr: killWhen('250 of 2,000') });
    expect(interrupted.code).toBeNull();
    const before = await activeOn('1.1.0');
    expect(before.length).toBeGreaterThanOrEqual(250);
    expect(before.length).toBeLessThan(FLEET_SIZE);

    const rerun = await runDss(user, [...command, '--json']);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(rerun.stderr).toMatch(/resum/i);
    const result = JSON.parse(rerun.stdout) as { items: Array<{ state: string; cause?: string | null }> };
    expect(result.items).toHaveLength(FLEET_SIZE);
    expect(result.items.filter((item) => item.state !== 'SUCCESS')).toEqual([]);

    expect(new Set(await activeOn('1.1.0')).size).toBe(FLEET_SIZE);
    // The history catches up with the writes; once it has them all, it must hold one DEPLOY SUCCESS per kiosk and
    // nothing else: no second DEPLOY, no item refused as ALREADY_DEPLOYED.
    await eventually(async () => (await actionsOn('1.1.0')).length >= FLEET_SIZE, 'the history of 1.1.0 to catch up', 60_000);
    const after = await actionsOn('1.1.0');
    expect(after.filter((entry) => entry.action !== 'DEPLOY' || entry.state !== 'SUCCESS')).toEqual([]);
    expect(after).toHaveLength(FLEET_SIZE);
    expect(new Set(after.map((entry) => entry.target.id)).size).toBe(FLEET_SIZE);
  }, 300_000);

  it('answers bad usage with exit code 2 and no stack trace', async () => {
    for (const args of [
      ['deploy', scenarioId, '--devices', deviceId(1)],
      ['deploy'],
      ['search', '--no-such-option'],
      ['no-such-command'],
    ]) {
      const run = await runDss(user, args);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr).not.toMatch(/\n\s+at /);
    }
  });
});
