/**
 * Webhook delivery over the local runtime, to receivers on 127.0.0.1 (the one host WEBHOOK_ALLOWED_HTTP_HOSTS names here): a
 * kiosk's INSTALLED report reaches a `deployment.succeeded` webhook as one delivery signed as Standard Webhooks says;
 * a receiver answering 500 twice then 200 gets the same `webhook-id` three times (the retry schedule divided by
 * WEBHOOK_RETRY_DIVISOR so that it takes milliseconds); a webhook whose URL names a metadata or private address, or a
 * host name resolving to loopback that is not allowed, is refused before any connection. Nothing is sent beyond this
 * machine: every address refused is refused by the classifier, before connecting.
 */
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectOk } from '../../client/index.js';
import { LOCAL_TABLES } from '../../functions/local/local-environment.js';
import { deviceToken } from '../support/device-token.js';
import { localDocumentClient } from './fleet.js';
import { clientFor, eventually, useLocalService } from './harness.js';

const KIOSK = 'acme-kiosk-0001';
const SCENARIO = 'acme-welcome';
const NEW_PASSWORD = 'Acme-deliveries-2026!';

const local = useLocalService({
  users: ['root', 'alice'],
  ownDynamoDbPort: true,
  // localhost is not allowed here, so that a name resolving to loopback is refused as any other would be.
  environment: { WEBHOOK_ALLOWED_HTTP_HOSTS: '127.0.0.1', WEBHOOK_RETRY_DIVISOR: '1000', WEBHOOK_SWEEP_INTERVAL_MS: '200' },
});
const as = (token: string) => clientFor(local.service, token).main;
const acme = { path: { companyId: 'acme' } };
let admin: string;

/** One request a receiver got. */
interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A receiver on 127.0.0.1: answers each path's statuses in turn (the last repeats; 200 by default), records all. */
const received: Received[] = [];
const script = new Map<string, number[]>();
let connections = 0;
let receiver: Server;
let port: number;

beforeAll(async () => {
  receiver = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      body += chunk;
    });
    request.on('end', () => {
      const path = request.url ?? '';
      received.push({ path, headers: request.headers, body });
      const statuses = script.get(path) ?? [200];
      const status = statuses.length > 1 ? (statuses.shift() as number) : (statuses[0] as number);
      response.writeHead(status).end();
    });
  });
  receiver.on('connection', () => {
    connections += 1;
  });
  receiver.listen(0, '127.0.0.1');
  await once(receiver, 'listening');
  port = (receiver.address() as AddressInfo).port;

  const invited = expectOk(
    await as(local.tokens.root).POST('/admin/users', {
      body: { username: 'dana', email: 'dana@acme.example', role: 'company-admin', companies: ['acme'] },
    }),
  );
  const auth = clientFor(local.service).auth;
  const password = invited.temporaryPassword as string;
  admin = expectOk(await auth.POST('/token', { body: { username: 'dana', password, new_password: NEW_PASSWORD } })).access_token;
}, 60_000);

afterAll(() => {
  receiver.closeAllConnections();
  receiver.close();
});

async function createWebhook(url: string, events: ('deployment.succeeded' | 'webhook.test')[]) {
  return expectOk(await as(admin).POST('/companies/{companyId}/webhooks', { params: acme, body: { url, events } }));
}

const requestsTo = (path: string) => received.filter((request) => request.path === path);

async function deliveriesOf(webhookId: string) {
  return expectOk(
    await as(admin).GET('/companies/{companyId}/webhooks/{webhookId}/deliveries', { params: { path: { companyId: 'acme', webhookId } } }),
  ).items;
}

async function sendTest(webhookId: string) {
  return expectOk(
    await as(admin).POST('/companies/{companyId}/webhooks/{webhookId}/test', { params: { path: { companyId: 'acme', webhookId } } }),
  );
}

describe('webhook deliveries', () => {
  it("deliver a kiosk's INSTALLED report once to a deployment.succeeded webhook, signed with its secret", async () => {
    const webhook = await createWebhook(`http://127.0.0.1:${port}/installed`, ['deployment.succeeded']);
    const issuer = { dataDirectory: local.settings.dataDirectory, dynamoDbEndpoint: local.dynamoDbEndpoint, auth: local.service.auth };
    const { token: kiosk } = await deviceToken(issuer, 'acme', KIOSK);
    const what = { type: 'SCENARIO' as const, id: SCENARIO, subId: '1.0.0' };
    const deployed = expectOk(
      await as(local.tokens.alice).POST('/companies/{companyId}/resources/deployments', {
        params: acme,
        body: { requests: [{ target: { type: 'DEVICE', id: KIOSK, subId: null }, what, action: 'DEPLOY' }] },
      }),
    );
    expect(deployed.items.map((item) => item.state)).toEqual(['SUCCESS']);
    const reported = await clientFor(local.service, kiosk).main.POST('/device/deployments/status', { body: { what, state: 'INSTALLED' } });
    expect(reported.response.status).toBe(204);

    await eventually(async () => requestsTo('/installed').length > 0, 'the delivery of deployment.succeeded');
    await eventually(async () => (await deliveriesOf(webhook.id))[0]?.state === 'SUCCEEDED', 'the delivery recorded SUCCEEDED');
    const [request] = requestsTo('/installed');
    const headers = request?.headers ?? {};
    const body = new StandardWebhook(webhook.secret).verify(request?.body ?? '', {
      'webhook-id': String(headers['webhook-id']),
      'webhook-timestamp': String(headers['webhook-timestamp']),
      'webhook-signature': String(headers['webhook-signature']),
    });
    expect(body).toMatchObject({
      type: 'deployment.succeeded',
      data: { target: { type: 'DEVICE', id: KIOSK }, what: { type: 'SCENARIO', id: SCENARIO, subId: '1.0.0' }, state: 'INSTALLED' },
    });
    expect(headers['content-type']).toBe('application/json');
    const deliveries = await deliveriesOf(webhook.id);
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]).toMatchObject({ type: 'deployment.succeeded', state: 'SUCCEEDED', attempts: 1, lastStatus: 200 });
    expect(headers['webhook-id']).toBe(deliveries[0]?.messageId);
    expect(requestsTo('/installed')).toHaveLength(1);
  });

  it('retry a receiver answering 500 twice, with the same webhook-id each time, until its 200', async () => {
    script.set('/flaky', [500, 500, 200]);
    const webhook = await createWebhook(`http://127.0.0.1:${port}/flaky`, ['webhook.test']);
    const delivery = await sendTest(webhook.id);
    await eventually(async () => (await deliveriesOf(webhook.id))[0]?.state === 'SUCCEEDED', 'the third attempt succeeding');
    const requests = requestsTo('/flaky');
    expect(requests).toHaveLength(3);
    expect(new Set(requests.map((request) => request.headers['webhook-id']))).toEqual(new Set([delivery.messageId]));
    const [recorded] = await deliveriesOf(webhook.id);
    expect(recorded).toMatchObject({ attempts: 3, lastStatus: 200, state: 'SUCCEEDED', nextAttemptAt: null });
    expect(recorded?.history.map((attempt) => attempt.status)).toEqual([500, 500, 200]);
    expect(recorded?.history[0]?.error).toBe('the receiver answered 500');
  });

  it('refuse a metadata or private address, and a name resolving to loopback that is not allowed, before connecting', async () => {
    const before = connections;
    const webhook = await createWebhook(`https://localhost:${port}/loopback`, ['webhook.test']);
    await sendTest(webhook.id);
    await eventually(async () => ((await deliveriesOf(webhook.id))[0]?.attempts ?? 0) >= 1, 'the refused attempt recorded');
    const [refused] = await deliveriesOf(webhook.id);
    expect(refused?.history[0]).toMatchObject({
      status: null,
      durationMs: null,
      error: expect.stringMatching(/^refused: (127\.0\.0\.1|::1) is a loopback address \(localhost\)$/),
    });
    expect(refused?.state).toBe('PENDING');

    // A URL the API refuses today (a literal metadata or private address), stored as it could have been by hand: the
    // sender refuses it again at every attempt.
    const client = localDocumentClient(local.dynamoDbEndpoint);
    try {
      for (const [path, url] of [
        ['/metadata', 'https://169.254.169.254/latest/meta-data'],
        ['/private', 'https://10.0.0.1/hook'],
      ] as const) {
        const stored = await createWebhook(`http://127.0.0.1:${port}${path}`, ['webhook.test']);
        await client.send(
          new UpdateCommand({
            TableName: LOCAL_TABLES.webhooks,
            Key: { pk: 'WEBHOOK#acme', sk: stored.id },
            UpdateExpression: 'SET #url = :url',
            ExpressionAttributeNames: { '#url': 'url' },
            ExpressionAttributeValues: { ':url': url },
          }),
        );
        await sendTest(stored.id);
        await eventually(async () => ((await deliveriesOf(stored.id))[0]?.attempts ?? 0) >= 1, `the refused attempt to ${url}`);
        const [attempt] = (await deliveriesOf(stored.id))[0]?.history ?? [];
        expect(attempt?.error, url).toMatch(
          path === '/metadata'
            ? /^refused: 169\.254\.169\.254 is a link-local\/metadata address$/
            : /^refused: 10\.0\.0\.1 is a private address$/,
        );
        expect(requestsTo(path)).toHaveLength(0);
      }
    } finally {
      client.destroy();
    }
    expect(requestsTo('/loopback')).toHaveLength(0);
    expect(connections).toBe(before);
  });
});
