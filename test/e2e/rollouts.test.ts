/**
 * End-to-end over `npm start` (bin/local.ts), as an operator rolls a scenario out to a fleet: simulated kiosks
 * (simulator/fleet.ts: register, token, health, pull, download, report) are selected by a search query, deployed to
 * wave by wave, each wave waiting for its devices' INSTALLED reports; a fleet whose installs fail pauses its rollout
 * after the first wave, which resume and cancel then drive; the service is killed mid-rollout and the rollout goes on
 * after the restart; a rollout of one company never touches another's devices. The rollout sweeper runs every 200 ms.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../functions/local/free-port.js';
import { SimulatedFleet } from '../../simulator/fleet.js';
import {
  call,
  DEMO_PASSWORDS,
  dynamoDbLocalStopped,
  eventually,
  type LocalService,
  newServiceSettings,
  removeDataDirectory,
  type ServiceSettings,
  startService,
  tokenFor,
} from './harness.js';

const COMPANY = 'acme';
const SCENARIO = 'acme-welcome';
/** The simulator's health reports carry version codes 40, 41 and 42; the demo devices' are five digits long. */
const SIMULATED_QUERY = 'connection.state=CONNECTED&health.versionCode=40&health.versionCode=41&health.versionCode=42';
const ENVIRONMENT = { ROLLOUT_SWEEP_INTERVAL_MS: '200', ROLLOUT_CHUNK_TIMEOUT_SECONDS: '2' };

let settings: ServiceSettings;
let service: LocalService;
let alice: string;
let bob: string;
let dynamoPort: number;
const fleets: SimulatedFleet[] = [];

interface Wave {
  size: number;
  state: 'PENDING' | 'RUNNING' | 'COMPLETED';
  counts: Record<string, number>;
}
interface Rollout {
  id: string;
  state: 'RUNNING' | 'PAUSED' | 'COMPLETED' | 'CANCELLED';
  targets: number;
  waves: Wave[];
  pausedReason?: string;
}

const rollouts = (suffix = '', company = COMPANY) => `${service.api}/companies/${company}/resources/rollouts${suffix}`;

/** A fleet of `count` simulated kiosks `{prefix}{n}` reporting every 300 ms, installing whatever they are given. */
async function startFleet(prefix: string, count: number, failureRate: number): Promise<SimulatedFleet> {
  const fleet = new SimulatedFleet({
    baseUrl: service.api,
    authUrl: service.auth,
    username: 'alice',
    password: DEMO_PASSWORDS.alice,
    company: COMPANY,
    devices: count,
    idPrefix: prefix,
    idDigits: 2,
    healthIntervalMs: 300,
    pullIntervalMs: 300,
    failureRate,
    silenceRate: 0,
    healthChangeRate: 0,
    credentialsFile: join(settings.dataDirectory, `fleet-${prefix}.json`),
  });
  await fleet.start();
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
  const result = await call<Rollout>(rollouts(`/${id}`), { token: alice });
  expect(result.status).toBe(200);
  return result.body;
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
  const result = await call(`${service.api}/companies/${COMPANY}/resources/${deviceId}/deployments`, { token: alice });
  expect(result.status).toBe(200);
  return (result.body.items as { what: { id: string; subId: string } }[])
    .filter((item) => item.what.id === SCENARIO)
    .map((item) => item.what.subId);
}

beforeAll(async () => {
  settings = await newServiceSettings();
  dynamoPort = await freePort();
  service = await startService(settings, { environment: { ...ENVIRONMENT, DYNAMODB_PORT: String(dynamoPort) } });
  alice = await tokenFor(service, 'alice');
  bob = await tokenFor(service, 'bob');
}, 120_000);

afterAll(async () => {
  await Promise.all(fleets.map((fleet) => fleet.stop()));
  await service?.stop();
  await removeDataDirectory(settings);
});

describe('a rollout over the fleet a search selects', () => {
  it('resolves its targets once from the query, and completes wave by wave as the devices report INSTALLED', async () => {
    await startFleet('acme-wave-', 12, 0);
    await eventually(async () => {
      const found = await call(`${service.api}/resources/search?type=DEVICE&${SIMULATED_QUERY}&pageSize=100`, { token: alice });
      return found.status === 200 && found.body.total === 12;
    }, 'the 12 simulated kiosks CONNECTED in search');

    const created = await call<Rollout>(rollouts(), {
      method: 'POST',
      token: alice,
      json: {
        action: 'DEPLOY',
        what: { type: 'SCENARIO', id: SCENARIO, subId: '1.0.0' },
        targets: { query: SIMULATED_QUERY },
        waves: [2, 4],
        note: 'canary then widen',
      },
    });
    expect(created.status).toBe(202);
    expect(created.headers.get('location')).toBe(`/companies/${COMPANY}/resources/rollouts/${created.body.id}`);
    expect(created.body.targets).toBe(12);
    expect(created.body.waves.map((wave) => wave.size)).toEqual([2, 4, 6]);

    // Waves run in order: a later wave never starts before the earlier one completed.
    const seen: string[] = [];
    const done = await waitFor(
      created.body.id,
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
    const history = await call(
      `${service.api}/companies/${COMPANY}/resources/deployments/history?scenarioId=${SCENARIO}&version=1.0.0&limit=100`,
      { token: alice },
    );
    const deploys = (history.body.items as { kind: string; action?: string; state?: string; by: string; note?: string }[]).filter(
      (entry) => entry.kind === 'ACTION' && entry.action === 'DEPLOY' && entry.state === 'SUCCESS',
    );
    expect(deploys).toHaveLength(12);
    for (const entry of deploys) expect(entry).toMatchObject({ by: expect.any(String), note: 'canary then widen' });
    const statuses = (history.body.items as { kind: string; deviceStatus?: { state: string } }[]).filter(
      (entry) => entry.kind === 'DEVICE_STATUS' && entry.deviceStatus?.state === 'INSTALLED',
    );
    expect(statuses.length).toBeGreaterThanOrEqual(12);

    const listed = await call(rollouts(), { token: alice });
    expect(listed.status).toBe(200);
    expect((listed.body.items as Rollout[]).map((rollout) => rollout.id)).toContain(created.body.id);
  }, 120_000);

  it('pauses after a wave whose failures exceed the threshold, deploys nothing further, and resumes and cancels on request', async () => {
    await startFleet('acme-flaky-', 8, 1);
    const ids = fleetIds('acme-flaky-', 8);

    const created = await call<Rollout>(rollouts(), {
      method: 'POST',
      token: alice,
      json: {
        action: 'DEPLOY',
        what: { type: 'SCENARIO', id: SCENARIO, subId: '1.1.0' },
        targets: { ids },
        waves: [2, 2],
        failureThreshold: 0.1,
      },
    });
    expect(created.status).toBe(202);
    const paused = await waitFor(created.body.id, (rollout) => rollout.state === 'PAUSED', 'the rollout PAUSED by failures');
    expect(paused.waves.map((wave) => wave.state)).toEqual(['COMPLETED', 'PENDING', 'PENDING']);
    expect(paused.waves[0]?.counts).toMatchObject({ SUCCESS: 2, FAILED: 2 });
    expect(paused.pausedReason).toMatch(/FAILED/);
    // Sorted by device id: the first wave is the first two; nothing was deployed to the six others.
    expect(await activeVersions(ids[0] as string)).toEqual(['1.1.0']);
    for (const deviceId of ids.slice(2)) expect(await activeVersions(deviceId)).toEqual([]);

    const resumed = await call<Rollout>(rollouts(`/${created.body.id}/resume`), { method: 'POST', token: alice });
    expect(resumed.status).toBe(200);
    expect(resumed.body.state).toBe('RUNNING');
    expect(resumed.body.pausedReason).toBeUndefined();
    const pausedAgain = await waitFor(
      created.body.id,
      (rollout) => rollout.state === 'PAUSED' && rollout.waves[1]?.state === 'COMPLETED',
      'the second wave written, failed and paused',
    );
    expect(pausedAgain.waves[1]?.counts).toMatchObject({ SUCCESS: 2, FAILED: 2 });
    expect(pausedAgain.waves[2]?.state).toBe('PENDING');

    const cancelled = await call<Rollout>(rollouts(`/${created.body.id}/cancel`), { method: 'POST', token: alice });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.state).toBe('CANCELLED');
    // The last wave was never written.
    for (const deviceId of ids.slice(4)) expect(await activeVersions(deviceId)).toEqual([]);
    const again = await call(rollouts(`/${created.body.id}/resume`), { method: 'POST', token: alice });
    expect(again.status).toBe(409);
    expect(again.body.detail).toMatch(/CANCELLED/);
  }, 120_000);

  it('pauses on request: no wave starts while paused, and a resumed rollout finishes', async () => {
    const ids = fleetIds('acme-wave-', 12);
    const created = await call<Rollout>(rollouts(), {
      method: 'POST',
      token: alice,
      json: { action: 'UNDEPLOY', what: { type: 'SCENARIO', id: SCENARIO, subId: '1.0.0' }, targets: { ids }, waves: [1, 1, 1] },
    });
    expect(created.status).toBe(202);
    const paused = await call<Rollout>(rollouts(`/${created.body.id}/pause`), { method: 'POST', token: alice });
    expect(paused.status).toBe(200);
    expect(paused.body.state).toBe('PAUSED');
    expect(paused.body.pausedReason).toMatch(/alice|Paused/);
    const twice = await call(rollouts(`/${created.body.id}/pause`), { method: 'POST', token: alice });
    expect(twice.status).toBe(409);
    await new Promise((done) => setTimeout(done, 1_500));
    const still = await getRollout(created.body.id);
    expect(still.state).toBe('PAUSED');
    expect(still.waves.filter((wave) => wave.state === 'COMPLETED').length).toBeLessThanOrEqual(1);

    expect((await call(rollouts(`/${created.body.id}/resume`), { method: 'POST', token: alice })).status).toBe(200);
    const done = await waitFor(created.body.id, (rollout) => rollout.state === 'COMPLETED', 'the undeploy rollout COMPLETED');
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
    const created = await call<Rollout>(rollouts(), {
      method: 'POST',
      token: alice,
      json: { action: 'DEPLOY', what: { type: 'SCENARIO', id: SCENARIO, subId: '1.1.0' }, targets: { ids }, waves: [3] },
    });
    expect(created.status).toBe(202);
    await waitFor(created.body.id, (rollout) => rollout.waves[0]?.counts.SUCCESS === 3, 'the first wave written');

    const killed = service;
    process.kill(killed.pid, 'SIGKILL');
    await dynamoDbLocalStopped(dynamoPort);
    await killed.stop();
    service = await startService(settings, { environment: { ...ENVIRONMENT, DYNAMODB_PORT: String(dynamoPort) } });
    alice = await tokenFor(service, 'alice');
    const after = await getRollout(created.body.id);
    expect(after.state).toBe('RUNNING');
    expect(after.waves[0]?.counts.SUCCESS).toBe(3);

    await startFleet('acme-wave-', 12, 0);
    const done = await waitFor(
      created.body.id,
      (rollout) => rollout.state === 'COMPLETED',
      'the rollout COMPLETED after the restart',
      90_000,
    );
    expect(done.waves.map((wave) => [wave.counts.SUCCESS, wave.counts.INSTALLED])).toEqual([
      [3, 3],
      [9, 9],
    ]);
    // Each device got exactly one DEPLOY of the version: nothing was redone twice, nothing lost.
    const history = await call(
      `${service.api}/companies/${COMPANY}/resources/deployments/history?scenarioId=${SCENARIO}&version=1.1.0&limit=500`,
      { token: alice },
    );
    const deploys = (history.body.items as { kind: string; action?: string; state?: string; target: { id: string } }[])
      .filter((entry) => entry.kind === 'ACTION' && entry.action === 'DEPLOY' && entry.state === 'SUCCESS')
      .map((entry) => entry.target.id)
      .filter((deviceId) => deviceId.startsWith('acme-wave-'));
    expect(deploys.sort()).toEqual(ids);
  }, 240_000);
});

describe('a rollout stays in its company', () => {
  it('never touches another company: its query is restricted, another company in it is refused, and ids of another company are not found', async () => {
    const connected = await call(`${service.api}/resources/search?type=DEVICE&company=acme&connection.state=CONNECTED&pageSize=1`, {
      token: alice,
    });
    const created = await call<Rollout>(rollouts(), {
      method: 'POST',
      token: alice,
      json: {
        action: 'UNDEPLOY',
        what: { type: 'SCENARIO', id: SCENARIO, subId: '1.0.0' },
        targets: { query: 'connection.state=CONNECTED' },
      },
    });
    expect(created.status).toBe(202);
    expect(created.body.targets).toBe(connected.body.total);

    const foreign = await call(rollouts(), {
      method: 'POST',
      token: alice,
      json: { action: 'UNDEPLOY', what: { type: 'SCENARIO', id: SCENARIO, subId: '1.0.0' }, targets: { query: 'company=globex' } },
    });
    expect(foreign.status).toBe(400);

    const byIds = await call<Rollout>(rollouts(), {
      method: 'POST',
      token: alice,
      json: {
        action: 'DEPLOY',
        what: { type: 'SCENARIO', id: SCENARIO, subId: '1.0.0' },
        targets: { ids: ['globex-kiosk-0001', 'globex-kiosk-0002'] },
        waveTimeoutSeconds: 60,
      },
    });
    expect(byIds.status).toBe(202);
    const done = await waitFor(byIds.body.id, (rollout) => (rollout.waves[0]?.counts.TARGET_NOT_FOUND ?? 0) === 2, 'both ids not found');
    expect(done.waves[0]?.counts.SUCCESS ?? 0).toBe(0);
    const globexActive = await call(`${service.api}/companies/globex/resources/globex-kiosk-0001/deployments`, { token: bob });
    expect(globexActive.status).toBe(200);
    expect((globexActive.body.items as { what: { id: string } }[]).some((item) => item.what.id === SCENARIO)).toBe(false);

    expect((await call(rollouts(`/${created.body.id}`), { token: bob })).status).toBe(403);
    const globexList = await call(rollouts('', 'globex'), { token: bob });
    expect(globexList.status).toBe(200);
    expect(globexList.body.items).toEqual([]);
  }, 120_000);
});
