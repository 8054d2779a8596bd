/**
 * End-to-end over `npm start` (bin/local.ts), as an operator drives it with the `dss` CLI (`node bin/dss.mjs`, a child
 * process per command, logged in as alice in a temporary configuration folder): 300 registered kiosks get a scenario
 * version from a CSV in chunks, with progress on stderr and a summary on stdout; a run killed after its first chunk is
 * rerun and resumes (no device deployed twice, no ALREADY_DEPLOYED), while a later run of the same command executes
 * anew; a dry run changes nothing; an unknown device fails its item (exit 1); bad usage exits 2 without a stack trace;
 * and the listings (deployments, history, filters, search) print with --json what the API answers.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDemoScenarioArchive, DEMO_SCENARIOS } from '../../functions/local/seed.js';
import {
  call,
  eventually,
  type JsonResult,
  type LocalService,
  newServiceSettings,
  removeDataDirectory,
  type ServiceSettings,
  startService,
  tokenFor,
  uploadArchive,
} from './harness.js';

const root = resolve(import.meta.dirname, '../..');
const COMPANY = 'acme';
const SCENARIO = 'acme-welcome';
/** Versions uploaded here: the demo data has 1.0.0 and 1.1.0. */
const FIRST = '2.0.0';
const SECOND = '2.1.0';
const DEVICES = Array.from({ length: 300 }, (_, index) => `cli-kiosk-${String(index + 1).padStart(4, '0')}`);

let settings: ServiceSettings;
let service: LocalService;
let alice: string;
let configDirectory: string;
let devicesCsv: string;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Starts `dss <args>` with the test's configuration folder and the service's addresses. */
function startDss(args: readonly string[]): ChildProcess {
  const environment: NodeJS.ProcessEnv = {
    ...process.env,
    DSS_CONFIG_DIR: configDirectory,
    DSS_BASE_URL: service.api,
    DSS_UPLOAD_URL: service.upload,
    DSS_AUTH_URL: service.auth,
    NODE_NO_WARNINGS: '1',
  };
  delete environment.DSS_TOKEN;
  delete environment.DSS_COMPANY;
  return spawn(process.execPath, [join(root, 'bin/dss.mjs'), ...args], { cwd: root, env: environment, stdio: ['pipe', 'pipe', 'pipe'] });
}

/** Collects a started command's output until it exits. */
function finished(child: ChildProcess): Promise<Run> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((done) => child.once('close', (code) => done({ code, stdout, stderr })));
}

/** Runs `dss <args>` to its end. */
function dss(args: readonly string[], stdin = ''): Promise<Run> {
  const child = startDss(args);
  const run = finished(child);
  child.stdin?.end(stdin);
  return run;
}

/** Runs `dss --json <args>` and parses its stdout. */
async function dssJson<T = any>(args: readonly string[], expectedCode = 0): Promise<T> {
  const run = await dss(['--json', ...args]);
  expect(run.code, run.stderr).toBe(expectedCode);
  return JSON.parse(run.stdout) as T;
}

/** Every page of a cursor-paged listing of the API. */
async function allItems(path: string): Promise<any[]> {
  const items: any[] = [];
  let cursor: string | null = null;
  do {
    const separator = path.includes('?') ? '&' : '?';
    const page: JsonResult = await call(
      `${service.api}${path}${cursor === null ? '' : `${separator}cursor=${encodeURIComponent(cursor)}`}`,
      {
        token: alice,
      },
    );
    expect(page.status).toBe(200);
    items.push(...page.body.items);
    cursor = page.body.nextCursor;
  } while (cursor !== null);
  return items;
}

/** The ACTION history entries of a version of the scenario. */
async function actions(version: string): Promise<any[]> {
  const entries = await allItems(
    `/companies/${COMPANY}/resources/deployments/history?scenarioId=${SCENARIO}&version=${version}&limit=1000`,
  );
  return entries.filter((entry) => entry.kind === 'ACTION');
}

/** The history of a version once it holds an entry for each of `devices` (the history follows the changes' stream). */
async function settledActions(version: string, devices: readonly string[]): Promise<any[]> {
  let entries: any[] = [];
  await eventually(async () => {
    entries = await actions(version);
    const seen = new Set(entries.map((entry) => entry.target.id));
    return devices.every((device) => seen.has(device));
  }, `the history of ${version}`);
  return entries;
}

const journals = async () => readdir(join(configDirectory, 'batches')).catch(() => [] as string[]);
const activeVersions = async (device: string) =>
  (await allItems(`/companies/${COMPANY}/resources/${device}/deployments`)).map((item) => item.what.subId);
const noStackTrace = (text: string) => expect(text).not.toMatch(/\n\s+at /);

beforeAll(async () => {
  settings = await newServiceSettings();
  service = await startService(settings);
  alice = await tokenFor(service, 'alice');
  configDirectory = await mkdtemp(join(tmpdir(), 'dss-cli-config-'));
  const registered = await call(`${service.api}/companies/${COMPANY}/resources/devices`, {
    token: alice,
    json: DEVICES.map((id, index) => ({ id, serial: `CLI-${index + 1}`, location: { name: 'CLI test store' } })),
  });
  expect(registered.status).toBe(200);
  expect(registered.body.every((result: { state: string }) => result.state === 'CREATED')).toBe(true);
  const scenario = DEMO_SCENARIOS.find((candidate) => candidate.id === SCENARIO);
  if (scenario === undefined) throw new Error(`no demo scenario ${SCENARIO}`);
  for (const version of [FIRST, SECOND]) {
    const uploaded = await uploadArchive(service, alice, COMPANY, await buildDemoScenarioArchive(scenario, version));
    expect(uploaded.response.status).toBe(201);
  }
  devicesCsv = join(configDirectory, 'devices.csv');
  await writeFile(devicesCsv, `id,note\n${DEVICES.map((id) => `${id},kiosk`).join('\n')}\n`);
  const login = await dss(['login', '--username', 'alice', '--password-stdin'], 'alice-demo-password\n');
  expect(login.code, login.stderr).toBe(0);
  // The search index follows the registry through its stream: the listings below compare settled counts.
  await eventually(async () => {
    const found = await call(`${service.api}/resources/search?company=acme&type=DEVICE&pageSize=1`, { token: alice });
    return found.body?.total === 120 + DEVICES.length;
  }, 'the registered devices in search');
});

afterAll(async () => {
  await service?.stop();
  if (settings !== undefined) await removeDataDirectory(settings);
  if (configDirectory !== undefined) await rm(configDirectory, { recursive: true, force: true });
});

describe('dss deploy', () => {
  it('deploys from a CSV in chunks, with progress on stderr and the summary on stdout', async () => {
    const run = await dss(['deploy', `${SCENARIO}@${FIRST}`, '--from', devicesCsv, '--chunk-size', '100', '--note', 'CLI rollout']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('in 3 chunks of at most 100');
    for (const done of [100, 200, 300]) expect(run.stderr).toContain(`Deploying: ${done} of 300 items`);
    expect(run.stdout).not.toContain('Deploying');
    expect(run.stdout).toMatch(/│ SUCCESS │\s+│ 300\s+│/);
    expect(run.stdout).not.toContain('FAILURE');
    expect(await journals()).toEqual([]);

    const history = await settledActions(FIRST, DEVICES);
    expect(history).toHaveLength(300);
    expect(history.every((entry) => entry.action === 'DEPLOY' && entry.state === 'SUCCESS' && entry.note === 'CLI rollout')).toBe(true);
    expect(await activeVersions('cli-kiosk-0300')).toContain(FIRST);
  });

  it('resumes a run killed after its first chunk: no device is deployed twice, nothing fails as ALREADY_DEPLOYED', async () => {
    const args = ['deploy', `${SCENARIO}@${SECOND}`, '--from', devicesCsv, '--chunk-size', '5'];
    const child = startDss(args);
    const interrupted = finished(child);
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (/Deploying: [1-9]/.test(stderr)) child.kill('SIGKILL');
    });
    const killed = await interrupted;
    expect(killed.code).toBeNull();
    expect(killed.stdout).toBe('');
    const [journal] = await journals();
    expect(journal).toBeDefined();
    const answered = JSON.parse(await readFile(join(configDirectory, 'batches', journal as string), 'utf8')).answered;
    expect(answered.length).toBeGreaterThanOrEqual(1);
    expect(answered.length).toBeLessThan(60);

    const rerun = await dss(['--json', ...args]);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(rerun.stderr).toContain('Resuming an interrupted run');
    const { summary, items } = JSON.parse(rerun.stdout);
    expect(summary).toMatchObject({ resumed: true, chunks: 60, total: 300, succeeded: 300, failed: 0 });
    expect(summary.replayedChunks).toBeGreaterThanOrEqual(1);
    expect(items.map((item: { target: { id: string } }) => item.target.id)).toEqual(DEVICES);
    expect(await journals()).toEqual([]);

    const history = await settledActions(SECOND, DEVICES);
    expect(history.filter((entry) => entry.state === 'FAILURE')).toEqual([]);
    const perDevice = new Map<string, number>();
    for (const entry of history) perDevice.set(entry.target.id, (perDevice.get(entry.target.id) ?? 0) + 1);
    expect([...perDevice.keys()].sort()).toEqual(DEVICES);
    expect([...perDevice.values()].every((count) => count === 1)).toBe(true);
  });

  it('executes a later run of the same command anew instead of replaying the first one', async () => {
    const devices = ['--devices', 'cli-kiosk-0001,cli-kiosk-0002'];
    const first = await dssJson(['deploy', `${SCENARIO}@1.1.0`, ...devices]);
    expect(first.summary).toMatchObject({ succeeded: 2, replayedChunks: 0 });
    const undeploy = await dssJson(['undeploy', `${SCENARIO}@1.1.0`, ...devices]);
    expect(undeploy.summary).toMatchObject({ succeeded: 2 });
    expect(await activeVersions('cli-kiosk-0001')).not.toContain('1.1.0');

    const again = await dssJson(['deploy', `${SCENARIO}@1.1.0`, ...devices]);
    expect(again.summary).toMatchObject({ succeeded: 2, replayedChunks: 0, resumed: false });
    expect(again.summary.runId).not.toBe(first.summary.runId);
    expect(again.items.map((item: { id: string }) => item.id)).not.toEqual(first.items.map((item: { id: string }) => item.id));
    expect(await activeVersions('cli-kiosk-0001')).toContain('1.1.0');
  });

  it('changes nothing on a dry run', async () => {
    const dry = await dssJson(['undeploy', `${SCENARIO}@${FIRST}`, '--from', devicesCsv, '--dry-run']);
    expect(dry.summary).toMatchObject({ dryRun: true, total: 300, succeeded: 300 });
    expect(dry.summary.runId).toBeUndefined();
    expect(await journals()).toEqual([]);
    const active = await allItems(`/companies/${COMPANY}/resources/DEVICE/deployments?limit=1000`);
    expect(active.filter((item) => item.what.subId === FIRST)).toHaveLength(300);
    expect((await actions(FIRST)).filter((entry) => entry.action === 'UNDEPLOY')).toEqual([]);
  });

  it('fails the items of unknown devices: exit 1, their cause in the table', async () => {
    const run = await dss(['deploy', `${SCENARIO}@${FIRST}`, '--devices', 'no-such-kiosk,cli-kiosk-0001']);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/│ FAILURE │ TARGET_NOT_FOUND\s+│ 1\s+│/);
    expect(run.stdout).toMatch(/│ FAILURE │ ALREADY_DEPLOYED\s+│ 1\s+│/);
    expect(run.stdout).toContain('Failed items:');
    expect(run.stdout).toMatch(/│ no-such-kiosk\s+│ TARGET_NOT_FOUND │ No such device in the company\./);
    expect(run.stderr).toContain('error: 2 items of 2 failed.');
    noStackTrace(run.stderr);
  });

  it('exits 2 on bad usage, without a stack trace', async () => {
    for (const args of [
      ['deploy', SCENARIO, '--devices', 'cli-kiosk-0001'],
      ['deploy', `${SCENARIO}@${FIRST}`, '--devices', 'cli-kiosk-0001', '--frobnicate'],
      ['deploy', `${SCENARIO}@${FIRST}`, '--devices', 'cli-kiosk-0001', '--chunk-size', '5001'],
      ['undeploy', `${SCENARIO}@${FIRST}`],
      ['history', '--version', FIRST],
      ['search', 'connection.state'],
    ]) {
      const run = await dss(args);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr).toMatch(/^error: /m);
      noStackTrace(run.stderr);
    }
    const missing = await dss(['deploy', SCENARIO, '--devices', 'cli-kiosk-0001']);
    expect(missing.stderr).toContain('SCENARIO@VERSION');
  });
});

describe('listings', () => {
  it('prints the active deployments with --json as the API answers them, one device or all pages', async () => {
    const one = await dssJson(['deployments', '--device', 'cli-kiosk-0001']);
    const api = await call(`${service.api}/companies/${COMPANY}/resources/cli-kiosk-0001/deployments`, { token: alice });
    expect(one).toEqual(api.body);
    expect(one.items.map((item: { what: { subId: string } }) => item.what.subId)).toEqual(['1.1.0', FIRST, SECOND]);

    const all = await dssJson<any[]>(['deployments', '--all', '--limit', '250']);
    expect(all).toEqual(await allItems(`/companies/${COMPANY}/resources/DEVICE/deployments?limit=1000`));
    expect(all.length).toBeGreaterThan(600);

    const table = await dss(['deployments', '--limit', '2']);
    expect(table.code).toBe(0);
    expect(table.stderr).toContain('add --all');
  });

  it('maps the history options to the query and prints the API answer with --json', async () => {
    const page = await dssJson(['history', '--device', 'cli-kiosk-0001', '--scenario', SCENARIO, '--version', '1.1.0', '--limit', '2']);
    const api = await call(
      `${service.api}/companies/${COMPANY}/resources/deployments/history?deviceId=cli-kiosk-0001&scenarioId=${SCENARIO}&version=1.1.0&limit=2`,
      { token: alice },
    );
    expect(page.items).toEqual(api.body.items);
    expect(page.items.map((entry: { action: string }) => entry.action)).toEqual(['DEPLOY', 'UNDEPLOY']);
    expect(page.nextCursor).not.toBeNull();

    const all = await dssJson<any[]>([
      'history',
      '--device',
      'cli-kiosk-0001',
      '--since',
      '2000-01-01T00:00:00Z',
      '--until',
      '2999-01-01T00:00:00Z',
      '--limit',
      '1',
      '--all',
    ]);
    expect(all).toEqual(await allItems(`/companies/${COMPANY}/resources/deployments/history?deviceId=cli-kiosk-0001`));
    expect(all.length).toBeGreaterThanOrEqual(5);
  });

  it('lists the filters with their counts as the API answers them', async () => {
    const filters = await dssJson(['filters', '--type', 'DEVICE', 'company=acme']);
    const api = await call(`${service.api}/resources/search/filters?type=DEVICE&company=acme`, { token: alice });
    const fields = (body: { items: { field: string; definition: { parameters: { value: string }[] } }[] }) =>
      body.items.map((item) => [item.field, item.definition.parameters.map((parameter) => parameter.value)]);
    expect(fields(filters)).toEqual(fields(api.body));
    const typeCounts = filters.items.find((item: { field: string }) => item.field === 'type').definition.parameters;
    expect(typeCounts).toContainEqual({ name: 'Device', value: 'DEVICE', count: 420 });

    const table = await dss(['filters', '--type', 'DEVICE']);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/│ connection\.state\s+│ DEVICE\s+│ CONNECTED/);
  });

  it('searches with filters, following every page with --all', async () => {
    const all = await dssJson<any[]>(['search', 'company=acme', 'health.mode=EMBEDDED_PLATFORM_ANDROID', '--limit', '7', '--all']);
    const api = await call(`${service.api}/resources/search?company=acme&health.mode=EMBEDDED_PLATFORM_ANDROID&pageSize=100`, {
      token: alice,
    });
    expect(api.body.total).toBeGreaterThan(7);
    expect(api.body.total).toBeLessThanOrEqual(100);
    expect(all.map((resource) => resource.id)).toEqual(api.body.resources.map((resource: { id: string }) => resource.id));

    const page = await dssJson(['search', 'company=acme', '--type', 'DEVICE', '--sort', 'serial:desc', '--limit', '5']);
    const apiPage = await call(`${service.api}/resources/search?company=acme&type=DEVICE&sort=serial&direction=DESC&pageSize=5`, {
      token: alice,
    });
    expect(page).toEqual(apiPage.body);
    expect(page.resources[0].id).toBe('cli-kiosk-0099');

    const table = await dss(['search', 'company=acme', '--global', 'CLI-42']);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/│ cli-kiosk-0042 │ DEVICE │ acme\s+│ CLI-42\s+│ CLI test store │ UNKNOWN/);

    const unknown = await dss(['search', 'colour=red']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("colour: Unknown parameter 'colour'");
  });
});
