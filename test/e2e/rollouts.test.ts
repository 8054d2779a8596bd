/**
 * End-to-end over `npm start` (bin/local.ts), as an operator rolls a scenario out to a fleet: simulated kiosks
 * (simulator/fleet.ts: register, token, health, pull, download, report) are selected by a search query, deployed to
 * wave by wave, each wave waiting for its devices' INSTALLED reports; a fleet whose installs fail pauses its rollout
 * after the first wave, which resume and cancel then drive; the service is killed mid-rollout and the rollout goes on
 * after the restart; a rollout of one company never touches another's devices. The rollout sweeper runs every 200 ms.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { type components, expectOk } from '../../client/index.js';
import type { SimulatedFleet } from '../../simulator/fleet.js';
import { clientFor, dynamoDbLocalStopped, eventually, useLocalService } from './harness.js';
import { startSimulatedKiosks } from './simulated-kiosks.js';

const COMPANY = 'acme';
const SCENARIO = 'acme-welcome';
/** The simulator's health reports carry version codes 40, 41 and 42; the demo devices' are five digits long. */
const SIMULATED_QUERY = 'connection.state=CONNECTED&health.versionCode=40&health.versionCode=41&health.versionCode=42';
/** The same selection as a typed search query. */
const SIMULATED_SEARCH = { 'connection.state': ['CONNECTED' as const], 'health.versionCode': ['40', '41', '42'] };
const ENVIRONMENT = { ROLLOUT_SWEEP_INTERVAL_MS: '200', ROLLOUT_CHUNK_TIMEOUT_SECONDS: '2' };

const local = useLocalService({ users: ['alice', 'bob'], ownDynamoDbPort: true, environment: ENVIRONMENT });
const fleets: SimulatedFleet[] = [];

type Rollout = components['schemas']['Rollout'];

/** The typed client on the running service (it changes at the restart) as the holder of `token`. */
const as = (token: string) => clientFor(local.service, token);

/** POST a rollout of COMPANY as alice. */
const createRollout = (body: components['schemas']['RolloutCreateBody']) =>
  as(local.tokens.alice).main.POST('/companies/{companyId}/resources/rollouts', { params: { path: { companyId: COMPANY } }, body });

/** POST .../rollouts/{id}/pause, resume or cancel as alice. */
const control = (id: string, verb: 'pause' | 'resume' | 'cancel') =>
  as(local.tokens.alice).main.POST(`/companies/{companyId}/resources/rollouts/{rolloutId}/${verb}`, {
    params: { path: { companyId: COMPANY, rolloutId: id } },
  });

/** The history of one scenario version of COMPANY, up to `limit` entries. */
const versionHistory = async (version: string, limit: number) =>
  expectOk(
    await as(local.tokens.alice).main.GET('/companies/{companyId}/resources/deployments/history', {
      params: { path: { companyId: COMPANY }, query: { scenarioId: SCENARIO, version, limit } },
    }),
  ).items;

/** Starts simulated kiosks of COMPANY (simulated-kiosks.ts), stopped after the file. */
async function startFleet(prefix: string, count: number, failureRate: number): Promise<SimulatedFleet> {
  const fleet = await startSimulatedKiosks(local, { company: COMPANY, prefix, count, failureRate });
  fleets.push(fleet);
  return fleet;
}

async function stopFleet(fleet: SimulatedFleet): Promise<void> {
  await fleet.stop();
  fleets.splice(fleets.indexOf(fleet), 1);
}

const fleetIds = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, index) => `${prefix}${String(index + 1).padStart(2, '0')}`);

async function getRollout(id: string): Promise<Rollout> {
  return expectOk(
    await as(local.tokens.alice).main.GET('/companies/{companyId}/resources/rollouts/{rolloutId}', {
      params: { path: { companyId: COMPANY, rolloutId: id } },
    }),
  );
}

/** Polls the rollout until `check` holds; returns every distinct wave-state picture seen on the way. */
async function waitFor(id: string, check: (rollout: Rollout) => boolean, what: string, timeoutMs = 60_000): Promise<Rollout> {
  let last: Rollout | undefined;
  try {
    await eventually(
      async () => {
        last = await getRollout(id);
        return check(last);
      },
      what,
      timeoutMs,
    );
  } catch (error) {
    throw new Error(`${(error as Error).message} Last seen: ${JSON.stringify(last)}`);
  }
  return last as Rollout;
}

/** The active deployments of `deviceId` of `version`. */
async function activeVersions(deviceId: string): Promise<string[]> {
  const result = expectOk(
    await as(local.tokens.alice).main.GET('/companies/{companyId}/resources/{deviceId}/deployments', {
      params: { path: { companyId: COMPANY, deviceId } },
    }),
  );
  return result.items.filter((item) => item.what.id === SCENARIO).map((item) => item.what.subId);
}

afterAll(async () => {
  await Promise.all(fleets.map((fleet) => fleet.stop()));
});

describe('a rollout over the fleet a search selects', () => {
  it('resolves its targets once from the query, and completes wave by wave as the devices report INSTALLED', async () => {
    await startFleet('acme-wave-', 12, 0);
    await eventually(async () => {
      const found = await as(local.tokens.alice).main.GET('/resources/search', {
        params: { query: { type: ['DEVICE'], ...SIMULATED_SEARCH, pageSize: 100 } },
      });
      return found.response.status === 200 && found.data?.total === 12;
    }, 'the 12 simulated kiosks CONNECTED in search');

    const answer = await createRollout({
      action: 'DEPLOY',
      what: { type: 'SCENARIO', id: SCENARIO, subId: '1.0.0' },
      targets: { query: SIMULATED_QUERY },
      waves: [2, 4],
      note: 'canary then widen',
    });
    expect(answer.response.status).toBe(202);
    const created = expectOk(answer);
    expect(answer.response.headers.get('location')).toBe(`/companies/${COMPANY}/resources/rollouts/${created.id}`);
    expect(created.targets).toBe(12);
    expect(created.waves.map((wave) => wave.size)).toEqual([2, 4, 6]);

    // Waves run in order: a later wave never starts before the earlier one completed.
    const seen: string[] = [];
    const done = await waitFor(
      created.id,
      (rollout) => {
        const picture = rollout.waves.map((wave) => wave.state[0]).join('');
        if (seen.at(-1) !== picture) seen.push(picture);
        return rollout.state === 'COMPLETED';
      },
      'the rollout COMPLETED',
    );
    for (const picture of seen) expect(picture).toMatch(/^C*(R|P)?P*$/);
    expect(seen.length).toBeGreaterThanOrEqual(3);
    expect(done.waves.map((wave) => wave.state)).toEqual(['COMPLETED', 'COMPLETED', 'COMPLETED']);
    expect(done.waves.map((wave) => [wave.counts.SUCCESS, wave.counts.INSTALLED, wave.counts.FAILED ?? 0])).toEqual([
      [2, 2, 0],
      [4, 4, 0],
      [6, 6, 0],
    ]);
    for (const deviceId of fleetIds('acme-wave-', 12)) expect(await activeVersions(deviceId)).toEqual(['1.0.0']);

    // Ordinary deployments: in the history, made by the rollout's creator with its note, in wave order.
    const history = await versionHistory('1.0.0', 100);
    const deploys = history.filter((entry) => entry.kind === 'ACTION' && entry.action === 'DEPLOY' && entry.state === 'SUCCESS');
    expect(deploys).toHaveLength(12);
    for (const entry of deploys) expect(entry).toMatchObject({ by: expect.any(String), note: 'canary then widen' });
    const statuses = history.filter((entry) => entry.kind === 'DEVICE_STATUS' && entry.deviceStatus.state === 'INSTALLED');
    expect(statuses.length).toBeGreaterThanOrEqual(12);

    const listed = expectOk(
      await as(local.tokens.alice).main.GET('/companies/{companyId}/resources/rollouts', { params: { path: { companyId: COMPANY } } }),
    );
    expect(listed.items.map((rollout) => rollout.id)).toContain(created.id);
  }, 120_000);

  it('pauses after a wave whose failures exceed the threshold, deploys nothing further, and resumes and cancels on request', async () => {
    await startFleet('acme-flaky-', 8, 1);
    const ids = fleetIds('acme-flaky-', 8);

    const answer = await createRollout({
      action: 'DEPLOY',
      what: { type: 'SCENARIO', id: SCENARIO, subId: '1.1.0' },
      targets: { ids },
      waves: [2, 2],
      failureThreshold: 0.1,
    });
    expect(answer.response.status).toBe(202);
    const created = expectOk(answer);
    const paused = await waitFor(created.id, (rollout) => rollout.state === 'PAUSED', 'the rollout PAUSED by failures');
    expect(paused.waves.map((wave) => wave.state)).toEqual(['COMPLETED', 'PENDING', 'PENDING']);
    expect(paused.waves[0]?.counts).toMatchObject({ SUCCESS: 2, FAILED: 2 });
    expect(paused.pausedReason).toMatch(/FAILED/);
    // Sorted by device id: the first wave is the first two; nothing was deployed to the six others.
    expect(await activeVersions(ids[0] as string)).toEqual(['1.1.0']);
    for (const deviceId of ids.slice(2)) expect(await activeVersions(deviceId)).toEqual([]);

    const resumed = await control(created.id, 'resume');
    expect(resumed.response.status).toBe(200);
    expect(expectOk(resumed).state).toBe('RUNNING');
    expect(expectOk(resumed).pausedReason).toBeUndefined();
    const pausedAgain = await waitFor(
      created.id,
      (rollout) => rollout.state === 'PAUSED' && rollout.waves[1]?.state === 'COMPLETED',
      'the second wave written, failed and paused',
    );
    expect(pausedAgain.waves[1]?.counts).toMatchObject({ SUCCESS: 2, FAILED: 2 });
    expect(pausedAgain.waves[2]?.state).toBe('PENDING');

    const cancelled = await control(created.id, 'cancel');
    expect(cancelled.response.status).toBe(200);
    expect(expectOk(cancelled).state).toBe('CANCELLED');
    // The last wave was never written.
    for (const deviceId of ids.slice(4)) expect(await activeVersions(deviceId)).toEqual([]);
    const again = await control(created.id, 'resume');
    expect(again.response.status).toBe(409);
    expect(again.error?.detail).toMatch(/CANCELLED/);
  }, 120_000);

  it('pauses on request: no wave starts while paused, and a resumed rollout finishes', async () => {
    const ids = fleetIds('acme-wave-', 12);
    const answer = await createRollout({
      action: 'UNDEPLOY',
      what: { type: 'SCENARIO', id: SCENARIO, subId: '1.0.0' },
      targets: { ids },
      waves: [1, 1, 1],
    });
    expect(answer.response.status).toBe(202);
    const created = expectOk(answer);
    const paused = await control(created.id, 'pause');
    expect(paused.response.status).toBe(200);
    expect(expectOk(paused).state).toBe('PAUSED');
    expect(expectOk(paused).pausedReason).toMatch(/alice|Paused/);
    const twice = await control(created.id, 'pause');
    expect(twice.response.status).toBe(409);
    // What is checked is that nothing happens: a real wait, over several sweeps (every 200 ms), none of which may move a
    // paused rollout on.
    await new Promise((done) => setTimeout(done, 1_500));
    const still = await getRollout(created.id);
    expect(still.state).toBe('PAUSED');
    expect(still.waves.filter((wave) => wave.state === 'COMPLETED').length).toBeLessThanOrEqual(1);

    expect((await control(created.id, 'resume')).response.status).toBe(200);
    const done = await waitFor(created.id, (rollout) => rollout.state === 'COMPLETED', 'the undeploy rollout COMPLETED');
    const written = done.waves.reduce((sum, wave) => sum + (wave.counts.SUCCESS ?? 0), 0);
    expect(written).toBe(12);
    for (const deviceId of ids) expect(await activeVersions(deviceId)).toEqual([]);
  }, 120_000);
});

describe('a rollout survives the service', () => {
  it('goes on where it was after the process is killed mid-rollout', async () => {
    const fleet = fleets.find((candidate) => candidate.progress().devices === 12) as SimulatedFleet;
    // The devices fall silent: the first wave is written but waits for their reports.
    await stopFleet(fleet);
    const ids = fleetIds('acme-wave-', 12);
    const answer = await createRollout({
      action: 'DEPLOY',
      what: { type: 'SCENARIO', id: SCENARIO, subId: '1.1.0' },
      targets: { ids },
      waves: [3],
    });
    expect(answer.response.status).toBe(202);
    const created = expectOk(answer);
    await waitFor(created.id, (rollout) => rollout.waves[0]?.counts.SUCCESS === 3, 'the first wave written');

    const killed = local.service;
    process.kill(killed.pid, 'SIGKILL');
    await dynamoDbLocalStopped(local.dynamoDbPort);
    await local.restart();
    const after = await getRollout(created.id);
    expect(after.state).toBe('RUNNING');
    expect(after.waves[0]?.counts.SUCCESS).toBe(3);

    await startFleet('acme-wave-', 12, 0);
    const done = await waitFor(created.id, (rollout) => rollout.state === 'COMPLETED', 'the rollout COMPLETED after the restart', 90_000);
    expect(done.waves.map((wave) => [wave.counts.SUCCESS, wave.counts.INSTALLED])).toEqual([
      [3, 3],
      [9, 9],
    ]);
    // Each device got exactly one DEPLOY of the version: nothing was redone twice, nothing lost.
    const deploys = (await versionHistory('1.1.0', 500))
      .filter((entry) => entry.kind === 'ACTION' && entry.action === 'DEPLOY' && entry.state === 'SUCCESS')
      .map((entry) => entry.target.id)
      .filter((deviceId) => deviceId.startsWith('acme-wave-'));
    expect(deploys.sort()).toEqual(ids);
  }, 240_000);
});

describe('a rollout stays in its company', () => {
  it('never touches another company: its query is restricted, another company in it is refused, and ids of another company are not found', async () => {
    const connected = expectOk(
      await as(local.tokens.alice).main.GET('/resources/search', {
        params: { query: { type: ['DEVICE'], company: ['acme'], 'connection.state': ['CONNECTED'], pageSize: 1 } },
      }),
    );
    const answer = await createRollout({
      action: 'UNDEPLOY',
      what: { type: 'SCENARIO', id: SCENARIO, subId: '1.0.0' },
      targets: { query: 'connection.state=CONNECTED' },
    });
    expect(answer.response.status).toBe(202);
    const created = expectOk(answer);
    expect(created.targets).toBe(connected.total);

    const foreign = await createRollout({
      action: 'UNDEPLOY',
      what: { type: 'SCENARIO', id: SCENARIO, subId: '1.0.0' },
      targets: { query: 'company=globex' },
    });
    expect(foreign.response.status).toBe(400);

    const byIdsAnswer = await createRollout({
      action: 'DEPLOY',
      what: { type: 'SCENARIO', id: SCENARIO, subId: '1.0.0' },
      targets: { ids: ['globex-kiosk-0001', 'globex-kiosk-0002'] },
      waveTimeoutSeconds: 60,
    });
    expect(byIdsAnswer.response.status).toBe(202);
    const byIds = expectOk(byIdsAnswer);
    const done = await waitFor(byIds.id, (rollout) => (rollout.waves[0]?.counts.TARGET_NOT_FOUND ?? 0) === 2, 'both ids not found');
    expect(done.waves[0]?.counts.SUCCESS ?? 0).toBe(0);
    const globexActive = expectOk(
      await as(local.tokens.bob).main.GET('/companies/{companyId}/resources/{deviceId}/deployments', {
        params: { path: { companyId: 'globex', deviceId: 'globex-kiosk-0001' } },
      }),
    );
    expect(globexActive.items.some((item) => item.what.id === SCENARIO)).toBe(false);

    const foreignRead = await as(local.tokens.bob).main.GET('/companies/{companyId}/resources/rollouts/{rolloutId}', {
      params: { path: { companyId: COMPANY, rolloutId: created.id } },
    });
    expect(foreignRead.response.status).toBe(403);
    const globexList = expectOk(
      await as(local.tokens.bob).main.GET('/companies/{companyId}/resources/rollouts', { params: { path: { companyId: 'globex' } } }),
    );
    expect(globexList.items).toEqual([]);
  }, 120_000);
});
