/**
 * The fleet simulator against a scripted stand-in of the service (a loopback HTTP server answering as the contract
 * says): it signs in, registers, gets credentials and tokens, then reports health (204) and pulls with If-None-Match
 * (200, then 304), and counts each answer under its endpoint without errors.
 */

import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ENDPOINTS, type FleetOptions, SimulatedFleet } from '../../../simulator/fleet.js';

const SCENARIO_BYTES = Buffer.from('a scenario archive');

let server: Server;
let base: string;
const seen: string[] = [];
/** What `GET /device/deployments` answers as items, and the status reports the service took, in order. */
let desired: unknown[] = [];
const reports: string[] = [];
/** How many INSTALLED reports are still answered 503, as a busy service does. */
let refuseInstalled = 0;
/** How many device token requests are still answered 503 with Retry-After, as a busy auth address does. */
let refuseDeviceTokens = 0;

beforeAll(async () => {
  server = createServer((request, response) => {
    if (!(request.method === 'POST' && request.url === '/device/deployments/status')) request.resume();
    const key = `${request.method} ${request.url}`;
    seen.push(key);
    const json = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    if (
      key === 'POST /token' &&
      request.headers['content-type']?.startsWith('application/x-www-form-urlencoded') &&
      refuseDeviceTokens > 0
    ) {
      refuseDeviceTokens -= 1;
      response.writeHead(503, { 'content-type': 'application/problem+json', 'retry-after': '1' });
      response.end(JSON.stringify({ status: 503, detail: 'The auth address is serving as many requests as it admits.' }));
    } else if (key === 'POST /token') {
      json(200, { access_token: 'a.b.c', token_type: 'Bearer', expires_in: 900 });
    } else if (request.method === 'GET' && request.url?.includes('/resources/devices/')) {
      json(404, { status: 404 });
    } else if (key === 'POST /companies/acme/resources/devices') {
      json(200, [{ id: 'acme-sim-00001', state: 'CREATED' }]);
    } else if (request.url?.endsWith('/credentials')) {
      json(201, { clientId: 'acme~acme-sim-00001', clientSecret: 'secret' });
    } else if (key === 'PUT /device/health') {
      response.writeHead(204);
      response.end();
    } else if (key === 'POST /device/deployments/status') {
      let body = '';
      request.on('data', (chunk) => {
        body += chunk;
      });
      request.on('end', () => {
        const state = (JSON.parse(body) as { state: string }).state;
        if (state === 'INSTALLED' && refuseInstalled > 0) {
          refuseInstalled -= 1;
          response.writeHead(503, { 'content-type': 'application/problem+json', 'retry-after': '1' });
          response.end(JSON.stringify({ status: 503, detail: 'Busy; try again.' }));
          return;
        }
        reports.push(state);
        response.writeHead(204);
        response.end();
      });
      return;
    } else if (key === 'GET /scenario.zip') {
      response.writeHead(200, { 'content-type': 'application/zip' });
      response.end(SCENARIO_BYTES);
    } else if (key === 'GET /device/deployments') {
      if (request.headers['if-none-match'] === '"v1"') {
        response.writeHead(304, { etag: '"v1"' });
        response.end();
      } else {
        response.writeHead(200, { 'content-type': 'application/json', etag: '"v1"' });
        response.end(JSON.stringify({ items: desired }));
      }
    } else json(404, { status: 404 });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', () => done()));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});

afterAll(async () => {
  await new Promise<void>((done) => server.close(() => done()));
});

/** One never-silent kiosk of acme on the stand-in, pulling every 20 ms, with `options` on top. */
const oneKiosk = (options: Partial<FleetOptions>) =>
  new SimulatedFleet({
    baseUrl: base,
    authUrl: base,
    username: 'alice',
    password: 'alice-demo-password',
    company: 'acme',
    devices: 1,
    pullIntervalMs: 20,
    silenceRate: 0,
    ...options,
  });

describe('SimulatedFleet', () => {
  it('records 204 health reports and 304 pulls under their endpoints, with no errors', async () => {
    const fleet = oneKiosk({ healthIntervalMs: 20 });
    await fleet.start();
    // Until the device has reported its health a few times and pulled again after its first pull.
    await vi.waitFor(
      () => {
        expect(fleet.stats.of(ENDPOINTS.health)?.requests).toBeGreaterThan(2);
        expect(fleet.stats.of(ENDPOINTS.pull304)?.requests).toBeGreaterThan(1);
      },
      { timeout: 10_000, interval: 20 },
    );
    await fleet.stop();
    expect(fleet.stats.totals().errors).toBe(0);
    expect(fleet.stats.of(ENDPOINTS.health)?.requests).toBeGreaterThan(2);
    expect(fleet.stats.of(ENDPOINTS.pull200)?.requests).toBe(1);
    expect(fleet.stats.of(ENDPOINTS.pull304)?.requests).toBeGreaterThan(1);
    expect(seen).toContain('POST /companies/acme/resources/devices');
  });

  it('waits what Retry-After says and asks again for its token while the auth address is busy (503)', async () => {
    refuseDeviceTokens = 2;
    const fleet = oneKiosk({ healthIntervalMs: 1_000 });
    const started = performance.now();
    await fleet.start();
    await fleet.stop();
    expect(refuseDeviceTokens).toBe(0);
    // Two waits of Retry-After (1 s, jittered ±20 %).
    expect(performance.now() - started).toBeGreaterThan(1_500);
    expect(fleet.sessions()).toHaveLength(1);
  });

  it('tries an installation again from the next pull when the service refused its INSTALLED report', async () => {
    desired = [
      {
        what: { type: 'SCENARIO', id: 'acme-welcome', subId: '1.0.0' },
        downloadUrl: `${base}/scenario.zip`,
        sha256: createHash('sha256').update(SCENARIO_BYTES).digest('hex'),
      },
    ];
    refuseInstalled = 1;
    const fleet = oneKiosk({ healthIntervalMs: 1_000, failureRate: 0 });
    await fleet.start();
    await vi.waitFor(() => expect(reports).toContain('INSTALLED'), { timeout: 10_000, interval: 20 });
    await fleet.stop();
    expect(refuseInstalled).toBe(0);
    expect(reports.filter((state) => state === 'INSTALLED')).toHaveLength(1);
  });
});
