/**
 * End-to-end over `npm start` (bin/local.ts), as a company administrator uses the `dss` CLI (a child process per
 * command through cli-runner.ts): webhooks created (the secret printed once, never listed), read, changed, tested
 * (a receiver on 127.0.0.1 answers, and the deliveries show its status), a delivery sent again with the same
 * webhook-id, the secret rotated, a webhook deleted; alert rules created with each
 * kind of condition, bad conditions refused before anything is sent, rules listed and deleted; a kiosk whose battery
 * runs low raises an alert `dss alerts list` shows OPEN, then RESOLVED once charged.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { components } from '../../client/api-types.js';
import { expectOk } from '../../client/index.js';
import { type DssUser, dssJson, dssUser, runDss } from './cli-runner.js';
import { clientFor, DEMO_PASSWORDS, deviceTokenRequest, eventually, useLocalService } from './harness.js';

const COMPANY = 'acme';
/** The `webhook-id` of each request the receiver on 127.0.0.1 (which the local runtime allows over http) got. */
const received: string[] = [];
let receiver: Server;
/** The receiver's URL. */
let RECEIVER: string;

const local = useLocalService({ users: ['alice', 'root'] });
let work: string;
/** Alice at the CLI, made company administrator of acme by root first (webhooks:write). */
let alice: DssUser;

const dss = (args: readonly string[]) => runDss(alice, args);

beforeAll(async () => {
  receiver = createServer((request, response) => {
    received.push(request.headers['webhook-id'] as string);
    request.resume().on('end', () => response.writeHead(204).end());
  });
  await new Promise<void>((listening) => receiver.listen(0, '127.0.0.1', listening));
  RECEIVER = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/kiosks`;
  const root = clientFor(local.service, local.tokens.root);
  expectOk(await root.main.PATCH('/admin/users/{username}', { params: { path: { username: 'alice' } }, body: { role: 'company-admin' } }));
  work = await mkdtemp(join(tmpdir(), 'dss-cli-webhooks-'));
  alice = await dssUser(local.service, { configDirectory: join(work, 'config-alice') });
  const login = await runDss(alice, ['login', '--username', 'alice', '--password-stdin'], { stdin: `${DEMO_PASSWORDS.alice}\n` });
  expect(login.code, login.stderr).toBe(0);
}, 120_000);

afterAll(async () => {
  if (work !== undefined) await rm(work, { recursive: true, force: true });
  await new Promise((closed) => receiver?.close(closed));
});

type WebhookWithSecret = components['schemas']['WebhookWithSecret'];
type WebhookDelivery = components['schemas']['WebhookDelivery'];

describe('dss webhooks', () => {
  let webhook: WebhookWithSecret;

  it('create prints the webhook and its secret once, saying it is not shown again; list and get never show it', async () => {
    const run = await dss([
      'webhooks',
      'create',
      '--url',
      RECEIVER,
      '--events',
      'rollout.paused,deployment.failed',
      '--description',
      'On-call',
    ]);
    expect(run.code, run.stderr).toBe(0);
    const secret = /Secret: (whsec_\S+)/.exec(run.stdout)?.[1];
    expect(secret).toBeDefined();
    expect(run.stdout).toContain('rollout.paused, deployment.failed');
    expect(run.stderr).toMatch(/not shown again/);

    webhook = await dssJson<WebhookWithSecret>(alice, ['webhooks', 'create', '--url', RECEIVER, '--events', 'rollout.paused']);
    expect(webhook).toMatchObject({ url: RECEIVER, events: ['rollout.paused'], enabled: true, secret: expect.stringMatching(/^whsec_/) });
    expect(webhook.secret).not.toBe(secret);

    const listed = await dss(['webhooks', 'list']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain(webhook.id);
    expect(listed.stdout).toContain('On-call');
    const got = await dss(['webhooks', 'get', webhook.id]);
    expect(got.code, got.stderr).toBe(0);
    expect(got.stdout).toContain(RECEIVER);
    for (const output of [listed.stdout, got.stdout, JSON.stringify(await dssJson(alice, ['webhooks', 'list']))]) {
      expect(output).not.toContain('whsec_');
    }
  });

  it('update changes what it names; one that changes nothing, or both --enable and --disable, is bad usage', async () => {
    const updated = await dssJson(alice, ['webhooks', 'update', webhook.id, '--events', 'rollout.paused,rollout.completed', '--disable']);
    expect(updated).toMatchObject({ id: webhook.id, events: ['rollout.paused', 'rollout.completed'], enabled: false, url: RECEIVER });
    expect((await dss(['webhooks', 'update', webhook.id])).code).toBe(2);
    expect((await dss(['webhooks', 'update', webhook.id, '--enable', '--disable'])).code).toBe(2);
    const refused = await dss(['webhooks', 'update', webhook.id, '--events', 'rollout.exploded']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/400/);
    expect(await dssJson(alice, ['webhooks', 'update', webhook.id, '--enable'])).toMatchObject({ enabled: true });
  });

  it("test queues a webhook.test delivery, deliveries show it SUCCEEDED with the receiver's status, redeliver sends the same webhook-id again", async () => {
    const test = await dss(['webhooks', 'test', webhook.id]);
    expect(test.code, test.stderr).toBe(0);
    const deliveryId = /delivery (\S+) is PENDING/.exec(test.stdout)?.[1] as string;
    expect(deliveryId).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(test.stderr).toContain(`dss webhooks deliveries ${webhook.id} ${deliveryId}`);

    const listed = await dssJson<{ items: WebhookDelivery[] }>(alice, ['webhooks', 'deliveries', webhook.id]);
    expect(listed.items.map((delivery) => [delivery.id, delivery.type])).toContainEqual([deliveryId, 'webhook.test']);
    const table = await dss(['webhooks', 'deliveries', webhook.id]);
    expect(table.stdout).toMatch(new RegExp(`${deliveryId}.*webhook\\.test`));
    const delivered = async () => dssJson<WebhookDelivery>(alice, ['webhooks', 'deliveries', webhook.id, deliveryId]);
    await eventually(async () => (await delivered()).state === 'SUCCEEDED', 'the test delivery SUCCEEDED', 30_000, 500);
    const one = await delivered();
    expect(one).toMatchObject({ id: deliveryId, type: 'webhook.test', messageId: `msg_${deliveryId}`, attempts: 1, lastStatus: 204 });
    const shown = await dss(['webhooks', 'deliveries', webhook.id, deliveryId]);
    expect(shown.stdout).toMatch(/SUCCEEDED/);
    expect(shown.stdout).toMatch(/Attempts:[\s\S]*│ 204 /);
    expect(received).toEqual([one.messageId]);

    const again = await dssJson<WebhookDelivery>(alice, ['webhooks', 'redeliver', webhook.id, deliveryId]);
    expect(again).toMatchObject({ id: deliveryId, state: 'PENDING', messageId: one.messageId });
    await eventually(async () => (await delivered()).attempts === 2, 'the second attempt', 30_000, 500);
    expect(received).toEqual([one.messageId, one.messageId]);
    const unknown = await dss(['webhooks', 'redeliver', webhook.id, '01JPB7C2M9D4F6H8K0N2Q4S6V8']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/404/);
  });

  it('rotate prints a new secret once and until when the previous one still signs', async () => {
    const run = await dss(['webhooks', 'rotate', webhook.id]);
    expect(run.code, run.stderr).toBe(0);
    const secret = /Secret: (whsec_\S+)/.exec(run.stdout)?.[1];
    expect(secret).toMatch(/^whsec_/);
    expect(secret).not.toBe(webhook.secret);
    expect(run.stderr).toMatch(/not shown again/);
    expect(run.stderr).toMatch(/previous secret signs beside it until \d{4}-/);
  });

  it('delete removes it: get then answers 404, exit code 1', async () => {
    const run = await dss(['webhooks', 'delete', webhook.id]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`Webhook ${webhook.id} deleted.`);
    const gone = await dss(['webhooks', 'get', webhook.id]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/404/);
  });
});

describe('dss alerts', () => {
  const KIOSK = 'acme-cli-battery-01';
  const VERSION_CODE = 'cli-battery-7';
  /** A health report whose one hub's battery is at `level` %. */
  const health = (level: number): components['schemas']['DeviceHealthReport'] => ({
    versionCode: VERSION_CODE,
    versionName: '7.0.0',
    mode: 'SERVER',
    hubs: [
      {
        uid: 'hub-1',
        label: 'Main hub',
        version: '1.4.2',
        registeredSince: '2026-01-01T00:00:00Z',
        type: 'USB',
        battery: { health: { state: 'GOOD', plugged: 'AC', status: 'DISCHARGING', level, cycle: 12 } },
        devices: [],
      },
    ],
  });

  it('rules create takes one condition of each kind, refuses two or none before sending anything, and lists them', async () => {
    // Before any rule: nothing alerts yet (a rule's creation alerts on the demo fleet's devices already holding it).
    expect((await dss(['alerts', 'list', '--state', 'OPEN'])).stdout).toContain('No OPEN alerts.');
    const offline = await dssJson(alice, [
      'alerts',
      'rules',
      'create',
      '--name',
      'Android offline',
      '--query',
      'health.mode=EMBEDDED_PLATFORM_ANDROID',
      '--disconnected-for',
      '15',
    ]);
    expect(offline).toMatchObject({
      name: 'Android offline',
      query: 'health.mode=EMBEDDED_PLATFORM_ANDROID',
      condition: { type: 'DISCONNECTED_FOR', minutes: 15 },
    });
    const printer = await dssJson(alice, [
      'alerts',
      'rules',
      'create',
      '--name',
      'Printer down',
      '--subdevice-state',
      'down,warning',
      '--for',
      '5',
    ]);
    expect(printer).toMatchObject({ query: '', condition: { type: 'SUBDEVICE_STATE_FOR', minutes: 5, states: ['DOWN', 'WARNING'] } });
    const battery = await dss([
      'alerts',
      'rules',
      'create',
      '--name',
      'Battery low',
      '--query',
      `health.versionCode=${VERSION_CODE}`,
      '--battery-below',
      '20',
    ]);
    expect(battery.code, battery.stderr).toBe(0);
    expect(battery.stdout).toContain('battery below 20 %');

    for (const args of [
      ['--disconnected-for', '15', '--battery-below', '20'],
      [],
      ['--subdevice-state', 'DOWN'],
      ['--disconnected-for', '15', '--for', '5'],
      ['--disconnected-for', '0'],
    ]) {
      const run = await dss(['alerts', 'rules', 'create', '--name', 'Bad', ...args]);
      expect(run.code, args.join(' ')).toBe(2);
    }
    const refused = await dss(['alerts', 'rules', 'create', '--name', 'Sorted', '--query', 'sort=serial', '--battery-below', '20']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/sort/);

    const listed = await dss(['alerts', 'rules', 'list']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain('disconnected for 15 min');
    expect(listed.stdout).toContain('sub-device DOWN, WARNING for 5 min');
    const { items } = await dssJson<{ items: { id: string; name: string }[] }>(alice, ['alerts', 'rules', 'list']);
    expect(items.map((rule) => rule.name)).toEqual(['Android offline', 'Printer down', 'Battery low']);
    const deleted = await dss(['alerts', 'rules', 'delete', (items[0] as { id: string }).id]);
    expect(deleted.code, deleted.stderr).toBe(0);
    const after = await dssJson<{ items: { name: string }[] }>(alice, ['alerts', 'rules', 'list']);
    expect(after.items.map((rule) => rule.name)).toEqual(['Printer down', 'Battery low']);
  });

  it('list shows the alert a low battery raises as OPEN, and RESOLVED once the battery is charged', async () => {
    expect((await dss(['alerts', 'list', '--state', 'open-ish'])).code).toBe(2);
    const api = clientFor(local.service, local.tokens.alice);
    const path = { path: { companyId: COMPANY, deviceId: KIOSK } };
    expectOk(await api.main.PUT('/companies/{companyId}/resources/devices/{deviceId}', { params: path, body: { serial: 'ACM-CLI-7' } }));
    const { clientId, clientSecret } = expectOk(
      await api.main.POST('/companies/{companyId}/resources/devices/{deviceId}/credentials', { params: path }),
    );
    const kiosk = clientFor(local.service, expectOk(await deviceTokenRequest(local.service, clientId, clientSecret)).access_token);
    expect((await kiosk.main.PUT('/device/health', { body: health(9) })).response.status).toBe(204);

    type Page = { items: components['schemas']['Alert'][] };
    // The kiosk's alerts: the rules above also see the demo fleet's devices that hold their conditions.
    const kioskAlerts = async (...state: string[]) =>
      (await dssJson<Page>(alice, ['alerts', 'list', ...state])).items.filter((alert) => alert.target.id === KIOSK);
    await eventually(async () => (await kioskAlerts('--state', 'OPEN')).length === 1, 'the battery alert OPEN', 30_000, 300);
    const open = await dss(['alerts', 'list', '--state', 'OPEN']);
    expect(open.stdout).toMatch(new RegExp(`OPEN.*Battery low.*${KIOSK}`));
    expect(open.stdout).toContain('9%');

    expect((await kiosk.main.PUT('/device/health', { body: health(80) })).response.status).toBe(204);
    await eventually(async () => (await kioskAlerts('--state', 'RESOLVED')).length === 1, 'the battery alert RESOLVED', 30_000, 300);
    expect((await kioskAlerts()).map((alert) => alert.state)).toEqual(['RESOLVED']);
  }, 90_000);
});
