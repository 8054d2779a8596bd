/**
 * A rollout's event log on DynamoDB Local: each transition (creation, a scheduled start, waves started and completed,
 * pauses on failures or by an operator, resume, cancel, completion, a continuous rollout following) appends its event
 * in the same conditional write as the transition, so two sweepers racing record it once; the log is bounded.
 * Same set-up as rollouts.test.ts: the real rollout and deployment repositories, fakes for device and scenario
 * existence, a queue that records what is sent, and an injected clock.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ulid } from 'ulid';
import { beforeEach, describe, expect, it } from 'vitest';
import { CursorCodec } from '../../../functions/adapters/aws/cursor-codec.js';
import { DynamoDbDeploymentRepository } from '../../../functions/adapters/aws/dynamodb-deployment-repository.js';
import { DynamoDbRolloutRepository } from '../../../functions/adapters/aws/dynamodb-rollout-repository.js';
import { applyDeploymentChanges, deploymentChangeOf } from '../../../functions/core/deployments/changes.js';
import type { DeviceStatusState } from '../../../functions/core/deployments/model.js';
import type { DeviceRepository } from '../../../functions/core/devices/ports.js';
import { createRollout } from '../../../functions/core/rollouts/create.js';
import {
  ROLLOUT_EVENTS_FIRST,
  ROLLOUT_EVENTS_NEWEST,
  type RolloutCreateInput,
  type RolloutEvent,
  type RolloutWorkMessage,
  type StoredRollout,
} from '../../../functions/core/rollouts/model.js';
import type { RolloutDependencies, RolloutRepository } from '../../../functions/core/rollouts/ports.js';
import { getRollout, rolloutView } from '../../../functions/core/rollouts/reads.js';
import { withEvents } from '../../../functions/core/rollouts/state.js';
import { sweepRollouts } from '../../../functions/core/rollouts/sweeper.js';
import { cancelRollout, pauseRollout, resumeRollout } from '../../../functions/core/rollouts/transitions.js';
import { runRolloutChunk } from '../../../functions/core/rollouts/worker.js';
import type { Principal } from '../../../functions/core/shared/principal.js';
import { LOCAL_TABLES } from '../../../functions/local/runtime.js';
import { useLocalTables } from '../../support/local-tables.js';
import { everyVersionExists, RecordingQueue, readingTogether } from '../../support/rollout-fixtures.js';

const DAY = 24 * 60 * 60_000;
const START = Date.parse('2033-06-01T08:00:00.000Z');
const SCENARIO = { type: 'SCENARIO' as const, id: 'lobby-loop', subId: '1.0.0' };

let client: DynamoDBDocumentClient;
let clock: Date;
let company: string;
let companyCount = 0;
let queue: RecordingQueue;
let rollouts: RolloutRepository;
let deployments: DynamoDbDeploymentRepository;
let deps: RolloutDependencies;

const now = () => clock;
const at = () => clock.toISOString();
const advance = (ms: number) => {
  clock = new Date(clock.getTime() + ms);
};
const operator = (subject: string): Principal => ({ subject, companies: [company], scopes: new Set(['deployments:write']) });
const devices = (count: number) => Array.from({ length: count }, (_, index) => `kiosk-${String(index + 1).padStart(5, '0')}`);

const fakeDevices = {
  existing: async (_company: string, ids: readonly string[]) => new Set(ids),
} as unknown as DeviceRepository;
const fakeScenarios = everyVersionExists;

const sweep = () => sweepRollouts({ rollouts, queue, chunkTimeoutSeconds: 15, now });
const eventsOf = async (rolloutId: string) => (await getRollout(deps, operator('alice'), company, rolloutId)).events;

/** Delivers every message sent so far to the worker. */
async function drain(): Promise<void> {
  while (queue.sent.length > 0) {
    const message = queue.sent.shift() as RolloutWorkMessage;
    await runRolloutChunk({ rollouts, devices: fakeDevices, scenarios: fakeScenarios, deployments, now }, message);
  }
}

/** A device's terminal status report, applied as the deployment changes consumer does. */
async function report(deviceId: string, state: DeviceStatusState): Promise<void> {
  const slot = (await deployments.listActive(company, deviceId, 10, undefined)).items[0];
  if (slot === undefined) throw new Error(`${deviceId} has no deployment`);
  const change = deploymentChangeOf(slot, { ...slot, deviceStatus: { id: ulid(clock.getTime()), state, updated: at() } });
  await applyDeploymentChanges({ deployments, events: { publish: async () => undefined }, rollouts }, change === undefined ? [] : [change]);
}

const create = (input: Partial<RolloutCreateInput>, targets: readonly string[]) =>
  createRollout(deps, operator('alice'), company, { action: 'DEPLOY', what: SCENARIO, targets: { ids: [...targets] }, ...input }, targets);

const localTables = useLocalTables('rollout-events-');

beforeEach(() => {
  client = localTables();
  // Each test its own company and a clock a day earlier than the previous test's (the sweep index is shared).
  companyCount += 1;
  company = `events-${companyCount}`;
  clock = new Date(START - companyCount * DAY);
  queue = new RecordingQueue();
  const cursors = new CursorCodec(() => Buffer.alloc(32, 7));
  rollouts = new DynamoDbRolloutRepository(client, LOCAL_TABLES, cursors);
  deployments = new DynamoDbDeploymentRepository(client, LOCAL_TABLES, cursors);
  deps = { rollouts, queue, scenarios: fakeScenarios, now };
});

describe('the event log', () => {
  it('records two waves, a pause on failures, a resume and a pause by operators, and the completion, in order', async () => {
    const created = at();
    const view = await create({ waves: [2], failureThreshold: 0.1 }, devices(4));
    expect(view.events).toEqual([
      { at: created, type: 'CREATED', by: 'alice' },
      { at: created, type: 'WAVE_STARTED', wave: 1 },
    ]);
    expect(view.eventsDropped).toBe(0);
    await drain();
    advance(60_000);
    await report('kiosk-00001', 'INSTALLED');
    await report('kiosk-00002', 'FAILED');
    const pausedAt = at();
    expect((await sweep()).paused).toEqual([`${company}/${view.id}`]);
    const reason =
      'Wave 1: 1 of 2 devices reported FAILED (50 %), above the failure threshold of 10 %. Resume to go on with wave 2, or cancel.';
    expect((await getRollout(deps, operator('alice'), company, view.id)).pausedReason).toBe(reason);

    advance(60_000);
    const resumedAt = at();
    const resumed = await resumeRollout(deps, operator('bob'), company, view.id);
    advance(1_000);
    const operatorPauseAt = at();
    await pauseRollout(deps, operator('alice'), company, view.id);
    advance(1_000);
    const secondResumeAt = at();
    await resumeRollout(deps, operator('alice'), company, view.id);
    await drain();
    advance(60_000);
    await report('kiosk-00003', 'INSTALLED');
    await report('kiosk-00004', 'INSTALLED');
    const completedAt = at();
    expect((await sweep()).completed).toEqual([`${company}/${view.id}`]);

    expect(resumed.events.slice(-2)).toEqual([
      { at: resumedAt, type: 'RESUMED', by: 'bob' },
      { at: resumedAt, type: 'WAVE_STARTED', wave: 2 },
    ]);
    expect(await eventsOf(view.id)).toEqual([
      { at: created, type: 'CREATED', by: 'alice' },
      { at: created, type: 'WAVE_STARTED', wave: 1 },
      { at: pausedAt, type: 'WAVE_COMPLETED', wave: 1, counts: { SUCCESS: 2, INSTALLED: 1, FAILED: 1 } },
      { at: pausedAt, type: 'PAUSED', wave: 1, reason },
      { at: resumedAt, type: 'RESUMED', by: 'bob' },
      { at: resumedAt, type: 'WAVE_STARTED', wave: 2 },
      { at: operatorPauseAt, type: 'PAUSED', by: 'alice' },
      // Wave 2 had started already: a resume records no second start.
      { at: secondResumeAt, type: 'RESUMED', by: 'alice' },
      { at: completedAt, type: 'WAVE_COMPLETED', wave: 2, counts: { SUCCESS: 2, INSTALLED: 2 } },
      { at: completedAt, type: 'COMPLETED' },
    ]);
  });

  it('records a scheduled creation, its start by the sweeper, and its cancellation by an operator', async () => {
    const created = at();
    const startAt = new Date(clock.getTime() + 3_600_000).toISOString();
    const view = await create({ startAt }, devices(3));
    expect(view.events).toEqual([{ at: created, type: 'CREATED', by: 'alice', startAt }]);
    advance(3_600_000);
    expect((await sweep()).started).toEqual([`${company}/${view.id}`]);
    advance(5_000);
    const cancelledAt = at();
    const cancelled = await cancelRollout(deps, operator('carol'), company, view.id);
    expect(cancelled.events).toEqual([
      { at: created, type: 'CREATED', by: 'alice', startAt },
      { at: startAt, type: 'STARTED' },
      { at: startAt, type: 'WAVE_STARTED', wave: 1 },
      { at: cancelledAt, type: 'CANCELLED', by: 'carol' },
    ]);
    expect(await eventsOf(view.id)).toEqual(cancelled.events);
  });

  it('records that a continuous rollout follows the devices that join once its waves are done, once', async () => {
    const view = await createRollout(
      deps,
      operator('alice'),
      company,
      { action: 'DEPLOY', what: SCENARIO, targets: { query: 'location.name=Lyon' }, continuous: true },
      devices(2),
      new Map([['location.name', ['Lyon']]]),
    );
    await drain();
    advance(60_000);
    await report('kiosk-00001', 'INSTALLED');
    await report('kiosk-00002', 'INSTALLED');
    const doneAt = at();
    expect((await sweep()).following).toEqual([`${company}/${view.id}`]);
    advance(60_000);
    await sweep();
    expect((await eventsOf(view.id)).slice(2)).toEqual([
      { at: doneAt, type: 'WAVE_COMPLETED', wave: 1, counts: { SUCCESS: 2, INSTALLED: 2 } },
      { at: doneAt, type: 'FOLLOWING' },
    ]);
  });

  it('records that a continuous rollout paused on its last wave follows the devices again once resumed', async () => {
    const view = await createRollout(
      deps,
      operator('alice'),
      company,
      { action: 'DEPLOY', what: SCENARIO, targets: { query: 'location.name=Lyon' }, continuous: true, failureThreshold: 0.1 },
      devices(2),
      new Map([['location.name', ['Lyon']]]),
    );
    await drain();
    advance(60_000);
    await report('kiosk-00001', 'INSTALLED');
    await report('kiosk-00002', 'FAILED');
    const pausedAt = at();
    expect((await sweep()).paused).toEqual([`${company}/${view.id}`]);
    advance(60_000);
    const resumedAt = at();
    await resumeRollout(deps, operator('bob'), company, view.id);
    const events = await eventsOf(view.id);
    expect(events.slice(2).map(({ at, type, wave, by }) => ({ at, type, wave, by }))).toEqual([
      { at: pausedAt, type: 'WAVE_COMPLETED', wave: 1, by: undefined },
      { at: pausedAt, type: 'PAUSED', wave: 1, by: undefined },
      { at: resumedAt, type: 'RESUMED', wave: undefined, by: 'bob' },
      { at: resumedAt, type: 'FOLLOWING', wave: undefined, by: undefined },
    ]);
    expect(events[3]?.reason).toMatch(/^Wave 1: 1 of 2 devices reported FAILED/);
  });

  it('two sweepers racing on a wave record its completion and the next start once', async () => {
    const view = await create({ waves: [1] }, devices(3));
    await drain();
    await report('kiosk-00001', 'INSTALLED');
    // Both read the rollout before either writes.
    const racing = readingTogether(rollouts);
    const race = () => sweepRollouts({ rollouts: racing, queue, chunkTimeoutSeconds: 15, now });
    const [one, two] = await Promise.all([race(), race()]);
    expect([...one.conflict, ...two.conflict]).toEqual([`${company}/${view.id}`]);
    expect((await eventsOf(view.id)).map((event) => `${event.type} ${event.wave ?? ''}`)).toEqual([
      'CREATED ',
      'WAVE_STARTED 1',
      'WAVE_COMPLETED 1',
      'WAVE_STARTED 2',
    ]);
  });

  it('keeps the first and the newest events of a rollout paused and resumed many times, counting the dropped ones', async () => {
    const view = await create({}, devices(1));
    const cycles = 110;
    for (let cycle = 0; cycle < cycles; cycle += 1) {
      advance(1_000);
      await pauseRollout(deps, operator('alice'), company, view.id);
      advance(1_000);
      await resumeRollout(deps, operator('bob'), company, view.id);
    }
    // Every event that was recorded, as the unbounded log would hold it.
    const all: RolloutEvent[] = [...view.events];
    for (let cycle = 0; cycle < cycles; cycle += 1) {
      const base = Date.parse(view.created) + cycle * 2_000;
      all.push({ at: new Date(base + 1_000).toISOString(), type: 'PAUSED', by: 'alice' });
      all.push({ at: new Date(base + 2_000).toISOString(), type: 'RESUMED', by: 'bob' });
    }
    const current = await getRollout(deps, operator('alice'), company, view.id);
    expect(current.events).toHaveLength(ROLLOUT_EVENTS_FIRST + ROLLOUT_EVENTS_NEWEST);
    expect(current.eventsDropped).toBe(all.length - (ROLLOUT_EVENTS_FIRST + ROLLOUT_EVENTS_NEWEST));
    expect(current.events.slice(0, ROLLOUT_EVENTS_FIRST)).toEqual(all.slice(0, ROLLOUT_EVENTS_FIRST));
    expect(current.events.slice(ROLLOUT_EVENTS_FIRST)).toEqual(all.slice(-ROLLOUT_EVENTS_NEWEST));
    // The whole item stays small (DynamoDB refuses items over 400 KB).
    expect(JSON.stringify(await rollouts.get(company, view.id)).length).toBeLessThan(40_000);
  });

  it('bounds the log however many events are added: withEvents keeps the first and the newest', () => {
    let rollout = { events: [] } as unknown as StoredRollout;
    for (let index = 0; index < 5_000; index += 1) {
      rollout = withEvents(rollout, { at: new Date(index * 1_000).toISOString(), type: index % 2 === 0 ? 'PAUSED' : 'RESUMED', by: 'x' });
    }
    expect(rollout.events).toHaveLength(ROLLOUT_EVENTS_FIRST + ROLLOUT_EVENTS_NEWEST);
    expect(rollout.eventsDropped).toBe(5_000 - ROLLOUT_EVENTS_FIRST - ROLLOUT_EVENTS_NEWEST);
    expect(rollout.events?.[0]?.at).toBe(new Date(0).toISOString());
    expect(rollout.events?.[ROLLOUT_EVENTS_FIRST - 1]?.at).toBe(new Date((ROLLOUT_EVENTS_FIRST - 1) * 1_000).toISOString());
    expect(rollout.events?.[ROLLOUT_EVENTS_FIRST]?.at).toBe(new Date((5_000 - ROLLOUT_EVENTS_NEWEST) * 1_000).toISOString());
    expect(rollout.events?.at(-1)?.at).toBe(new Date(4_999_000).toISOString());
  });

  it('answers [] for a rollout stored before events were recorded; its next transition starts the log', async () => {
    const view = await create({}, devices(1));
    const stored = (await rollouts.get(company, view.id)) as StoredRollout;
    const { events: _events, ...legacy } = stored;
    expect(await rollouts.update({ ...legacy, version: stored.version + 1 })).toBe(true);
    expect(rolloutView(legacy, new Map())).toMatchObject({ events: [], eventsDropped: 0 });
    expect(await eventsOf(view.id)).toEqual([]);
    advance(1_000);
    const paused = await pauseRollout(deps, operator('alice'), company, view.id);
    expect(paused.events).toEqual([{ at: at(), type: 'PAUSED', by: 'alice' }]);
  });

  it('a listing page that DynamoDB cut at 1 MB (rollouts carry their logs) ends with a cursor, not as the last page', async () => {
    const view = await create({}, devices(1));
    const item = { ...(await rollouts.get(company, view.id)), pk: `ROLLOUT#${company}`, sk: view.id };
    // What DynamoDB answers when the 1 MB read limit stops a query before `Limit`: fewer items, and a LastEvaluatedKey.
    const cut = {
      send: async () => ({ Items: [item], LastEvaluatedKey: { pk: item.pk, sk: item.sk } }),
    } as unknown as DynamoDBDocumentClient;
    const listing = new DynamoDbRolloutRepository(cut, LOCAL_TABLES, new CursorCodec(() => Buffer.alloc(32, 7)));
    const page = await listing.list(company, 50, undefined);
    expect(page.items.map((rollout) => rollout.id)).toEqual([view.id]);
    expect(page.nextCursor).not.toBeNull();
    // The real table, read whole: the last page has no cursor.
    expect((await rollouts.list(company, 50, undefined)).nextCursor).toBeNull();
  });
});
