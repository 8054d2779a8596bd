/**
 * Simulated kiosks running the commands operators send them (simulator/commands.ts): a kiosk of the fleet against a
 * service held in memory (the fleet's `fetch` replaced), on fake timers, so that the tests say when things happen. A
 * command listed by the pull is reported SUCCEEDED after the delay, or FAILED at failure rate 1; a reboot is reported,
 * then the kiosk is quiet (no health report, no pull) for the reboot time and reports its health as it comes back; a
 * command listed by several pulls is run and reported once; a result the service refused is sent again.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { isReboot } from '../../../simulator/commands.js';
import type { PendingCommand } from '../../../simulator/device.js';
import { type FleetOptions, SimulatedFleet } from '../../../simulator/fleet.js';
import { simulatedHealth } from '../../../simulator/health.js';

const BASE = 'http://service.test';

/** The commands routes of the device side, in memory: what the kiosk pulled, reported and when. */
class InMemoryService {
  /** Commands not final: listed by every pull that is answered 200. */
  pending: PendingCommand[] = [];
  /** The ids of every result sent, taken or not. */
  readonly statusPosts: string[] = [];
  /** The results taken, in order, with the (fake) time they arrived. */
  readonly reports: { id: string; state: string; message?: string; at: number }[] = [];
  /** When each health report arrived, and the first one's body. */
  readonly healthAt: number[] = [];
  firstHealth: Record<string, unknown> | undefined;
  /** When each pull arrived, and the command ids it listed. */
  readonly pulls: { at: number; ids: string[] }[] = [];
  /** Answer every pull 200 (as after the kiosk lost its tag, or while a deployment changed), ignoring If-None-Match. */
  alwaysFresh = false;
  /** How many results are still answered 503, and when the last one was. */
  refuseReports = 0;
  refusedAt: number | undefined;

  /** Queues a command for sub-device `device` of hub-1, as an operator's run does. */
  queue(id: string, device: string, command: string): void {
    const now = Date.now();
    this.pending.push({
      id,
      hub: 'hub-1',
      device,
      command,
      arguments: null,
      created: new Date(now).toISOString(),
      expiresAt: new Date(now + 3_600_000).toISOString(),
    });
  }

  readonly fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = new URL(String(input));
    const key = `${init?.method ?? 'GET'} ${url.pathname}`;
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
      new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
    if (key === 'POST /token') return json(200, { access_token: 'a.b.c', token_type: 'Bearer', expires_in: 900 });
    if (key === 'GET /companies/acme/resources/devices/acme-sim-00001') return json(404, { status: 404 });
    if (key === 'POST /companies/acme/resources/devices') return json(200, [{ id: 'acme-sim-00001', state: 'CREATED' }]);
    if (key.endsWith('/credentials')) return json(201, { clientId: 'acme~acme-sim-00001', clientSecret: 'secret' });
    if (key === 'PUT /device/health') {
      this.healthAt.push(Date.now());
      this.firstHealth ??= JSON.parse(String(init?.body)) as Record<string, unknown>;
      return new Response(null, { status: 204 });
    }
    if (key === 'GET /device/deployments') return this.pull(new Headers(init?.headers).get('if-none-match'));
    const status = /^POST \/device\/commands\/(\w+)\/status$/.exec(key);
    if (status !== null) return this.report(status[1] as string, JSON.parse(String(init?.body)) as { state: string; message?: string });
    return json(404, { status: 404 });
  };

  private pull(ifNoneMatch: string | null): Response {
    const etag = `"${this.pending.map((command) => command.id).join(',')}"`;
    if (!this.alwaysFresh && ifNoneMatch === etag) return new Response(null, { status: 304, headers: { etag } });
    this.pulls.push({ at: Date.now(), ids: this.pending.map((command) => command.id) });
    return new Response(JSON.stringify({ items: [], commands: this.pending }), {
      status: 200,
      headers: { 'content-type': 'application/json', etag },
    });
  }

  private report(id: string, body: { state: string; message?: string }): Response {
    this.statusPosts.push(id);
    if (this.refuseReports > 0) {
      this.refuseReports -= 1;
      this.refusedAt = Date.now();
      return new Response(JSON.stringify({ status: 503, detail: 'Busy.' }), { status: 503 });
    }
    if (!this.pending.some((command) => command.id === id)) return new Response(JSON.stringify({ status: 409 }), { status: 409 });
    this.pending = this.pending.filter((command) => command.id !== id);
    this.reports.push({ id, state: body.state, ...(body.message === undefined ? {} : { message: body.message }), at: Date.now() });
    return new Response(null, { status: 204 });
  }
}

let service: InMemoryService;
let fleet: SimulatedFleet | undefined;

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  service = new InMemoryService();
});

afterEach(async () => {
  await fleet?.stop();
  fleet = undefined;
  vi.useRealTimers();
});

/** Starts one kiosk (acme-sim-00001: hub-1 with printer-1 and payment-1) reporting and pulling every second. */
async function startKiosk(options: Partial<FleetOptions> = {}): Promise<SimulatedFleet> {
  fleet = new SimulatedFleet({
    baseUrl: BASE,
    authUrl: BASE,
    username: 'alice',
    password: 'alice-demo-password',
    company: 'acme',
    devices: 1,
    healthIntervalMs: 1_000,
    pullIntervalMs: 1_000,
    silenceRate: 0,
    healthChangeRate: 0,
    commandDelayMs: 2_000,
    rebootMs: 20_000,
    fetch: service.fetch,
    ...options,
  });
  await fleet.start();
  return fleet;
}

/** Lets `ms` of fake time pass, the kiosk's requests answered as they go. */
const pass = (ms: number) => vi.advanceTimersByTimeAsync(ms);

describe('a simulated kiosk running commands', () => {
  it('advertises reboot and print-test-page on its printer in its health report', async () => {
    await startKiosk();
    await pass(1_000);
    const printer = (service.firstHealth?.hubs as { devices: { uid: string; commands: { command: string }[] }[] }[])[0]?.devices[0];
    expect(printer?.uid).toBe('printer-1');
    expect(printer?.commands.map((command) => command.command)).toEqual(['reboot', 'print-test-page']);
  });

  it('runs a command its pull lists and reports it SUCCEEDED after the delay, once', async () => {
    const kiosk = await startKiosk();
    service.queue('C1', 'printer-1', 'print-test-page');
    await pass(1_000);
    expect(service.pulls[0]?.ids).toEqual(['C1']);
    expect(service.reports).toEqual([]);
    await pass(500);
    // The delay is 2 s ± 20 %, counted from the pull.
    expect(service.reports).toEqual([]);
    await pass(3_000);
    expect(service.reports).toEqual([expect.objectContaining({ id: 'C1', state: 'SUCCEEDED' })]);
    const pulledAt = service.pulls[0]?.at as number;
    expect(service.reports[0]?.at).toBeGreaterThanOrEqual(pulledAt + 1_600);
    expect(service.reports[0]?.at).toBeLessThanOrEqual(pulledAt + 2_400);
    expect(kiosk.progress()).toMatchObject({ commandsSucceeded: 1, commandsFailed: 0, reboots: 0 });
    expect(kiosk.stats.totals().errors).toBe(0);
  });

  it('reports FAILED with a message when the command failure rate is 1', async () => {
    const kiosk = await startKiosk({ commandFailureRate: 1 });
    service.queue('C2', 'payment-1', 'reconcile');
    await pass(4_000);
    expect(service.reports).toEqual([
      { id: 'C2', state: 'FAILED', message: 'Simulated failure: reconcile did not complete on hub-1/payment-1.', at: expect.any(Number) },
    ]);
    expect(kiosk.progress()).toMatchObject({ commandsSucceeded: 0, commandsFailed: 1 });
  });

  it('runs and reports a command once though several pulls list it before its result is in', async () => {
    service.alwaysFresh = true;
    const kiosk = await startKiosk({ commandDelayMs: 5_000 });
    service.queue('C3', 'printer-1', 'print-test-page');
    await pass(10_000);
    expect(service.pulls.filter((pull) => pull.ids.includes('C3')).length).toBeGreaterThanOrEqual(3);
    expect(service.statusPosts).toEqual(['C3']);
    expect(kiosk.progress().commandsSucceeded).toBe(1);
  });

  it('reboots: reports SUCCEEDED, reports no health and pulls nothing for the reboot time, then reports its health again', async () => {
    const kiosk = await startKiosk({ commandFailureRate: 1 });
    service.queue('R1', 'printer-1', 'reboot');
    await pass(4_000);
    expect(service.reports).toEqual([{ id: 'R1', state: 'SUCCEEDED', message: 'Rebooting; back in 20 s.', at: expect.any(Number) }]);
    const rebootedAt = service.reports[0]?.at as number;
    expect(kiosk.progress()).toMatchObject({ silent: 1, reporting: 0, reboots: 1 });

    await pass(rebootedAt + 20_000 - Date.now() - 1);
    expect(service.healthAt.filter((at) => at > rebootedAt)).toEqual([]);
    expect(service.pulls.filter((pull) => pull.at > rebootedAt)).toEqual([]);

    await pass(1);
    // Back: a health report at once, then the usual ones and pulls.
    expect(service.healthAt.filter((at) => at > rebootedAt)).toEqual([rebootedAt + 20_000]);
    await pass(3_000);
    expect(service.healthAt.filter((at) => at > rebootedAt).length).toBeGreaterThanOrEqual(3);
    expect(service.pulls.filter((pull) => pull.at > rebootedAt).length).toBeGreaterThanOrEqual(1);
    expect(kiosk.progress()).toMatchObject({ silent: 0, reporting: 1 });
  });

  it('sends a result the service refused again before its next pull, without running the command again', async () => {
    service.refuseReports = 1;
    const kiosk = await startKiosk();
    service.queue('C4', 'printer-1', 'print-test-page');
    await vi.waitFor(() => expect(service.refusedAt).toBeDefined(), { timeout: 10_000, interval: 100 });
    expect(service.reports).toEqual([]);
    await pass(5_000);
    expect(service.reports.map((report) => [report.id, report.state])).toEqual([['C4', 'SUCCEEDED']]);
    // Sent again at the next pull tick (every second ± 20 %), before that pull.
    const pullAfter = service.pulls.find((pull) => pull.at >= (service.reports[0]?.at as number));
    expect(service.reports[0]?.at).toBeLessThanOrEqual((service.refusedAt as number) + 1_200);
    expect(pullAfter?.ids).toEqual([]);
    expect(kiosk.progress().commandsSucceeded).toBe(1);
  });
});

describe('isReboot', () => {
  const health = simulatedHealth(1);
  const watchdog = { hubs: [{ uid: 'hub-1', devices: [{ uid: 'watchdog-1', capability: { modes: ['GENERIC_LED', 'GENERIC_REBOOT'] } }] }] };

  it('takes reboot and reboot-host anywhere, and a reboot-named command of a GENERIC_REBOOT sub-device, as reboots', () => {
    expect(isReboot({ hub: 'hub-1', device: 'printer-1', command: 'reboot' }, health)).toBe(true);
    expect(isReboot({ hub: 'hub-1', device: 'printer-1', command: 'REBOOT' }, health)).toBe(true);
    expect(isReboot({ hub: 'hub-1', device: 'watchdog-1', command: 'reboot-host' }, watchdog)).toBe(true);
    expect(isReboot({ hub: 'hub-1', device: 'watchdog-1', command: 'REBOOT_KIOSK' }, watchdog)).toBe(true);
  });

  it('takes no other command as one', () => {
    expect(isReboot({ hub: 'hub-1', device: 'printer-1', command: 'print-test-page' }, health)).toBe(false);
    expect(isReboot({ hub: 'hub-1', device: 'watchdog-1', command: 'blink-led' }, watchdog)).toBe(false);
    expect(isReboot({ hub: 'hub-1', device: 'printer-1', command: 'reboot-kiosk' }, health)).toBe(false);
  });
});
