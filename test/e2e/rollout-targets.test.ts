/**
 * End-to-end over `npm start` (bin/local.ts): why devices of a rollout failed. Simulated kiosks (simulator/fleet.ts),
 * two whose installs always fail (reported FAILED with the simulator's message) and three that install, plus an id
 * no device has, are rolled out to in two waves; the rollout's targets are then listed through the typed client
 * (every answer checked against the OpenAPI document by the harness), filtered and paged, refused with a bad filter
 * or to another company, and printed by `dss rollout targets`. The rollout sweeper runs every 200 ms.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type components, expectOk } from '../../client/index.js';
import type { SimulatedFleet } from '../../simulator/fleet.js';
import { type DssUser, dssJson, dssUser, runDss } from './cli-runner.js';
import { call, clientFor, DEMO_PASSWORDS, eventually, expectError, useLocalService } from './harness.js';
import { startSimulatedKiosks } from './simulated-kiosks.js';

const COMPANY = 'acme';
const SCENARIO = 'acme-welcome';
const ENVIRONMENT = { ROLLOUT_SWEEP_INTERVAL_MS: '200', ROLLOUT_CHUNK_TIMEOUT_SECONDS: '2' };
/** The simulator's message on a failed install. */
const FAILURE_MESSAGE = 'Simulated installation failure.';

const local = useLocalService({ users: ['alice', 'bob'], environment: ENVIRONMENT });
const fleets: SimulatedFleet[] = [];

type RolloutTarget = components['schemas']['RolloutTarget'];
type TargetQuery = NonNullable<Parameters<typeof listTargets>[1]>;

const as = (token: string) => clientFor(local.service, token);

const BAD = ['acme-tbad-01', 'acme-tbad-02'];
const GOOD = ['acme-tgood-01', 'acme-tgood-02', 'acme-tgood-03'];
const MISSING = 'acme-tmissing-01';
/** Sorted by id, as the rollout deploys them: wave 1 is the first three. */
const TARGETS = [...BAD, ...GOOD, MISSING];

let rolloutId: string;
let alice: DssUser;

/** Starts simulated kiosks of COMPANY (simulated-kiosks.ts), stopped after the file. */
async function startFleet(prefix: string, count: number, failureRate: number): Promise<void> {
  fleets.push(await startSimulatedKiosks(local, { company: COMPANY, prefix, count, failureRate }));
}

/** One page of the rollout's targets as alice. */
async function listTargets(
  id: string,
  query: {
    wave?: number;
    state?: 'SUCCESS' | 'FAILURE' | 'PENDING' | 'UNKNOWN';
    cause?: 'TARGET_NOT_FOUND';
    deviceStatus?: 'FAILED' | 'INSTALLED';
    limit?: number;
    cursor?: string;
  } = {},
) {
  return as(local.tokens.alice).main.GET('/companies/{companyId}/resources/rollouts/{rolloutId}/targets', {
    params: { path: { companyId: COMPANY, rolloutId: id }, query },
  });
}

/** Every target of a listing, followed through its cursors. */
async function allTargets(query: Omit<TargetQuery, 'cursor'> = {}): Promise<RolloutTarget[]> {
  const items: RolloutTarget[] = [];
  let cursor: string | undefined;
  do {
    const page = expectOk(await listTargets(rolloutId, { ...query, ...(cursor === undefined ? {} : { cursor }) }));
    items.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return items;
}

beforeAll(async () => {
  await startFleet('acme-tbad-', 2, 1);
  await startFleet('acme-tgood-', 3, 0);
  const answer = await as(local.tokens.alice).main.POST('/companies/{companyId}/resources/rollouts', {
    params: { path: { companyId: COMPANY } },
    body: {
      action: 'DEPLOY',
      what: { type: 'SCENARIO', id: SCENARIO, subId: '1.1.0' },
      targets: { ids: TARGETS },
      waves: [3],
      // Two of three failing must not pause it: the listing is about a finished rollout.
      failureThreshold: 1,
      note: 'why devices failed',
    },
  });
  expect(answer.response.status).toBe(202);
  rolloutId = expectOk(answer).id;
  await eventually(async () => {
    const rollout = expectOk(
      await as(local.tokens.alice).main.GET('/companies/{companyId}/resources/rollouts/{rolloutId}', {
        params: { path: { companyId: COMPANY, rolloutId } },
      }),
    );
    return rollout.state === 'COMPLETED';
  }, 'the rollout COMPLETED on its devices’ reports');
  // The statuses are on the slots as soon as each report is answered; the FAILED ones are what the tests look for.
  await eventually(async () => (await allTargets({ deviceStatus: 'FAILED' })).length === BAD.length, 'both failures reported');
  alice = await dssUser(local.service);
  const login = await runDss(alice, ['login', '--username', 'alice', '--password-stdin'], { stdin: `${DEMO_PASSWORDS.alice}\n` });
  expect(login.code, login.stderr).toBe(0);
}, 180_000);

afterAll(async () => {
  await Promise.all(fleets.map((fleet) => fleet.stop()));
});

describe("a rollout's targets", () => {
  it('lists every target once with its wave and result, the missing device with its cause', async () => {
    const items = await allTargets();
    expect(items.map((item) => item.deviceId)).toEqual(TARGETS);
    expect(items.map((item) => item.wave)).toEqual([1, 1, 1, 2, 2, 2]);
    for (const item of items.filter((target) => target.deviceId !== MISSING))
      expect(item.result).toEqual({ state: 'SUCCESS', cause: null });
    expect(items.find((item) => item.deviceId === MISSING)).toEqual({
      deviceId: MISSING,
      wave: 2,
      result: { state: 'FAILURE', cause: 'TARGET_NOT_FOUND' },
    });
    for (const item of items.filter((target) => GOOD.includes(target.deviceId))) expect(item.deviceStatus?.state).toBe('INSTALLED');
    // Paged two by two, every target still comes once.
    expect((await allTargets({ limit: 2 })).map((item) => item.deviceId)).toEqual(TARGETS);
  });

  it('filters the devices that reported FAILED, with their message', async () => {
    const failed = await allTargets({ deviceStatus: 'FAILED' });
    expect(failed.map((item) => item.deviceId)).toEqual(BAD);
    for (const item of failed) {
      expect(item.wave).toBe(1);
      expect(item.deviceStatus).toMatchObject({ state: 'FAILED', message: FAILURE_MESSAGE });
    }
    expect((await allTargets({ cause: 'TARGET_NOT_FOUND' })).map((item) => item.deviceId)).toEqual([MISSING]);
    expect((await allTargets({ state: 'FAILURE' })).map((item) => item.deviceId)).toEqual([MISSING]);
  });

  it('lists one wave with wave=N', async () => {
    expect((await allTargets({ wave: 1 })).map((item) => item.deviceId)).toEqual(TARGETS.slice(0, 3));
    expect((await allTargets({ wave: 2, deviceStatus: 'INSTALLED' })).map((item) => item.deviceId)).toEqual(GOOD.slice(1));
  });

  it('refuses a bad filter value with a 400 problem naming it, and a wave the rollout does not have', async () => {
    const base = `${local.service.api}/companies/${COMPANY}/resources/rollouts/${rolloutId}/targets`;
    const bad = await call(`${base}?deviceStatus=BROKEN`, { token: local.tokens.alice });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type') ?? '').toMatch(/^application\/problem\+json\b/);
    expect(JSON.stringify(bad.body)).toContain('deviceStatus');
    const badWave = await call(`${base}?wave=0`, { token: local.tokens.alice });
    expect(badWave.status).toBe(400);
    const beyond = expectError(await listTargets(rolloutId, { wave: 3 }), 400);
    expect(beyond.detail).toMatch(/2 waves/);
  });

  it('answers as the other rollout routes do for another company: 403 outside the token, 404 in the caller’s own', async () => {
    const foreign = await as(local.tokens.bob).main.GET('/companies/{companyId}/resources/rollouts/{rolloutId}/targets', {
      params: { path: { companyId: COMPANY, rolloutId } },
    });
    expectError(foreign, 403);
    const elsewhere = await as(local.tokens.bob).main.GET('/companies/{companyId}/resources/rollouts/{rolloutId}/targets', {
      params: { path: { companyId: 'globex', rolloutId } },
    });
    expectError(elsewhere, 404);
  });

  it('prints the failed devices with `dss rollout targets --device-status FAILED`', async () => {
    const run = await runDss(alice, ['rollout', 'targets', rolloutId, '--device-status', 'FAILED', '--all']);
    expect(run.code, run.stderr).toBe(0);
    for (const deviceId of BAD) expect(run.stdout).toContain(deviceId);
    for (const deviceId of [...GOOD, MISSING]) expect(run.stdout).not.toContain(deviceId);
    expect(run.stdout).toContain(FAILURE_MESSAGE);
    expect(run.stdout).toMatch(/DEVICE.*WAVE.*RESULT.*CAUSE.*STATUS.*MESSAGE/);
    const json = await dssJson<{ items: RolloutTarget[]; nextCursor: string | null }>(alice, [
      'rollout',
      'targets',
      rolloutId,
      '--device-status',
      'FAILED',
      '--all',
    ]);
    expect(json).toEqual({ items: await allTargets({ deviceStatus: 'FAILED' }), nextCursor: null });
    const refused = await runDss(alice, ['rollout', 'targets', rolloutId, '--device-status', 'BROKEN']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/deviceStatus/);
  });
});
