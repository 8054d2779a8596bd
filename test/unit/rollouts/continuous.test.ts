/**
 * Continuous rollouts below the HTTP layer, on DynamoDB Local: the real rollout and deployment repositories (the
 * `continuous` index, the join and result transactions), fakes for device and scenario existence, an injected clock.
 * Changed devices are handed to joinContinuousRollouts as the devices stream's consumer hands them.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { CursorCodec } from '../../../functions/adapters/aws/cursor-codec.js';
import { DynamoDbDeploymentRepository } from '../../../functions/adapters/aws/dynamodb-deployment-repository.js';
import { DynamoDbRolloutRepository } from '../../../functions/adapters/aws/dynamodb-rollout-repository.js';
import type { ActiveDeployment } from '../../../functions/core/deployments/model.js';
import type { DeviceRepository } from '../../../functions/core/devices/ports.js';
import {
  ContinuousJoinIncompleteError,
  type ContinuousRolloutDependencies,
  joinContinuousRollouts,
} from '../../../functions/core/rollouts/continuous.js';
import { createRollout } from '../../../functions/core/rollouts/create.js';
import type { RolloutCreateInput, RolloutWorkMessage } from '../../../functions/core/rollouts/model.js';
import type { RolloutDependencies, RolloutRepository } from '../../../functions/core/rollouts/ports.js';
import { getRollout } from '../../../functions/core/rollouts/reads.js';
import { sweepRollouts } from '../../../functions/core/rollouts/sweeper.js';
import { cancelRollout, pauseRollout, resumeRollout } from '../../../functions/core/rollouts/transitions.js';
import { rolloutDeploymentId, runRolloutChunk } from '../../../functions/core/rollouts/worker.js';
import type { DeviceDocument } from '../../../functions/core/search/documents.js';
import { BadRequestError } from '../../../functions/core/shared/errors.js';
import type { Principal } from '../../../functions/core/shared/principal.js';
import { LOCAL_TABLES } from '../../../functions/local/runtime.js';
import { useLocalTables } from '../../support/local-tables.js';
import { everyVersionExists, RecordingQueue } from '../../support/rollout-fixtures.js';

const DAY = 24 * 60 * 60_000;
const START = Date.parse('2033-03-01T08:00:00.000Z');
const SCENARIO = { type: 'SCENARIO' as const, id: 'lobby-loop', subId: '2.0.0' };
const QUERY = 'connection.state=CONNECTED&health.mode=EMBEDDED_PLATFORM_ANDROID';
const SELECTION = new Map([
  ['connection.state', ['CONNECTED']],
  ['health.mode', ['EMBEDDED_PLATFORM_ANDROID']],
]);

let client: DynamoDBDocumentClient;
let clock: Date;
let company: string;
let companyCount = 0;
let queue: RecordingQueue;
let rollouts: RolloutRepository;
let deployments: DynamoDbDeploymentRepository;
let deps: RolloutDependencies;

const now = () => clock;
const advance = (ms: number) => {
  clock = new Date(clock.getTime() + ms);
};
const alice = (): Principal => ({ subject: 'alice', companies: [company], scopes: new Set(['deployments:write']) });

/** Each device as it is now: the last document `device` made of it (what the devices table holds). */
const currentDevices = new Map<string, DeviceDocument>();
const fakeDevices = {
  existing: async (_company: string, ids: readonly string[]) => new Set(ids),
  get: async (owner: string, id: string) => currentDevices.get(`${owner}#${id}`),
} as unknown as DeviceRepository;
const fakeScenarios = everyVersionExists;

const joinDeps = (overrides: Partial<ContinuousRolloutDependencies> = {}): ContinuousRolloutDependencies => ({
  rollouts,
  devices: fakeDevices,
  scenarios: fakeScenarios,
  deployments,
  now,
  ...overrides,
});

/** A device document as the devices stream gives it after a change. */
function device(
  id: string,
  state: 'CONNECTED' | 'DISCONNECTED',
  mode: 'EMBEDDED_PLATFORM_ANDROID' | 'SERVER' = 'EMBEDDED_PLATFORM_ANDROID',
  owner = company,
): DeviceDocument {
  const document: DeviceDocument = {
    type: 'DEVICE',
    id,
    company: owner,
    serial: `SN-${id}`,
    created: clock.toISOString(),
    updated: clock.toISOString(),
    connection: { state },
    health: { updated: clock.toISOString(), versionCode: '7', versionName: '7.0', mode, hubs: [] },
  };
  currentDevices.set(`${owner}#${id}`, document);
  return document;
}

async function activeOf(deviceId: string, owner = company): Promise<ActiveDeployment[]> {
  return (await deployments.listActive(owner, deviceId, 10, undefined)).items;
}

/** Runs every work message sent so far, as the worker does. */
async function drain(): Promise<void> {
  while (queue.sent.length > 0) {
    await runRolloutChunk({ ...joinDeps(), rollouts }, queue.sent.shift() as RolloutWorkMessage);
  }
}

const createContinuous = (targets: readonly string[], input: Partial<RolloutCreateInput> = {}) =>
  createRollout(
    deps,
    alice(),
    company,
    { action: 'DEPLOY', what: SCENARIO, targets: { query: QUERY }, continuous: true, ...input },
    targets,
    SELECTION,
  );

const localTables = useLocalTables('continuous-');

beforeEach(() => {
  client = localTables();
  companyCount += 1;
  company = `continuous-${companyCount}`;
  // A day earlier than the previous test: rollouts earlier tests left RUNNING are not due for this one's sweeps.
  clock = new Date(START - companyCount * DAY);
  queue = new RecordingQueue();
  const cursors = new CursorCodec(() => Buffer.alloc(32, 7));
  rollouts = new DynamoDbRolloutRepository(client, LOCAL_TABLES, cursors);
  deployments = new DynamoDbDeploymentRepository(client, LOCAL_TABLES, cursors);
  deps = { rollouts, queue, scenarios: fakeScenarios, now };
});

describe('joinContinuousRollouts', () => {
  it('deploys once to a device that starts matching after creation, in the last wave, and counts it as joined', async () => {
    const created = await createContinuous(['kiosk-a', 'kiosk-b', 'kiosk-c'], { waves: [1] });
    expect(created).toMatchObject({ continuous: true, joined: 0 });
    advance(1_000);
    const first = await joinContinuousRollouts(joinDeps(), [{ device: device('kiosk-new', 'CONNECTED') }]);
    expect(first.joined).toEqual([`${created.id}/kiosk-new`]);
    const [slot] = await activeOf('kiosk-new');
    expect(slot).toMatchObject({ scenarioId: SCENARIO.id, version: SCENARIO.subId, rollout: { id: created.id, wave: 1 } });
    expect(slot?.id).toBe(rolloutDeploymentId(created.id, 'kiosk-new', clock.toISOString()));

    // The same change redelivered, and a later change that still matches: nothing more.
    advance(1_000);
    const again = await joinContinuousRollouts(joinDeps(), [
      { device: device('kiosk-new', 'CONNECTED') },
      { device: device('kiosk-new', 'CONNECTED', 'EMBEDDED_PLATFORM_ANDROID') },
    ]);
    expect(again).toMatchObject({ joined: [], member: [`${created.id}/kiosk-new`, `${created.id}/kiosk-new`] });
    expect(await activeOf('kiosk-new')).toHaveLength(1);

    const view = await getRollout(deps, alice(), company, created.id);
    expect(view.joined).toBe(1);
    expect(view.waves.map((wave) => wave.size)).toEqual([1, 3]);
    expect(view.waves[1]?.counts).toMatchObject({ SUCCESS: 1 });
  });

  it('leaves the targets resolved at creation to the waves, and devices that do not match alone', async () => {
    const targets = Array.from({ length: 1_200 }, (_, index) => `kiosk-${String(index).padStart(5, '0')}`);
    const created = await createContinuous(targets, { waves: [600] });
    const result = await joinContinuousRollouts(joinDeps(), [
      // In the second chunk of the first wave, and in the last chunk: found by the chunks' first ids.
      { device: device('kiosk-00700', 'CONNECTED') },
      { device: device('kiosk-01199', 'CONNECTED') },
      { device: device('kiosk-00001', 'CONNECTED') },
      { device: device('other-1', 'DISCONNECTED') },
      { device: device('other-2', 'CONNECTED', 'SERVER') },
    ]);
    expect(result.target.sort()).toEqual([`${created.id}/kiosk-00001`, `${created.id}/kiosk-00700`, `${created.id}/kiosk-01199`]);
    expect(result.joined).toEqual([]);
    expect(await activeOf('kiosk-00700')).toEqual([]);
    expect(await activeOf('other-1')).toEqual([]);
    expect(await activeOf('other-2')).toEqual([]);
  });

  it('joins a device only if it matches now: a lagging or replayed record of a device that has changed since joins nothing', async () => {
    // The device matched an hour before the rollout, then stopped matching: the search resolved it out of the targets.
    const old = device('kiosk-was', 'CONNECTED');
    advance(60 * 60_000);
    device('kiosk-was', 'DISCONNECTED');
    const created = await createContinuous(['kiosk-a']);
    // The stream consumer, behind (a backlog, a batch retried for a while) or replaying, hands the old record now.
    const result = await joinContinuousRollouts(joinDeps(), [{ device: old }]);
    expect(result.joined).toEqual([]);
    expect(result.stale).toEqual([`${created.id}/kiosk-was`]);
    expect(await activeOf('kiosk-was')).toEqual([]);
    expect((await getRollout(deps, alice(), company, created.id)).joined).toBe(0);
  });

  it("never joins another company's device, whatever it matches", async () => {
    await createContinuous(['kiosk-a']);
    const stranger = device('kiosk-x', 'CONNECTED', 'EMBEDDED_PLATFORM_ANDROID', `${company}-other`);
    const result = await joinContinuousRollouts(joinDeps(), [{ device: stranger }]);
    expect(result).toEqual({ joined: [], member: [], target: [], stale: [], ended: [] });
    expect(await activeOf('kiosk-x', `${company}-other`)).toEqual([]);
  });

  it('joins nothing to a rollout paused or cancelled, even when the list it read still had it running', async () => {
    const created = await createContinuous(['kiosk-a']);
    const stale = await rollouts.continuousOf(company);
    expect(stale.map((rollout) => rollout.id)).toEqual([created.id]);
    await pauseRollout(deps, alice(), company, created.id);
    expect(await rollouts.continuousOf(company)).toEqual([]);
    const staleRepository = Object.assign(Object.create(rollouts) as RolloutRepository, { continuousOf: async () => stale });
    const paused = await joinContinuousRollouts(joinDeps({ rollouts: staleRepository }), [{ device: device('kiosk-late', 'CONNECTED') }]);
    expect(paused.ended).toEqual([`${created.id}/kiosk-late`]);

    await resumeRollout(deps, alice(), company, created.id);
    await cancelRollout(deps, alice(), company, created.id);
    const cancelled = await joinContinuousRollouts(joinDeps({ rollouts: staleRepository }), [
      { device: device('kiosk-later', 'CONNECTED') },
    ]);
    expect(cancelled.ended).toEqual([`${created.id}/kiosk-later`]);
    expect(await joinContinuousRollouts(joinDeps(), [{ device: device('kiosk-later', 'CONNECTED') }])).toMatchObject({ ended: [] });
    expect(await activeOf('kiosk-late')).toEqual([]);
    expect(await activeOf('kiosk-later')).toEqual([]);
    expect((await getRollout(deps, alice(), company, created.id)).joined).toBe(0);
  });

  it('finishes a join a failed deployment interrupted, with the same deployment, counted once', async () => {
    const created = await createContinuous(['kiosk-a']);
    const failing = Object.assign(Object.create(deployments) as DynamoDbDeploymentRepository, {
      activate: async () => {
        throw new Error('simulated DynamoDB outage');
      },
    });
    const broken = joinContinuousRollouts(joinDeps({ deployments: failing, onError: () => {} }), [
      { device: device('kiosk-ok', 'DISCONNECTED') },
      { device: device('kiosk-new', 'CONNECTED') },
    ]);
    await expect(broken).rejects.toBeInstanceOf(ContinuousJoinIncompleteError);
    await expect(broken).rejects.toMatchObject({ change: 1 });
    expect(await activeOf('kiosk-new')).toEqual([]);

    advance(5_000);
    const retried = await joinContinuousRollouts(joinDeps(), [{ device: device('kiosk-new', 'CONNECTED') }]);
    expect(retried.joined).toEqual([`${created.id}/kiosk-new`]);
    const slots = await activeOf('kiosk-new');
    expect(slots).toHaveLength(1);
    // The deployment carries the time the device joined, not the retry's.
    expect(slots[0]?.id).toBe(rolloutDeploymentId(created.id, 'kiosk-new', new Date(clock.getTime() - 5_000).toISOString()));
    const view = await getRollout(deps, alice(), company, created.id);
    expect(view.joined).toBe(1);
    expect(view.waves[0]?.counts).toMatchObject({ SUCCESS: 1 });
  });
});

describe('a join whose deployment an earlier run left unfinished', () => {
  const failingDeployments = () =>
    Object.assign(Object.create(deployments) as DynamoDbDeploymentRepository, {
      activate: async () => {
        throw new Error('simulated DynamoDB outage');
      },
    });

  it('is not deployed while the rollout is paused or once it is cancelled, even when the list read still has it running', async () => {
    const created = await createContinuous(['kiosk-a']);
    const broken = joinContinuousRollouts(joinDeps({ deployments: failingDeployments(), onError: () => {} }), [
      { device: device('kiosk-p', 'CONNECTED') },
    ]);
    await expect(broken).rejects.toBeInstanceOf(ContinuousJoinIncompleteError);
    const joinedAt = clock.toISOString();
    const stale = await rollouts.continuousOf(company);
    const staleRepository = Object.assign(Object.create(rollouts) as RolloutRepository, { continuousOf: async () => stale });

    // The stream retries the record while the rollout is paused: nothing is deployed.
    await pauseRollout(deps, alice(), company, created.id);
    advance(1_000);
    const paused = await joinContinuousRollouts(joinDeps({ rollouts: staleRepository }), [{ device: device('kiosk-p', 'CONNECTED') }]);
    expect(paused.ended).toEqual([`${created.id}/kiosk-p`]);
    expect(await activeOf('kiosk-p')).toEqual([]);

    // Resumed, the device's next change finishes its join, with the deployment of its join time.
    await resumeRollout(deps, alice(), company, created.id);
    const resumed = await joinContinuousRollouts(joinDeps(), [{ device: device('kiosk-p', 'CONNECTED') }]);
    expect(resumed.joined).toEqual([`${created.id}/kiosk-p`]);
    expect((await activeOf('kiosk-p')).map((slot) => slot.id)).toEqual([rolloutDeploymentId(created.id, 'kiosk-p', joinedAt)]);

    // Another member left unfinished, then the rollout cancelled: it never gets the deployment.
    await expect(
      joinContinuousRollouts(joinDeps({ deployments: failingDeployments(), onError: () => {} }), [
        { device: device('kiosk-q', 'CONNECTED') },
      ]),
    ).rejects.toBeInstanceOf(ContinuousJoinIncompleteError);
    await cancelRollout(deps, alice(), company, created.id);
    const cancelled = await joinContinuousRollouts(joinDeps({ rollouts: staleRepository }), [{ device: device('kiosk-q', 'CONNECTED') }]);
    expect(cancelled.ended).toEqual([`${created.id}/kiosk-q`]);
    expect(await activeOf('kiosk-q')).toEqual([]);
  });

  it('UNDEPLOY: retried once the undeployed slot was purged, it is recorded ALREADY_UNDEPLOYED (as a chunk run again)', async () => {
    await deployments.activate({
      company,
      deviceId: 'kiosk-u',
      scenarioId: SCENARIO.id,
      version: SCENARIO.subId,
      id: '01HZZZZZZZZZZZZZZZZZZZZZZZ',
      deployedAt: clock.toISOString(),
      deployedBy: 'bob',
    });
    const created = await createContinuous(['kiosk-a'], { action: 'UNDEPLOY' });
    advance(1_000);
    const unrecorded = Object.assign(Object.create(rollouts) as RolloutRepository, {
      recordJoinResult: async () => {
        throw new Error('simulated throttling');
      },
    });
    await expect(
      joinContinuousRollouts(joinDeps({ rollouts: unrecorded }), [{ device: device('kiosk-u', 'CONNECTED') }]),
    ).rejects.toBeInstanceOf(ContinuousJoinIncompleteError);
    // The deployments stream purges the undeployed slot (deployment changes), within a second.
    const undeployId = rolloutDeploymentId(created.id, 'kiosk-u', clock.toISOString());
    await deployments.purgeUndeployed([{ company, deviceId: 'kiosk-u', scenarioId: SCENARIO.id, version: SCENARIO.subId, undeployId }]);
    await joinContinuousRollouts(joinDeps(), [{ device: device('kiosk-u', 'CONNECTED') }]);
    expect((await rollouts.member(company, created.id, 'kiosk-u'))?.result).toBe('ALREADY_UNDEPLOYED');
  });
});

describe('a continuous rollout after its last wave', () => {
  const sweep = () => sweepRollouts({ rollouts, queue, chunkTimeoutSeconds: 15, now });

  it('stays RUNNING, out of the sweep index, and devices go on joining', async () => {
    const created = await createContinuous(['kiosk-a', 'kiosk-b'], { action: 'UNDEPLOY' });
    await drain();
    advance(1_000);
    const swept = await sweep();
    expect(swept.following).toEqual([`${company}/${created.id}`]);
    expect(await rollouts.due(new Date(clock.getTime() + DAY).toISOString(), 100)).not.toContainEqual({
      company,
      rolloutId: created.id,
    });
    const view = await getRollout(deps, alice(), company, created.id);
    expect(view.state).toBe('RUNNING');
    expect(view.waves[0]?.state).toBe('COMPLETED');
    const joined = await joinContinuousRollouts(joinDeps(), [{ device: device('kiosk-c', 'CONNECTED') }]);
    expect(joined.joined).toEqual([`${created.id}/kiosk-c`]);
  });

  it('pauses when its last wave failed too often, and resumed it lets devices join again without sweeping', async () => {
    const created = await createContinuous(['kiosk-a', 'kiosk-b'], { failureThreshold: 0.4 });
    await drain();
    for (const deviceId of ['kiosk-a', 'kiosk-b']) {
      await rollouts.recordReport({ company, rolloutId: created.id, wave: 0, deviceId, state: 'FAILED', at: clock.toISOString() });
    }
    advance(1_000);
    expect((await sweep()).paused).toEqual([`${company}/${created.id}`]);
    const paused = await getRollout(deps, alice(), company, created.id);
    expect(paused.pausedReason).toContain('Resume to let devices that start matching join again');
    expect((await joinContinuousRollouts(joinDeps(), [{ device: device('kiosk-c', 'CONNECTED') }])).joined).toEqual([]);

    await resumeRollout(deps, alice(), company, created.id);
    expect(await rollouts.due(new Date(clock.getTime() + DAY).toISOString(), 100)).not.toContainEqual({
      company,
      rolloutId: created.id,
    });
    expect((await joinContinuousRollouts(joinDeps(), [{ device: device('kiosk-c', 'CONNECTED') }])).joined).toEqual([
      `${created.id}/kiosk-c`,
    ]);
  });
});

describe('a continuous rollout created without targets', () => {
  it('starts with one empty wave that the sweeper completes, then takes the devices that start matching', async () => {
    const created = await createContinuous([]);
    expect(created).toMatchObject({ state: 'RUNNING', targets: 0, joined: 0, waves: [{ size: 0, state: 'RUNNING' }] });
    expect(queue.sent).toEqual([]);
    // Paused and resumed before the sweeper came: nothing to send again, nothing fails.
    await pauseRollout(deps, alice(), company, created.id);
    await resumeRollout(deps, alice(), company, created.id);
    advance(1_000);
    expect((await sweepRollouts({ rollouts, queue, chunkTimeoutSeconds: 15, now })).following).toEqual([`${company}/${created.id}`]);
    const joined = await joinContinuousRollouts(joinDeps(), [{ device: device('kiosk-first', 'CONNECTED') }]);
    expect(joined.joined).toEqual([`${created.id}/kiosk-first`]);
    expect(await getRollout(deps, alice(), company, created.id)).toMatchObject({
      state: 'RUNNING',
      joined: 1,
      waves: [{ size: 1, state: 'COMPLETED', counts: { SUCCESS: 1 } }],
    });
  });
});

describe('the empty wave of a continuous rollout created without targets', () => {
  it('completes at the next sweep even when a device joined before it, neither waiting for its report nor pausing on it', async () => {
    const created = await createContinuous([]);
    expect((await joinContinuousRollouts(joinDeps(), [{ device: device('kiosk-early', 'CONNECTED') }])).joined).toEqual([
      `${created.id}/kiosk-early`,
    ]);
    advance(1_000);
    expect((await sweepRollouts({ rollouts, queue, chunkTimeoutSeconds: 15, now })).following).toEqual([`${company}/${created.id}`]);

    // The same with a joiner that reports FAILED before the sweep: a rollout of no target does not pause on it.
    const other = await createContinuous([]);
    await joinContinuousRollouts(joinDeps(), [{ device: device('kiosk-bad', 'CONNECTED') }]);
    await rollouts.recordReport({ company, rolloutId: other.id, wave: 0, deviceId: 'kiosk-bad', state: 'FAILED', at: clock.toISOString() });
    advance(1_000);
    expect((await sweepRollouts({ rollouts, queue, chunkTimeoutSeconds: 15, now })).following).toContain(`${company}/${other.id}`);
    expect(await getRollout(deps, alice(), company, other.id)).toMatchObject({ state: 'RUNNING', waves: [{ state: 'COMPLETED' }] });
  });
});

describe('createRollout with continuous', () => {
  it('refuses listed ids: a continuous rollout follows a query', async () => {
    const refused = createRollout(
      deps,
      alice(),
      company,
      { action: 'DEPLOY', what: SCENARIO, targets: { ids: ['kiosk-a'] }, continuous: true },
      ['kiosk-a'],
    );
    await expect(refused).rejects.toBeInstanceOf(BadRequestError);
    await expect(refused).rejects.toMatchObject({ violations: [{ path: 'continuous' }] });
  });
});
