/**
 * listRolloutTargets with in-memory fakes: a rollout of three waves (the third spanning two chunks), chunks done or
 * not with their per-device failures, and devices' reported statuses; its filters, its paging with signed cursors,
 * and that statuses are read in batches, never once per target.
 */
import { randomBytes } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { CursorCodec } from '../../../functions/adapters/aws/cursor-codec.js';
import type { DeviceStatus } from '../../../functions/core/deployments/model.js';
import type { RolloutChunk, RolloutMember, StoredRollout } from '../../../functions/core/rollouts/model.js';
import type { TargetStatusReader } from '../../../functions/core/rollouts/ports.js';
import {
  listRolloutTargets,
  type RolloutTargetsDependencies,
  type RolloutTargetsQuery,
  type RolloutTargetView,
} from '../../../functions/core/rollouts/target-results.js';
import { BadRequestError, ForbiddenError, NotFoundError } from '../../../functions/core/shared/errors.js';
import type { Principal } from '../../../functions/core/shared/principal.js';

const COMPANY = 'acme';
const ROLLOUT_ID = '01JD2X3Y4Z5A6B7C8D9E0F1G2H';
const reader: Principal = { subject: 'bob', companies: [COMPANY], scopes: new Set(['deployments:read']) };
const ids = (prefix: string, count: number) => Array.from({ length: count }, (_, index) => `${prefix}-${String(index).padStart(3, '0')}`);

const rollout: StoredRollout = {
  id: ROLLOUT_ID,
  company: COMPANY,
  action: 'DEPLOY',
  what: { type: 'SCENARIO', id: 'welcome', subId: '1.0.0' },
  targetsSpec: { ids: 9 },
  targets: 9,
  waves: [
    { size: 3, state: 'COMPLETED', chunks: [0, 0] },
    { size: 2, state: 'RUNNING', chunks: [1, 1] },
    { size: 4, state: 'PENDING', chunks: [2, 3] },
  ],
  currentWave: 1,
  failureThreshold: 0.5,
  waveTimeoutSeconds: 3600,
  createdBy: 'alice',
  created: '2025-03-01T12:00:00.000Z',
  updated: '2025-03-01T12:00:00.000Z',
  state: 'RUNNING',
  version: 3,
};

const chunks: RolloutChunk[] = [
  {
    index: 0,
    wave: 0,
    deviceIds: ['a-1', 'a-2', 'a-3'],
    done: true,
    results: { SUCCESS: 2, TARGET_NOT_FOUND: 1 },
    failures: { 'a-3': 'TARGET_NOT_FOUND' },
  },
  { index: 1, wave: 1, deviceIds: ['b-1', 'b-2'], done: true, results: { SUCCESS: 1, ALREADY_DEPLOYED: 1 } },
  { index: 2, wave: 2, deviceIds: ['c-1', 'c-2'] },
  { index: 3, wave: 2, deviceIds: ['c-3', 'c-4'] },
];

const status = (state: DeviceStatus['state'], message?: string): DeviceStatus => ({
  id: '01JD2X3Y4Z5A6B7C8D9E0F1G3H',
  state,
  ...(message === undefined ? {} : { message }),
  updated: '2025-03-01T12:01:00.000Z',
});

/** Statuses by device id, and every batch of ids asked for. */
class FakeStatuses implements TargetStatusReader {
  readonly calls: string[][] = [];
  constructor(readonly statuses: Map<string, DeviceStatus>) {}
  async deviceStatuses(company: string, scenarioId: string, version: string, deviceIds: readonly string[]) {
    expect([company, scenarioId, version]).toEqual([COMPANY, 'welcome', '1.0.0']);
    this.calls.push([...deviceIds]);
    return new Map(deviceIds.flatMap((id) => (this.statuses.has(id) ? [[id, this.statuses.get(id) as DeviceStatus] as const] : [])));
  }
}

let statuses: FakeStatuses;
let deps: RolloutTargetsDependencies;
let chunkReads: number;
let memberReads: number;

function dependencies(
  stored: StoredRollout,
  storedChunks: RolloutChunk[],
  storedMembers: RolloutMember[] = [],
): RolloutTargetsDependencies {
  return {
    rollouts: {
      members: async (_company, _id, after, limit) => {
        memberReads += 1;
        const rest = storedMembers.filter((member) => after === undefined || member.deviceId > after);
        return { items: rest.slice(0, limit), more: rest.length > limit };
      },
      get: async (company, id) => (company === stored.company && id === stored.id ? stored : undefined),
      chunk: async (_company, _id, index) => {
        chunkReads += 1;
        return storedChunks[index];
      },
    },
    statuses,
    cursors: new CursorCodec(() => randomBytes(32)),
  };
}

const list = (query: Partial<RolloutTargetsQuery>, principal = reader, rolloutId = ROLLOUT_ID) =>
  listRolloutTargets(deps, principal, COMPANY, rolloutId, { limit: 100, ...query });

/** Every page of a listing, followed through its cursors. */
async function all(query: Partial<RolloutTargetsQuery>): Promise<{ items: RolloutTargetView[]; pages: number }> {
  const items: RolloutTargetView[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await list({ ...query, ...(cursor === undefined ? {} : { cursor }) });
    items.push(...page.items);
    pages += 1;
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined && pages < 50);
  return { items, pages };
}

beforeEach(() => {
  chunkReads = 0;
  memberReads = 0;
  statuses = new FakeStatuses(
    new Map([
      ['a-1', status('INSTALLED')],
      ['a-2', status('FAILED', 'disk full')],
      ['b-1', status('DOWNLOADING')],
    ]),
  );
  deps = dependencies(rollout, chunks);
});

describe('listRolloutTargets', () => {
  it('lists every target once, in wave order, with its wave, result and reported status', async () => {
    const page = await list({});
    expect(page.nextCursor).toBeNull();
    expect(page.items).toEqual([
      {
        deviceId: 'a-1',
        wave: 1,
        result: { state: 'SUCCESS', cause: null },
        deviceStatus: { state: 'INSTALLED', message: null, updated: '2025-03-01T12:01:00.000Z' },
      },
      {
        deviceId: 'a-2',
        wave: 1,
        result: { state: 'SUCCESS', cause: null },
        deviceStatus: { state: 'FAILED', message: 'disk full', updated: '2025-03-01T12:01:00.000Z' },
      },
      { deviceId: 'a-3', wave: 1, result: { state: 'FAILURE', cause: 'TARGET_NOT_FOUND' } },
      // Done before per-device failures were recorded, with a failure among its results: which one is unknown.
      {
        deviceId: 'b-1',
        wave: 2,
        result: { state: 'UNKNOWN', cause: null },
        deviceStatus: { state: 'DOWNLOADING', message: null, updated: '2025-03-01T12:01:00.000Z' },
      },
      { deviceId: 'b-2', wave: 2, result: { state: 'UNKNOWN', cause: null } },
      { deviceId: 'c-1', wave: 3, result: { state: 'PENDING', cause: null } },
      { deviceId: 'c-2', wave: 3, result: { state: 'PENDING', cause: null } },
      { deviceId: 'c-3', wave: 3, result: { state: 'PENDING', cause: null } },
      { deviceId: 'c-4', wave: 3, result: { state: 'PENDING', cause: null } },
    ]);
    // One batch of statuses per chunk, never one read per target.
    expect(statuses.calls).toEqual([
      ['a-1', 'a-2', 'a-3'],
      ['b-1', 'b-2'],
      ['c-1', 'c-2'],
      ['c-3', 'c-4'],
    ]);
  });

  it('reads a legacy chunk whose every deployment succeeded as SUCCESS', async () => {
    const legacy = chunks.map((chunk) => (chunk.index === 1 ? { ...chunk, results: { SUCCESS: 2 } } : chunk));
    deps = dependencies(rollout, legacy);
    expect((await list({ wave: 2 })).items.map((item) => item.result.state)).toEqual(['SUCCESS', 'SUCCESS']);
  });

  it('filters by wave, reading only that wave’s chunks', async () => {
    const page = await list({ wave: 3 });
    expect(page.items.map((item) => item.deviceId)).toEqual(['c-1', 'c-2', 'c-3', 'c-4']);
    expect(page.nextCursor).toBeNull();
    expect(chunkReads).toBe(2);
  });

  it('filters by result state and cause', async () => {
    expect((await list({ state: 'FAILURE' })).items.map((item) => item.deviceId)).toEqual(['a-3']);
    expect((await list({ cause: 'TARGET_NOT_FOUND' })).items.map((item) => item.deviceId)).toEqual(['a-3']);
    expect((await list({ cause: 'ALREADY_DEPLOYED' })).items).toEqual([]);
    expect((await list({ state: 'PENDING', wave: 1 })).items).toEqual([]);
    expect((await list({ state: 'PENDING' })).items.map((item) => item.deviceId)).toEqual(['c-1', 'c-2', 'c-3', 'c-4']);
  });

  it('filters by the reported status, with its message', async () => {
    const page = await list({ deviceStatus: 'FAILED' });
    expect(page.items).toEqual([
      {
        deviceId: 'a-2',
        wave: 1,
        result: { state: 'SUCCESS', cause: null },
        deviceStatus: { state: 'FAILED', message: 'disk full', updated: '2025-03-01T12:01:00.000Z' },
      },
    ]);
    // Filters combine (AND).
    expect((await list({ deviceStatus: 'FAILED', wave: 2 })).items).toEqual([]);
    expect((await list({ deviceStatus: 'INSTALLED', state: 'SUCCESS' })).items.map((item) => item.deviceId)).toEqual(['a-1']);
  });

  it('pages with cursors: every target once, across and within chunks', async () => {
    for (const limit of [1, 2, 4]) {
      const { items } = await all({ limit });
      expect(items.map((item) => item.deviceId)).toEqual(['a-1', 'a-2', 'a-3', 'b-1', 'b-2', 'c-1', 'c-2', 'c-3', 'c-4']);
    }
    statuses.calls.length = 0;
    const first = await list({ limit: 2 });
    expect(first.items.map((item) => item.deviceId)).toEqual(['a-1', 'a-2']);
    expect(first.nextCursor).not.toBeNull();
    // Statuses read only for the targets the page takes.
    expect(statuses.calls).toEqual([['a-1', 'a-2']]);
    // The page ending on the last target carries no cursor.
    const last = await list({ wave: 3, limit: 4 });
    expect(last.nextCursor).toBeNull();
  });

  it('ends a page early, with a cursor, after reading a bounded number of chunks', async () => {
    const many: RolloutChunk[] = Array.from({ length: 10 }, (_, index) => ({ index, wave: 0, deviceIds: ids(`d${index}`, 3) }));
    const big: StoredRollout = { ...rollout, targets: 30, waves: [{ size: 30, state: 'RUNNING', chunks: [0, 9] }], currentWave: 0 };
    deps = dependencies(big, many);
    const page = await list({ deviceStatus: 'FAILED' });
    expect(page.items).toEqual([]);
    expect(page.nextCursor).not.toBeNull();
    expect(chunkReads).toBe(4);
    const { items, pages } = await all({ state: 'PENDING' });
    expect(items).toHaveLength(30);
    expect(pages).toBe(3);
  });

  it('refuses a cursor of other filters, and one of another listing', async () => {
    const first = await list({ limit: 1 });
    const cursor = first.nextCursor as string;
    await expect(list({ limit: 1, cursor, wave: 1 })).rejects.toBeInstanceOf(BadRequestError);
    await expect(list({ limit: 1, cursor: `${cursor}x` })).rejects.toBeInstanceOf(BadRequestError);
    expect((await list({ limit: 1, cursor })).items.map((item) => item.deviceId)).toEqual(['a-2']);
  });

  it('refuses a wave beyond the rollout’s, naming how many it has', async () => {
    const error = await list({ wave: 4 }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as BadRequestError).message).toContain('has 3 waves');
  });

  it('answers NotFound for a rollout the company does not have, and Forbidden outside the token', async () => {
    await expect(list({}, reader, '01JD2X3Y4Z5A6B7C8D9E0F1G2J')).rejects.toBeInstanceOf(NotFoundError);
    await expect(list({}, reader, 'not-a-ulid')).rejects.toBeInstanceOf(NotFoundError);
    const outsider: Principal = { subject: 'eve', companies: ['globex'], scopes: new Set(['deployments:read']) };
    await expect(list({}, outsider)).rejects.toBeInstanceOf(ForbiddenError);
  });

  describe('of a continuous rollout', () => {
    const continuous: StoredRollout = {
      ...rollout,
      continuous: { filters: { 'health.mode': ['SERVER'] }, chunkFirstIds: ['a-1', 'b-1', 'c-1', 'c-3'] },
    };
    const members: RolloutMember[] = [
      { deviceId: 'm-1', wave: 2, at: '2025-03-01T13:00:00.000Z', result: 'SUCCESS' },
      { deviceId: 'm-2', wave: 2, at: '2025-03-01T13:00:01.000Z', result: 'ALREADY_DEPLOYED' },
      { deviceId: 'm-3', wave: 2, at: '2025-03-01T13:00:02.000Z' },
    ];
    beforeEach(() => {
      deps = dependencies(continuous, chunks, members);
      statuses.statuses.set('m-1', status('FAILED', 'no space left'));
    });

    it('lists the devices that joined after the chunks, in the last wave, with their recorded result', async () => {
      // The four chunks fill the first page's reads: the members follow on the next page.
      const first = await list({});
      expect(first.items.map((item) => item.deviceId)).toEqual(['a-1', 'a-2', 'a-3', 'b-1', 'b-2', 'c-1', 'c-2', 'c-3', 'c-4']);
      expect(first.nextCursor).not.toBeNull();
      const page = await list({ cursor: first.nextCursor as string });
      expect(page.nextCursor).toBeNull();
      expect(page.items).toEqual([
        {
          deviceId: 'm-1',
          wave: 3,
          result: { state: 'SUCCESS', cause: null },
          deviceStatus: { state: 'FAILED', message: 'no space left', updated: '2025-03-01T12:01:00.000Z' },
        },
        { deviceId: 'm-2', wave: 3, result: { state: 'FAILURE', cause: 'ALREADY_DEPLOYED' } },
        { deviceId: 'm-3', wave: 3, result: { state: 'PENDING', cause: null } },
      ]);
      expect((await all({ wave: 3 })).items.map((item) => item.deviceId)).toEqual(['c-1', 'c-2', 'c-3', 'c-4', 'm-1', 'm-2', 'm-3']);
      expect((await all({ wave: 1 })).items.map((item) => item.deviceId)).toEqual(['a-1', 'a-2', 'a-3']);
      expect((await all({ deviceStatus: 'FAILED' })).items.map((item) => item.deviceId)).toEqual(['a-2', 'm-1']);
      expect((await all({ cause: 'ALREADY_DEPLOYED' })).items.map((item) => item.deviceId)).toEqual(['m-2']);
      expect((await all({ state: 'PENDING', wave: 3 })).items.map((item) => item.deviceId)).toEqual(['c-1', 'c-2', 'c-3', 'c-4', 'm-3']);
    });

    it('pages across the chunks and the members with cursors, every target once', async () => {
      const paged = await all({ limit: 2 });
      expect(paged.items.map((item) => item.deviceId)).toEqual([
        'a-1',
        'a-2',
        'a-3',
        'b-1',
        'b-2',
        'c-1',
        'c-2',
        'c-3',
        'c-4',
        'm-1',
        'm-2',
        'm-3',
      ]);
      // Two members per page: the page that ends at m-2 leaves its cursor inside the members.
      expect(paged.pages).toBe(7);
      expect(memberReads).toBeGreaterThan(1);
    });
  });
});
