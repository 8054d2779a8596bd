/**
 * Alert rules over the local runtime: an operator writes a rule "disconnected for 1 minute" whose query selects one
 * kiosk; the kiosk reports, then falls silent (a 2 s heartbeat window, swept every 200 ms): it becomes DISCONNECTED,
 * its watch starts, and about a minute later the sweep raises one OPEN alert, an AlertChanged event on the bus; its
 * next report resolves it. Its connection changes are DeviceConnectionChanged events, one per change. A viewer reads
 * rules and alerts but cannot write a rule.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { components } from '../../client/api-types.js';
import { expectOk } from '../../client/index.js';
import { clientFor, deviceTokenRequest, eventually, useLocalService } from './harness.js';

const COMPANY = 'acme';
const KIOSK = 'acme-alerts-01';
const VERSION_CODE = 'alerts-4711';
const QUERY = `health.versionCode=${VERSION_CODE}`;

const local = useLocalService({
  users: ['alice', 'olivia'],
  environment: { DEVICE_HEARTBEAT_SECONDS: '2', HEARTBEAT_SWEEP_INTERVAL_MS: '200', ALERT_SWEEP_INTERVAL_MS: '200' },
});

const as = (token: string) => clientFor(local.service, token);
const company = { path: { companyId: COMPANY } };

const health: components['schemas']['DeviceHealthReport'] = {
  versionCode: VERSION_CODE,
  versionName: '4.7.11',
  mode: 'SERVER',
  hubs: [],
};

/** The bus events of the local runtime's events file, of `type`, about the kiosk. */
async function busEvents(type: string): Promise<Record<string, unknown>[]> {
  const text = await readFile(join(local.settings.dataDirectory, 'events', 'events.jsonl'), 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((event) => event.type === type && (event.deviceId === KIOSK || (event.target as { id?: string } | undefined)?.id === KIOSK));
}

const alertsIn = async (state: 'OPEN' | 'RESOLVED') =>
  expectOk(await as(local.tokens.alice).main.GET('/companies/{companyId}/alerts', { params: { ...company, query: { state } } })).items;

const connection = async () =>
  expectOk(
    await as(local.tokens.alice).main.GET('/companies/{companyId}/resources/devices/{deviceId}', {
      params: { path: { companyId: COMPANY, deviceId: KIOSK } },
    }),
  ).connection;

describe('an alert rule on a kiosk that goes silent', () => {
  let kiosk: string;
  let ruleId: string;
  let alertId: string;

  it('is written by an operator, read by a viewer, and refused to the viewer', async () => {
    const body = { name: 'Alerts lab offline', query: QUERY, condition: { type: 'DISCONNECTED_FOR' as const, minutes: 1 } };
    const refused = await as(local.tokens.olivia).main.POST('/companies/{companyId}/alert-rules', { params: company, body });
    expect(refused.response.status).toBe(403);
    const bad = await as(local.tokens.alice).main.POST('/companies/{companyId}/alert-rules', {
      params: company,
      body: { ...body, query: 'global=lab' },
    });
    expect(bad.response.status).toBe(400);
    const created = await as(local.tokens.alice).main.POST('/companies/{companyId}/alert-rules', { params: company, body });
    expect(created.response.status).toBe(201);
    ruleId = expectOk(created).id;
    const listed = expectOk(await as(local.tokens.olivia).main.GET('/companies/{companyId}/alert-rules', { params: company }));
    expect(listed.items.map((rule) => rule.id)).toContain(ruleId);
  });

  it('watches the kiosk from its silence and raises one alert a minute later, an AlertChanged event', async () => {
    const put = await as(local.tokens.alice).main.PUT('/companies/{companyId}/resources/devices/{deviceId}', {
      params: { path: { companyId: COMPANY, deviceId: KIOSK } },
      body: { serial: `SN-${KIOSK}` },
    });
    expect(put.response.status).toBe(201);
    const { clientId, clientSecret } = expectOk(
      await as(local.tokens.alice).main.POST('/companies/{companyId}/resources/devices/{deviceId}/credentials', {
        params: { path: { companyId: COMPANY, deviceId: KIOSK } },
      }),
    );
    kiosk = expectOk(await deviceTokenRequest(local.service, clientId, clientSecret)).access_token;
    expect((await as(kiosk).main.PUT('/device/health', { body: health })).response.status).toBe(204);
    // Silent from here: the heartbeat sweeper makes it DISCONNECTED within about 2 s.
    await eventually(async () => (await connection()).state === 'DISCONNECTED', 'the kiosk to become DISCONNECTED', 30_000, 200);
    const { disconnectedSince } = await connection();
    await eventually(async () => (await alertsIn('OPEN')).some((alert) => alert.ruleId === ruleId), 'the alert to be raised', 100_000, 500);
    const [alert] = (await alertsIn('OPEN')).filter((candidate) => candidate.ruleId === ruleId);
    alertId = alert?.id as string;
    expect(alert).toMatchObject({ target: { type: 'DEVICE', id: KIOSK }, state: 'OPEN', ruleName: 'Alerts lab offline' });
    expect(Date.parse(alert?.raisedAt as string) - Date.parse(disconnectedSince as string)).toBeGreaterThanOrEqual(60_000);
    await eventually(async () => (await busEvents('AlertChanged')).length > 0, 'the AlertChanged event', 15_000);
    expect(await busEvents('AlertChanged')).toMatchObject([{ alertId, state: 'OPEN', ruleId }]);
  }, 150_000);

  it('resolves the alert when the kiosk reports again, and each connection change is one event', async () => {
    expect((await as(kiosk).main.PUT('/device/health', { body: health })).response.status).toBe(204);
    await eventually(
      async () => (await alertsIn('RESOLVED')).some((alert) => alert.id === alertId),
      'the alert to be resolved',
      30_000,
      300,
    );
    const read = expectOk(
      await as(local.tokens.olivia).main.GET('/companies/{companyId}/alerts/{alertId}', {
        params: { path: { companyId: COMPANY, alertId } },
      }),
    );
    expect(read).toMatchObject({ id: alertId, state: 'RESOLVED' });
    expect(await alertsIn('OPEN')).toEqual([]);
    await eventually(async () => (await busEvents('AlertChanged')).length === 2, 'the AlertChanged RESOLVED event', 15_000);
    expect((await busEvents('AlertChanged')).map((event) => event.state)).toEqual(['OPEN', 'RESOLVED']);
    await eventually(async () => (await busEvents('DeviceConnectionChanged')).length >= 3, 'the connection events', 15_000);
    // The 2 s window may already have made it DISCONNECTED again: a fourth event, a change of its own.
    const changes = await busEvents('DeviceConnectionChanged');
    expect(changes.slice(0, 3).map((event) => event.state)).toEqual(['CONNECTED', 'DISCONNECTED', 'CONNECTED']);
    expect(new Set(changes.map((event) => `${event.state}:${event.at}`)).size).toBe(changes.length);
  }, 60_000);
});
