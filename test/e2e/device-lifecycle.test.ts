/**
 * End-to-end over `npm start` (bin/local.ts), as an operator and a kiosk see it: a device is registered, gets
 * credentials and a token, reports its health and is found CONNECTED in search by its health fields; a scenario is
 * deployed to it, which it pulls (200 with an ETag, then 304), downloads through the presigned URL and checks, and
 * reports INSTALLED (seen on the active item and in the history); it falls silent and becomes DISCONNECTED; it is
 * deleted, and its token and deployments are gone. Then the isolation rules between devices, users and companies.
 * A short heartbeat window (2 s, swept every 200 ms) keeps the silence short.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  call,
  eventually,
  type LocalService,
  newServiceSettings,
  removeDataDirectory,
  type ServiceSettings,
  startService,
  tokenFor,
} from './harness.js';

const COMPANY = 'acme';
const DEVICE = 'acme-lifecycle-01';
const OTHER = 'acme-lifecycle-02';
const SCENARIO = 'acme-welcome';
const VERSION = '1.0.0';
const VERSION_CODE = 'lifecycle-4711';

let settings: ServiceSettings;
let service: LocalService;
let alice: string;
let bob: string;

const health = (level: number) => ({
  versionCode: VERSION_CODE,
  versionName: '4.7.11',
  mode: 'EMBEDDED_PLATFORM_ANDROID',
  hubs: [
    {
      uid: 'hub-1',
      label: 'Main hub',
      version: '1.0.0',
      registeredSince: '2026-01-01T00:00:00Z',
      type: 'USB',
      battery: { health: { state: 'GOOD', plugged: 'AC', status: 'CHARGING', level, cycle: 3 } },
      devices: [
        {
          uid: 'printer-1',
          label: 'Receipt printer',
          version: '2.0.0',
          health: { state: 'NOMINAL', message: 'OK', messages: [] },
          capability: { type: 'PRINTER', modes: ['PRINTER_PRINT'] },
          commands: [],
        },
      ],
    },
  ],
});

const devices = (suffix = '') => `${service.api}/companies/${COMPANY}/resources/devices${suffix}`;

async function deviceToken(clientId: string, clientSecret: string): Promise<{ status: number; token?: string; body: unknown }> {
  const result = await call(`${service.auth}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }).toString(),
  });
  return { status: result.status, token: result.body?.access_token, body: result.body };
}

async function registerWithToken(deviceId: string): Promise<{ clientId: string; clientSecret: string; token: string }> {
  const created = await call(devices(`/${deviceId}`), { method: 'PUT', token: alice, json: { serial: `SN-${deviceId}` } });
  expect(created.status).toBe(201);
  const credentials = await call(devices(`/${deviceId}/credentials`), { method: 'POST', token: alice });
  expect(credentials.status).toBe(201);
  const { clientId, clientSecret } = credentials.body as { clientId: string; clientSecret: string };
  const token = await deviceToken(clientId, clientSecret);
  expect(token.status).toBe(200);
  return { clientId, clientSecret, token: token.token as string };
}

async function searchDevice(query: string): Promise<Record<string, any> | undefined> {
  const result = await call(`${service.api}/resources/search?company=${COMPANY}&${query}&pageSize=100`, { token: alice });
  expect(result.status).toBe(200);
  return (result.body.resources as Record<string, any>[]).find((resource) => resource.id === DEVICE);
}

beforeAll(async () => {
  settings = await newServiceSettings();
  service = await startService(settings, { environment: { DEVICE_HEARTBEAT_SECONDS: '2', HEARTBEAT_SWEEP_INTERVAL_MS: '200' } });
  [alice, bob] = await Promise.all([tokenFor(service, 'alice'), tokenFor(service, 'bob')]);
}, 120_000);

afterAll(async () => {
  await service?.stop();
  if (settings !== undefined) await removeDataDirectory(settings);
});

describe('a kiosk from registration to deletion', () => {
  let device: { clientId: string; clientSecret: string; token: string };
  let etag: string;

  it('is registered, gets credentials and a device token', async () => {
    device = await registerWithToken(DEVICE);
    expect(device.clientId).toBe(`${COMPANY}~${DEVICE}`);
    const read = await call(devices(`/${DEVICE}`), { token: alice });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id: DEVICE, serial: `SN-${DEVICE}`, connection: { state: 'UNKNOWN' } });
    expect(JSON.stringify(read.body)).not.toContain('secretHash');
  });

  it('reports its health and is found CONNECTED in search by its health fields', async () => {
    const reported = await call(`${service.api}/device/health`, { method: 'PUT', token: device.token, json: health(80) });
    expect(reported.status).toBe(204);
    await eventually(
      async () => (await searchDevice(`connection.state=CONNECTED&health.versionCode=${VERSION_CODE}`)) !== undefined,
      'the device to be CONNECTED in search',
      2_000 + 3_000,
    );
    const found = await searchDevice(
      `health.versionCode=${VERSION_CODE}&health.hubs.devices.capability.type=PRINTER&health.mode=EMBEDDED_PLATFORM_ANDROID`,
    );
    expect(found).toMatchObject({
      type: 'DEVICE',
      company: COMPANY,
      connection: { state: 'CONNECTED' },
      health: { versionCode: VERSION_CODE },
    });
    expect(found?.connection.connectedSince).toEqual(expect.any(String));
  });

  it('pulls a deployed scenario (200 with an ETag, then 304), downloads it and its sha256 matches', async () => {
    const deployed = await call(`${service.api}/companies/${COMPANY}/resources/deployments`, {
      token: alice,
      json: {
        requests: [{ target: { type: 'DEVICE', id: DEVICE }, what: { type: 'SCENARIO', id: SCENARIO, subId: VERSION }, action: 'DEPLOY' }],
      },
    });
    expect(deployed.body.items[0].state).toBe('SUCCESS');
    const pulled = await call(`${service.api}/device/deployments`, { token: device.token });
    expect(pulled.status).toBe(200);
    etag = pulled.headers.get('etag') as string;
    expect(etag).toMatch(/^"/);
    const [item] = pulled.body.items;
    expect(item).toMatchObject({ what: { type: 'SCENARIO', id: SCENARIO, subId: VERSION } });
    const again = await call(`${service.api}/device/deployments`, { token: device.token, headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(again.body).toBeUndefined();
    const archive = await fetch(item.downloadUrl);
    expect(archive.status).toBe(200);
    const bytes = Buffer.from(await archive.arrayBuffer());
    expect(bytes.length).toBe(item.size);
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(item.sha256);
  });

  it('reports INSTALLED, seen on the active deployment and in the history', async () => {
    const what = { type: 'SCENARIO', id: SCENARIO, subId: VERSION };
    for (const state of ['DOWNLOADING', 'INSTALLING', 'INSTALLED']) {
      const reported = await call(`${service.api}/device/deployments/status`, { token: device.token, json: { what, state } });
      expect(reported.status).toBe(204);
    }
    const active = await call(`${service.api}/companies/${COMPANY}/resources/${DEVICE}/deployments`, { token: alice });
    expect(active.body.items[0].deviceStatus).toMatchObject({ state: 'INSTALLED' });
    await eventually(async () => {
      const history = await call(`${service.api}/companies/${COMPANY}/resources/deployments/history?deviceId=${DEVICE}`, { token: alice });
      return JSON.stringify(history.body.items).includes('INSTALLED');
    }, 'the INSTALLED report in the history');
    // A status change is not a change of what is deployed: the pull still answers 304.
    const pulled = await call(`${service.api}/device/deployments`, { token: device.token, headers: { 'if-none-match': etag } });
    expect(pulled.status).toBe(304);
  });

  it('becomes DISCONNECTED, with disconnectedSince, once silent beyond the heartbeat window', async () => {
    await eventually(
      async () => (await call(devices(`/${DEVICE}`), { token: alice })).body.connection.state === 'DISCONNECTED',
      'the device to become DISCONNECTED',
      10_000,
    );
    const read = await call(devices(`/${DEVICE}`), { token: alice });
    expect(read.body.connection.disconnectedSince).toEqual(expect.any(String));
    expect(read.body.connection.connectedSince).toBeUndefined();
  });

  it('is deleted: its token is refused, its deployments are undeployed (DEVICE_DELETED) and it leaves search', async () => {
    const deleted = await call(devices(`/${DEVICE}`), { method: 'DELETE', token: alice });
    expect(deleted.status).toBe(204);
    expect((await call(devices(`/${DEVICE}`), { token: alice })).status).toBe(404);
    const refused = await call(`${service.api}/device/deployments`, { token: device.token });
    expect(refused.status).toBe(401);
    expect((await deviceToken(device.clientId, device.clientSecret)).status).toBe(401);
    const active = await call(`${service.api}/companies/${COMPANY}/resources/DEVICE/deployments?limit=1000`, { token: alice });
    expect(active.body.items.filter((item: { target: { id: string } }) => item.target.id === DEVICE)).toEqual([]);
    await eventually(async () => {
      const history = await call(`${service.api}/companies/${COMPANY}/resources/deployments/history?deviceId=${DEVICE}`, { token: alice });
      return JSON.stringify(history.body.items).includes('DEVICE_DELETED');
    }, 'the DEVICE_DELETED undeploy in the history');
    await eventually(
      async () => (await searchDevice(`health.versionCode=${VERSION_CODE}`)) === undefined,
      'the device to leave search',
      5_000,
    );
  });
});

describe('isolation', () => {
  it("keeps devices to themselves, users off device endpoints, devices off user endpoints, and acme's devices from globex", async () => {
    const first = await registerWithToken(`${OTHER}-a`);
    const second = await registerWithToken(`${OTHER}-b`);
    await call(`${service.api}/companies/${COMPANY}/resources/deployments`, {
      token: alice,
      json: {
        requests: [
          { target: { type: 'DEVICE', id: `${OTHER}-b` }, what: { type: 'SCENARIO', id: SCENARIO, subId: VERSION }, action: 'DEPLOY' },
        ],
      },
    });
    // The first device sees only its own (empty) desired state, and cannot report on the second's deployment.
    const own = await call(`${service.api}/device/deployments`, { token: first.token });
    expect(own.status).toBe(200);
    expect(own.body.items).toEqual([]);
    const foreign = await call(`${service.api}/device/deployments/status`, {
      token: first.token,
      json: { what: { type: 'SCENARIO', id: SCENARIO, subId: VERSION }, state: 'INSTALLED' },
    });
    expect(foreign.status).toBe(404);
    // A device token on user endpoints, a user token on device endpoints: 403.
    for (const url of [
      devices(`/${OTHER}-a`),
      `${service.api}/resources/search`,
      `${service.api}/companies/${COMPANY}/resources/DEVICE/deployments`,
    ]) {
      expect((await call(url, { token: second.token })).status).toBe(403);
    }
    expect((await call(`${service.api}/device/deployments`, { token: alice })).status).toBe(403);
    expect((await call(`${service.api}/device/health`, { method: 'PUT', token: alice, json: health(1) })).status).toBe(403);
    // globex: no access to acme's registry, and acme's devices never appear in its search.
    expect((await call(devices(`/${OTHER}-a`), { token: bob })).status).toBe(403);
    const globex = await call(`${service.api}/resources/search?pageSize=100&global=${OTHER}`, { token: bob });
    expect(globex.status).toBe(200);
    expect(globex.body.resources).toEqual([]);
  });
});
