/**
 * End-to-end over `npm start` (bin/local.ts), as an operator and a kiosk see it: a device is registered, gets
 * credentials and a token, reports its health and is found CONNECTED in search by its health fields; a scenario is
 * deployed to it, which it pulls (200 with an ETag, then 304), downloads through the presigned URL and checks, and
 * reports INSTALLED (seen on the active item and in the history); it falls silent and becomes DISCONNECTED; it is
 * deleted, and its token and deployments are gone. Then the isolation rules between devices, users and companies.
 * A short heartbeat window (2 s, swept every 200 ms) keeps the silence short.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type components, expectOk, type paths } from '../../client/index.js';
import { clientFor, deviceTokenRequest, eventually, useLocalService } from './harness.js';

const COMPANY = 'acme';
const DEVICE = 'acme-lifecycle-01';
const OTHER = 'acme-lifecycle-02';
const SCENARIO = 'acme-welcome';
const VERSION = '1.0.0';
const VERSION_CODE = 'lifecycle-4711';

const local = useLocalService({
  users: ['alice', 'bob'],
  environment: { DEVICE_HEARTBEAT_SECONDS: '2', HEARTBEAT_SWEEP_INTERVAL_MS: '200' },
});

type SearchQuery = NonNullable<paths['/resources/search']['get']['parameters']['query']>;

/** The typed client as the holder of `token` (a user's or a device's); answers are checked against the document. */
const as = (token: string) => clientFor(local.service, token);

const health = (level: number): components['schemas']['DeviceHealthReport'] => ({
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

/** GET a device of the company as `token`. */
const getDevice = (token: string, deviceId: string) =>
  as(token).main.GET('/companies/{companyId}/resources/devices/{deviceId}', { params: { path: { companyId: COMPANY, deviceId } } });

/** The history of one device of the company, as alice. */
const deviceHistory = async (deviceId: string) =>
  expectOk(
    await as(local.tokens.alice).main.GET('/companies/{companyId}/resources/deployments/history', {
      params: { path: { companyId: COMPANY }, query: { deviceId } },
    }),
  );

/** Deploys the scenario version to a device as alice. */
const deployTo = async (deviceId: string) =>
  expectOk(
    await as(local.tokens.alice).main.POST('/companies/{companyId}/resources/deployments', {
      params: { path: { companyId: COMPANY } },
      body: {
        requests: [
          { target: { type: 'DEVICE', id: deviceId }, what: { type: 'SCENARIO', id: SCENARIO, subId: VERSION }, action: 'DEPLOY' },
        ],
      },
    }),
  );

async function registerWithToken(deviceId: string): Promise<{ clientId: string; clientSecret: string; token: string }> {
  const created = await as(local.tokens.alice).main.PUT('/companies/{companyId}/resources/devices/{deviceId}', {
    params: { path: { companyId: COMPANY, deviceId } },
    body: { serial: `SN-${deviceId}` },
  });
  expect(created.response.status).toBe(201);
  const credentials = await as(local.tokens.alice).main.POST('/companies/{companyId}/resources/devices/{deviceId}/credentials', {
    params: { path: { companyId: COMPANY, deviceId } },
  });
  expect(credentials.response.status).toBe(201);
  const { clientId, clientSecret } = expectOk(credentials);
  const token = await deviceTokenRequest(local.service, clientId, clientSecret);
  expect(token.response.status).toBe(200);
  return { clientId, clientSecret, token: expectOk(token).access_token };
}

/** The device DEVICE among the company's search results for `query`, if it is there. */
async function searchDevice(query: SearchQuery) {
  const result = expectOk(
    await as(local.tokens.alice).main.GET('/resources/search', { params: { query: { company: [COMPANY], ...query, pageSize: 100 } } }),
  );
  return result.resources.find((resource) => resource.id === DEVICE);
}

describe('a kiosk from registration to deletion', () => {
  let device: { clientId: string; clientSecret: string; token: string };
  let etag: string;

  it('is registered, gets credentials and a device token', async () => {
    device = await registerWithToken(DEVICE);
    expect(device.clientId).toBe(`${COMPANY}~${DEVICE}`);
    const read = expectOk(await getDevice(local.tokens.alice, DEVICE));
    expect(read).toMatchObject({ id: DEVICE, serial: `SN-${DEVICE}`, connection: { state: 'UNKNOWN' } });
    expect(JSON.stringify(read)).not.toContain('secretHash');
  });

  it('reports its health and is found CONNECTED in search by its health fields', async () => {
    const reported = await as(device.token).main.PUT('/device/health', { body: health(80) });
    expect(reported.response.status).toBe(204);
    // The heartbeat window is 2 s and search follows the stream in its own time (slower on a busy machine): the device
    // keeps reporting, unchanged, while the test waits, so that it stays CONNECTED until search shows it so.
    const timer = setInterval(() => {
      as(device.token)
        .main.PUT('/device/health', { body: health(80) })
        .catch(() => undefined);
    }, 400);
    let found: Awaited<ReturnType<typeof searchDevice>>;
    try {
      await eventually(async () => {
        found = await searchDevice({
          'connection.state': ['CONNECTED'],
          'health.versionCode': [VERSION_CODE],
          'health.hubs.devices.capability.type': ['PRINTER'],
          'health.mode': ['EMBEDDED_PLATFORM_ANDROID'],
        });
        return found !== undefined;
      }, 'the device to be CONNECTED in search');
    } finally {
      clearInterval(timer);
    }
    expect(found).toMatchObject({
      type: 'DEVICE',
      company: COMPANY,
      connection: { state: 'CONNECTED' },
      health: { versionCode: VERSION_CODE },
    });
    expect(found?.type === 'DEVICE' && found.connection.connectedSince).toEqual(expect.any(String));
  });

  it('pulls a deployed scenario (200 with an ETag, then 304), downloads it and its sha256 matches', async () => {
    expect((await deployTo(DEVICE)).items[0]?.state).toBe('SUCCESS');
    const pulled = await as(device.token).main.GET('/device/deployments');
    expect(pulled.response.status).toBe(200);
    etag = pulled.response.headers.get('etag') as string;
    expect(etag).toMatch(/^"/);
    const [item] = expectOk(pulled).items;
    expect(item).toMatchObject({ what: { type: 'SCENARIO', id: SCENARIO, subId: VERSION } });
    const again = await as(device.token).main.GET('/device/deployments', { params: { header: { 'If-None-Match': etag } } });
    expect(again.response.status).toBe(304);
    expect(await again.response.text()).toBe('');
    // The download URL is a presigned S3 URL, outside the document: fetched as a device fetches it.
    const archive = await fetch(item?.downloadUrl as string);
    expect(archive.status).toBe(200);
    const bytes = Buffer.from(await archive.arrayBuffer());
    expect(bytes.length).toBe(item?.size);
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(item?.sha256);
  });

  it('reports INSTALLED, seen on the active deployment and in the history', async () => {
    const what = { type: 'SCENARIO', id: SCENARIO, subId: VERSION } as const;
    for (const state of ['DOWNLOADING', 'INSTALLING', 'INSTALLED'] as const) {
      const reported = await as(device.token).main.POST('/device/deployments/status', { body: { what, state } });
      expect(reported.response.status).toBe(204);
    }
    const active = expectOk(
      await as(local.tokens.alice).main.GET('/companies/{companyId}/resources/{deviceId}/deployments', {
        params: { path: { companyId: COMPANY, deviceId: DEVICE } },
      }),
    );
    expect(active.items[0]?.deviceStatus).toMatchObject({ state: 'INSTALLED' });
    await eventually(
      async () =>
        (await deviceHistory(DEVICE)).items.some((entry) => entry.kind === 'DEVICE_STATUS' && entry.deviceStatus.state === 'INSTALLED'),
      'the INSTALLED report in the history',
    );
    // A status change is not a change of what is deployed: the pull still answers 304.
    const pulled = await as(device.token).main.GET('/device/deployments', { params: { header: { 'If-None-Match': etag } } });
    expect(pulled.response.status).toBe(304);
  });

  it('becomes DISCONNECTED, with disconnectedSince, once silent beyond the heartbeat window', async () => {
    await eventually(
      async () => expectOk(await getDevice(local.tokens.alice, DEVICE)).connection.state === 'DISCONNECTED',
      'the device to become DISCONNECTED',
      10_000,
    );
    const read = expectOk(await getDevice(local.tokens.alice, DEVICE));
    expect(read.connection.disconnectedSince).toEqual(expect.any(String));
    expect(read.connection.connectedSince).toBeUndefined();
  });

  it('is deleted: its token is refused, its deployments are undeployed (DEVICE_DELETED) and it leaves search', async () => {
    const deleted = await as(local.tokens.alice).main.DELETE('/companies/{companyId}/resources/devices/{deviceId}', {
      params: { path: { companyId: COMPANY, deviceId: DEVICE } },
    });
    expect(deleted.response.status).toBe(204);
    expect((await getDevice(local.tokens.alice, DEVICE)).response.status).toBe(404);
    const refused = await as(device.token).main.GET('/device/deployments');
    expect(refused.response.status).toBe(401);
    expect((await deviceTokenRequest(local.service, device.clientId, device.clientSecret)).response.status).toBe(401);
    const active = expectOk(
      await as(local.tokens.alice).main.GET('/companies/{companyId}/resources/DEVICE/deployments', {
        params: { path: { companyId: COMPANY }, query: { limit: 1000 } },
      }),
    );
    expect(active.items.filter((item) => item.target.id === DEVICE)).toEqual([]);
    await eventually(
      async () => (await deviceHistory(DEVICE)).items.some((entry) => entry.kind === 'ACTION' && entry.cause === 'DEVICE_DELETED'),
      'the DEVICE_DELETED undeploy in the history',
    );
    await eventually(
      async () => (await searchDevice({ 'health.versionCode': [VERSION_CODE] })) === undefined,
      'the device to leave search',
    );
  });
});

describe('isolation', () => {
  it("keeps devices to themselves, users off device endpoints, devices off user endpoints, and acme's devices from globex", async () => {
    const first = await registerWithToken(`${OTHER}-a`);
    const second = await registerWithToken(`${OTHER}-b`);
    expect((await deployTo(`${OTHER}-b`)).items[0]?.state).toBe('SUCCESS');
    // The first device sees only its own (empty) desired state, and cannot report on the second's deployment.
    expect(expectOk(await as(first.token).main.GET('/device/deployments')).items).toEqual([]);
    const foreign = await as(first.token).main.POST('/device/deployments/status', {
      body: { what: { type: 'SCENARIO', id: SCENARIO, subId: VERSION }, state: 'INSTALLED' },
    });
    expect(foreign.response.status).toBe(404);
    // A device token on user endpoints, a user token on device endpoints: 403.
    const asDevice = as(second.token);
    for (const answer of [
      await getDevice(second.token, `${OTHER}-a`),
      await asDevice.main.GET('/resources/search'),
      await asDevice.main.GET('/companies/{companyId}/resources/DEVICE/deployments', { params: { path: { companyId: COMPANY } } }),
      await as(local.tokens.alice).main.GET('/device/deployments'),
      await as(local.tokens.alice).main.PUT('/device/health', { body: health(1) }),
      // globex: no access to acme's registry.
      await getDevice(local.tokens.bob, `${OTHER}-a`),
    ]) {
      expect(answer.response.status, answer.response.url).toBe(403);
    }
    // acme's devices never appear in globex's search.
    const globex = expectOk(
      await as(local.tokens.bob).main.GET('/resources/search', { params: { query: { pageSize: 100, global: OTHER } } }),
    );
    expect(globex.resources).toEqual([]);
  });
});
