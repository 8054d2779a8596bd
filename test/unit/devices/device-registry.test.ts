import { describe, expect, it } from 'vitest';
import { devicesRegister } from '../../../functions/contract/routes/devices.js';
import { RESERVED_DEVICE_IDS, ROUTES, reservedPathSegments } from '../../../functions/contract/routes.js';
import type { Command } from '../../../functions/core/commands/model.js';
import type { ActiveDeployment, UndeployMark } from '../../../functions/core/deployments/model.js';
import type { DeploymentRepository } from '../../../functions/core/deployments/ports.js';
import type { Device, DeviceCredential, StoredDevice } from '../../../functions/core/devices/model.js';
import type { DeviceRepository, DeviceStaticFields, PresenceRepository } from '../../../functions/core/devices/ports.js';
import {
  type DeviceRegistrationDependencies,
  deleteDevice,
  getDevice,
  issueDeviceCredentials,
  putDevice,
  registerDevices,
} from '../../../functions/core/devices/registry.js';
import { verifyDeviceSecret } from '../../../functions/core/devices/tokens.js';
import {
  BadRequestError,
  ConflictError,
  ForbiddenError,
  NotFoundError,
  PayloadTooLargeError,
} from '../../../functions/core/shared/errors.js';
import type { Page } from '../../../functions/core/shared/paging.js';
import type { Principal } from '../../../functions/core/shared/principal.js';
import { InMemoryCommands } from '../../support/in-memory-commands.js';
import { bodyOf } from '../../support/route-input.js';

/** The devices table in a Map; each call is atomic, as a conditional write is. */
class FakeDevices implements Omit<DeviceRepository, 'recordHealth'> {
  readonly items = new Map<string, StoredDevice>();
  /** Makes create/update throw for this device id. */
  failFor: string | undefined;
  /** Creates and updates attempted, each a conditional write. */
  writes = 0;

  private key(companyId: string, deviceId: string): string {
    return `${companyId}#${deviceId}`;
  }
  async existing(companyId: string, deviceIds: readonly string[]): Promise<Set<string>> {
    return new Set(deviceIds.filter((id) => this.items.has(this.key(companyId, id)) && !this.items.get(this.key(companyId, id))?.deleting));
  }
  async put(devices: readonly Device[]): Promise<void> {
    for (const device of devices) this.items.set(this.key(device.company, device.id), structuredClone(device));
  }
  async get(companyId: string, deviceId: string): Promise<StoredDevice | undefined> {
    const item = this.items.get(this.key(companyId, deviceId));
    return item === undefined ? undefined : structuredClone(item);
  }
  async create(device: Device): Promise<boolean> {
    this.writes += 1;
    if (this.failFor === device.id) throw new Error('simulated database failure');
    if (this.items.has(this.key(device.company, device.id))) return false;
    this.items.set(this.key(device.company, device.id), structuredClone(device));
    return true;
  }
  async update(companyId: string, deviceId: string, fields: DeviceStaticFields, updated: string): Promise<StoredDevice | undefined> {
    this.writes += 1;
    if (this.failFor === deviceId) throw new Error('simulated database failure');
    const item = this.items.get(this.key(companyId, deviceId));
    if (item === undefined || item.deleting === true) return undefined;
    const defined = Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
    Object.assign(item, structuredClone(defined), { updated });
    return structuredClone(item);
  }
  async setCredential(companyId: string, deviceId: string, credential: DeviceCredential): Promise<boolean> {
    const item = this.items.get(this.key(companyId, deviceId));
    if (item === undefined || item.deleting === true) return false;
    item.credential = credential;
    return true;
  }
  async markDeleting(companyId: string, deviceId: string): Promise<boolean> {
    const item = this.items.get(this.key(companyId, deviceId));
    if (item === undefined) return false;
    item.deleting = true;
    return true;
  }
  async remove(companyId: string, deviceId: string): Promise<void> {
    this.items.delete(this.key(companyId, deviceId));
  }
  async setDesiredState(): Promise<never> {
    throw new Error('not used');
  }
}

/** Active deployments in a Map, paged two at a time so that a delete must follow cursors. */
class FakeDeployments implements Pick<DeploymentRepository, 'listActive' | 'deactivate'> {
  readonly active = new Map<string, ActiveDeployment>();
  readonly marks: { deployment: string; mark: UndeployMark }[] = [];
  /** Called once, after the first listing: a deployment that slips in while a delete runs. */
  onFirstList: (() => void) | undefined;

  add(deployment: ActiveDeployment): void {
    this.active.set(`${deployment.company}#${deployment.deviceId}#${deployment.scenarioId}#${deployment.version}`, deployment);
  }
  async listActive(
    companyId: string,
    deviceId: string | undefined,
    _limit: number,
    cursor: string | undefined,
  ): Promise<Page<ActiveDeployment>> {
    // The cursor is the last key read, as DynamoDB's LastEvaluatedKey: slots undeployed meanwhile shift nothing.
    const sortKey = (deployment: ActiveDeployment) => `${deployment.scenarioId}#${deployment.version}`;
    const items = [...this.active.values()]
      .filter((deployment) => deployment.company === companyId && (deviceId === undefined || deployment.deviceId === deviceId))
      .filter((deployment) => cursor === undefined || sortKey(deployment) > cursor)
      .sort((left, right) => sortKey(left).localeCompare(sortKey(right)));
    const slice = items.slice(0, 2);
    const page = { items: slice, nextCursor: items.length > 2 ? sortKey(slice[1] as ActiveDeployment) : null };
    const hook = this.onFirstList;
    this.onFirstList = undefined;
    hook?.();
    return page;
  }
  async deactivate(
    identity: Pick<ActiveDeployment, 'company' | 'deviceId' | 'scenarioId' | 'version'>,
    undeploy: UndeployMark,
  ): Promise<'deactivated' | 'already-inactive'> {
    const key = `${identity.company}#${identity.deviceId}#${identity.scenarioId}#${identity.version}`;
    if (!this.active.delete(key)) return 'already-inactive';
    this.marks.push({ deployment: key, mark: undeploy });
    return 'deactivated';
  }
}

class FakePresence implements Pick<PresenceRepository, 'forget'> {
  readonly forgotten: string[] = [];
  async forget(company: string, deviceId: string): Promise<void> {
    this.forgotten.push(`${company}#${deviceId}`);
  }
}

const alice: Principal = { subject: 'alice', companies: ['acme'], scopes: new Set(['devices:read', 'devices:write']) };
const T0 = new Date('2026-01-02T03:04:05.000Z');
const T1 = new Date('2026-01-02T04:00:00.000Z');

function world() {
  const devices = new FakeDevices();
  const deployments = new FakeDeployments();
  const presence = new FakePresence();
  const commands = new InMemoryCommands();
  const errors: unknown[] = [];
  let now = T0;
  const dependencies: DeviceRegistrationDependencies & { commands: InMemoryCommands } = {
    devices,
    deployments,
    presence,
    commands,
    reservedIds: RESERVED_DEVICE_IDS,
    now: () => now,
    onError: (error) => errors.push(error),
  };
  return { devices, deployments, presence, commands, errors, dependencies, at: (time: Date) => (now = time) };
}

function deployment(deviceId: string, scenarioId: string, version: string): ActiveDeployment {
  return {
    id: `d-${scenarioId}-${version}`,
    company: 'acme',
    deviceId,
    scenarioId,
    version,
    deployedAt: T0.toISOString(),
    deployedBy: 'alice',
  };
}

describe('putDevice', () => {
  it('registers a new device with connection UNKNOWN and no health, then updates only the fields given', async () => {
    const w = world();
    const created = await putDevice(w.dependencies, alice, 'acme', 'kiosk-1', { serial: 'SN-1', location: { name: 'Hall' } });
    expect(created).toEqual({
      created: true,
      device: {
        type: 'DEVICE',
        id: 'kiosk-1',
        company: 'acme',
        serial: 'SN-1',
        created: T0.toISOString(),
        updated: T0.toISOString(),
        location: { name: 'Hall' },
        connection: { state: 'UNKNOWN' },
      },
    });
    w.at(T1);
    const updated = await putDevice(w.dependencies, alice, 'acme', 'kiosk-1', { geoLocation: { latitude: 48.1 } });
    expect(updated.created).toBe(false);
    expect(updated.device).toMatchObject({
      serial: 'SN-1',
      location: { name: 'Hall' },
      geoLocation: { latitude: 48.1 },
      created: T0.toISOString(),
      updated: T1.toISOString(),
    });
  });

  it('keeps health, connection and credential when the operator updates a device, and never shows the credential', async () => {
    const w = world();
    const health = { updated: T0.toISOString(), versionCode: '7', versionName: '7.0', mode: 'SERVER' as const, hubs: [] };
    const credential = { id: '01J0000000000000000000CRED', secretHash: 'scrypt$x', created: T0.toISOString() };
    w.devices.items.set('acme#kiosk-1', {
      id: 'kiosk-1',
      company: 'acme',
      serial: 'SN-1',
      created: T0.toISOString(),
      updated: T0.toISOString(),
      connection: { state: 'CONNECTED', connectedSince: T0.toISOString() },
      health,
      credential,
    });
    const { device } = await putDevice(w.dependencies, alice, 'acme', 'kiosk-1', { serial: 'SN-2' });
    expect(device).toMatchObject({ serial: 'SN-2', health, connection: { state: 'CONNECTED', connectedSince: T0.toISOString() } });
    expect(device).not.toHaveProperty('credential');
    expect(w.devices.items.get('acme#kiosk-1')?.credential).toEqual(credential);
  });

  it('refuses a new device without a serial (400 naming /serial), a malformed id (400 naming deviceId) and another company (403)', async () => {
    const w = world();
    const missing = await putDevice(w.dependencies, alice, 'acme', 'kiosk-1', { location: { name: 'Hall' } }).catch((error) => error);
    expect(missing).toBeInstanceOf(BadRequestError);
    expect(missing.violations).toEqual([{ path: '/serial', message: expect.any(String) }]);
    const badId = await putDevice(w.dependencies, alice, 'acme', 'kiosk#1', { serial: 'x' }).catch((error) => error);
    expect(badId).toBeInstanceOf(BadRequestError);
    expect(badId.violations[0].path).toBe('deviceId');
    await expect(putDevice(w.dependencies, alice, 'globex', 'kiosk-1', { serial: 'x' })).rejects.toBeInstanceOf(ForbiddenError);
    expect(w.devices.items.size).toBe(0);
  });

  it('refuses an id the API uses as a path segment after resources/ (400 naming the id): its listings would answer another route', async () => {
    const w = world();
    for (const id of ['DEVICE', 'devices', 'deployments', 'rollouts', 'scenarios', 'search', 'history', 'uploads', 'cancel']) {
      const refused = await putDevice(w.dependencies, alice, 'acme', id, { serial: 'SN-1' }).catch((error) => error);
      expect(refused).toBeInstanceOf(BadRequestError);
      expect(refused.violations).toEqual([{ path: 'deviceId', message: expect.stringContaining(`'${id}' cannot be a new device's id`) }]);
    }
    expect(w.devices.items.size).toBe(0);
    // Exact segments only: paths are matched case-sensitively, so a device 'device' or 'Scenarios' names no route.
    expect((await putDevice(w.dependencies, alice, 'acme', 'Scenarios', { serial: 'SN-1' })).created).toBe(true);
  });

  it('keeps a device registered with an id before it was reserved: it can still be updated, one by one and in bulk', async () => {
    const w = world();
    await putDevice({ ...w.dependencies, reservedIds: new Set() }, alice, 'acme', 'history', { serial: 'SN-1' });
    const updated = await putDevice(w.dependencies, alice, 'acme', 'history', { serial: 'SN-2' });
    expect(updated).toMatchObject({ created: false, device: { id: 'history', serial: 'SN-2' } });
    expect(await registerDevices(w.dependencies, alice, 'acme', [{ id: 'history', serial: 'SN-3' }])).toEqual([
      { id: 'history', state: 'UPDATED' },
    ]);
    expect(w.devices.items.get('acme#history')?.serial).toBe('SN-3');
  });

  it('answers 409 for a device being deleted, and changes nothing', async () => {
    const w = world();
    await putDevice(w.dependencies, alice, 'acme', 'kiosk-1', { serial: 'SN-1' });
    await w.devices.markDeleting('acme', 'kiosk-1');
    await expect(putDevice(w.dependencies, alice, 'acme', 'kiosk-1', { serial: 'SN-2' })).rejects.toBeInstanceOf(ConflictError);
    expect(w.devices.items.get('acme#kiosk-1')?.serial).toBe('SN-1');
  });
});

describe('reserved device ids', () => {
  it('are every literal segment after resources/ in the route definitions, so that a new route reserves its own', () => {
    const literal = ROUTES.flatMap((route) => route.path.split('/resources/')[1]?.split('/') ?? []).filter((part) => !part.startsWith('{'));
    expect([...RESERVED_DEVICE_IDS].sort()).toEqual([...new Set(literal)].sort());
    expect(RESERVED_DEVICE_IDS).toContain('DEVICE');
    const withNewRoute = reservedPathSegments([
      ...ROUTES,
      { ...(ROUTES[0] as (typeof ROUTES)[number]), path: '/companies/{companyId}/resources/groups/{groupId}' },
    ]);
    expect(withNewRoute.has('groups')).toBe(true);
    expect(RESERVED_DEVICE_IDS.has('groups')).toBe(false);
  });

  it('fail their bulk registration entry, naming the id, while the other entries are registered', async () => {
    const w = world();
    const results = await registerDevices(w.dependencies, alice, 'acme', [
      { id: 'scenarios', serial: 'SN-1' },
      { id: 'kiosk-2', serial: 'SN-2' },
    ]);
    expect(results).toEqual([
      {
        id: 'scenarios',
        state: 'FAILURE',
        errors: [{ path: '/0/id', message: expect.stringContaining("'scenarios' cannot be a new device's id") }],
      },
      { id: 'kiosk-2', state: 'CREATED' },
    ]);
    expect([...w.devices.items.keys()]).toEqual(['acme#kiosk-2']);
  });
});

describe('registerDevices', () => {
  it('reports one result per entry in order: created, updated, invalid entries FAILURE with pointers into the body', async () => {
    const w = world();
    await putDevice(w.dependencies, alice, 'acme', 'kiosk-2', { serial: 'SN-2' });
    const body = bodyOf(
      devicesRegister,
      [
        { id: 'kiosk-1', serial: 'SN-1' },
        { id: 'kiosk-2', location: { name: 'Hall' } },
        { id: 'kiosk-3', serial: 'x'.repeat(300), colour: 'red' },
        { id: 'kiosk-4' },
        { serial: 'no-id' },
        { id: 'kiosk#5', serial: 'SN-5' },
      ],
      { companyId: 'acme' },
    );
    const results = await registerDevices(w.dependencies, alice, 'acme', body);
    expect(results).toEqual([
      { id: 'kiosk-1', state: 'CREATED' },
      { id: 'kiosk-2', state: 'UPDATED' },
      {
        id: 'kiosk-3',
        state: 'FAILURE',
        errors: expect.arrayContaining([
          { path: '/2/serial', message: expect.any(String) },
          { path: '/2/colour', message: "Unknown member 'colour'." },
        ]),
      },
      { id: 'kiosk-4', state: 'FAILURE', errors: [{ path: '/3/serial', message: 'Required to register a new device.' }] },
      { id: null, state: 'FAILURE', errors: [{ path: '/4/id', message: expect.any(String) }] },
      { id: 'kiosk#5', state: 'FAILURE', errors: [{ path: '/5/id', message: expect.stringContaining('device id') }] },
    ]);
    expect([...w.devices.items.keys()].sort()).toEqual(['acme#kiosk-1', 'acme#kiosk-2']);
    expect(w.devices.items.get('acme#kiosk-2')?.location).toEqual({ name: 'Hall' });
  });

  it('runs entries with the same id in request order, and reports a database failure on one entry without stopping the others', async () => {
    const w = world();
    w.devices.failFor = 'kiosk-9';
    const results = await registerDevices(w.dependencies, alice, 'acme', [
      { id: 'kiosk-1', serial: 'first' },
      { id: 'kiosk-9', serial: 'fails' },
      { id: 'kiosk-1', serial: 'second' },
    ]);
    expect(results.map((result) => result.state)).toEqual(['CREATED', 'FAILURE', 'UPDATED']);
    expect(results[1]?.errors?.[0]?.path).toBe('/1');
    expect(w.errors).toHaveLength(1);
    expect(w.devices.items.get('acme#kiosk-1')?.serial).toBe('second');
  });

  it('answers a body repeating one id 5,000 times with one write, each entry reporting what it did in its turn', async () => {
    const w = world();
    const body = bodyOf(
      devicesRegister,
      [
        { id: 'kiosk-1', location: { name: 'Hall' } },
        { id: 'kiosk-1', serial: 'SN-1', location: { name: 'Lobby' } },
        ...Array.from({ length: 4_997 }, () => ({ id: 'kiosk-1', geoLocation: { latitude: 48.1 } })),
        { id: 'kiosk-1', serial: 'SN-2' },
      ],
      { companyId: 'acme' },
    );
    const results = await registerDevices(w.dependencies, alice, 'acme', body);
    expect(results).toHaveLength(5_000);
    expect(results.slice(0, 2)).toEqual([
      { id: 'kiosk-1', state: 'FAILURE', errors: [{ path: '/0/serial', message: 'Required to register a new device.' }] },
      { id: 'kiosk-1', state: 'CREATED' },
    ]);
    expect(new Set(results.slice(2).map((result) => result.state))).toEqual(new Set(['UPDATED']));
    expect(w.devices.items.get('acme#kiosk-1')).toMatchObject({
      serial: 'SN-2',
      location: { name: 'Lobby' },
      geoLocation: { latitude: 48.1 },
    });
    expect(w.devices.writes).toBe(1);
  });

  it('fails every repeat of a device being deleted, and every written repeat of one whose write fails (reported once)', async () => {
    const w = world();
    await putDevice(w.dependencies, alice, 'acme', 'kiosk-1', { serial: 'SN-1' });
    await w.devices.markDeleting('acme', 'kiosk-1');
    const deleting = await registerDevices(w.dependencies, alice, 'acme', [
      { id: 'kiosk-1', serial: 'SN-2' },
      { id: 'kiosk-1', serial: 'SN-3' },
    ]);
    expect(deleting.map((result) => result.errors?.[0]?.path)).toEqual(['/0/id', '/1/id']);
    expect(deleting.map((result) => result.state)).toEqual(['FAILURE', 'FAILURE']);
    w.devices.failFor = 'kiosk-2';
    const failing = await registerDevices(w.dependencies, alice, 'acme', [
      { id: 'kiosk-2', serial: 'SN-4' },
      { id: 'kiosk-2', serial: 'SN-5' },
    ]);
    expect(failing.map((result) => result.errors?.[0]?.path)).toEqual(['/0', '/1']);
    expect(w.errors).toHaveLength(1);
  });

  it('refuses more than 5,000 entries whole (413)', () => {
    const entries = Array.from({ length: 5_001 }, (_, index) => ({ id: `kiosk-${index}`, serial: 's' }));
    expect(() => bodyOf(devicesRegister, entries)).toThrow(PayloadTooLargeError);
    expect(bodyOf(devicesRegister, entries.slice(0, 5_000))).toHaveLength(5_000);
  });
});

describe('getDevice', () => {
  it('answers the device, and 404 for an absent device or one being deleted', async () => {
    const w = world();
    await putDevice(w.dependencies, alice, 'acme', 'kiosk-1', { serial: 'SN-1' });
    await expect(getDevice(w.dependencies, alice, 'acme', 'kiosk-1')).resolves.toMatchObject({ id: 'kiosk-1', serial: 'SN-1' });
    await expect(getDevice(w.dependencies, alice, 'acme', 'kiosk-2')).rejects.toBeInstanceOf(NotFoundError);
    await w.devices.markDeleting('acme', 'kiosk-1');
    await expect(getDevice(w.dependencies, alice, 'acme', 'kiosk-1')).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe('deleteDevice', () => {
  it('undeploys every active deployment with cause DEVICE_DELETED, forgets its presence and deletes the device', async () => {
    const w = world();
    await putDevice(w.dependencies, alice, 'acme', 'kiosk-1', { serial: 'SN-1' });
    for (const version of ['1.0.0', '1.1.0', '2.0.0']) w.deployments.add(deployment('kiosk-1', 'welcome', version));
    w.deployments.add(deployment('kiosk-2', 'welcome', '1.0.0'));
    // A deployment whose existence check passed just before the delete, activating while the first pass runs.
    w.deployments.onFirstList = () => w.deployments.add(deployment('kiosk-1', 'late', '1.0.0'));
    const command = (id: string, state: Command['state'], deviceId = 'kiosk-1'): Command => ({
      id,
      company: 'acme',
      deviceId,
      hub: 'hub-1',
      device: 'printer-1',
      command: 'open-locker',
      arguments: { locker: 7 },
      state,
      created: T0.toISOString(),
      updated: T0.toISOString(),
      expiresAt: '2099-01-01T00:00:00.000Z',
      by: 'alice',
    });
    for (const item of [
      command('01JCMD00000000000000000001', 'QUEUED'),
      command('01JCMD00000000000000000002', 'DELIVERED'),
      command('01JCMD00000000000000000003', 'SUCCEEDED'),
      command('01JCMD00000000000000000004', 'QUEUED', 'kiosk-2'),
    ])
      await w.commands.create(item);
    w.at(T1);
    await deleteDevice(w.dependencies, alice, 'acme', 'kiosk-1');
    // Its pending commands are cancelled, so that a device registered again under its id is never handed them.
    expect([...w.commands.items.values()].map((item) => `${item.deviceId} ${item.state}`)).toEqual([
      'kiosk-1 CANCELLED',
      'kiosk-1 CANCELLED',
      'kiosk-1 SUCCEEDED',
      'kiosk-2 QUEUED',
    ]);
    expect(w.deployments.marks.map((entry) => entry.deployment).sort()).toEqual([
      'acme#kiosk-1#late#1.0.0',
      'acme#kiosk-1#welcome#1.0.0',
      'acme#kiosk-1#welcome#1.1.0',
      'acme#kiosk-1#welcome#2.0.0',
    ]);
    for (const { mark } of w.deployments.marks) expect(mark).toMatchObject({ cause: 'DEVICE_DELETED', by: 'alice', at: T1.toISOString() });
    expect(new Set(w.deployments.marks.map(({ mark }) => mark.id)).size).toBe(4);
    expect([...w.deployments.active.keys()]).toEqual(['acme#kiosk-2#welcome#1.0.0']);
    expect(w.presence.forgotten).toEqual(['acme#kiosk-1']);
    expect(w.devices.items.has('acme#kiosk-1')).toBe(false);
  });

  it('answers 404 for an absent device, and completes a delete that stopped half-way when sent again', async () => {
    const w = world();
    await expect(deleteDevice(w.dependencies, alice, 'acme', 'kiosk-1')).rejects.toBeInstanceOf(NotFoundError);
    await putDevice(w.dependencies, alice, 'acme', 'kiosk-1', { serial: 'SN-1' });
    w.deployments.add(deployment('kiosk-1', 'welcome', '1.0.0'));
    const forget = w.presence.forget.bind(w.presence);
    w.presence.forget = async () => {
      throw new Error('presence table down');
    };
    await expect(deleteDevice(w.dependencies, alice, 'acme', 'kiosk-1')).rejects.toThrow('presence table down');
    expect(w.devices.items.get('acme#kiosk-1')?.deleting).toBe(true);
    w.presence.forget = forget;
    await deleteDevice(w.dependencies, alice, 'acme', 'kiosk-1');
    expect(w.devices.items.has('acme#kiosk-1')).toBe(false);
    expect(w.deployments.marks).toHaveLength(1);
  });
});

describe('issueDeviceCredentials', () => {
  it('issues a client id and a 256-bit secret stored only as a scrypt hash, replacing the earlier credential', async () => {
    const w = world();
    await putDevice(w.dependencies, alice, 'acme', 'kiosk-1', { serial: 'SN-1' });
    const first = await issueDeviceCredentials(w.dependencies, alice, 'acme', 'kiosk-1');
    expect(first.clientId).toBe('acme~kiosk-1');
    expect(first.clientSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const stored = w.devices.items.get('acme#kiosk-1')?.credential as DeviceCredential;
    expect(stored.id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(JSON.stringify(stored)).not.toContain(first.clientSecret);
    expect(await verifyDeviceSecret(first.clientSecret, stored.secretHash)).toBe(true);

    const second = await issueDeviceCredentials(w.dependencies, alice, 'acme', 'kiosk-1');
    const replaced = w.devices.items.get('acme#kiosk-1')?.credential as DeviceCredential;
    expect(second.clientSecret).not.toBe(first.clientSecret);
    expect(replaced.id).not.toBe(stored.id);
    expect(await verifyDeviceSecret(first.clientSecret, replaced.secretHash)).toBe(false);
    expect(await verifyDeviceSecret(second.clientSecret, replaced.secretHash)).toBe(true);
  });

  it('answers 404 for an absent device or one being deleted', async () => {
    const w = world();
    await expect(issueDeviceCredentials(w.dependencies, alice, 'acme', 'kiosk-1')).rejects.toBeInstanceOf(NotFoundError);
    await putDevice(w.dependencies, alice, 'acme', 'kiosk-1', { serial: 'SN-1' });
    await w.devices.markDeleting('acme', 'kiosk-1');
    await expect(issueDeviceCredentials(w.dependencies, alice, 'acme', 'kiosk-1')).rejects.toBeInstanceOf(NotFoundError);
  });
});
