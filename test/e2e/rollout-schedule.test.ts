/**
 * End-to-end over `npm start` (bin/local.ts): scheduled rollouts. A rollout created with `startAt` a few seconds ahead
 * is SCHEDULED and writes no deployment until then (the devices' deployment listings are read right after creation
 * and again just before `startAt`), then the rollout sweeper starts it and it deploys; one cancelled while it waits
 * never deploys, which is checked once a control rollout scheduled for the same time has started (so a sweep has run
 * after that time); a `startAt` in the past is a 400 saying what to do; `dss rollout create --start-at` schedules one.
 * The sweeper runs every 200 ms. The targets are demo devices (acme-kiosk-0101 and on), each used by one rollout.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type components, expectOk } from '../../client/index.js';
import { type DssUser, dssJson, dssUser, runDss } from './cli-runner.js';
import { clientFor, DEMO_PASSWORDS, eventually, expectError, useLocalService } from './harness.js';

const COMPANY = 'acme';
const SCENARIO = 'acme-welcome';
const VERSION = '1.0.0';
/** How far ahead the rollouts are scheduled: enough for the checks made before their start. */
const AHEAD_MS = 5_000;

const local = useLocalService({ users: ['alice'], environment: { ROLLOUT_SWEEP_INTERVAL_MS: '200' } });

type Rollout = components['schemas']['Rollout'];

const api = () => clientFor(local.service, local.tokens.alice);

/** POST a DEPLOY rollout of acme-welcome@1.0.0 on `deviceIds`, with `note` (which names it in the deployments). */
const schedule = (deviceIds: string[], note: string, startAt?: string) =>
  api().main.POST('/companies/{companyId}/resources/rollouts', {
    params: { path: { companyId: COMPANY } },
    body: {
      action: 'DEPLOY',
      what: { type: 'SCENARIO', id: SCENARIO, subId: VERSION },
      targets: { ids: deviceIds },
      note,
      ...(startAt === undefined ? {} : { startAt }),
    },
  });

const getRollout = async (id: string): Promise<Rollout> =>
  expectOk(
    await api().main.GET('/companies/{companyId}/resources/rollouts/{rolloutId}', {
      params: { path: { companyId: COMPANY, rolloutId: id } },
    }),
  );

/** The active deployments of `deviceId` that the rollout noted `note` made, from the device's deployments listing. */
async function deployedBy(deviceId: string, note: string) {
  const page = expectOk(
    await api().main.GET('/companies/{companyId}/resources/{deviceId}/deployments', {
      params: { path: { companyId: COMPANY, deviceId }, query: { limit: 1000 } },
    }),
  );
  return page.items.filter((item) => item.note === note);
}

/** How many of `deviceIds` have a deployment of the rollout noted `note`. */
async function deployedCount(deviceIds: readonly string[], note: string): Promise<number> {
  const found = await Promise.all(deviceIds.map((deviceId) => deployedBy(deviceId, note)));
  return found.filter((items) => items.length > 0).length;
}

/** Resolves at `at` (epoch ms), to look once more just before a rollout's time; asserts nothing itself. */
const until = (at: number) => new Promise((done) => setTimeout(done, Math.max(0, at - Date.now())));

describe('a scheduled rollout', () => {
  it('is SCHEDULED and writes no deployment before startAt, then starts and deploys', async () => {
    const devices = ['acme-kiosk-0101', 'acme-kiosk-0102'];
    const note = `scheduled ${Date.now()}`;
    const startAt = new Date(Date.now() + AHEAD_MS).toISOString();
    const created = expectOk(await schedule(devices, note, startAt));
    expect(created).toMatchObject({ state: 'SCHEDULED', startAt, targets: 2, waves: [{ size: 2, state: 'PENDING', counts: {} }] });
    expect(await deployedCount(devices, note)).toBe(0);
    const listed = expectOk(
      await api().main.GET('/companies/{companyId}/resources/rollouts', { params: { path: { companyId: COMPANY } } }),
    );
    expect(listed.items.find((item) => item.id === created.id)).toMatchObject({ state: 'SCHEDULED', startAt });

    // Just before its time: still SCHEDULED, still nothing deployed.
    await until(Date.parse(startAt) - 1_000);
    expect(await deployedCount(devices, note)).toBe(0);
    expect((await getRollout(created.id)).state).toBe('SCHEDULED');

    await eventually(async () => (await deployedCount(devices, note)) === devices.length, 'the scheduled rollout to deploy');
    const started = await getRollout(created.id);
    expect(started).toMatchObject({ state: 'RUNNING', startAt });
    expect(started.waves[0]?.counts.SUCCESS).toBe(2);
    const wave = started.waves[0] as components['schemas']['RolloutWave'];
    expect(Date.parse(wave.startedAt as string)).toBeGreaterThanOrEqual(Date.parse(startAt));
    for (const deviceId of devices) {
      const [deployment] = await deployedBy(deviceId, note);
      expect(Date.parse(deployment?.deployedAt as string)).toBeGreaterThanOrEqual(Date.parse(startAt));
    }
  }, 60_000);

  it('cancelled before its time never deploys, while a control rollout scheduled for the same time does', async () => {
    const cancelledDevices = ['acme-kiosk-0103', 'acme-kiosk-0104'];
    const controlDevices = ['acme-kiosk-0105'];
    const stamp = Date.now();
    const startAt = new Date(stamp + AHEAD_MS).toISOString();
    const doomed = expectOk(await schedule(cancelledDevices, `cancelled ${stamp}`, startAt));
    const control = expectOk(await schedule(controlDevices, `control ${stamp}`, startAt));

    const cancelled = expectOk(
      await api().main.POST('/companies/{companyId}/resources/rollouts/{rolloutId}/cancel', {
        params: { path: { companyId: COMPANY, rolloutId: doomed.id } },
      }),
    );
    expect(cancelled).toMatchObject({ state: 'CANCELLED', startAt, waves: [{ state: 'CANCELLED' }] });
    // Pause does not apply to a scheduled rollout.
    const paused = expectError(
      await api().main.POST('/companies/{companyId}/resources/rollouts/{rolloutId}/pause', {
        params: { path: { companyId: COMPANY, rolloutId: control.id } },
      }),
      409,
    );
    expect(paused.detail).toContain('is SCHEDULED; only a RUNNING rollout can be paused.');

    // The control's start shows that a sweep has run after startAt.
    await eventually(
      async () => (await deployedCount(controlDevices, `control ${stamp}`)) === controlDevices.length,
      'the control rollout to deploy',
    );
    expect((await getRollout(control.id)).state).toBe('RUNNING');
    expect(await deployedCount(cancelledDevices, `cancelled ${stamp}`)).toBe(0);
    const after = await getRollout(doomed.id);
    expect(after.state).toBe('CANCELLED');
    expect(after.waves[0]).toMatchObject({ state: 'CANCELLED', counts: {} });
  }, 60_000);

  it('is refused with a 400 saying what to do when startAt is past, and nothing is created', async () => {
    const note = `past ${Date.now()}`;
    const problem = expectError(await schedule(['acme-kiosk-0106'], note, new Date(Date.now() - 60_000).toISOString()), 400);
    expect(problem.detail).toMatch(/is not in the future .*give a later time, or leave startAt out/);
    expect(problem.errors).toEqual([{ path: '/startAt', message: 'must be in the future' }]);
    const listed = expectOk(
      await api().main.GET('/companies/{companyId}/resources/rollouts', { params: { path: { companyId: COMPANY } } }),
    );
    expect(listed.items.some((item) => item.note === note)).toBe(false);
  });
});

describe('dss rollout create --start-at', () => {
  let work: string;
  let alice: DssUser;

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'dss-rollout-schedule-'));
    alice = await dssUser(local.service, { configDirectory: join(work, 'config-alice') });
    const login = await runDss(alice, ['login', '--username', 'alice', '--password-stdin'], { stdin: `${DEMO_PASSWORDS.alice}\n` });
    expect(login.code, login.stderr).toBe(0);
  }, 120_000);

  afterAll(async () => {
    if (work !== undefined) await rm(work, { recursive: true, force: true });
  });

  it('creates a SCHEDULED rollout that get and list show with its start', async () => {
    const startAt = new Date(Date.now() + 60 * 60_000);
    const offset = `${startAt.toISOString().slice(0, 19)}+00:00`;
    const created = await dssJson(alice, [
      'rollout',
      'create',
      `${SCENARIO}@${VERSION}`,
      '--devices',
      'acme-kiosk-0107',
      '--start-at',
      offset,
    ]);
    expect(created).toMatchObject({ state: 'SCHEDULED', startAt: `${startAt.toISOString().slice(0, 19)}.000Z` });
    const get = await runDss(alice, ['rollout', 'get', created.id]);
    expect(get.code, get.stderr).toBe(0);
    expect(get.stdout).toMatch(/│ state +│ SCHEDULED/);
    expect(get.stdout).toMatch(/│ startAt +│ \d{4}-\d\d-\d\dT/);
    const list = await runDss(alice, ['rollout', 'list']);
    expect(list.stdout).toContain('START AT');
    expect(list.stdout).toMatch(new RegExp(`${created.id} +│ SCHEDULED`));

    const bad = await runDss(alice, [
      'rollout',
      'create',
      `${SCENARIO}@${VERSION}`,
      '--devices',
      'acme-kiosk-0107',
      '--start-at',
      'tonight',
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--start-at');
    expect((await runDss(alice, ['rollout', 'cancel', created.id])).code).toBe(0);
  }, 90_000);
});
