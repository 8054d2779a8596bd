/**
 * The fleet simulator: N kiosks that do what a real one does against the service, through its public HTTP contract
 * only. Each device gets credentials from the operator (or reuses ones kept from an earlier run), fetches device
 * tokens with the client-credentials grant, reports its health on an interval with jitter, pulls its desired state
 * with `If-None-Match`, downloads each new archive through its presigned URL and checks its sha256, reports
 * DOWNLOADING, INSTALLING and INSTALLED (or FAILED at the failure rate), runs the commands its pull lists and reports
 * their results (simulator/commands.ts: a reboot makes it quiet for a while), and now and then falls silent for a while
 * so that the heartbeat sweeper marks it DISCONNECTED.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import pLimit from 'p-limit';
import { type CommandHost, receiveCommands, sendUnreported } from './commands.js';
import {
  type CommandReport,
  type DesiredItem,
  type DeviceCredentials,
  type PendingCommand,
  type SimulatedDevice,
  SimulatorHttpError,
} from './device.js';
import { ENDPOINTS, type FleetOptions, type FleetProgress, type FleetSettings, fleetSettings, jitter } from './fleet-settings.js';
import { changeHealth, resumedHealth, simulatedHealth } from './health.js';
import { type ExchangeBody, timedExchange } from './http.js';
import { RequestStats } from './stats.js';

export { ENDPOINTS, type FleetOptions, type FleetProgress } from './fleet-settings.js';

/** Token requests a device makes at most while the auth address answers 503 or 429 (each after its Retry-After). */
const TOKEN_ATTEMPTS = 6;
/** The longest Retry-After a device honours before asking again, seconds. */
const RETRY_AFTER_MAX_SECONDS = 10;
/** A fleet of simulated devices. `start()` sets it up and sets it going; `stop()` stops every device. */
export class SimulatedFleet {
  readonly stats = new RequestStats();
  private readonly options: FleetSettings;
  private readonly fetch: typeof globalThis.fetch;
  private readonly commandHost: CommandHost;
  private readonly commandCounts = { SUCCEEDED: 0, FAILED: 0, REBOOTED: 0 };
  private readonly devices: SimulatedDevice[] = [];
  private readonly inFlight = new Set<Promise<unknown>>();
  private operatorToken = '';
  private stopped = false;
  private installed = 0;
  private failed = 0;
  private checksumMismatches = 0;

  constructor(options: FleetOptions) {
    this.options = fleetSettings(options);
    this.fetch = options.fetch ?? ((input, init) => fetch(input, init));
    this.commandHost = this.commandHostOf();
    for (let index = 1; index <= options.devices; index += 1) {
      this.devices.push({
        id: `${this.options.idPrefix}${String(index).padStart(this.options.idDigits, '0')}`,
        index,
        tokenRefreshAt: 0,
        health: simulatedHealth(index),
        silentUntil: 0,
        lost: false,
        handled: new Set(),
        commands: new Map(),
        unreported: new Map(),
        timers: [],
      });
    }
  }

  /**
   * Sets the fleet up (setUp) and starts every device's health and pull loops.
   * @throws SimulatorHttpError when the operator cannot sign in or a device cannot be set up.
   */
  async start(): Promise<void> {
    await this.setUp();
    for (const device of this.devices) {
      this.schedule(device, Math.random() * this.options.healthIntervalMs, () => this.healthTick(device), this.options.healthIntervalMs);
      this.schedule(device, Math.random() * this.options.pullIntervalMs, () => this.pullTick(device), this.options.pullIntervalMs);
    }
  }

  /**
   * Sets the fleet up without starting it: operator token; devices registered unless they exist, whose health is
   * then kept as the baseline; credentials reused from `credentialsFile` or issued; one device token each. What a
   * load generator of its own needs (sessions()).
   * @throws SimulatorHttpError when the operator cannot sign in or a device cannot be set up.
   */
  async setUp(): Promise<void> {
    const log = this.options.log ?? (() => undefined);
    this.operatorToken = await this.userToken();
    const limit = pLimit(this.options.setupConcurrency);
    const missing: SimulatedDevice[] = [];
    await Promise.all(
      this.devices.map((device) =>
        limit(async () => {
          const existing = await this.getDevice(device.id);
          if (existing === undefined) missing.push(device);
          else if (existing.health !== undefined) device.health = resumedHealth(existing.health, device.index);
        }),
      ),
    );
    for (let start = 0; start < missing.length; start += 5_000) await this.register(missing.slice(start, start + 5_000));
    log(`Devices: ${this.devices.length - missing.length} reused, ${missing.length} registered.`);
    const kept = await this.readCredentials();
    let issued = 0;
    await Promise.all(
      this.devices.map((device) =>
        limit(async () => {
          device.credentials = kept[device.id];
          if (device.credentials !== undefined) {
            try {
              await this.refreshToken(device);
              return;
            } catch (error) {
              if (!(error instanceof SimulatorHttpError) || error.status !== 401) throw error;
            }
          }
          device.credentials = await this.issueCredentials(device.id);
          issued += 1;
          await this.refreshToken(device);
        }),
      ),
    );
    await this.writeCredentials();
    log(`Credentials: ${this.devices.length - issued} reused, ${issued} issued; every device holds a token.`);
  }

  /**
   * Each device set up so far: its id, its number (from 1), its current device token and a copy of the health it
   * reports, in device order.
   */
  sessions(): { id: string; index: number; token: string; health: Record<string, unknown> }[] {
    return this.devices.flatMap((device) =>
      device.token === undefined
        ? []
        : [{ id: device.id, index: device.index, token: device.token, health: structuredClone(device.health) }],
    );
  }

  /** Stops every device's loops and waits for the requests under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const device of this.devices) for (const timer of device.timers) clearTimeout(timer);
    await Promise.allSettled([...this.inFlight]);
  }

  /** Counts of the fleet's devices and installations so far. */
  progress(): FleetProgress {
    const now = Date.now();
    let silent = 0;
    let lost = 0;
    for (const device of this.devices) {
      if (device.lost) lost += 1;
      else if (device.silentUntil > now) silent += 1;
    }
    return {
      devices: this.devices.length,
      reporting: this.devices.length - silent - lost,
      silent,
      lost,
      installed: this.installed,
      failed: this.failed,
      checksumMismatches: this.checksumMismatches,
      commandsSucceeded: this.commandCounts.SUCCEEDED,
      commandsFailed: this.commandCounts.FAILED,
      reboots: this.commandCounts.REBOOTED,
    };
  }

  private schedule(device: SimulatedDevice, delayMs: number, tick: () => Promise<void>, intervalMs: number): void {
    if (this.stopped || device.lost) return;
    const timer = setTimeout(() => {
      device.timers = device.timers.filter((item) => item !== timer);
      const run = tick()
        .catch(() => undefined)
        .finally(() => {
          this.inFlight.delete(run);
          this.schedule(device, jitter(intervalMs), tick, intervalMs);
        });
      this.inFlight.add(run);
    }, delayMs);
    device.timers.push(timer);
  }

  /** Runs `run` once after `delayMs` (unless stopped before), its request counted in flight as a tick's. */
  private once(device: SimulatedDevice, delayMs: number, run: () => Promise<void>): void {
    if (this.stopped || device.lost) return;
    const timer = setTimeout(() => {
      device.timers = device.timers.filter((item) => item !== timer);
      const running = run()
        .catch(() => undefined)
        .finally(() => this.inFlight.delete(running));
      this.inFlight.add(running);
    }, delayMs);
    device.timers.push(timer);
  }

  /** What the commands of the kiosks (simulator/commands.ts) use of the fleet. */
  private commandHostOf(): CommandHost {
    return {
      settings: { failureRate: this.options.commandFailureRate, delayMs: this.options.commandDelayMs, rebootMs: this.options.rebootMs },
      report: (device, commandId, report) => this.reportCommand(device, commandId, report),
      later: (device, delayMs, run) => this.once(device, delayMs, run),
      reconnected: (device) => this.healthTick(device),
      counted: (outcome) => {
        this.commandCounts[outcome] += 1;
      },
    };
  }

  /**
   * Reports a command's result. @returns true when the service took it (204) or never will (409: final or expired;
   * another 4xx such as 404), false when it should be sent again (no answer, 408, 429, 5xx).
   */
  private async reportCommand(device: SimulatedDevice, commandId: string, report: CommandReport): Promise<boolean> {
    const path = `/device/commands/${encodeURIComponent(commandId)}/status`;
    try {
      await this.asDevice(device, ENDPOINTS.commandStatus, 'POST', path, { json: report }, [204, 409]);
      return true;
    } catch (error) {
      const status = error instanceof SimulatorHttpError ? error.status : 0;
      return status >= 400 && status < 500 && status !== 408 && status !== 429;
    }
  }

  private async healthTick(device: SimulatedDevice): Promise<void> {
    const now = Date.now();
    if (device.silentUntil > now) return;
    if (Math.random() < this.options.silenceRate) {
      device.silentUntil = now + this.options.silenceMs;
      return;
    }
    if (Math.random() < this.options.healthChangeRate) changeHealth(device.health);
    await this.asDevice(device, ENDPOINTS.health, 'PUT', '/device/health', { json: device.health }, [204]);
  }

  private async pullTick(device: SimulatedDevice): Promise<void> {
    if (device.silentUntil > Date.now()) return;
    await sendUnreported(this.commandHost, device);
    const headers: Record<string, string> = device.etag === undefined ? {} : { 'if-none-match': device.etag };
    const response = await this.asDevice(device, ENDPOINTS.pull200, 'GET', '/device/deployments', { headers }, [200, 304], (status) =>
      status === 304 ? ENDPOINTS.pull304 : ENDPOINTS.pull200,
    );
    if (response.status === 304) return;
    device.etag = response.headers.get('etag') ?? undefined;
    const { items, commands } = (await response.json()) as { items: DesiredItem[]; commands?: PendingCommand[] };
    receiveCommands(this.commandHost, device, commands ?? []);
    for (const item of items) {
      const key = `${item.what.id}@${item.what.subId}`;
      if (device.handled.has(key)) continue;
      device.handled.add(key);
      if (item.status?.state === 'INSTALLED' || item.status?.state === 'FAILED') continue;
      try {
        await this.install(device, item);
      } catch (error) {
        // A report the service did not take (a 503 under load, a timeout) is tried again from the next pull, as a real
        // kiosk does: forgetting the item and the tag makes that pull answer 200 with it.
        device.handled.delete(key);
        device.etag = undefined;
        throw error;
      }
    }
  }

  /** Downloads and "installs" one item, reporting each step; a checksum mismatch is reported FAILED. */
  private async install(device: SimulatedDevice, item: DesiredItem): Promise<void> {
    const report = (state: string, message?: string) =>
      this.asDevice(
        device,
        ENDPOINTS.status,
        'POST',
        '/device/deployments/status',
        {
          json: {
            what: { type: 'SCENARIO', id: item.what.id, subId: item.what.subId },
            state,
            ...(message === undefined ? {} : { message }),
          },
        },
        [204],
      );
    await report('DOWNLOADING');
    const started = performance.now();
    let digest: string;
    try {
      const response = await this.fetch(item.downloadUrl);
      if (response.status !== 200) throw new SimulatorHttpError(response.status, `download answered ${response.status}`);
      digest = createHash('sha256')
        .update(Buffer.from(await response.arrayBuffer()))
        .digest('hex');
      this.stats.record(ENDPOINTS.download, performance.now() - started, true);
    } catch (error) {
      this.stats.record(ENDPOINTS.download, performance.now() - started, false);
      this.failed += 1;
      await report('FAILED', `Download failed: ${(error as Error).message}`);
      return;
    }
    if (digest !== item.sha256) {
      this.checksumMismatches += 1;
      this.failed += 1;
      await report('FAILED', `sha256 mismatch: expected ${item.sha256}, got ${digest}.`);
      return;
    }
    await report('INSTALLING');
    if (Math.random() < this.options.failureRate) {
      this.failed += 1;
      await report('FAILED', 'Simulated installation failure.');
    } else {
      this.installed += 1;
      await report('INSTALLED');
    }
  }

  /**
   * A device call with its token (refreshed when due, and once more on a 401); a device whose credentials no
   * longer work is lost and stops.
   */
  private async asDevice(
    device: SimulatedDevice,
    endpoint: string,
    method: string,
    path: string,
    body: { json?: unknown; headers?: Record<string, string> },
    expected: number[],
    name: (status: number) => string = () => endpoint,
  ): Promise<Response> {
    if (Date.now() >= device.tokenRefreshAt) await this.refreshToken(device);
    let response = await this.timed(name, `${this.options.baseUrl}${path}`, method, device.token, body, expected);
    if (response.status === 401) {
      await this.refreshToken(device);
      response = await this.timed(name, `${this.options.baseUrl}${path}`, method, device.token, body, expected);
    }
    if (!expected.includes(response.status)) {
      throw new SimulatorHttpError(response.status, `${method} ${path} answered ${response.status}: ${await response.text()}`);
    }
    return response;
  }

  private async refreshToken(device: SimulatedDevice): Promise<void> {
    const credentials = device.credentials;
    if (credentials === undefined) throw new SimulatorHttpError(401, `${device.id} has no credentials.`);
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: credentials.clientId,
      client_secret: credentials.clientSecret,
    });
    let response = await this.timed(() => ENDPOINTS.deviceToken, `${this.options.authUrl}/token`, 'POST', undefined, { form }, [200]);
    // Busy (503: its admission queue is full) or limiting (429): a kiosk waits what Retry-After says, and asks again.
    for (let attempt = 1; (response.status === 503 || response.status === 429) && attempt < TOKEN_ATTEMPTS; attempt += 1) {
      const seconds = Number(response.headers.get('retry-after'));
      await response.body?.cancel();
      await delay(jitter(Math.min(Math.max(Number.isFinite(seconds) ? seconds : 1, 1), RETRY_AFTER_MAX_SECONDS) * 1000));
      response = await this.timed(() => ENDPOINTS.deviceToken, `${this.options.authUrl}/token`, 'POST', undefined, { form }, [200]);
    }
    if (response.status !== 200) {
      if (response.status === 401 && device.token !== undefined) device.lost = true;
      throw new SimulatorHttpError(response.status, `device token for ${device.id}: ${await response.text()}`);
    }
    const { access_token: token, expires_in: expiresIn } = (await response.json()) as { access_token: string; expires_in: number };
    device.token = token;
    // Renewed a minute before expiry (or at half its life when shorter), as a kiosk would.
    device.tokenRefreshAt = Date.now() + Math.max(expiresIn * 500, (expiresIn - 60) * 1000);
  }

  private async userToken(): Promise<string> {
    const response = await this.timed(
      () => ENDPOINTS.userToken,
      `${this.options.authUrl}/token`,
      'POST',
      undefined,
      { json: { username: this.options.username, password: this.options.password } },
      [200],
    );
    if (response.status !== 200)
      throw new SimulatorHttpError(response.status, `sign-in of ${this.options.username}: ${await response.text()}`);
    return ((await response.json()) as { access_token: string }).access_token;
  }

  private companyPath(suffix: string): string {
    return `${this.options.baseUrl}/companies/${encodeURIComponent(this.options.company)}/resources/devices${suffix}`;
  }

  private async getDevice(deviceId: string): Promise<{ health?: Record<string, unknown> } | undefined> {
    const response = await this.timed(
      () => ENDPOINTS.deviceGet,
      this.companyPath(`/${encodeURIComponent(deviceId)}`),
      'GET',
      this.operatorToken,
      {},
      [200, 404],
    );
    if (response.status === 404) return undefined;
    if (response.status !== 200) throw new SimulatorHttpError(response.status, `GET device ${deviceId}: ${await response.text()}`);
    return (await response.json()) as { health?: Record<string, unknown> };
  }

  private async register(devices: readonly SimulatedDevice[]): Promise<void> {
    if (devices.length === 0) return;
    const body = devices.map((device) => ({
      id: device.id,
      serial: `SIM-${String(device.index).padStart(6, '0')}`,
      location: { name: 'Simulated fleet', description: 'Registered by npm run simulate.' },
    }));
    const response = await this.timed(() => ENDPOINTS.register, this.companyPath(''), 'POST', this.operatorToken, { json: body }, [200]);
    if (response.status !== 200) throw new SimulatorHttpError(response.status, `device registration: ${await response.text()}`);
    const results = (await response.json()) as { id: string; state: string; errors?: unknown }[];
    const failed = results.filter((result) => result.state === 'FAILURE');
    if (failed.length > 0)
      throw new SimulatorHttpError(200, `device registration refused ${failed.length} devices: ${JSON.stringify(failed[0])}`);
  }

  private async issueCredentials(deviceId: string): Promise<DeviceCredentials> {
    const response = await this.timed(
      () => ENDPOINTS.credentials,
      this.companyPath(`/${encodeURIComponent(deviceId)}/credentials`),
      'POST',
      this.operatorToken,
      {},
      [201],
    );
    if (response.status !== 201) throw new SimulatorHttpError(response.status, `credentials of ${deviceId}: ${await response.text()}`);
    return (await response.json()) as DeviceCredentials;
  }

  private async readCredentials(): Promise<Record<string, DeviceCredentials>> {
    if (this.options.credentialsFile === undefined) return {};
    try {
      return JSON.parse(await readFile(this.options.credentialsFile, 'utf8')) as Record<string, DeviceCredentials>;
    } catch {
      return {};
    }
  }

  private async writeCredentials(): Promise<void> {
    if (this.options.credentialsFile === undefined) return;
    const kept = await this.readCredentials();
    for (const device of this.devices) if (device.credentials !== undefined) kept[device.id] = device.credentials;
    await mkdir(dirname(this.options.credentialsFile), { recursive: true });
    await writeFile(this.options.credentialsFile, `${JSON.stringify(kept)}\n`, { mode: 0o600 });
  }

  /** One HTTP exchange, timed and recorded under `name(status)` (http.ts); a network failure answers 599. */
  private timed(
    name: (status: number) => string,
    url: string,
    method: string,
    token: string | undefined,
    body: ExchangeBody,
    expected: number[],
  ): Promise<Response> {
    return timedExchange(this.stats, this.fetch, name, { url, method, token, body, expected });
  }
}
