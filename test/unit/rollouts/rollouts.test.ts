/**
 * Rollouts end to end below the HTTP layer, on DynamoDB Local: the real rollout and deployment repositories (their
 * conditional writes, transactions and the sweep index), fakes for device and scenario existence, a queue that
 * records what is sent, and an injected clock. Device reports go through the deployment changes path (the slot as
 * stored, deploymentChangeOf, applyDeploymentChanges), as the stream consumer runs it.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ulid } from 'ulid';
import { beforeEach, describe, expect, it } from 'vitest';
import { CursorCodec } from '../../../functions/adapters/aws/cursor-codec.js';
import { DynamoDbDeploymentRepository } from '../../../functions/adapters/aws/dynamodb-deployment-repository.js';
import { DynamoDbRolloutRepository } from '../../../functions/adapters/aws/dynamodb-rollout-repository.js';
import { applyDeploymentChanges, deploymentChangeOf } from '../../../functions/core/deployments/changes.js';
import type { ActiveDeployment, DeploymentEvent, DeviceStatusState } from '../../../functions/core/deployments/model.js';
import type { DeviceRepository } from '../../../functions/core/devices/ports.js';
import { createRollout, planWaves } from '../../../functions/core/rollouts/create.js';
import type { RolloutCreateInput, RolloutWorkMessage, StoredRollout } from '../../../functions/core/rollouts/model.js';
import type { RolloutDependencies, RolloutRepository } from '../../../functions/core/rollouts/ports.js';
import { getRollout, listRollouts, rolloutView } from '../../../functions/core/rollouts/reads.js';
import { sweepRollouts } from '../../../functions/core/rollouts/sweeper.js';
import { cancelRollout, pauseRollout, resumeRollout } from '../../../functions/core/rollouts/transitions.js';
import { rolloutDeploymentId, runRolloutChunk } from '../../../functions/core/rollouts/worker.js';
import type { ScenarioRepository } from '../../../functions/core/scenarios/ports.js';
import { BadRequestError, ConflictError, NotFoundError, UnprocessableRequestError } from '../../../functions/core/shared/errors.js';
import type { Principal } from '../../../functions/core/shared/principal.js';
import { LOCAL_TABLES } from '../../../functions/local/runtime.js';
import { useLocalTables } from '../../support/local-tables.js';
import { RecordingQueue, readingTogether } from '../../support/rollout-fixtures.js';

const DAY = 24 * 60 * 60_000;
const START = Date.parse('2032-06-01T08:00:00.000Z');
const SCENARIO = { type: 'SCENARIO' as const, id: 'lobby-loop', subId: '1.0.0' };

let client: DynamoDBDocumentClient;
let clock: Date;
let company: string;
let companyCount = 0;
let queue: RecordingQueue;
let rollouts: RolloutRepository;
let deployments: DynamoDbDeploymentRepository;
let unknownDevices: Set<string>;
let deps: RolloutDependencies;

const now = () => clock;
const advance = (ms: number) => {
  clock = new Date(clock.getTime() + ms);
};
const alice = (): Principal => ({ subject: 'alice', companies: [company], scopes: new Set(['deployments:write']) });
const devices = (count: number, prefix = 'kiosk') =>
  Array.from({ length: count }, (_, index) => `${prefix}-${String(index + 1).padStart(5, '0')}`);

const fakeDevices = {
  existing: async (_company: string, ids: readonly string[]) => new Set(ids.filter((id) => !unknownDevices.has(id))),
} as unknown as DeviceRepository;
const fakeScenarios = {
  existingVersions: async (_company: string, references: readonly { scenarioId: string; version: string }[]) =>
    new Set(references.filter((ref) => ref.scenarioId === SCENARIO.id).map((ref) => `${ref.scenarioId}#${ref.version}`)),
} as unknown as ScenarioRepository;

const workerDeps = () => ({ rollouts, devices: fakeDevices, scenarios: fakeScenarios, deployments, now });
const sweep = () => sweepRollouts({ rollouts, queue, chunkTimeoutSeconds: 15, now });

/** Delivers every message sent so far (and those sent meanwhile) to the worker, in order. */
async function drain(): Promise<string[]> {
  const outcomes: string[] = [];
  while (queue.sent.length > 0) {
    const message = queue.sent.shift() as RolloutWorkMessage;
    outcomes.push((await runRolloutChunk(workerDeps(), message)).outcome);
  }
  return outcomes;
}

async function activeOf(deviceId: string): Promise<ActiveDeployment | undefined> {
  return (await deployments.listActive(company, deviceId, 10, undefined)).items[0];
}

async function activeCount(): Promise<number> {
  let count = 0;
  let cursor: string | undefined;
  do {
    const page = await deployments.listActive(company, undefined, 1000, cursor);
    count += page.items.length;
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return count;
}

const published: DeploymentEvent[] = [];
/** A device's status report on its deployment, derived and applied as the deployment changes consumer does. */
async function report(deviceId: string, state: DeviceStatusState): Promise<void> {
  const slot = await activeOf(deviceId);
  if (slot === undefined) throw new Error(`${deviceId} has no deployment`);
  const reported = { ...slot, deviceStatus: { id: ulid(clock.getTime()), state, updated: clock.toISOString() } };
  const change = deploymentChangeOf(slot, reported);
  await applyDeploymentChanges(
    { deployments, events: { publish: async (events) => void published.push(...events) }, rollouts },
    change === undefined ? [] : [change],
  );
}

const create = (input: Partial<RolloutCreateInput>, targets: readonly string[]) =>
  createRollout(deps, alice(), company, { action: 'DEPLOY', what: SCENARIO, targets: { ids: [...targets] }, ...input }, targets);

const localTables = useLocalTables('rollouts-');

beforeEach(() => {
  client = localTables();
  // Each test has its own company, and a clock a day earlier than the previous test's: the sweep index is shared, and
  // rollouts left RUNNING by earlier tests are then not due yet for this one.
  companyCount += 1;
  company = `rollout-${companyCount}`;
  clock = new Date(START - companyCount * DAY);
  queue = new RecordingQueue();
  const cursors = new CursorCodec(() => Buffer.alloc(32, 7));
  rollouts = new DynamoDbRolloutRepository(client, LOCAL_TABLES, cursors);
  deployments = new DynamoDbDeploymentRepository(client, LOCAL_TABLES, cursors);
  unknownDevices = new Set();
  deps = { rollouts, queue, scenarios: fakeScenarios, now };
});

describe('planWaves', () => {
  it('takes the sizes in order, trims them to the targets left, drops empty waves and makes the rest the last wave', () => {
    expect(planWaves(1_000)).toEqual([1_000]);
    expect(planWaves(1_000, [10, 100])).toEqual([10, 100, 890]);
    expect(planWaves(50, [10, 100, 5])).toEqual([10, 40]);
    expect(planWaves(110, [10, 100])).toEqual([10, 100]);
  });
});

describe('rolloutDeploymentId', () => {
  it('is a ULID of the wave start, the same for the same rollout and device, different for another device', () => {
    const id = rolloutDeploymentId('01J0000000000000000000000A', 'kiosk-1', '2032-06-01T08:00:00.000Z');
    expect(id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(id.slice(0, 10)).toBe(ulid(Date.parse('2032-06-01T08:00:00.000Z')).slice(0, 10));
    expect(rolloutDeploymentId('01J0000000000000000000000A', 'kiosk-1', '2032-06-01T08:00:00.000Z')).toBe(id);
    expect(rolloutDeploymentId('01J0000000000000000000000A', 'kiosk-2', '2032-06-01T08:00:00.000Z')).not.toBe(id);
  });
});

describe('createRollout', () => {
  it('writes the chunks of each wave, then the rollout item last, and sends the first wave only', async () => {
    const commands: { name: string; pk?: string; count?: number }[] = [];
    const recording = Object.assign(Object.create(client) as DynamoDBDocumentClient, {
      send: (command: { constructor: { name: string }; input: Record<string, unknown> }) => {
        const input = command.input as { Item?: { pk?: string }; RequestItems?: Record<string, unknown[]> };
        commands.push({
          name: command.constructor.name,
          ...(input.Item?.pk === undefined ? {} : { pk: input.Item.pk }),
          ...(input.RequestItems === undefined ? {} : { count: Object.values(input.RequestItems)[0]?.length }),
        });
        return client.send(command as never);
      },
    });
    deps.rollouts = new DynamoDbRolloutRepository(recording, LOCAL_TABLES, new CursorCodec(() => Buffer.alloc(32, 7)));
    const view = await create({ waves: [100], note: 'spring refresh' }, devices(1_200));

    expect(view).toMatchObject({
      state: 'RUNNING',
      action: 'DEPLOY',
      what: SCENARIO,
      targets: 1_200,
      failureThreshold: 0.1,
      waveTimeoutSeconds: 3600,
      note: 'spring refresh',
      createdBy: 'alice',
      waves: [
        { size: 100, state: 'RUNNING', counts: {}, startedAt: clock.toISOString() },
        { size: 1_100, state: 'PENDING', counts: {} },
      ],
    });
    // 4 chunks (100 | 500, 500, 100) in one batch write, then the rollout item.
    expect(commands.map((command) => command.name)).toEqual(['BatchWriteCommand', 'PutCommand']);
    expect(commands[0]?.count).toBe(4);
    expect(commands[1]?.pk).toBe(`ROLLOUT#${company}`);
    expect(queue.sent).toEqual([{ type: 'RolloutChunk', company, rolloutId: view.id, wave: 0, chunk: 0 }]);
    const chunks = await rollouts.chunkStates(company, view.id, 0, 3);
    expect(chunks.map((chunk) => chunk.wave)).toEqual([0, 1, 1, 1]);
    expect((await rollouts.chunk(company, view.id, 3))?.deviceIds).toEqual(devices(1_200).slice(1_100));
    expect(await getRollout(deps, alice(), company, view.id)).toEqual(view);
  });

  it('refuses a scenario version that does not exist, and no targets, with 422; an unknown rollout is 404', async () => {
    await expect(create({ what: { ...SCENARIO, id: 'nope' } }, devices(3))).rejects.toThrow(UnprocessableRequestError);
    await expect(create({}, [])).rejects.toThrow(/match no device/);
    await expect(create({ waveTimeoutSeconds: 5 }, devices(3))).rejects.toThrow(BadRequestError);
    expect(queue.sent).toEqual([]);
    expect((await listRollouts(deps, alice(), company, { limit: 10 })).items).toEqual([]);
    await expect(getRollout(deps, alice(), company, ulid())).rejects.toThrow(NotFoundError);
  });

  it('survives a queue outage at creation: the sweeper sends the first wave once the chunk timeout has passed', async () => {
    queue.failNext = true;
    const errors: unknown[] = [];
    const view = await createRollout(
      { ...deps, onError: (error) => errors.push(error) },
      alice(),
      company,
      {
        action: 'DEPLOY',
        what: SCENARIO,
        targets: { ids: devices(3) },
      },
      devices(3),
    );
    expect(errors).toHaveLength(1);
    expect(queue.sent).toEqual([]);
    advance(14_000);
    expect((await sweep()).waiting).toEqual([`${company}/${view.id}`]);
    advance(1_000);
    expect((await sweep()).resent).toEqual([`${company}/${view.id}`]);
    expect(await drain()).toEqual(['done']);
    // Sent again just now: not again on the next tick.
    expect((await sweep()).waiting).toEqual([`${company}/${view.id}`]);
    expect(await activeCount()).toBe(3);
  });
});

describe('the worker', () => {
  it('run again after a crash before marking the chunk done, writes the same deployments and counts the results once', async () => {
    unknownDevices = new Set(['kiosk-00002']);
    const view = await create({ note: 'n' }, devices(4));
    const message = queue.sent[0] as RolloutWorkMessage;
    // The first run dies after the deployments were written, before the chunk is marked done.
    const crashing = Object.assign(Object.create(rollouts) as RolloutRepository, {
      markDone: async () => {
        throw new Error('killed');
      },
    });
    await expect(runRolloutChunk({ ...workerDeps(), rollouts: crashing }, message)).rejects.toThrow('killed');
    const first = await activeOf('kiosk-00001');

    const again = await runRolloutChunk(workerDeps(), message);
    expect(again).toEqual({ outcome: 'done', results: { SUCCESS: 3, TARGET_NOT_FOUND: 1 } });
    expect(await activeOf('kiosk-00001')).toEqual(first);
    expect(first).toMatchObject({
      id: rolloutDeploymentId(view.id, 'kiosk-00001', view.waves[0]?.startedAt as string),
      deployedAt: view.waves[0]?.startedAt,
      deployedBy: 'alice',
      note: 'n',
      rollout: { id: view.id, wave: 0 },
    });
    expect(await runRolloutChunk(workerDeps(), message)).toEqual({ outcome: 'skipped', reason: 'the chunk is done' });
    expect((await getRollout(deps, alice(), company, view.id)).waves[0]?.counts).toEqual({ SUCCESS: 3, TARGET_NOT_FOUND: 1 });
    // The chunk keeps which device failed and why (the targets listing reads it), as well as the counts.
    expect(await rollouts.chunk(company, view.id, message.chunk)).toMatchObject({
      done: true,
      results: { SUCCESS: 3, TARGET_NOT_FOUND: 1 },
      failures: { 'kiosk-00002': 'TARGET_NOT_FOUND' },
    });
    expect(await activeCount()).toBe(3);
  });

  it("reads the targets' reported statuses of the version in one batch: only the devices with an active, reported slot", async () => {
    unknownDevices = new Set(['kiosk-00002']);
    await create({}, devices(3));
    await runRolloutChunk(workerDeps(), queue.sent[0] as RolloutWorkMessage);
    const identity = { company, deviceId: 'kiosk-00001', scenarioId: SCENARIO.id, version: SCENARIO.subId };
    const failed = { id: ulid(clock.getTime()), state: 'FAILED' as const, message: 'disk full', updated: clock.toISOString() };
    expect(await deployments.recordDeviceStatus(identity, failed)).toBe(true);
    const statuses = await deployments.deviceStatuses(company, SCENARIO.id, SCENARIO.subId, devices(3));
    expect([...statuses]).toEqual([['kiosk-00001', failed]]);
    expect((await deployments.deviceStatuses(company, SCENARIO.id, '9.9.9', devices(3))).size).toBe(0);
    expect((await deployments.deviceStatuses(company, SCENARIO.id, SCENARIO.subId, [])).size).toBe(0);
  });

  it('stops at a pause: later chunks are skipped; resume sends them again and the wave goes on', async () => {
    const view = await create({}, devices(600));
    expect(queue.sent.map((message) => message.chunk)).toEqual([0, 1]);
    const [first, ...rest] = queue.sent.splice(0);
    await runRolloutChunk(workerDeps(), first as RolloutWorkMessage);
    const paused = await pauseRollout(deps, alice(), company, view.id);
    expect(paused).toMatchObject({ state: 'PAUSED', pausedReason: 'Paused by alice.' });
    for (const message of rest) expect((await runRolloutChunk(workerDeps(), message)).outcome).toBe('skipped');
    expect(await activeCount()).toBe(500);
    // Paused rollouts are not swept.
    advance(60_000);
    expect((await sweep()).resent).toEqual([]);
    await expect(pauseRollout(deps, alice(), company, view.id)).rejects.toThrow(/is PAUSED; only a RUNNING rollout can be paused/);

    const resumed = await resumeRollout(deps, alice(), company, view.id);
    expect(resumed.state).toBe('RUNNING');
    expect(resumed.pausedReason).toBeUndefined();
    expect(queue.sent.map((message) => message.chunk)).toEqual([1]);
    expect(await drain()).toEqual(['done']);
    expect(await activeCount()).toBe(600);
    expect((await getRollout(deps, alice(), company, view.id)).waves[0]?.counts).toEqual({ SUCCESS: 600 });
  }, 60_000);

  it('a cancelled rollout runs nothing more; its deployments stay; it cannot be cancelled, paused or resumed again', async () => {
    const view = await create({ waves: [1] }, devices(3));
    expect(view.waves.map((wave) => wave.state)).toEqual(['RUNNING', 'PENDING']);
    const cancelled = await cancelRollout(deps, alice(), company, view.id);
    expect(cancelled.state).toBe('CANCELLED');
    // No wave stays RUNNING (or PENDING) for ever: the running one ended when the rollout was cancelled.
    expect(cancelled.waves).toEqual([
      expect.objectContaining({ state: 'CANCELLED', startedAt: view.waves[0]?.startedAt, completedAt: cancelled.updated }),
      { size: 2, state: 'CANCELLED', counts: {} },
    ]);
    expect((await getRollout(deps, alice(), company, view.id)).waves).toEqual(cancelled.waves);
    expect(await drain()).toEqual(['skipped']);
    expect(await activeCount()).toBe(0);
    for (const action of [cancelRollout, pauseRollout, resumeRollout]) {
      await expect(action(deps, alice(), company, view.id)).rejects.toThrow(ConflictError);
    }
    advance(60_000);
    expect((await sweep()).started).toEqual([]);
  });
});

describe('rolloutView', () => {
  it('shows the unfinished waves of a rollout cancelled before cancelling cancelled its waves as CANCELLED', () => {
    const stored: StoredRollout = {
      id: '01J00000000000000000000000',
      company,
      action: 'DEPLOY',
      what: SCENARIO,
      targetsSpec: { ids: 3 },
      targets: 3,
      waves: [
        { size: 1, state: 'COMPLETED', startedAt: '2026-01-01T00:00:00.000Z', completedAt: '2026-01-01T00:01:00.000Z', chunks: [0, 0] },
        { size: 1, state: 'RUNNING', startedAt: '2026-01-01T00:01:00.000Z', chunks: [1, 1] },
        { size: 1, state: 'PENDING', chunks: [2, 2] },
      ],
      currentWave: 1,
      failureThreshold: 0.1,
      waveTimeoutSeconds: 3600,
      createdBy: 'alice',
      created: '2026-01-01T00:00:00.000Z',
      updated: '2026-01-01T00:02:00.000Z',
      state: 'CANCELLED',
      version: 3,
    };
    expect(rolloutView(stored, new Map()).waves.map((wave) => wave.state)).toEqual(['COMPLETED', 'CANCELLED', 'CANCELLED']);
    expect(rolloutView({ ...stored, state: 'PAUSED' }, new Map()).waves.map((wave) => wave.state)).toEqual([
      'COMPLETED',
      'RUNNING',
      'PENDING',
    ]);
  });
});

describe('the sweeper', () => {
  it('completes a wave once every deployed device reported, starts the next, and completes the rollout after the last', async () => {
    const view = await create({ waves: [2] }, devices(5));
    const id = `${company}/${view.id}`;
    await drain();
    expect((await sweep()).waiting).toEqual([id]);
    await report('kiosk-00001', 'DOWNLOADING');
    await report('kiosk-00001', 'INSTALLED');
    expect((await sweep()).waiting).toEqual([id]);
    advance(1_000);
    await report('kiosk-00002', 'INSTALLED');
    expect((await sweep()).started).toEqual([id]);
    let current = await getRollout(deps, alice(), company, view.id);
    expect(current.waves.map((wave) => wave.state)).toEqual(['COMPLETED', 'RUNNING']);
    expect(current.waves[0]).toMatchObject({ counts: { SUCCESS: 2, INSTALLED: 2 }, completedAt: clock.toISOString() });
    expect(queue.sent).toEqual([{ type: 'RolloutChunk', company, rolloutId: view.id, wave: 1, chunk: 1 }]);

    await drain();
    for (const device of ['kiosk-00003', 'kiosk-00004', 'kiosk-00005']) await report(device, 'INSTALLED');
    expect((await sweep()).completed).toEqual([id]);
    current = await getRollout(deps, alice(), company, view.id);
    expect(current.state).toBe('COMPLETED');
    expect(current.waves[1]?.counts).toEqual({ SUCCESS: 3, INSTALLED: 3 });
    // Completed rollouts leave the sweep index.
    expect(await sweep()).toMatchObject({ waiting: [], completed: [], started: [] });
  });

  it('completes a wave on its timeout when reports are missing', async () => {
    const view = await create({ waves: [1], waveTimeoutSeconds: 60 }, devices(2));
    await drain();
    advance(59_999);
    expect((await sweep()).waiting).toEqual([`${company}/${view.id}`]);
    advance(1);
    expect((await sweep()).started).toEqual([`${company}/${view.id}`]);
  });

  it('pauses before the next wave when the failure share is above the threshold, and resume starts that wave', async () => {
    const view = await create({ waves: [5], failureThreshold: 0.1 }, devices(10));
    await drain();
    for (const device of devices(3)) await report(device, 'INSTALLED');
    for (const device of devices(5).slice(3)) await report(device, 'FAILED');
    expect((await sweep()).paused).toEqual([`${company}/${view.id}`]);
    const paused = await getRollout(deps, alice(), company, view.id);
    expect(paused.state).toBe('PAUSED');
    expect(paused.pausedReason).toBe(
      'Wave 1: 2 of 5 devices reported FAILED (40 %), above the failure threshold of 10 %. Resume to go on with wave 2, or cancel.',
    );
    expect(paused.waves.map((wave) => wave.state)).toEqual(['COMPLETED', 'PENDING']);
    // Nothing of wave 2 was sent or written.
    expect(queue.sent).toEqual([]);
    expect(await activeCount()).toBe(5);
    advance(DAY / 2);
    expect((await sweep()).started).toEqual([]);

    const resumed = await resumeRollout(deps, alice(), company, view.id);
    expect(resumed.waves[1]).toMatchObject({ state: 'RUNNING', startedAt: clock.toISOString() });
    expect(await drain()).toEqual(['done']);
    expect(await activeCount()).toBe(10);
  });

  it('counts a device report once: a redelivered stream record and a later report change nothing', async () => {
    const view = await create({}, devices(2));
    await drain();
    const slot = (await activeOf('kiosk-00001')) as ActiveDeployment;
    const change = deploymentChangeOf(slot, { ...slot, deviceStatus: { id: ulid(), state: 'FAILED', updated: clock.toISOString() } });
    expect(change?.report).toMatchObject({ rolloutId: view.id, wave: 0, deviceId: 'kiosk-00001', state: 'FAILED' });
    const changes = { deployments, events: { publish: async () => undefined }, rollouts };
    await applyDeploymentChanges(changes, [change!]);
    await applyDeploymentChanges(changes, [change!]);
    await report('kiosk-00001', 'INSTALLED');
    expect((await getRollout(deps, alice(), company, view.id)).waves[0]?.counts).toEqual({ SUCCESS: 2, FAILED: 1 });
    // A report on a deployment no rollout made counts nowhere.
    const plain = deploymentChangeOf(
      { ...slot, rollout: undefined },
      { ...slot, rollout: undefined, deviceStatus: { id: ulid(), state: 'INSTALLED', updated: clock.toISOString() } },
    );
    expect(plain?.report).toBeUndefined();
    expect(
      deploymentChangeOf(slot, { ...slot, deviceStatus: { id: ulid(), state: 'INSTALLING', updated: clock.toISOString() } })?.report,
    ).toBeUndefined();
  });

  it('two sweepers racing on the same wave advance it once and send its chunks once', async () => {
    const view = await create({ waves: [1] }, devices(3));
    await drain();
    await report('kiosk-00001', 'INSTALLED');
    // Both read the rollout before either writes.
    const racing = readingTogether(rollouts);
    const race = () => sweepRollouts({ rollouts: racing, queue, chunkTimeoutSeconds: 15, now });
    const [one, two] = await Promise.all([race(), race()]);
    expect([...one.started, ...two.started]).toEqual([`${company}/${view.id}`]);
    expect([...one.conflict, ...two.conflict]).toEqual([`${company}/${view.id}`]);
    expect(queue.sent).toEqual([{ type: 'RolloutChunk', company, rolloutId: view.id, wave: 1, chunk: 1 }]);
    expect((await getRollout(deps, alice(), company, view.id)).waves[1]?.state).toBe('RUNNING');
  });

  it('completes an UNDEPLOY rollout once its chunks are done, without reports', async () => {
    await create({}, devices(2));
    await drain();
    const view = await create({ action: 'UNDEPLOY' }, devices(3));
    expect(await drain()).toEqual(['done']);
    expect((await getRollout(deps, alice(), company, view.id)).waves[0]?.counts).toEqual({ SUCCESS: 2, ALREADY_UNDEPLOYED: 1 });
    expect((await sweep()).completed).toEqual([`${company}/${view.id}`]);
    expect(await activeCount()).toBe(0);
  });
});

describe('listRollouts', () => {
  it('pages the company rollouts newest first with a signed cursor', async () => {
    const ids: string[] = [];
    for (let index = 0; index < 3; index += 1) {
      ids.push((await create({}, devices(1))).id);
      advance(1_000);
    }
    const first = await listRollouts(deps, alice(), company, { limit: 2 });
    expect(first.items.map((item) => item.id)).toEqual([ids[2], ids[1]]);
    const second = await listRollouts(deps, alice(), company, { limit: 2, cursor: first.nextCursor as string });
    expect(second).toMatchObject({ items: [{ id: ids[0] }], nextCursor: null });
    await expect(listRollouts(deps, alice(), company, { limit: 2, cursor: `${first.nextCursor}x` })).rejects.toThrow(BadRequestError);
    const other: Principal = { subject: 'bob', companies: ['globex'], scopes: new Set() };
    await expect(listRollouts(deps, other, company, { limit: 2 })).rejects.toThrow(/company/);
  });
});
