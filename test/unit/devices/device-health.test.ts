/**
 * Health reports and the heartbeat sweeper over in-memory fakes of the device and presence repositories that keep
 * the adapters' conditions (credential, deleting, deadline), counting every write.
 */
import { describe, expect, it } from 'vitest';
import { deviceHealthPut } from '../../../functions/contract/routes/device-side.js';
import {
  type DeviceHealthReport,
  healthReportTooLarge,
  MAX_HEALTH_REPORT_BYTES,
  reportDeviceHealth,
} from '../../../functions/core/devices/health.js';
import { sweepHeartbeats } from '../../../functions/core/devices/heartbeat-sweeper.js';
import type { Device, StoredDevice } from '../../../functions/core/devices/model.js';
import type { DeviceRepository, DisconnectOutcome, OverduePresence, PresenceRepository } from '../../../functions/core/devices/ports.js';
import { BadRequestError, ForbiddenError, PayloadTooLargeError, UnauthorizedError } from '../../../functions/core/shared/errors.js';
import type { Principal } from '../../../functions/core/shared/principal.js';
import { problemOf } from '../../../functions/platform/problem.js';
import { bodyOf, bodyOfText } from '../../support/route-input.js';

const HEARTBEAT_SECONDS = 300;

class FakeDevices implements Pick<DeviceRepository, 'get' | 'recordHealth'> {
  readonly items = new Map<string, StoredDevice>();
  writes = 0;
  async get(companyId: string, deviceId: string): Promise<StoredDevice | undefined> {
    const device = this.items.get(`${companyId}#${deviceId}`);
    return device === undefined ? undefined : structuredClone(device);
  }
  async recordHealth(
    companyId: string,
    deviceId: string,
    credentialId: string,
    report: { health: NonNullable<Device['health']>; connectedSince: string; updated: string },
  ): Promise<'recorded' | 'refused'> {
    const device = this.items.get(`${companyId}#${deviceId}`);
    if (device === undefined || device.deleting === true || device.credential?.id !== credentialId) return 'refused';
    this.writes += 1;
    device.health = structuredClone(report.health);
    device.connection = { state: 'CONNECTED', connectedSince: report.connectedSince };
    device.updated = report.updated;
    return 'recorded';
  }
}

class FakePresence implements PresenceRepository {
  readonly entries = new Map<string, { company: string; deviceId: string; lastSeen: string; sweepAt?: string }>();
  writes = 0;
  constructor(private readonly devices: FakeDevices) {}
  async touch(company: string, deviceId: string, lastSeen: string, sweepAt: string): Promise<{ watched: boolean }> {
    const previous = this.entries.get(`${company}#${deviceId}`);
    this.writes += 1;
    this.entries.set(`${company}#${deviceId}`, { company, deviceId, lastSeen, sweepAt });
    return { watched: previous?.sweepAt !== undefined };
  }
  async overdue(now: string, limit: number): Promise<OverduePresence[]> {
    return [...this.entries.values()]
      .filter((entry) => entry.sweepAt !== undefined && entry.sweepAt <= now)
      .slice(0, limit)
      .map((entry) => ({ ...entry, sweepAt: entry.sweepAt as string }));
  }
  async disconnect(entry: OverduePresence, disconnectedSince: string, updated: string): Promise<DisconnectOutcome> {
    const stored = this.entries.get(`${entry.company}#${entry.deviceId}`);
    if (stored?.sweepAt !== entry.sweepAt) return 'superseded';
    delete stored.sweepAt;
    const device = this.devices.items.get(`${entry.company}#${entry.deviceId}`);
    if (device === undefined || device.deleting === true || device.connection.state !== 'CONNECTED') return 'released';
    device.connection = { state: 'DISCONNECTED', disconnectedSince };
    device.updated = updated;
    return 'disconnected';
  }
  async forget(company: string, deviceId: string): Promise<void> {
    this.entries.delete(`${company}#${deviceId}`);
  }
}

const kioskToken: Principal = {
  subject: 'acme-kiosk-0001',
  companies: ['acme'],
  scopes: new Set(['device']),
  device: { company: 'acme', deviceId: 'acme-kiosk-0001', credentialId: '01JCREDENTIAL0000000000000' },
};

function registered(): StoredDevice {
  return {
    id: 'acme-kiosk-0001',
    company: 'acme',
    serial: 'ACM-K1-000001',
    created: '2026-01-01T00:00:00.000Z',
    updated: '2026-01-01T00:00:00.000Z',
    connection: { state: 'UNKNOWN' },
    credential: { id: '01JCREDENTIAL0000000000000', secretHash: 'scrypt$x', created: '2026-01-01T00:00:00.000Z' },
  };
}

function report(mode: DeviceHealthReport['mode'] = 'EMBEDDED_PLATFORM_ANDROID'): DeviceHealthReport {
  return {
    versionCode: '40201',
    versionName: '4.2.1',
    mode,
    hubs: [
      {
        uid: 'hub1',
        label: 'Main hub',
        version: '2.2.4',
        registeredSince: '2025-06-14T15:27:41.000Z',
        type: 'STANDARD',
        devices: [
          {
            uid: 'hub1-printer',
            label: 'Receipt printer',
            version: '1.0.0',
            health: { state: 'NOMINAL', message: 'Ready', messages: [{ key: 'printer.ready', message: 'Ready', level: 'INFO' }] },
            capability: { type: 'PRINTER', modes: ['PRINTER_PRINT'] },
            commands: [{ command: 'reboot', title: 'Reboot', description: 'Restart it.', payload: {}, arguments: [] }],
          },
        ],
      },
    ],
  };
}

function setUp() {
  const devices = new FakeDevices();
  devices.items.set('acme#acme-kiosk-0001', registered());
  const presence = new FakePresence(devices);
  let clock = Date.parse('2026-03-01T12:00:00.000Z');
  const now = () => new Date(clock);
  const advance = (seconds: number) => {
    clock += seconds * 1_000;
  };
  const send = (body: DeviceHealthReport, principal: Principal = kioskToken) =>
    reportDeviceHealth({ devices, presence, heartbeatSeconds: HEARTBEAT_SECONDS, now }, principal, body);
  const sweep = () => sweepHeartbeats({ presence, now });
  const device = () => devices.items.get('acme#acme-kiosk-0001') as StoredDevice;
  return { devices, presence, advance, send, sweep, device };
}

describe('reportDeviceHealth', () => {
  it('makes a registered device CONNECTED with its health, stamped with the time of the report', async () => {
    const { send, device, presence } = setUp();
    expect(await send(report())).toEqual({ deviceWrite: 'health-changed' });
    expect(device().connection).toEqual({ state: 'CONNECTED', connectedSince: '2026-03-01T12:00:00.000Z' });
    expect(device().health).toEqual({ ...report(), updated: '2026-03-01T12:00:00.000Z' });
    expect(device().updated).toBe('2026-03-01T12:00:00.000Z');
    expect(presence.entries.get('acme#acme-kiosk-0001')).toEqual({
      company: 'acme',
      deviceId: 'acme-kiosk-0001',
      lastSeen: '2026-03-01T12:00:00.000Z',
      sweepAt: '2026-03-01T12:05:00.000Z',
    });
  });

  it('writes only the presence entry for an unchanged report of a connected device, whatever its member order', async () => {
    const { send, advance, device, devices, presence } = setUp();
    await send(report());
    advance(60);
    const { hubs, mode, versionName, versionCode } = report();
    expect(await send({ hubs, mode, versionName, versionCode, updated: '1999-01-01T00:00:00Z' })).toEqual({});
    expect(devices.writes).toBe(1);
    expect(presence.writes).toBe(2);
    expect(device().updated).toBe('2026-03-01T12:00:00.000Z');
    expect(device().health?.updated).toBe('2026-03-01T12:00:00.000Z');
    expect(presence.entries.get('acme#acme-kiosk-0001')?.sweepAt).toBe('2026-03-01T12:06:00.000Z');
  });

  it('writes the device when its health changed, keeping connectedSince while it stays connected', async () => {
    const { send, advance, device, devices } = setUp();
    await send(report());
    advance(60);
    expect(await send(report('SERVER'))).toEqual({ deviceWrite: 'health-changed' });
    expect(devices.writes).toBe(2);
    expect(device().health?.mode).toBe('SERVER');
    expect(device().health?.updated).toBe('2026-03-01T12:01:00.000Z');
    expect(device().connection).toEqual({ state: 'CONNECTED', connectedSince: '2026-03-01T12:00:00.000Z' });
  });

  it('ignores the updated a device sends: the service sets health.updated', async () => {
    const { send, device } = setUp();
    await send({ ...report(), updated: '2030-01-01T00:00:00Z' });
    expect(device().health?.updated).toBe('2026-03-01T12:00:00.000Z');
  });

  it('reconnects a device the sweeper disconnected, with a new connectedSince, even when its health is unchanged', async () => {
    const { send, advance, sweep, device } = setUp();
    await send(report());
    advance(HEARTBEAT_SECONDS + 1);
    expect((await sweep()).disconnected).toEqual(['acme/acme-kiosk-0001']);
    advance(10);
    expect(await send(report())).toEqual({ deviceWrite: 'connected' });
    expect(device().connection).toEqual({ state: 'CONNECTED', connectedSince: '2026-03-01T12:05:11.000Z' });
  });

  it('reconnects when the sweeper disconnected the device between the read and the presence write', async () => {
    const { send, advance, device, devices, presence } = setUp();
    await send(report());
    advance(HEARTBEAT_SECONDS + 1);
    // The read sees CONNECTED (stale), then the sweeper wins before the presence entry is written.
    const staleRead = devices.get.bind(devices);
    devices.get = async (company, deviceId) => {
      const seen = await staleRead(company, deviceId);
      await sweepHeartbeats({ presence, now: () => new Date(Date.parse('2026-03-01T12:05:01.000Z')) });
      return seen;
    };
    expect(await send(report())).toEqual({ deviceWrite: 'connected' });
    expect(device().connection.state).toBe('CONNECTED');
  });

  it('writes a device seeded CONNECTED that never reported (no deadline yet), so the sweeper watches it', async () => {
    const { send, device, devices } = setUp();
    device().connection = { state: 'CONNECTED', connectedSince: '2025-01-01T00:00:00.000Z' };
    device().health = { ...report(), updated: '2025-01-01T00:00:00.000Z' };
    expect(await send(report())).toEqual({ deviceWrite: 'connected' });
    expect(devices.writes).toBe(1);
  });

  it('refuses a token whose device was deleted or re-credentialed, before writing anything', async () => {
    const { send, device, presence } = setUp();
    device().credential = { id: '01JOTHERCREDENTIAL00000000', secretHash: 'scrypt$y', created: '2026-02-01T00:00:00.000Z' };
    await expect(send(report())).rejects.toBeInstanceOf(UnauthorizedError);
    device().credential = registered().credential;
    device().deleting = true;
    await expect(send(report())).rejects.toBeInstanceOf(UnauthorizedError);
    expect(presence.writes).toBe(0);
  });

  it('refuses with 401 when the device is deleted between the read and its write', async () => {
    const { send, devices } = setUp();
    const read = devices.get.bind(devices);
    devices.get = async (company, deviceId) => {
      const seen = await read(company, deviceId);
      (devices.items.get(`${company}#${deviceId}`) as StoredDevice).deleting = true;
      return seen;
    };
    await expect(send(report())).rejects.toBeInstanceOf(UnauthorizedError);
    expect(devices.writes).toBe(0);
  });

  it('refuses a user token (403)', async () => {
    const { send } = setUp();
    const alice: Principal = { subject: 'alice', companies: ['acme'], scopes: new Set(['search:read']) };
    await expect(send(report(), alice)).rejects.toBeInstanceOf(ForbiddenError);
  });
});

describe('the health report body', () => {
  it('names each bad member as a JSON pointer', () => {
    const body = report() as unknown as Record<string, any>;
    body.mode = 'TOASTER';
    body.hubs[0].devices[0].health.state = 'ON_FIRE';
    body.hubs[0].label = 'x'.repeat(257);
    body.colour = 'blue';
    delete body.versionCode;
    try {
      bodyOf(deviceHealthPut, body);
      expect.unreachable('the body is invalid');
    } catch (error) {
      expect(error).toBeInstanceOf(BadRequestError);
      const paths = (problemOf(error as BadRequestError).errors as { path: string }[]).map((violation) => violation.path).sort();
      expect(paths).toEqual(['/colour', '/hubs/0/devices/0/health/state', '/hubs/0/label', '/mode', '/versionCode']);
    }
  });

  it('refuses control characters in its texts, naming each member, and keeps line breaks in messages and free JSON as sent', () => {
    const body = report() as unknown as Record<string, any>;
    body.hubs[0].label = '\u001b]0;pwned\u0007';
    body.hubs[0].devices[0].health.message = 'Paper low\r\n\tcheck tray 2';
    body.hubs[0].devices[0].health.messages = [{ key: 'k\u009b2J', message: 'ok\nthen', level: 'INFO' }];
    body.hubs[0].devices[0].commands[0].description = 'rings\u0007';
    body.hubs[0].devices[0].commands[0].payload = { text: '\u001b[2J' };
    try {
      bodyOf(deviceHealthPut, body);
      expect.unreachable('the body holds control characters');
    } catch (error) {
      expect(error).toBeInstanceOf(BadRequestError);
      expect(
        (problemOf(error as BadRequestError).errors as { path: string; message: string }[]).sort((a, b) => a.path.localeCompare(b.path)),
      ).toEqual([
        { path: '/hubs/0/devices/0/commands/0/description', message: expect.stringContaining('U+0007 at character 6') },
        { path: '/hubs/0/devices/0/health/messages/0/key', message: expect.stringContaining('U+009B at character 2') },
        { path: '/hubs/0/label', message: expect.stringContaining('U+001B at character 1') },
      ]);
    }
    body.hubs[0].label = '\u202Egnp.exe\u202C';
    body.hubs[0].devices[0].health.messages[0].key = 'paper';
    body.hubs[0].devices[0].commands[0].description = 'rings';
    expect(bodyOf(deviceHealthPut, body)).toMatchObject({ hubs: [{ label: '\u202Egnp.exe\u202C' }] });
  });

  it('bounds the number of hubs and the size of the report', () => {
    const many = { ...report(), hubs: Array.from({ length: 17 }, () => report().hubs[0]) };
    expect(() => bodyOf(deviceHealthPut, many)).toThrow(BadRequestError);
    const huge = report();
    (huge.hubs[0]?.devices[0] as { commands: { payload: unknown }[] }).commands[0] = {
      ...(huge.hubs[0]?.devices[0]?.commands[0] as object),
      payload: 'x'.repeat(MAX_HEALTH_REPORT_BYTES),
    } as { payload: unknown };
    expect(() => bodyOf(deviceHealthPut, huge)).toThrow(PayloadTooLargeError);
  });
});

describe('a health report nested deep', () => {
  /** The report's text with its first command's `payload` (or `hubs`) replaced by `levels` nested arrays. */
  const deepReport = (member: 'payload' | 'hubs', levels: number) => {
    const body = report() as unknown as Record<string, any>;
    if (member === 'hubs') body.hubs = '__DEEP__';
    else body.hubs[0].devices[0].commands[0].payload = '__DEEP__';
    return JSON.stringify(body).replace('"__DEEP__"', `${'['.repeat(levels)}${']'.repeat(levels)}`);
  };
  const payloadPointer = '/hubs/0/devices/0/commands/0/payload';
  const refusal = (text: string) => {
    try {
      bodyOfText(deviceHealthPut, text);
    } catch (error) {
      if (!(error instanceof BadRequestError)) throw error;
      return problemOf(error).errors as { path: string }[];
    }
    return expect.unreachable('the report is too deep');
  };

  it('is a 400 naming the member, before its size is measured or its schema checked', () => {
    // A payload of 25 nested arrays puts the report at 32 levels (the payload itself is at level 8).
    expect(refusal(deepReport('payload', 25)).map((violation) => violation.path)).toEqual([`${payloadPointer}${'/0'.repeat(24)}`]);
    expect(refusal(deepReport('payload', 5_000)).map((violation) => violation.path)).toEqual([`${payloadPointer}${'/0'.repeat(24)}`]);
    expect(refusal(deepReport('hubs', 5_000)).map((violation) => violation.path)).toEqual([`/hubs${'/0'.repeat(30)}`]);
  });

  it('is accepted up to 31 levels, a payload of 24 nested arrays', () => {
    const body = bodyOfText(deviceHealthPut, deepReport('payload', 24));
    expect(JSON.stringify(body?.hubs[0]?.devices[0]?.commands[0]?.payload)).toBe(`${'['.repeat(24)}${']'.repeat(24)}`);
  });

  it('is measured by the size check without overflowing the stack', () => {
    const deep: unknown[] = [];
    let inner = deep;
    for (let level = 0; level < 100_000; level += 1) inner = inner[inner.push([]) - 1] as unknown[];
    // 100,001 arrays of 2 bytes each inside `{"hubs":…}`.
    expect(healthReportTooLarge({ hubs: deep })).toContain(`has ${2 * 100_001 + '{"hubs":}'.length} bytes`);
    expect(healthReportTooLarge(report())).toBeUndefined();
    const large = { ...report(), hubs: Array.from({ length: 1_000 }, () => report().hubs[0]), extra: [null, 'é', 1.5e300, true] };
    expect(healthReportTooLarge(large)).toContain(`has ${Buffer.byteLength(JSON.stringify(large))} bytes`);
  });
});

describe('sweepHeartbeats', () => {
  it('disconnects a device silent beyond its window, since its deadline, and leaves one that reported alone', async () => {
    const { send, advance, sweep, device } = setUp();
    await send(report());
    advance(HEARTBEAT_SECONDS - 1);
    expect((await sweep()).disconnected).toEqual([]);
    advance(2);
    expect(await sweep()).toEqual({ disconnected: ['acme/acme-kiosk-0001'], released: [], superseded: [] });
    expect(device().connection).toEqual({ state: 'DISCONNECTED', disconnectedSince: '2026-03-01T12:05:00.000Z' });
    expect(device().updated).toBe('2026-03-01T12:05:01.000Z');
    // Idempotent: the entry has left the index, a second run finds nothing.
    expect(await sweep()).toEqual({ disconnected: [], released: [], superseded: [] });
  });

  it('lets a report that lands between the index read and the transaction win', async () => {
    const { send, advance, presence, device } = setUp();
    await send(report());
    advance(HEARTBEAT_SECONDS + 1);
    const stale = await presence.overdue(new Date(Date.parse('2026-03-01T12:05:01.000Z')).toISOString(), 10);
    await send(report());
    const result = await sweepHeartbeats({ presence: { overdue: async () => stale, disconnect: presence.disconnect.bind(presence) } });
    expect(result.superseded).toEqual(['acme/acme-kiosk-0001']);
    expect(device().connection.state).toBe('CONNECTED');
  });

  it('only releases the deadline of a device that is gone', async () => {
    const { send, advance, sweep, devices, presence } = setUp();
    await send(report());
    devices.items.delete('acme#acme-kiosk-0001');
    advance(HEARTBEAT_SECONDS + 1);
    expect((await sweep()).released).toEqual(['acme/acme-kiosk-0001']);
    expect(presence.entries.get('acme#acme-kiosk-0001')?.sweepAt).toBeUndefined();
  });

  it('handles a backlog in bounded rounds and stops at maxPerRun', async () => {
    const devices = new FakeDevices();
    const presence = new FakePresence(devices);
    for (let index = 0; index < 25; index += 1) {
      const id = `d${index}`;
      devices.items.set(`acme#${id}`, {
        ...registered(),
        id,
        connection: { state: 'CONNECTED', connectedSince: '2026-01-01T00:00:00.000Z' },
      });
      await presence.touch('acme', id, '2026-01-01T00:00:00.000Z', '2026-01-01T00:05:00.000Z');
    }
    const rounds: number[] = [];
    const counted = {
      overdue: async (now: string, limit: number) => {
        rounds.push(limit);
        return presence.overdue(now, limit);
      },
      disconnect: presence.disconnect.bind(presence),
    };
    const first = await sweepHeartbeats({ presence: counted, batchSize: 10, maxPerRun: 20 });
    expect(first.disconnected).toHaveLength(20);
    expect(rounds).toEqual([10, 10]);
    const second = await sweepHeartbeats({ presence: counted, batchSize: 10, maxPerRun: 20 });
    expect(second.disconnected).toHaveLength(5);
  });
});
