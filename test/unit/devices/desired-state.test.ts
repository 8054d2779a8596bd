import { randomBytes } from 'node:crypto';
import { ConditionalCheckFailedException, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { CursorCodec } from '../../../functions/adapters/aws/cursor-codec.js';
import { DynamoDbCommandRepository } from '../../../functions/adapters/aws/dynamodb-command-repository.js';
import { DynamoDbDeploymentRepository } from '../../../functions/adapters/aws/dynamodb-deployment-repository.js';
import { DynamoDbDeviceRepository } from '../../../functions/adapters/aws/dynamodb-device-repository.js';
import { deviceDeploymentStatusPost } from '../../../functions/contract/routes/device-side.js';
import { listActiveDeployments } from '../../../functions/core/deployments/deployments.js';
import type { ActiveDeployment, DeviceSlot, DeviceStatus } from '../../../functions/core/deployments/model.js';
import {
  DESIRED_STATE_URL_LIFETIME_SECONDS,
  desiredStateTag,
  deviceDesiredState,
  MAX_DEVICE_STATUS_MESSAGE_LENGTH,
  refreshDesiredStateTag,
  reportDeviceStatus,
} from '../../../functions/core/devices/desired-state.js';
import type { StoredDevice } from '../../../functions/core/devices/model.js';
import type { ScenarioVersion } from '../../../functions/core/scenarios/model.js';
import { BadRequestError, ForbiddenError, NotFoundError, UnauthorizedError } from '../../../functions/core/shared/errors.js';
import type { Principal } from '../../../functions/core/shared/principal.js';
import { ifNoneMatchHolds, strongEntityTag } from '../../../functions/platform/etag.js';
import { InMemoryCommands } from '../../support/in-memory-commands.js';
import { bodyOf } from '../../support/route-input.js';

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;
const NOW = new Date('2026-11-23T08:00:00.000Z');

const slot = (scenarioId: string, version: string, id: string, deviceStatus?: DeviceStatus): DeviceSlot => ({
  id,
  scenarioId,
  version,
  deployedAt: '2026-11-22T10:00:00.000Z',
  ...(deviceStatus === undefined ? {} : { deviceStatus }),
});

describe('desiredStateTag', () => {
  const a = slot('acme-welcome', '1.0.0', '01JA00000000000000000000AA');
  const b = slot('acme-welcome', '1.1.0', '01JB00000000000000000000BB');
  const c = slot('acme-menu', '2.0.0', '01JC00000000000000000000CC');

  it('does not depend on the order of the slots', () => {
    expect(desiredStateTag([a, b, c])).toBe(desiredStateTag([c, a, b]));
  });

  it('changes when a deployment is added, removed, or made again under a new id', () => {
    const tag = desiredStateTag([a, b]);
    expect(desiredStateTag([a, b, c])).not.toBe(tag);
    expect(desiredStateTag([a])).not.toBe(tag);
    expect(desiredStateTag([a, { ...b, id: '01JD00000000000000000000DD' }])).not.toBe(tag);
    expect(desiredStateTag([])).not.toBe(tag);
  });

  it('does not change with a status report or the deployment time', () => {
    const reported = { ...b, deviceStatus: { id: '01JS00000000000000000000SS', state: 'INSTALLED' as const, updated: NOW.toISOString() } };
    expect(desiredStateTag([a, reported])).toBe(desiredStateTag([a, b]));
  });

  it('is not fooled by identities that concatenate alike', () => {
    expect(desiredStateTag([slot('a', '1.0.0', 'x1')])).not.toBe(desiredStateTag([slot('a1', '.0.0', 'x1')]));
  });

  it('is usable inside a quoted entity tag', () => {
    expect(desiredStateTag([a])).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });
});

describe('ifNoneMatchHolds', () => {
  const tag = 'abc123';
  it.each([
    ['the strong tag', '"abc123"', true],
    ['the weak form (weak comparison)', 'W/"abc123"', true],
    ['a list holding it', '"old", W/"older" ,  "abc123"', true],
    ['*', '*', true],
    [' * with spaces', '  *  ', true],
    ['another tag', '"abc124"', false],
    ['a list without it', '"a", "b"', false],
    ['the tag unquoted (not an entity tag)', 'abc123', false],
    ['an empty header', '', false],
    ['a prefix of it', '"abc12"', false],
  ])('%s → %s', (_name, header, expected) => {
    expect(ifNoneMatchHolds(header, tag)).toBe(expected);
  });

  it('holds nothing without the header', () => {
    expect(ifNoneMatchHolds(undefined, tag)).toBe(false);
  });

  it('a tag sent back as received matches', () => {
    expect(ifNoneMatchHolds(strongEntityTag(tag), tag)).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Use cases, over in-memory fakes
// ---------------------------------------------------------------------------------------------------------------

const device: StoredDevice = {
  id: 'acme-kiosk-0001',
  company: 'acme',
  serial: 'S1',
  created: '2026-11-01T00:00:00.000Z',
  updated: '2026-11-01T00:00:00.000Z',
  connection: { state: 'UNKNOWN' },
  credential: { id: '01JCRED0000000000000000000', secretHash: 'scrypt$…', created: '2026-11-01T00:00:00.000Z' },
};

const kiosk: Principal = {
  subject: 'acme-kiosk-0001',
  companies: ['acme'],
  scopes: new Set(['device']),
  device: { company: 'acme', deviceId: 'acme-kiosk-0001', credentialId: '01JCRED0000000000000000000' },
};

const version = (scenarioId: string, semver: string): ScenarioVersion => ({
  company: 'acme',
  scenarioId,
  version: semver,
  name: `${scenarioId} ${semver}`,
  size: 1234,
  sha256: 'ab'.repeat(32),
  archiveKey: `companies/acme/${scenarioId}/${semver}.zip`,
  uploadedBy: 'alice',
  created: '2026-11-01T00:00:00.000Z',
});

/**
 * The deployments table of one company, as slots keyed `deviceId#scenarioId#version`, and its one device (whose
 * stored desired state version a compare-and-set changes), counting the reads of each.
 */
function world(slots: Record<string, DeviceSlot> = {}) {
  const table = new Map(Object.entries(slots));
  const calls = {
    versionReads: 0,
    presigns: [] as { key: string; seconds: number; filename: string }[],
    statusWrites: 0,
    deviceReads: 0,
    deploymentQueries: 0,
    tagWrites: 0,
  };
  const stored: StoredDevice = structuredClone(device);
  const devices = {
    get: async (company: string, deviceId: string) => {
      calls.deviceReads += 1;
      return company === 'acme' && deviceId === stored.id ? structuredClone(stored) : undefined;
    },
    setDesiredState: async (company: string, deviceId: string, tag: string, expected: number | undefined) => {
      if (company !== 'acme' || deviceId !== stored.id) return 'absent' as const;
      if (stored.desiredState?.generation !== expected) return 'conflict' as const;
      calls.tagWrites += 1;
      stored.desiredState = { tag, generation: (expected ?? 0) + 1 };
      return 'written' as const;
    },
  };
  const deployments = {
    activeOnDevice: async (_company: string, deviceId: string) => {
      calls.deploymentQueries += 1;
      return [...table.entries()].filter(([key]) => key.startsWith(`${deviceId}#`)).map(([, value]) => structuredClone(value));
    },
    recordDeviceStatus: async (identity: Pick<ActiveDeployment, 'deviceId' | 'scenarioId' | 'version'>, status: DeviceStatus) => {
      calls.statusWrites += 1;
      const key = `${identity.deviceId}#${identity.scenarioId}#${identity.version}`;
      const found = table.get(key);
      if (found === undefined) return false;
      table.set(key, { ...found, deviceStatus: status });
      return true;
    },
  };
  const catalog = {
    getVersions: async (_company: string, references: readonly { scenarioId: string; version: string }[]) => {
      calls.versionReads += 1;
      return references.map((reference) => version(reference.scenarioId, reference.version));
    },
  };
  const archives = {
    presignGet: async (key: string, seconds: number, filename: string) => {
      calls.presigns.push({ key, seconds, filename });
      return `http://127.0.0.1:9/archives/${key}?signed`;
    },
  };
  const commands = new InMemoryCommands();
  // The sampled check of the stored tag is off unless a test turns it on (`check.next`).
  const check = { next: false };
  return {
    table,
    calls,
    stored,
    check,
    commands,
    dependencies: { devices, deployments, catalog, archives, commands, now: () => NOW, checkStoredTag: () => check.next },
  };
}

describe('deviceDesiredState', () => {
  const reported: DeviceStatus = { id: '01JS00000000000000000000SS', state: 'FAILED', message: 'disk full', updated: NOW.toISOString() };
  const seeded = () =>
    world({
      'acme-kiosk-0001#acme-welcome#1.0.0': slot('acme-welcome', '1.0.0', '01JA00000000000000000000AA', reported),
      'acme-kiosk-0001#acme-welcome#1.1.0': slot('acme-welcome', '1.1.0', '01JB00000000000000000000BB'),
      'acme-kiosk-0002#acme-welcome#1.0.0': slot('acme-welcome', '1.0.0', '01JC00000000000000000000CC'),
    });

  it("lists the device's own deployments with a download valid an hour and the latest status", async () => {
    const { dependencies, calls } = seeded();
    const state = await deviceDesiredState(dependencies, kiosk, () => false);
    expect(state.unchanged).toBe(false);
    expect(state.unchanged === false && state.items).toEqual([
      {
        what: { type: 'SCENARIO', id: 'acme-welcome', subId: '1.0.0' },
        name: 'acme-welcome 1.0.0',
        size: 1234,
        sha256: 'ab'.repeat(32),
        downloadUrl: 'http://127.0.0.1:9/archives/companies/acme/acme-welcome/1.0.0.zip?signed',
        downloadUrlExpiresAt: new Date(NOW.getTime() + DESIRED_STATE_URL_LIFETIME_SECONDS * 1000).toISOString(),
        deployedAt: '2026-11-22T10:00:00.000Z',
        status: { state: 'FAILED', message: 'disk full', updated: NOW.toISOString() },
      },
      expect.not.objectContaining({ status: expect.anything() }),
    ]);
    expect(calls.presigns.map((presign) => [presign.seconds, presign.filename])).toEqual([
      [3600, 'acme-welcome-1.0.0.zip'],
      [3600, 'acme-welcome-1.1.0.zip'],
    ]);
  });

  it('answers only the tag, reading no version and signing nothing, when the device holds it', async () => {
    const { dependencies, calls } = seeded();
    const first = await deviceDesiredState(dependencies, kiosk, () => false);
    calls.versionReads = 0;
    calls.presigns.length = 0;
    const asked: string[] = [];
    const again = await deviceDesiredState(dependencies, kiosk, (tag) => {
      asked.push(tag);
      return tag === first.tag;
    });
    expect(again).toEqual({ tag: first.tag, unchanged: true });
    expect(asked).toEqual([first.tag]);
    expect(calls.versionReads).toBe(0);
    expect(calls.presigns).toEqual([]);
  });

  it('refuses a user token (403) and a token of a device whose credential was replaced (401)', async () => {
    const { dependencies } = seeded();
    const alice: Principal = { subject: 'alice', companies: ['acme'], scopes: new Set(['deployments:read']) };
    await expect(deviceDesiredState(dependencies, alice, () => false)).rejects.toBeInstanceOf(ForbiddenError);
    const stale = {
      ...kiosk,
      device: { ...(kiosk.device as NonNullable<Principal['device']>), credentialId: '01JOLD00000000000000000000' },
    };
    await expect(deviceDesiredState(dependencies, stale, () => false)).rejects.toBeInstanceOf(UnauthorizedError);
  });
});

describe('the desired state tag kept on the device item', () => {
  const seeded = () =>
    world({
      'acme-kiosk-0001#acme-welcome#1.0.0': slot('acme-welcome', '1.0.0', '01JA00000000000000000000AA'),
      'acme-kiosk-0002#acme-welcome#1.0.0': slot('acme-welcome', '1.0.0', '01JC00000000000000000000CC'),
    });
  const holding = (tag: string) => (candidate: string) => candidate === tag;

  it('answers a poll holding the stored tag after one read of the device, without querying its deployments', async () => {
    const { dependencies, calls } = seeded();
    const first = await deviceDesiredState(dependencies, kiosk);
    expect(first.unchanged).toBe(false);
    // The first poll with a tag stores it for a device that has none (its deployments are queried once more).
    expect(await deviceDesiredState(dependencies, kiosk, holding(first.tag))).toEqual({ tag: first.tag, unchanged: true });
    expect(calls.tagWrites).toBe(1);
    Object.assign(calls, { deviceReads: 0, deploymentQueries: 0, versionReads: 0, tagWrites: 0 });
    calls.presigns.length = 0;
    for (let poll = 0; poll < 3; poll += 1) {
      expect(await deviceDesiredState(dependencies, kiosk, holding(first.tag))).toEqual({ tag: first.tag, unchanged: true });
    }
    expect(calls).toMatchObject({ deviceReads: 3, deploymentQueries: 0, versionReads: 0, tagWrites: 0, presigns: [] });
  });

  it('changes after a deploy and after an undeploy once refreshed: a poll holding the old tag then gets the new state', async () => {
    const { dependencies, table, stored } = seeded();
    await refreshDesiredStateTag(dependencies, 'acme', 'acme-kiosk-0001');
    const before = stored.desiredState?.tag as string;
    expect(before).toBe(desiredStateTag([slot('acme-welcome', '1.0.0', '01JA00000000000000000000AA')]));

    table.set('acme-kiosk-0001#acme-welcome#1.1.0', slot('acme-welcome', '1.1.0', '01JB00000000000000000000BB'));
    // Until the stream consumer refreshes it, the stored tag is the previous one: the documented lag.
    expect((await deviceDesiredState(dependencies, kiosk, holding(before))).unchanged).toBe(true);
    await refreshDesiredStateTag(dependencies, 'acme', 'acme-kiosk-0001');
    const deployed = stored.desiredState?.tag as string;
    expect(deployed).not.toBe(before);
    const afterDeploy = await deviceDesiredState(dependencies, kiosk, holding(before));
    expect(afterDeploy.unchanged === false && afterDeploy.items.map((item) => item.what.subId)).toEqual(['1.0.0', '1.1.0']);
    expect(afterDeploy.tag).toBe(deployed);
    expect((await deviceDesiredState(dependencies, kiosk, holding(deployed))).unchanged).toBe(true);

    table.delete('acme-kiosk-0001#acme-welcome#1.0.0');
    await refreshDesiredStateTag(dependencies, 'acme', 'acme-kiosk-0001');
    const undeployed = stored.desiredState?.tag as string;
    expect(undeployed).not.toBe(deployed);
    const afterUndeploy = await deviceDesiredState(dependencies, kiosk, holding(deployed));
    expect(afterUndeploy.unchanged === false && afterUndeploy.items.map((item) => item.what.subId)).toEqual(['1.1.0']);
    expect(stored.desiredState?.generation).toBe(3);
  });

  it('corrects a stale stored tag that the device holds at a sampled check, so that a lost refresh is not lost for ever', async () => {
    const { dependencies, table, stored, check, calls } = seeded();
    await refreshDesiredStateTag(dependencies, 'acme', 'acme-kiosk-0001');
    const before = stored.desiredState?.tag as string;
    // A deploy whose refresh is lost (its stream record dropped, or handled by an older consumer during an upgrade).
    table.set('acme-kiosk-0001#acme-welcome#1.1.0', slot('acme-welcome', '1.1.0', '01JB00000000000000000000BB'));
    for (let poll = 0; poll < 3; poll += 1) expect((await deviceDesiredState(dependencies, kiosk, holding(before))).unchanged).toBe(true);
    check.next = true;
    const checked = await deviceDesiredState(dependencies, kiosk, holding(before));
    expect(checked.unchanged === false && checked.items.map((item) => item.what.subId)).toEqual(['1.0.0', '1.1.0']);
    expect(stored.desiredState?.tag).toBe(checked.tag);
    // A check that finds the stored tag right writes nothing.
    Object.assign(calls, { deploymentQueries: 0, tagWrites: 0 });
    expect((await deviceDesiredState(dependencies, kiosk, holding(checked.tag))).unchanged).toBe(true);
    expect(calls).toMatchObject({ deploymentQueries: 1, tagWrites: 0 });
  });

  it('ends on the current tag when a refresh that queried before an undeploy writes after the undeploy’s own refresh', async () => {
    const { dependencies, table, stored } = seeded();
    await refreshDesiredStateTag(dependencies, 'acme', 'acme-kiosk-0001');
    const current = stored.desiredState?.tag as string;
    // A deploy, whose refresh queries (seeing it) and is then held before its write...
    table.set('acme-kiosk-0001#acme-welcome#1.1.0', slot('acme-welcome', '1.1.0', '01JB00000000000000000000BB'));
    let resume: () => void = () => undefined;
    const held = new Promise<void>((done) => {
      resume = done;
    });
    const outcomes: string[] = [];
    let firstWrite = true;
    let queried: () => void = () => undefined;
    const firstQuery = new Promise<void>((done) => {
      queried = done;
    });
    const slowWriter = {
      ...dependencies,
      deployments: {
        activeOnDevice: async (company: string, deviceId: string) => {
          const slots = await dependencies.deployments.activeOnDevice(company, deviceId);
          queried();
          return slots;
        },
      },
      devices: {
        ...dependencies.devices,
        setDesiredState: async (company: string, deviceId: string, tag: string, expected: number | undefined) => {
          if (firstWrite) {
            firstWrite = false;
            await held;
          }
          const outcome = await dependencies.devices.setDesiredState(company, deviceId, tag, expected);
          outcomes.push(outcome);
          return outcome;
        },
      },
    };
    const deployRefresh = refreshDesiredStateTag(slowWriter, 'acme', 'acme-kiosk-0001');
    await firstQuery;
    // ...then the undeploy of the same deployment, whose refresh runs to the end: the set is back to what it was.
    table.delete('acme-kiosk-0001#acme-welcome#1.1.0');
    await refreshDesiredStateTag(dependencies, 'acme', 'acme-kiosk-0001');
    expect(stored.desiredState?.tag).toBe(current);
    resume();
    await deployRefresh;
    // The held write found another generation, read again and wrote the tag of the set as it is.
    expect(outcomes).toEqual(['conflict', 'written']);
    expect(stored.desiredState?.tag).toBe(current);
  });

  it('leaves a device that no longer exists alone', async () => {
    const { dependencies, calls } = seeded();
    await refreshDesiredStateTag(dependencies, 'acme', 'acme-kiosk-0404');
    expect(calls.tagWrites).toBe(0);
  });
});

describe('reportDeviceStatus', () => {
  const seeded = () => world({ 'acme-kiosk-0001#acme-welcome#1.0.0': slot('acme-welcome', '1.0.0', '01JA00000000000000000000AA') });

  it('sets a new status, with a fresh ULID, on the active deployment', async () => {
    const { dependencies, table } = seeded();
    const first = await reportDeviceStatus(dependencies, kiosk, { scenarioId: 'acme-welcome', version: '1.0.0', state: 'DOWNLOADING' });
    const second = await reportDeviceStatus(dependencies, kiosk, {
      scenarioId: 'acme-welcome',
      version: '1.0.0',
      state: 'INSTALLED',
      message: 'ok',
    });
    expect(first.id).toMatch(ULID);
    expect(second.id).not.toBe(first.id);
    expect(table.get('acme-kiosk-0001#acme-welcome#1.0.0')?.deviceStatus).toEqual({
      id: second.id,
      state: 'INSTALLED',
      message: 'ok',
      updated: NOW.toISOString(),
    });
  });

  it('is 404 for a version not active on the device, and for ids that address no slot (without writing)', async () => {
    const { dependencies, calls } = seeded();
    await expect(
      reportDeviceStatus(dependencies, kiosk, { scenarioId: 'acme-welcome', version: '1.1.0', state: 'INSTALLED' }),
    ).rejects.toBeInstanceOf(NotFoundError);
    expect(calls.statusWrites).toBe(1);
    await expect(
      reportDeviceStatus(dependencies, kiosk, { scenarioId: 'acme-welcome#1.0.0', version: '1.0.0', state: 'INSTALLED' }),
    ).rejects.toBeInstanceOf(NotFoundError);
    expect(calls.statusWrites).toBe(1);
  });

  it("the route's body takes the four states and a bounded message without control characters only", () => {
    const what = { type: 'SCENARIO', id: 'acme-welcome', subId: '1.0.0' };
    for (const state of ['DOWNLOADING', 'INSTALLING', 'INSTALLED', 'FAILED']) {
      expect(bodyOf(deviceDeploymentStatusPost, { what, state }).state).toBe(state);
    }
    const paths = (body: unknown) => {
      try {
        bodyOf(deviceDeploymentStatusPost, body);
        return [];
      } catch (error) {
        expect(error).toBeInstanceOf(BadRequestError);
        return (error as BadRequestError).violations.map((violation) => violation.path);
      }
    };
    expect(paths({ what, state: 'RUNNING' })).toEqual(['/state']);
    expect(paths({ what, state: 'FAILED', message: 'x'.repeat(MAX_DEVICE_STATUS_MESSAGE_LENGTH + 1) })).toEqual(['/message']);
    expect(paths({ what: { ...what, type: 'DEVICE' }, state: 'FAILED' })).toEqual(['/what/type']);
    expect(paths({ what, state: 'FAILED', deviceId: 'acme-kiosk-0002' })).toEqual(['/deviceId']);
    // A message is a display text: no control character but tab and line breaks; bidirectional text stays as sent.
    expect(paths({ what, state: 'FAILED', message: 'disk full\u001b]0;pwned\u0007' })).toEqual(['/message']);
    expect(paths({ what, state: 'FAILED', message: 'disk full\r\n\tretry \u202Egnp.exe\u202C' })).toEqual([]);
  });
});

describe('listActiveDeployments', () => {
  it("shows the device's latest status on the items that have one", async () => {
    const active: ActiveDeployment[] = [
      {
        id: '01JA00000000000000000000AA',
        company: 'acme',
        deviceId: 'acme-kiosk-0001',
        scenarioId: 'acme-welcome',
        version: '1.0.0',
        deployedAt: '2026-11-22T10:00:00.000Z',
        deployedBy: 'alice',
        deviceStatus: { id: '01JS00000000000000000000SS', state: 'INSTALLING', updated: NOW.toISOString() },
      },
      {
        id: '01JB00000000000000000000BB',
        company: 'acme',
        deviceId: 'acme-kiosk-0001',
        scenarioId: 'acme-welcome',
        version: '1.1.0',
        deployedAt: '2026-11-22T10:00:00.000Z',
        deployedBy: 'alice',
      },
    ];
    const page = await listActiveDeployments(
      {
        devices: { existing: async () => new Set(['acme-kiosk-0001']) } as never,
        deployments: { listActive: async () => ({ items: active, nextCursor: null }) } as never,
      },
      { subject: 'alice', companies: ['acme'], scopes: new Set(['deployments:read']) },
      'acme',
      'acme-kiosk-0001',
      { limit: 100 },
    );
    expect(page.items.map((item) => item.deviceStatus)).toEqual([
      { state: 'INSTALLING', message: null, updated: NOW.toISOString() },
      undefined,
    ]);
    expect(page.items[1]).not.toHaveProperty('deviceStatus');
  });
});

describe('DynamoDbDeploymentRepository, device side (mocked DynamoDB)', () => {
  const documentClient = DynamoDBDocumentClient.from(
    new DynamoDBClient({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } }),
  );
  const mock = mockClient(documentClient);
  afterEach(() => mock.reset());
  const tables = {
    companies: 'c',
    devices: 'd',
    scenarios: 's',
    deployments: 'deployments',
    presence: 'p',
    rollouts: 'r',
    commands: 'commands',
  };
  const repository = new DynamoDbDeploymentRepository(documentClient, tables, new CursorCodec(() => randomBytes(32)));
  const status: DeviceStatus = { id: '01JS00000000000000000000SS', state: 'INSTALLED', updated: NOW.toISOString() };

  it("reads every page of the device's active slots, projecting only what the desired state needs", async () => {
    mock
      .on(QueryCommand)
      .resolvesOnce({
        Items: [{ id: 'A', scenarioId: 'acme-welcome', version: '1.0.0', deployedAt: 'T1', deviceStatus: status }],
        LastEvaluatedKey: { pk: 'ACTIVE#acme#8', sk: 'acme-kiosk-0001#acme-welcome#1.0.0' },
      })
      .resolvesOnce({ Items: [{ id: 'B', scenarioId: 'acme-welcome', version: '1.1.0', deployedAt: 'T2' }] });
    expect(await repository.activeOnDevice('acme', 'acme-kiosk-0001')).toEqual([
      { id: 'A', scenarioId: 'acme-welcome', version: '1.0.0', deployedAt: 'T1', deviceStatus: status },
      { id: 'B', scenarioId: 'acme-welcome', version: '1.1.0', deployedAt: 'T2' },
    ]);
    const [first, second] = mock.commandCalls(QueryCommand).map((call) => call.args[0].input);
    expect(first).toMatchObject({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': 'ACTIVE#acme#8', ':prefix': 'acme-kiosk-0001#' },
      FilterExpression: 'attribute_not_exists(#undeploy)',
      ConsistentRead: true,
    });
    expect(first?.ProjectionExpression).not.toMatch(/note|deployedBy/);
    expect(second?.ExclusiveStartKey).toEqual({ pk: 'ACTIVE#acme#8', sk: 'acme-kiosk-0001#acme-welcome#1.0.0' });
  });

  it('sets the status with one conditional update of an active slot, false when the condition is refused', async () => {
    mock
      .on(UpdateCommand)
      .resolvesOnce({})
      .rejects(new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} }));
    const identity = { company: 'acme', deviceId: 'acme-kiosk-0001', scenarioId: 'acme-welcome', version: '1.0.0' };
    expect(await repository.recordDeviceStatus(identity, status)).toBe(true);
    expect(await repository.recordDeviceStatus(identity, status)).toBe(false);
    expect(mock.commandCalls(UpdateCommand)[0]?.args[0].input).toMatchObject({
      Key: { pk: 'ACTIVE#acme#8', sk: 'acme-kiosk-0001#acme-welcome#1.0.0' },
      UpdateExpression: 'SET deviceStatus = :status',
      ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(undeploy)',
      ExpressionAttributeValues: { ':status': status },
    });
  });
});

describe('the desired state on DynamoDB (mocked): what a poll costs', () => {
  const documentClient = DynamoDBDocumentClient.from(
    new DynamoDBClient({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } }),
  );
  const mock = mockClient(documentClient);
  afterEach(() => mock.reset());
  const tables = {
    companies: 'c',
    devices: 'devices',
    scenarios: 's',
    deployments: 'deployments',
    presence: 'p',
    rollouts: 'r',
    commands: 'commands',
  };
  const devices = new DynamoDbDeviceRepository(documentClient, tables);
  const deployments = new DynamoDbDeploymentRepository(documentClient, tables, new CursorCodec(() => randomBytes(32)));
  const commands = new DynamoDbCommandRepository(documentClient, tables, new CursorCodec(() => randomBytes(32)));
  const unused = async (): Promise<never> => {
    throw new Error('not read on this path');
  };
  const dependencies = {
    devices,
    deployments,
    commands,
    catalog: { getVersions: unused },
    archives: { presignGet: unused },
    checkStoredTag: () => false,
  };
  const tag = desiredStateTag([slot('acme-welcome', '1.0.0', '01JA00000000000000000000AA')]);
  const item = { ...device, deviceId: device.id, entity: 'DEVICE', desiredState: { tag, generation: 3 } };

  it('a poll holding the stored tag is one strongly consistent GetItem of the device, and no other call', async () => {
    mock.on(GetCommand).resolves({ Item: item });
    const state = await deviceDesiredState(dependencies, kiosk, (candidate) => ifNoneMatchHolds(strongEntityTag(tag), candidate));
    expect(state).toEqual({ tag, unchanged: true });
    expect(mock.calls()).toHaveLength(1);
    expect(mock.commandCalls(GetCommand)[0]?.args[0].input).toEqual({
      TableName: 'devices',
      Key: { company: 'acme', deviceId: 'acme-kiosk-0001' },
      ConsistentRead: true,
    });
  });

  it('a poll holding another tag than the stored one also queries the deployments, and compares with their tag', async () => {
    // The stored tag lags (the stream consumer has not refreshed it yet); the device already holds the current one.
    mock.on(GetCommand).resolves({ Item: { ...item, desiredState: { tag: 'AAAAAAAAAAAAAAAAAAAAAA', generation: 2 } } });
    mock
      .on(QueryCommand, { TableName: 'deployments' })
      .resolves({ Items: [{ id: '01JA00000000000000000000AA', scenarioId: 'acme-welcome', version: '1.0.0', deployedAt: 'T1' }] });
    mock.on(QueryCommand, { TableName: 'commands' }).resolves({ Items: [] });
    const state = await deviceDesiredState(dependencies, kiosk, (candidate) => candidate === tag);
    expect(state).toEqual({ tag, unchanged: true });
    // The stored tag is corrected, on condition that it is still the one read (generation 2); the deployments and the
    // pending commands are queried at once.
    expect(mock.calls().map((call) => call.args[0].constructor.name)).toEqual([
      'GetCommand',
      'QueryCommand',
      'QueryCommand',
      'UpdateCommand',
    ]);
    expect(mock.commandCalls(UpdateCommand)[0]?.args[0].input).toMatchObject({
      ExpressionAttributeValues: { ':desired': { tag, generation: 3 }, ':expected': 2 },
    });
  });

  it('stores a tag with a compare-and-set on its generation, never creating a device', async () => {
    const refused = (stored?: Record<string, unknown>) =>
      Object.assign(new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} }), {
        ...(stored === undefined ? {} : { Item: marshall(stored) }),
      });
    mock.on(UpdateCommand).resolvesOnce({}).resolvesOnce({}).rejectsOnce(refused(item)).rejectsOnce(refused());
    expect(await devices.setDesiredState('acme', 'acme-kiosk-0001', tag, undefined)).toBe('written');
    expect(await devices.setDesiredState('acme', 'acme-kiosk-0001', tag, 3)).toBe('written');
    expect(await devices.setDesiredState('acme', 'acme-kiosk-0001', tag, 2)).toBe('conflict');
    expect(await devices.setDesiredState('acme', 'acme-kiosk-0404', tag, undefined)).toBe('absent');
    const [first, second] = mock.commandCalls(UpdateCommand).map((call) => call.args[0].input);
    expect(first).toMatchObject({
      Key: { company: 'acme', deviceId: 'acme-kiosk-0001' },
      UpdateExpression: 'SET #desired = :desired',
      ConditionExpression: 'attribute_exists(deviceId) AND attribute_not_exists(#desired)',
      ExpressionAttributeValues: { ':desired': { tag, generation: 1 } },
    });
    expect(second).toMatchObject({
      ConditionExpression: 'attribute_exists(deviceId) AND #desired.#generation = :expected',
      ExpressionAttributeValues: { ':desired': { tag, generation: 4 }, ':expected': 3 },
    });
  });
});
