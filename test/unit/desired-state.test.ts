import { randomBytes } from 'node:crypto';
import { ConditionalCheckFailedException, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { CursorCodec } from '../../functions/adapters/aws/cursor-codec.js';
import { DynamoDbDeploymentRepository } from '../../functions/adapters/aws/dynamodb-deployment-repository.js';
import { deviceDeploymentStatusPost } from '../../functions/contract/routes/device-side.js';
import { listActiveDeployments } from '../../functions/core/deployments.js';
import {
  DESIRED_STATE_URL_LIFETIME_SECONDS,
  desiredStateTag,
  deviceDesiredState,
  MAX_DEVICE_STATUS_MESSAGE_LENGTH,
  reportDeviceStatus,
} from '../../functions/core/desired-state.js';
import type { StoredDevice } from '../../functions/core/devices.js';
import { BadRequestError, ForbiddenError, NotFoundError, UnauthorizedError } from '../../functions/core/errors.js';
import type { ActiveDeployment, DeviceSlot, DeviceStatus, ScenarioVersion } from '../../functions/core/ports.js';
import type { Principal } from '../../functions/core/principal.js';
import { ifNoneMatchHolds, strongEntityTag } from '../../functions/platform/etag.js';
import { bodyOf } from '../support/route-input.js';

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

/** The deployments table of one company, as slots keyed `deviceId#scenarioId#version`. */
function world(slots: Record<string, DeviceSlot> = {}) {
  const table = new Map(Object.entries(slots));
  const calls = { versionReads: 0, presigns: [] as { key: string; seconds: number; filename: string }[], statusWrites: 0 };
  const devices = { get: async (company: string, deviceId: string) => (company === 'acme' && deviceId === device.id ? device : undefined) };
  const deployments = {
    activeOnDevice: async (_company: string, deviceId: string) =>
      [...table.entries()].filter(([key]) => key.startsWith(`${deviceId}#`)).map(([, value]) => value),
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
  return { table, calls, dependencies: { devices, deployments, catalog, archives, now: () => NOW } };
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

  it("the route's body takes the four states and a bounded message only", () => {
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
        return ((error as BadRequestError).extensions.errors as { path: string }[]).map((violation) => violation.path);
      }
    };
    expect(paths({ what, state: 'RUNNING' })).toEqual(['/state']);
    expect(paths({ what, state: 'FAILED', message: 'x'.repeat(MAX_DEVICE_STATUS_MESSAGE_LENGTH + 1) })).toEqual(['/message']);
    expect(paths({ what: { ...what, type: 'DEVICE' }, state: 'FAILED' })).toEqual(['/what/type']);
    expect(paths({ what, state: 'FAILED', deviceId: 'acme-kiosk-0002' })).toEqual(['/deviceId']);
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
  const tables = { companies: 'c', devices: 'd', scenarios: 's', deployments: 'deployments', presence: 'p', rollouts: 'r' };
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
