/**
 * End-to-end over `npm start` (bin/local.ts), as an operator drives it with the `dss` CLI (`node bin/dss.mjs`, a child
 * process per command through cli-runner.ts, logged in as alice in a temporary configuration folder): 300 registered
 * kiosks get a scenario version from a CSV in chunks, with progress on stderr and a summary on stdout; a run killed
 * after its first chunk leaves a journal, and its rerun resumes from it (the answered chunks replayed by the service,
 * nothing failed), while a later run of the same command executes anew; a dry run changes nothing; an unknown device
 * fails its item (exit 1); bad usage exits 2 without a stack trace; the listings (deployments, history, filters,
 * search) print with --json what the API answers (read with the typed client); and output piped into a reader that
 * closes early ends quietly.
 */
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type components, type DssClient, expectOk } from '../../client/index.js';
import { buildDemoScenarioArchive, DEMO_SCENARIOS } from '../../functions/local/seed.js';
import { type DssUser, dssJson, dssUser, killWhen, runDss } from './cli-runner.js';
import { clientFor, eventually, uploadArchive, useLocalService } from './harness.js';

const COMPANY = 'acme';
const SCENARIO = 'acme-welcome';
/** Versions uploaded here: the demo data has 1.0.0 and 1.1.0. */
const FIRST = '2.0.0';
const SECOND = '2.1.0';
const DEVICES = Array.from({ length: 300 }, (_, index) => `cli-kiosk-${String(index + 1).padStart(4, '0')}`);

type ActionEntry = components['schemas']['ActionHistoryEntry'];
type HistoryQuery = { deviceId?: string; scenarioId?: string; version?: string; limit?: number };

const local = useLocalService({ users: ['alice'] });
/** The typed client as alice, to compare what the CLI prints with what the API answers. */
let api: DssClient;
/** Alice at the CLI, logged in in a config folder of her own. */
let alice: DssUser;
let devicesCsv: string;

const path = { params: { path: { companyId: COMPANY } } };
const dss = (args: readonly string[], stdin?: string) => runDss(alice, args, stdin === undefined ? {} : { stdin });

/** Every item of a cursor-paged listing of the API, `page(cursor)` answering one page. */
async function allPages<T>(page: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor: string | null }>): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  do {
    const answer = await page(cursor);
    items.push(...answer.items);
    cursor = answer.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return items;
}

/** Every active deployment of the company. */
const allActive = () =>
  allPages(async (cursor) =>
    expectOk(
      await api.main.GET('/companies/{companyId}/resources/DEVICE/deployments', {
        params: { path: { companyId: COMPANY }, query: { limit: 1000, ...(cursor === undefined ? {} : { cursor }) } },
      }),
    ),
  );

/** Every entry of the deployment history that matches `query`, newest first. */
const allHistory = (query: HistoryQuery) =>
  allPages(async (cursor) =>
    expectOk(
      await api.main.GET('/companies/{companyId}/resources/deployments/history', {
        params: { path: { companyId: COMPANY }, query: { ...query, ...(cursor === undefined ? {} : { cursor }) } },
      }),
    ),
  );

/** The ACTION history entries of a version of the scenario. */
async function actions(version: string): Promise<ActionEntry[]> {
  const entries = await allHistory({ scenarioId: SCENARIO, version, limit: 1000 });
  return entries.filter((entry): entry is ActionEntry => entry.kind === 'ACTION');
}

/** The history of a version once it holds an entry for each of `devices` (the history follows the changes' stream). */
async function settledActions(version: string, devices: readonly string[]): Promise<ActionEntry[]> {
  let entries: ActionEntry[] = [];
  await eventually(async () => {
    entries = await actions(version);
    const seen = new Set(entries.map((entry) => entry.target.id));
    return devices.every((device) => seen.has(device));
  }, `the history of ${version}`);
  return entries;
}

const journals = async () => readdir(join(alice.configDirectory, 'batches')).catch(() => [] as string[]);
const activeVersions = async (deviceId: string) =>
  (
    await allPages(async (cursor) =>
      expectOk(
        await api.main.GET('/companies/{companyId}/resources/{deviceId}/deployments', {
          params: { path: { companyId: COMPANY, deviceId }, query: cursor === undefined ? {} : { cursor } },
        }),
      ),
    )
  ).map((item) => item.what.subId);
const noStackTrace = (text: string) => expect(text).not.toMatch(/\n\s+at /);

beforeAll(async () => {
  const token = local.tokens.alice;
  api = clientFor(local.service, token);
  alice = await dssUser(local.service);
  const registered = expectOk(
    await api.main.POST('/companies/{companyId}/resources/devices', {
      ...path,
      body: DEVICES.map((id, index) => ({ id, serial: `CLI-${index + 1}`, location: { name: 'CLI test store' } })),
    }),
  );
  expect(registered.every((result) => result.state === 'CREATED')).toBe(true);
  const scenario = DEMO_SCENARIOS.find((candidate) => candidate.id === SCENARIO);
  if (scenario === undefined) throw new Error(`no demo scenario ${SCENARIO}`);
  for (const version of [FIRST, SECOND]) {
    const uploaded = await uploadArchive(local.service, token, COMPANY, await buildDemoScenarioArchive(scenario, version));
    expect(uploaded.response.status).toBe(201);
  }
  devicesCsv = join(alice.configDirectory, 'devices.csv');
  await writeFile(devicesCsv, `id,note\n${DEVICES.map((id) => `${id},kiosk`).join('\n')}\n`);
  const login = await dss(['login', '--username', 'alice', '--password-stdin'], 'alice-demo-password\n');
  expect(login.code, login.stderr).toBe(0);
  // The search index follows the registry through its stream: the listings below compare settled counts.
  await eventually(async () => {
    const found = expectOk(
      await api.main.GET('/resources/search', { params: { query: { company: [COMPANY], type: ['DEVICE'], pageSize: 1 } } }),
    );
    return found.total === 120 + DEVICES.length;
  }, 'the registered devices in search');
});

afterAll(async () => {
  if (alice !== undefined) await rm(alice.configDirectory, { recursive: true, force: true });
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

  // The walkthrough (cli-walkthrough.test.ts) checks at 2,000 kiosks that a resumed run deploys each exactly once, in
  // the history; here, what the journal holds and that the service replays the chunks answered before the kill.
  it('resumes a run killed after its first chunk from its journal: the answered chunks are replayed, not executed again', async () => {
    const args = ['deploy', `${SCENARIO}@${SECOND}`, '--from', devicesCsv, '--chunk-size', '5'];
    const killed = await runDss(alice, args, { onStderr: killWhen(/Deploying: [1-9]/) });
    expect(killed.code).toBeNull();
    expect(killed.stdout).toBe('');
    const [journal] = await journals();
    expect(journal).toBeDefined();
    const answered = JSON.parse(await readFile(join(alice.configDirectory, 'batches', journal as string), 'utf8')).answered;
    expect(answered.length).toBeGreaterThanOrEqual(1);
    expect(answered.length).toBeLessThan(60);

    const rerun = await dss(['--json', ...args]);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(rerun.stderr).toContain('Resuming an interrupted run');
    const { summary, items } = JSON.parse(rerun.stdout);
    expect(summary).toMatchObject({ resumed: true, chunks: 60, total: 300, succeeded: 300, failed: 0 });
    expect(summary.replayedChunks).toBeGreaterThanOrEqual(answered.length);
    expect(items.map((item: { target: { id: string } }) => item.target.id)).toEqual(DEVICES);
    expect(await journals()).toEqual([]);
    expect(await activeVersions('cli-kiosk-0300')).toContain(SECOND);
  });

  it('executes a later run of the same command anew instead of replaying the first one', async () => {
    const devices = ['--devices', 'cli-kiosk-0001,cli-kiosk-0002'];
    const first = await dssJson(alice, ['deploy', `${SCENARIO}@1.1.0`, ...devices]);
    expect(first.summary).toMatchObject({ succeeded: 2, replayedChunks: 0 });
    const undeploy = await dssJson(alice, ['undeploy', `${SCENARIO}@1.1.0`, ...devices]);
    expect(undeploy.summary).toMatchObject({ succeeded: 2 });
    expect(await activeVersions('cli-kiosk-0001')).not.toContain('1.1.0');

    const again = await dssJson(alice, ['deploy', `${SCENARIO}@1.1.0`, ...devices]);
    expect(again.summary).toMatchObject({ succeeded: 2, replayedChunks: 0, resumed: false });
    expect(again.summary.runId).not.toBe(first.summary.runId);
    expect(again.items.map((item: { id: string }) => item.id)).not.toEqual(first.items.map((item: { id: string }) => item.id));
    expect(await activeVersions('cli-kiosk-0001')).toContain('1.1.0');
  });

  it('changes nothing on a dry run', async () => {
    const dry = await dssJson(alice, ['undeploy', `${SCENARIO}@${FIRST}`, '--from', devicesCsv, '--dry-run']);
    expect(dry.summary).toMatchObject({ dryRun: true, total: 300, succeeded: 300 });
    expect(dry.summary.runId).toBeUndefined();
    expect(await journals()).toEqual([]);
    const active = await allActive();
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
      if (args[1] === SCENARIO) expect(run.stderr).toContain('SCENARIO@VERSION');
    }
  });
});

describe('listings', () => {
  it('prints the active deployments with --json as the API answers them, one device or all pages', async () => {
    const one = await dssJson(alice, ['deployments', '--device', 'cli-kiosk-0001']);
    const answer = expectOk(
      await api.main.GET('/companies/{companyId}/resources/{deviceId}/deployments', {
        params: { path: { companyId: COMPANY, deviceId: 'cli-kiosk-0001' } },
      }),
    );
    expect(one).toEqual(answer);
    expect(one.items.map((item: { what: { subId: string } }) => item.what.subId)).toEqual(['1.1.0', FIRST, SECOND]);

    const all = await dssJson<any[]>(alice, ['deployments', '--all', '--limit', '250']);
    expect(all).toEqual(await allActive());
    expect(all.length).toBeGreaterThan(600);

    const table = await dss(['deployments', '--limit', '2']);
    expect(table.code).toBe(0);
    expect(table.stderr).toContain('add --all');
  });

  it('ends quietly, exit code 0, when the reader of its output closes the pipe early (as `| head -1` does)', async () => {
    // The JSON of the 600 and more active deployments made above is far larger than a pipe's buffer: the CLI is still
    // writing when the pipe closes.
    const run = await runDss(alice, ['deployments', '--all', '--json'], { onStdout: (_, child) => child.stdout?.destroy() });
    expect(run.stderr).not.toContain('EPIPE');
    noStackTrace(run.stderr);
    expect(run.code).toBe(0);
  });

  it('maps the history options to the query and prints the API answer with --json', async () => {
    const page = await dssJson(alice, [
      'history',
      '--device',
      'cli-kiosk-0001',
      '--scenario',
      SCENARIO,
      '--version',
      '1.1.0',
      '--limit',
      '2',
    ]);
    const answer = expectOk(
      await api.main.GET('/companies/{companyId}/resources/deployments/history', {
        params: { path: { companyId: COMPANY }, query: { deviceId: 'cli-kiosk-0001', scenarioId: SCENARIO, version: '1.1.0', limit: 2 } },
      }),
    );
    expect(page.items).toEqual(answer.items);
    expect(page.items.map((entry: { action: string }) => entry.action)).toEqual(['DEPLOY', 'UNDEPLOY']);
    expect(page.nextCursor).not.toBeNull();

    const all = await dssJson<any[]>(alice, [
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
    expect(all).toEqual(await allHistory({ deviceId: 'cli-kiosk-0001' }));
    expect(all.length).toBeGreaterThanOrEqual(5);
  });

  it('lists the filters with their counts as the API answers them', async () => {
    const filters = await dssJson(alice, ['filters', '--type', 'DEVICE', 'company=acme']);
    const answer = expectOk(await api.main.GET('/resources/search/filters', { params: { query: { type: 'DEVICE', company: [COMPANY] } } }));
    const fields = (body: { items: { field: string; definition: { parameters: { value: string }[] } }[] }) =>
      body.items.map((item) => [item.field, item.definition.parameters.map((parameter) => parameter.value)]);
    expect(fields(filters)).toEqual(fields(answer));
    const typeCounts = filters.items.find((item: { field: string }) => item.field === 'type').definition.parameters;
    expect(typeCounts).toContainEqual({ name: 'Device', value: 'DEVICE', count: 420 });

    const table = await dss(['filters', '--type', 'DEVICE']);
    expect(table.code).toBe(0);
    // Each filter by the display name the API gives it, then the field to search with.
    expect(table.stdout).toMatch(/│ Connection state \(connection\.state\)\s+│ DEVICE\s+│ CONNECTED/);
    for (const descriptor of answer.items) expect(table.stdout).toContain(`${descriptor.name} (${descriptor.field})`);
  });

  it('searches with filters, following every page with --all', async () => {
    const all = await dssJson<any[]>(alice, ['search', 'company=acme', 'health.mode=EMBEDDED_PLATFORM_ANDROID', '--limit', '7', '--all']);
    const android = expectOk(
      await api.main.GET('/resources/search', {
        params: { query: { company: [COMPANY], 'health.mode': ['EMBEDDED_PLATFORM_ANDROID'], pageSize: 100 } },
      }),
    );
    expect(android.total).toBeGreaterThan(7);
    expect(android.total).toBeLessThanOrEqual(100);
    expect(all.map((resource) => resource.id)).toEqual(android.resources.map((resource) => resource.id));

    const page = await dssJson(alice, ['search', 'company=acme', '--type', 'DEVICE', '--sort', 'serial:desc', '--limit', '5']);
    const answer = expectOk(
      await api.main.GET('/resources/search', {
        params: { query: { company: [COMPANY], type: ['DEVICE'], sort: 'serial', direction: 'DESC', pageSize: 5 } },
      }),
    );
    expect(page).toEqual(answer);
    expect(page.resources[0].id).toBe('cli-kiosk-0099');

    const table = await dss(['search', 'company=acme', '--global', 'CLI-42']);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/│ cli-kiosk-0042 │ DEVICE │ acme\s+│ CLI-42\s+│ CLI test store │ UNKNOWN/);

    const unknown = await dss(['search', 'colour=red']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("colour: Unknown parameter 'colour'");
  });
});
