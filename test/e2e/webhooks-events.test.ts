/**
 * The events a company's webhook carries, end to end over the local runtime: a receiver on 127.0.0.1 subscribed to
 * every event type gets, each signed as Standard Webhooks says (verified with the `standardwebhooks` package) and each
 * exactly once by `webhook-id`, `device.disconnected` when a kiosk falls silent past its heartbeat window (2 s here,
 * swept every 200 ms) and `device.connected` when it reports again; `rollout.paused` when a wave's failures pause a
 * rollout (simulated kiosks failing every install); `alert.raised` when a kiosk stays silent past a 1-minute
 * DISCONNECTED_FOR rule and `alert.resolved` at its next report, for a kiosk that fell silent after the rule was made
 * and for one already disconnected before it (the rule's creation sees it: docs/alerts.md, "What a rule sees").
 * Bodies are checked against docs/webhooks.md's examples.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type components, expectOk } from '../../client/index.js';
import { WEBHOOK_EVENT_TYPES } from '../../functions/core/webhooks/model.js';
import type { SimulatedFleet } from '../../simulator/fleet.js';
import { clientFor, deviceTokenRequest, eventually, tokenFor, useLocalService } from './harness.js';
import { startSimulatedKiosks } from './simulated-kiosks.js';

const COMPANY = 'acme';
const VERSION_CODE = 'whev-4711';
/** Falls silent before the rule exists. */
const EARLY = 'acme-whev-early';
/** Falls silent after the rule exists. */
const LATE = 'acme-whev-late';
/** The local rule cache of the device changes consumer (evaluation.ts's RuleCache): a rule applies after this. */
const RULE_CACHE_MS = 5_000;

const local = useLocalService({
  users: ['alice', 'root'],
  environment: {
    DEVICE_HEARTBEAT_SECONDS: '2',
    HEARTBEAT_SWEEP_INTERVAL_MS: '200',
    ALERT_SWEEP_INTERVAL_MS: '200',
    WEBHOOK_SWEEP_INTERVAL_MS: '200',
    ROLLOUT_SWEEP_INTERVAL_MS: '200',
    ROLLOUT_CHUNK_TIMEOUT_SECONDS: '2',
  },
});
const company = { path: { companyId: COMPANY } };
let admin: string;
let webhook: components['schemas']['WebhookWithSecret'];
const fleets: SimulatedFleet[] = [];
const kiosks = new Map<string, string>();

/** What the receiver got: each request's headers and body, answered 200. */
const received: { headers: IncomingHttpHeaders; body: string }[] = [];
let receiver: Server;

/** A delivered event, verified with the webhook's secret (throws if its signature is not). */
interface Delivered {
  id: string;
  body: { type: string; timestamp: string; data: Record<string, unknown> };
}

function delivered(): Delivered[] {
  const verifier = new StandardWebhook(webhook.secret);
  return received.map(({ headers, body }) => ({
    id: headers['webhook-id'] as string,
    body: verifier.verify(body, headers as Record<string, string>) as Delivered['body'],
  }));
}

/** The delivered events of `type` whose data matches `about`. */
const deliveredOf = (type: string, about: (data: Record<string, unknown>) => boolean) =>
  delivered().filter((event) => event.body.type === type && about(event.body.data));
const ofDevice = (deviceId: string) => (data: Record<string, unknown>) => data.deviceId === deviceId;
const ofTarget = (deviceId: string) => (data: Record<string, unknown>) => (data.target as { id?: string }).id === deviceId;

const as = (token: string) => clientFor(local.service, token).main;

/** Registers a kiosk of COMPANY with its credentials; keeps its token. */
async function register(deviceId: string): Promise<void> {
  const path = { companyId: COMPANY, deviceId };
  expect(
    (await as(admin).PUT('/companies/{companyId}/resources/devices/{deviceId}', { params: { path }, body: { serial: `SN-${deviceId}` } }))
      .response.status,
  ).toBe(201);
  const { clientId, clientSecret } = expectOk(
    await as(admin).POST('/companies/{companyId}/resources/devices/{deviceId}/credentials', { params: { path } }),
  );
  kiosks.set(deviceId, expectOk(await deviceTokenRequest(local.service, clientId, clientSecret)).access_token);
}

async function report(deviceId: string): Promise<void> {
  const body = { versionCode: VERSION_CODE, versionName: '4.7.11', mode: 'SERVER' as const, hubs: [] };
  expect((await as(kiosks.get(deviceId) as string).PUT('/device/health', { body })).response.status).toBe(204);
}

async function connectionOf(deviceId: string) {
  return expectOk(
    await as(admin).GET('/companies/{companyId}/resources/devices/{deviceId}', { params: { path: { companyId: COMPANY, deviceId } } }),
  ).connection;
}

const silentOnceDisconnected = (deviceId: string) =>
  eventually(async () => (await connectionOf(deviceId)).state === 'DISCONNECTED', `${deviceId} to become DISCONNECTED`, 30_000, 200);

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
  // Webhooks are a company administrator's: root makes alice one, and her new token carries the role.
  expectOk(
    await as(local.tokens.root).PATCH('/admin/users/{username}', {
      params: { path: { username: 'alice' } },
      body: { role: 'company-admin' },
    }),
  );
  admin = await tokenFor(local.service, 'alice');
  webhook = expectOk(
    await as(admin).POST('/companies/{companyId}/webhooks', {
      params: company,
      body: { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/events`, events: [...WEBHOOK_EVENT_TYPES] },
    }),
  );
}, 60_000);

afterAll(async () => {
  await Promise.all(fleets.map((fleet) => fleet.stop()));
  receiver?.closeAllConnections();
  await new Promise((closed) => receiver?.close(closed));
});

describe('a webhook subscribed to every event', () => {
  let ruleId: string;
  let ruleCreatedAt: number;

  it('gets device.disconnected when a kiosk falls silent, before and after an alert rule on it is made', async () => {
    await register(EARLY);
    await register(LATE);
    await report(EARLY);
    await silentOnceDisconnected(EARLY);
    const { disconnectedSince } = await connectionOf(EARLY);
    await eventually(async () => deliveredOf('device.disconnected', ofDevice(EARLY)).length > 0, 'device.disconnected of the early kiosk');
    const [event] = deliveredOf('device.disconnected', ofDevice(EARLY));
    expect(event?.body).toEqual({
      type: 'device.disconnected',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      data: { deviceId: EARLY, serial: `SN-${EARLY}`, state: 'DISCONNECTED', since: disconnectedSince },
    });

    const rule = {
      name: 'Webhook lab offline',
      query: `health.versionCode=${VERSION_CODE}`,
      condition: { type: 'DISCONNECTED_FOR' as const, minutes: 1 },
    };
    ruleCreatedAt = Date.now();
    ruleId = expectOk(await as(admin).POST('/companies/{companyId}/alert-rules', { params: company, body: rule })).id;
    // The late kiosk reports until the device changes consumer has read the new rule, then falls silent.
    await report(LATE);
    await eventually(
      async () => {
        await report(LATE);
        return Date.now() - ruleCreatedAt > RULE_CACHE_MS + 1_000;
      },
      'the rule to be read by the device changes consumer',
      15_000,
      500,
    );
    await silentOnceDisconnected(LATE);
    await eventually(async () => deliveredOf('device.disconnected', ofDevice(LATE)).length > 0, 'device.disconnected of the late kiosk');
  }, 90_000);

  it("gets rollout.paused when a wave's failures pause a rollout", async () => {
    fleets.push(await startSimulatedKiosks(local, { company: COMPANY, prefix: 'acme-whev-fail-', count: 2, failureRate: 1 }));
    const rollout = expectOk(
      await as(admin).POST('/companies/{companyId}/resources/rollouts', {
        params: company,
        body: {
          action: 'DEPLOY',
          what: { type: 'SCENARIO', id: 'acme-welcome', subId: '1.1.0' },
          targets: { ids: ['acme-whev-fail-01', 'acme-whev-fail-02'] },
          waves: [1],
          failureThreshold: 0.1,
        },
      }),
    );
    const ofRollout = (data: Record<string, unknown>) => data.rolloutId === rollout.id;
    await eventually(async () => deliveredOf('rollout.paused', ofRollout).length > 0, 'rollout.paused', 60_000, 200);
    expect(deliveredOf('rollout.paused', ofRollout)[0]?.body).toEqual({
      type: 'rollout.paused',
      timestamp: expect.any(String),
      data: {
        rolloutId: rollout.id,
        action: 'DEPLOY',
        what: { type: 'SCENARIO', id: 'acme-welcome', subId: '1.1.0' },
        state: 'PAUSED',
        wave: 1,
        reason: expect.stringMatching(/^Wave 1: .*FAILED/),
      },
    });
  }, 90_000);

  it('gets alert.raised a minute after each kiosk fell silent, the one silent before the rule too', async () => {
    for (const deviceId of [EARLY, LATE]) {
      await eventually(async () => deliveredOf('alert.raised', ofTarget(deviceId)).length > 0, `alert.raised of ${deviceId}`, 100_000, 500);
    }
    const since = new Map<string, string | undefined>();
    for (const deviceId of [EARLY, LATE]) since.set(deviceId, (await connectionOf(deviceId)).disconnectedSince);
    // Made after the early kiosk fell silent, the rule still raised its alert, a minute after the silence began.
    expect(Date.parse(since.get(EARLY) as string)).toBeLessThan(ruleCreatedAt);
    for (const deviceId of [EARLY, LATE]) {
      const [raised] = deliveredOf('alert.raised', ofTarget(deviceId));
      expect(raised?.body).toEqual({
        type: 'alert.raised',
        timestamp: expect.any(String),
        data: {
          alertId: expect.any(String),
          ruleId,
          ruleName: 'Webhook lab offline',
          state: 'OPEN',
          target: { type: 'DEVICE', id: deviceId },
          detail: `Disconnected since ${since.get(deviceId)}.`,
        },
      });
      expect(Date.parse(raised?.body.timestamp as string) - Date.parse(since.get(deviceId) as string)).toBeGreaterThanOrEqual(60_000);
    }
  }, 150_000);

  it('gets alert.resolved and device.connected at the next report, and every event once', async () => {
    for (const deviceId of [EARLY, LATE]) await report(deviceId);
    for (const deviceId of [EARLY, LATE]) {
      await eventually(
        async () => deliveredOf('alert.resolved', ofTarget(deviceId)).length > 0,
        `alert.resolved of ${deviceId}`,
        30_000,
        200,
      );
      await eventually(
        async () => deliveredOf('device.connected', ofDevice(deviceId)).length >= 2,
        `device.connected of ${deviceId}`,
        30_000,
        200,
      );
      const [raised] = deliveredOf('alert.raised', ofTarget(deviceId));
      expect(deliveredOf('alert.resolved', ofTarget(deviceId))[0]?.body).toMatchObject({
        type: 'alert.resolved',
        data: { alertId: raised?.body.data.alertId, ruleId, state: 'RESOLVED', target: { type: 'DEVICE', id: deviceId } },
      });
      const connected = deliveredOf('device.connected', ofDevice(deviceId));
      expect(connected.at(-1)?.body.data).toMatchObject({ deviceId, serial: `SN-${deviceId}`, state: 'CONNECTED' });
      expect(deliveredOf('alert.raised', ofTarget(deviceId))).toHaveLength(1);
      expect(deliveredOf('alert.resolved', ofTarget(deviceId))).toHaveLength(1);
    }
    // Each delivery answered 200 is recorded SUCCEEDED after one attempt, and its webhook-id came once.
    const ours = new Set(delivered().map((event) => event.id));
    await eventually(
      async () => {
        const { items } = expectOk(
          await as(admin).GET('/companies/{companyId}/webhooks/{webhookId}/deliveries', {
            params: { path: { companyId: COMPANY, webhookId: webhook.id } },
          }),
        );
        const seen = items.filter((delivery) => ours.has(delivery.messageId));
        return seen.length > 0 && seen.every((delivery) => delivery.state === 'SUCCEEDED' && delivery.attempts === 1);
      },
      'the deliveries received recorded SUCCEEDED at their first attempt',
      15_000,
      200,
    );
    const ids = delivered().map((event) => event.id);
    expect(new Set(ids).size).toBe(ids.length);
    // One event of the bus, one delivery: no connection change of a kiosk came under two ids.
    const changes = delivered()
      .filter((event) => event.body.type.startsWith('device.'))
      .map((event) => `${event.body.data.deviceId}:${event.body.data.state}:${event.body.data.since}`);
    expect(new Set(changes).size).toBe(changes.length);
  }, 90_000);
});
