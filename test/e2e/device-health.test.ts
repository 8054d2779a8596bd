/**
 * Device health reports over the local runtime, with a 2-second heartbeat window and the heartbeat sweeper every
 * 200 ms: a report makes the device CONNECTED and searchable by its health, an unchanged report changes nothing a
 * user sees, silence makes it DISCONNECTED, a report refused (too deep) changes nothing at all, any JSON a command
 * carries is stored and shown as sent, and device and user tokens stay on their own routes.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type components, expectOk } from '../../client/index.js';
import { DynamoDbDeviceRepository } from '../../functions/adapters/aws/dynamodb-device-repository.js';
import type { DeviceHealthReport } from '../../functions/core/devices/health.js';
import type { StoredDevice } from '../../functions/core/devices/model.js';
import { LOCAL_TABLES } from '../../functions/local/runtime.js';
import { deviceToken } from '../support/device-token.js';
import { localDocumentClient } from './fleet.js';
import { call, clientFor, eventually, useLocalService } from './harness.js';

const HEARTBEAT_SECONDS = 2;
const DEVICE = 'acme-health-0001';
const VERSION_CODE = 'e2e-health-7001';
/** A device that only the tests of refused and free-form reports use, so that the heartbeat tests never see it. */
const OTHER = 'acme-health-0002';

const local = useLocalService({
  users: ['alice'],
  ownDynamoDbPort: true,
  environment: {
    DEVICE_HEARTBEAT_SECONDS: String(HEARTBEAT_SECONDS),
    HEARTBEAT_SWEEP_INTERVAL_MS: '200',
  },
});
let client: ReturnType<typeof localDocumentClient>;
let device: string;
let otherDevice: string;

const report: DeviceHealthReport & components['schemas']['DeviceHealthReport'] = {
  versionCode: VERSION_CODE,
  versionName: '7.0.1',
  mode: 'EMBEDDED_PLATFORM_COMPUTER',
  hubs: [
    {
      uid: `${DEVICE}-hub1`,
      label: 'Main hub',
      version: '2.2.4',
      registeredSince: '2025-06-14T15:27:41.000Z',
      type: 'STANDARD',
      battery: { health: { state: 'GOOD', plugged: 'AC', status: 'FULL', level: 100, cycle: 12 } },
      devices: [
        {
          uid: `${DEVICE}-hub1-printer`,
          label: 'Receipt printer',
          version: '1.4.0',
          health: {
            state: 'WARNING',
            message: 'Paper low',
            messages: [{ key: 'printer.paper.low', message: 'Paper low', level: 'WARNING' }],
          },
          capability: { type: 'PRINTER', modes: ['PRINTER_PRINT'] },
          commands: [{ command: 'reboot', title: 'Reboot', description: 'Restart the printer.', payload: { delay: 0 }, arguments: [] }],
        },
      ],
    },
  ],
};

/** PUT /device/health through the typed client: its status. */
const putHealth = async (body: components['schemas']['DeviceHealthReport'], token = device) =>
  (await clientFor(local.service, token).main.PUT('/device/health', { body })).response.status;
const stored = async (deviceId = DEVICE) =>
  (await client.send(new GetCommand({ TableName: LOCAL_TABLES.devices, Key: { company: 'acme', deviceId }, ConsistentRead: true })))
    .Item as StoredDevice;
const presence = async (deviceId = DEVICE) =>
  (await client.send(new GetCommand({ TableName: LOCAL_TABLES.presence, Key: { deviceKey: `acme#${deviceId}` }, ConsistentRead: true })))
    .Item as { lastSeen: string; sweepAt?: string } | undefined;
const searchDevice = async (state: 'CONNECTED' | 'DISCONNECTED') => {
  const query = {
    company: ['acme'],
    'connection.state': [state],
    'health.versionCode': [VERSION_CODE],
    'health.mode': ['EMBEDDED_PLATFORM_COMPUTER' as const],
    'health.hubs.devices.health.state': ['WARNING' as const],
    'health.hubs.devices.capability.type': ['PRINTER' as const],
  };
  return expectOk(await clientFor(local.service, local.tokens.alice).main.GET('/resources/search', { params: { query } })).resources;
};

beforeAll(async () => {
  client = localDocumentClient(local.dynamoDbEndpoint, 4);
  await new DynamoDbDeviceRepository(client, LOCAL_TABLES).put(
    [DEVICE, OTHER].map((id, index) => ({
      id,
      company: 'acme',
      serial: `ACM-E2E-00000${index + 1}`,
      created: '2026-01-01T00:00:00.000Z',
      updated: '2026-01-01T00:00:00.000Z',
      connection: { state: 'UNKNOWN' as const },
    })),
  );
  // A user token first: the local issuer creates its signing key on its first token.
  const issuer = { ...local.service, dynamoDbEndpoint: local.dynamoDbEndpoint };
  device = (await deviceToken(issuer, 'acme', DEVICE)).token;
  otherDevice = (await deviceToken(issuer, 'acme', OTHER)).token;
}, 120_000);

afterAll(async () => {
  client?.destroy();
});

describe('device health reports', () => {
  it('makes the device CONNECTED and searchable by its health; unchanged reports change nothing; silence disconnects it', async () => {
    expect(await putHealth(report)).toBe(204);
    const first = await stored();
    expect(first.connection.state).toBe('CONNECTED');
    const { updated, connection } = first;

    // Keep reporting (unchanged) while the checks below run, well within the 2-second window.
    let heartbeats = 0;
    const failures: number[] = [];
    const timer = setInterval(() => {
      void putHealth(report).then((status) => (status === 204 ? (heartbeats += 1) : failures.push(status)));
    }, 400);
    try {
      // The device's own writes reach search through the stream poller and the indexer: waited for, not timed (how
      // long it takes is a figure of `npm run bench`, and varies on a loaded machine; the reports keep it CONNECTED).
      await eventually(async () => (await searchDevice('CONNECTED')).length === 1, 'the device CONNECTED in search');
      const [found] = await searchDevice('CONNECTED');
      expect(found).toMatchObject({
        type: 'DEVICE',
        id: DEVICE,
        company: 'acme',
        connection: { state: 'CONNECTED', connectedSince: connection.connectedSince },
        health: { ...report, updated: first.health?.updated },
      });
      expect(found).not.toHaveProperty('credential');

      const before = (await presence())?.lastSeen as string;
      expect(await putHealth({ ...report, updated: '2001-01-01T00:00:00Z' })).toBe(204);
      expect(Date.parse((await presence())?.lastSeen as string)).toBeGreaterThan(Date.parse(before));
      await eventually(async () => heartbeats >= 2, 'two background heartbeats', 5_000);
      const again = await stored();
      expect(again.updated).toBe(updated);
      expect(again.connection).toEqual(connection);
      expect(again.health?.updated).toBe(first.health?.updated);
    } finally {
      clearInterval(timer);
    }
    expect(failures).toEqual([]);

    // Silence: DISCONNECTED since the report's deadline (last report + the window), in the table and in search.
    await eventually(async () => (await stored()).connection.state === 'DISCONNECTED', 'the sweeper to disconnect the device', 10_000);
    const lastSeen = Date.parse((await presence())?.lastSeen as string);
    const disconnected = await stored();
    expect(disconnected.connection).toEqual({
      state: 'DISCONNECTED',
      disconnectedSince: new Date(lastSeen + HEARTBEAT_SECONDS * 1_000).toISOString(),
    });
    expect((await presence())?.sweepAt).toBeUndefined();
    await eventually(async () => (await searchDevice('DISCONNECTED')).length === 1, 'the device DISCONNECTED in search');

    // Reporting again reconnects it, with a new connectedSince.
    expect(await putHealth(report)).toBe(204);
    const back = await stored();
    expect(back.connection.state).toBe('CONNECTED');
    expect(Date.parse(back.connection.connectedSince as string)).toBeGreaterThan(Date.parse(connection.connectedSince as string));
  }, 60_000);

  it('refuses a bad health body with 400 naming each bad member, and records nothing', async () => {
    const lastSeen = (await presence())?.lastSeen;
    const bad = structuredClone(report) as Record<string, any>;
    bad.mode = 'TOASTER';
    bad.hubs[0].devices[0].capability.type = 'LASER';
    bad.hubs[0].battery.health.level = 140;
    delete bad.versionName;
    // Hand-built: members of the wrong type or value, and one missing, which the typed client does not let through.
    const answer = await call(`${local.service.api}/device/health`, { method: 'PUT', token: device, json: bad });
    expect(answer.status).toBe(400);
    expect(answer.body.errors.map((error: { path: string }) => error.path).sort()).toEqual([
      '/hubs/0/battery/health/level',
      '/hubs/0/devices/0/capability/type',
      '/mode',
      '/versionName',
    ]);
    expect((await presence())?.lastSeen).toBe(lastSeen);
  });

  it('refuses a report nested more than 31 levels with 400 naming the member, leaves the device as it was, and keeps serving', async () => {
    const before = await stored(OTHER);
    expect(before.connection.state).toBe('UNKNOWN');
    /** The report's text with `member` (the first command's payload, or hubs) replaced by `levels` nested arrays. */
    const deep = (member: 'payload' | 'hubs', levels: number) => {
      const body = structuredClone(report) as Record<string, any>;
      if (member === 'hubs') body.hubs = '__DEEP__';
      else body.hubs[0].devices[0].commands[0].payload = '__DEEP__';
      return JSON.stringify(body).replace('"__DEEP__"', `${'['.repeat(levels)}${']'.repeat(levels)}`);
    };
    const payload = '/hubs/0/devices/0/commands/0/payload';
    const cases = [
      // The payload is at level 8: 25 nested arrays put the report at 32 levels.
      { text: deep('payload', 25), pointer: `${payload}${'/0'.repeat(24)}` },
      { text: deep('payload', 5_000), pointer: `${payload}${'/0'.repeat(24)}` },
      { text: deep('hubs', 5_000), pointer: `/hubs${'/0'.repeat(30)}` },
    ];
    for (const { text, pointer } of cases) {
      // Hand-built: no typed client (nor JSON.stringify) makes a body thousands of levels deep.
      const answer = await call(`${local.service.api}/device/health`, {
        method: 'PUT',
        token: otherDevice,
        body: text,
        headers: { 'content-type': 'application/json' },
      });
      expect(answer.status).toBe(400);
      expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(answer.body.errors).toEqual([{ path: pointer, message: 'nested more than 31 levels deep' }]);
    }
    // Nothing changed: not CONNECTED, no health, no presence entry (so no heartbeat deadline either).
    expect(await stored(OTHER)).toEqual(before);
    expect(await presence(OTHER)).toBeUndefined();

    const valid = { ...structuredClone(report), versionCode: 'e2e-health-deep' };
    expect(await putHealth(valid, otherDevice)).toBe(204);
    expect((await stored(OTHER)).connection.state).toBe('CONNECTED');
  });

  it('stores whatever JSON a command carries and shows it as sent, in the device and in search', async () => {
    const versionCode = 'e2e-health-free-form';
    // Legal JSON that DynamoDB cannot hold as maps and lists: an empty member name, an integer above 2^53, 31 levels
    // of nesting in all (the payload object is at level 8).
    const payload = { '': 'empty name', big: 2 ** 60, deep: JSON.parse(`${'['.repeat(23)}${']'.repeat(23)}`) };
    const args = ['--force', { '': null }];
    const sent = structuredClone(report);
    sent.versionCode = versionCode;
    Object.assign(sent.hubs[0]?.devices[0]?.commands[0] ?? {}, { payload, arguments: args });
    expect(await putHealth(sent, otherDevice)).toBe(204);

    const shown = expectOk(
      await clientFor(local.service, local.tokens.alice).main.GET('/companies/{companyId}/resources/devices/{deviceId}', {
        params: { path: { companyId: 'acme', deviceId: OTHER } },
      }),
    );
    expect(shown.health?.hubs[0]?.devices[0]?.commands[0]).toEqual({ ...sent.hubs[0]?.devices[0]?.commands[0] });
    const found = async () =>
      expectOk(
        await clientFor(local.service, local.tokens.alice).main.GET('/resources/search', {
          params: { query: { company: ['acme'], 'health.versionCode': [versionCode] } },
        }),
      ).resources;
    await eventually(async () => (await found()).length === 1, 'the device in search with its new health');
    const [document] = await found();
    expect(document?.type === 'DEVICE' && document.health?.hubs[0]?.devices[0]?.commands[0]).toEqual({
      ...sent.hubs[0]?.devices[0]?.commands[0],
    });
  });

  it('refuses a number DynamoDB cannot store with 400 naming it, and counts -0 as 0 so that a repeated report changes nothing', async () => {
    const before = await stored(DEVICE);
    const lastSeen = (await presence(DEVICE))?.lastSeen;
    const level = '/hubs/0/battery/health/level';
    const payload = '/hubs/0/devices/0/commands/0/payload';
    const cases: [string, string][] = [
      [JSON.stringify(report).replace('"level":100', '"level":1e-200'), level],
      [JSON.stringify(report).replace('"payload":{"delay":0}', '"payload":{"delay":1e400}'), `${payload}/delay`],
      [JSON.stringify(report).replace('"payload":{"delay":0}', '"payload":[-5e-324]'), `${payload}/0`],
    ];
    for (const [text, pointer] of cases) {
      // Hand-built: JSON.stringify writes neither 1e400 nor a typed client such a number.
      const answer = await call(`${local.service.api}/device/health`, {
        method: 'PUT',
        token: device,
        body: text,
        headers: { 'content-type': 'application/json' },
      });
      expect(answer.status, text.slice(0, 80)).toBe(400);
      expect(answer.body.errors).toEqual([{ path: pointer, message: expect.stringContaining('1e-130') }]);
    }
    expect(await stored(DEVICE)).toEqual(before);
    expect((await presence(DEVICE))?.lastSeen).toBe(lastSeen);

    const withMinusZero = JSON.stringify({ ...report, versionCode: 'e2e-health-minus-zero' }).replace(
      '"payload":{"delay":0}',
      '"payload":{"delay":-0}',
    );
    const send = () =>
      call(`${local.service.api}/device/health`, {
        method: 'PUT',
        token: device,
        body: withMinusZero,
        headers: { 'content-type': 'application/json' },
      });
    expect((await send()).status).toBe(204);
    const first = await stored(DEVICE);
    expect((await send()).status).toBe(204);
    const second = await stored(DEVICE);
    expect(second.updated).toBe(first.updated);
    expect(second.health?.updated).toBe(first.health?.updated);
  });

  it('keeps user tokens off the device routes and device tokens off the user routes (403)', async () => {
    expect(await putHealth(report, local.tokens.alice)).toBe(403);
    const asDevice = clientFor(local.service, device);
    expect((await asDevice.main.GET('/resources/search', { params: { query: { company: ['acme'] } } })).response.status).toBe(403);
    const history = await asDevice.main.GET('/companies/{companyId}/resources/deployments/history', {
      params: { path: { companyId: 'acme' } },
    });
    expect(history.response.status).toBe(403);
  });
});
