/**
 * End-to-end over `npm start` (bin/local.ts): a receiver on 127.0.0.1 subscribed to a kiosk's connection and alert
 * events gets each, once, signed as the Standard Webhooks specification says (checked with the `standardwebhooks`
 * package), with the bodies docs/webhooks.md ("Event types") shows: the kiosk reports (device.connected), falls silent
 * past the heartbeat window (device.disconnected), stays silent past a 1-minute DISCONNECTED_FOR rule (alert.raised),
 * and reports again (alert.resolved, device.connected). A 2 s heartbeat window, swept every 200 ms.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { components } from '../../client/api-types.js';
import { expectOk } from '../../client/index.js';
import { clientFor, deviceTokenRequest, eventually, tokenFor, useLocalService } from './harness.js';

const COMPANY = 'acme';
const KIOSK = 'acme-hooked-01';
const VERSION_CODE = 'hooked-4712';

const local = useLocalService({
  users: ['alice', 'root'],
  environment: { DEVICE_HEARTBEAT_SECONDS: '2', HEARTBEAT_SWEEP_INTERVAL_MS: '200', ALERT_SWEEP_INTERVAL_MS: '200' },
});

type Body = { type: string; timestamp: string; data: Record<string, unknown> };

/** Every request the receiver got: headers and raw body. */
const received: { headers: IncomingHttpHeaders; body: string }[] = [];
let receiver: Server;
let secret: string;

const health: components['schemas']['DeviceHealthReport'] = { versionCode: VERSION_CODE, versionName: '4.7.12', mode: 'SERVER', hubs: [] };

beforeAll(async () => {
  receiver = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on('end', () => {
      received.push({ headers: request.headers, body });
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((listening) => receiver.listen(0, '127.0.0.1', listening));
  const root = clientFor(local.service, local.tokens.root);
  expectOk(await root.main.PATCH('/admin/users/{username}', { params: { path: { username: 'alice' } }, body: { role: 'company-admin' } }));
  const admin = clientFor(local.service, await tokenFor(local.service, 'alice'));
  const params = { path: { companyId: COMPANY } };
  secret = expectOk(
    await admin.main.POST('/companies/{companyId}/webhooks', {
      params,
      body: {
        url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/fleet`,
        events: ['device.connected', 'device.disconnected', 'alert.raised', 'alert.resolved'],
      },
    }),
  ).secret;
  expectOk(
    await admin.main.POST('/companies/{companyId}/alert-rules', {
      params,
      body: {
        name: 'Hooked kiosk offline',
        query: `health.versionCode=${VERSION_CODE}`,
        condition: { type: 'DISCONNECTED_FOR', minutes: 1 },
      },
    }),
  );
}, 60_000);

afterAll(async () => {
  await new Promise((closed) => receiver?.close(closed));
});

/** The kiosk's deliveries so far, each verified with the webhook's secret (throws on one that is not), in arrival order. */
function kioskDeliveries(): { id: string; body: Body }[] {
  const verifier = new StandardWebhook(secret);
  return received.flatMap(({ headers, body }) => {
    const verified = verifier.verify(body, headers as Record<string, string>) as Body;
    const about = verified.data.deviceId ?? (verified.data.target as { id?: string } | undefined)?.id;
    return about === KIOSK ? [{ id: headers['webhook-id'] as string, body: verified }] : [];
  });
}

const typesDelivered = () => kioskDeliveries().map(({ body }) => body.type);

describe("a kiosk's connection and alert events, delivered to a webhook", () => {
  it('delivers device.connected, device.disconnected, alert.raised, then alert.resolved and device.connected, each once and signed', async () => {
    const alice = clientFor(local.service, local.tokens.alice);
    const path = { path: { companyId: COMPANY, deviceId: KIOSK } };
    expectOk(
      await alice.main.PUT('/companies/{companyId}/resources/devices/{deviceId}', { params: path, body: { serial: 'ACM-HK-0001' } }),
    );
    const { clientId, clientSecret } = expectOk(
      await alice.main.POST('/companies/{companyId}/resources/devices/{deviceId}/credentials', { params: path }),
    );
    const kiosk = clientFor(local.service, expectOk(await deviceTokenRequest(local.service, clientId, clientSecret)).access_token);
    expect((await kiosk.main.PUT('/device/health', { body: health })).response.status).toBe(204);

    // Silent from here: DISCONNECTED within about 2 s, the alert about a minute later.
    await eventually(async () => typesDelivered().includes('device.disconnected'), 'device.disconnected delivered', 30_000, 200);
    await eventually(async () => typesDelivered().includes('alert.raised'), 'alert.raised delivered', 120_000, 500);
    const raised = kioskDeliveries().find(({ body }) => body.type === 'alert.raised')?.body as Body;
    const disconnected = kioskDeliveries().find(({ body }) => body.type === 'device.disconnected')?.body as Body;
    expect(disconnected.data).toEqual({ deviceId: KIOSK, serial: 'ACM-HK-0001', state: 'DISCONNECTED', since: disconnected.timestamp });
    expect(raised.data).toMatchObject({ ruleName: 'Hooked kiosk offline', state: 'OPEN', target: { type: 'DEVICE', id: KIOSK } });
    expect(Date.parse(raised.timestamp) - Date.parse(disconnected.timestamp)).toBeGreaterThanOrEqual(60_000);

    expect((await kiosk.main.PUT('/device/health', { body: health })).response.status).toBe(204);
    await eventually(async () => typesDelivered().includes('alert.resolved'), 'alert.resolved delivered', 30_000, 200);
    await eventually(
      async () => typesDelivered().filter((type) => type === 'device.connected').length === 2,
      'the second device.connected',
      30_000,
      200,
    );
    const resolved = kioskDeliveries().find(({ body }) => body.type === 'alert.resolved')?.body as Body;
    expect(resolved.data).toMatchObject({ alertId: raised.data.alertId, state: 'RESOLVED' });

    // Each change once: one webhook-id per delivery, and these in this order (the 2 s window may have made the kiosk
    // DISCONNECTED again since the second report: a change of its own, left out here).
    const deliveries = kioskDeliveries();
    expect(new Set(deliveries.map(({ id }) => id)).size).toBe(deliveries.length);
    const types = typesDelivered();
    expect(types.slice(0, 3)).toEqual(['device.connected', 'device.disconnected', 'alert.raised']);
    expect(
      types
        .slice(3)
        .filter((type) => type !== 'device.disconnected')
        .sort(),
    ).toEqual(['alert.resolved', 'device.connected']);
  }, 180_000);
});
