/**
 * The fleet simulator: N kiosks that do what a real one does against the service, through its public HTTP contract
 * only. Each device gets credentials from the operator (or reuses ones kept from an earlier run), fetches device
 * tokens with the client-credentials grant, reports its health on an interval with jitter, pulls its desired state
 * with `If-None-Match`, downloads each new archive through its presigned URL and checks its sha256, reports
 * DOWNLOADING, INSTALLING and INSTALLED (or FAILED at the failure rate), and now and then falls silent for a while so
 * that the heartbeat sweeper marks it DISCONNECTED.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import pLimit from 'p-limit';
import { type DesiredItem, type DeviceCredentials, type SimulatedDevice, SimulatorHttpError } from './device.js';
import { changeHealth, simulatedHealth, stripServerFields } from './health.js';
import { RequestStats } from './stats.js';

/** Endpoint names of the statistics (the rows of the final table). */
export const ENDPOINTS = {
  userToken: 'POST /token (user)',
  deviceGet: 'GET …/devices/{id}',
  register: 'POST …/resources/devices',
  credentials: 'POST …/devices/{id}/credentials',
  deviceToken: 'POST /token (device)',
  health: 'PUT /device/health',
  pull200: 'GET /device/deployments 200',
  pull304: 'GET /device/deployments 304',
  download: 'GET archive (presigned)',
  status: 'POST /device/deployments/status',
} as const;

/** Settings of a simulated fleet. */
export interface FleetOptions {
  /** `{base_url}`, e.g. `http://127.0.0.1:3000`. */
  baseUrl: string;
  /** `{auth_url}`, e.g. `http://127.0.0.1:3002`. */
  authUrl: string;
  /** Operator credentials (devices:read and devices:write on `company`). */
  username: string;
  password: string;
  company: string;
  /** How many devices. */
  devices: number;
  /** Device ids are `{idPrefix}{n}` with n from 1, zero-padded to `idDigits`. @default `{company}-sim-` */
  idPrefix?: string;
  /** @default 5 */
  idDigits?: number;
  /** Mean interval between health reports, ms (each wait is jittered ±20 %). @default 10,000 */
  healthIntervalMs?: number;
  /** Mean interval between pulls, ms. @default 30,000 */
  pullIntervalMs?: number;
  /** Share of installations reported FAILED, 0..1. @default 0.05 */
  failureRate?: number;
  /** Chance per health tick that a device falls silent. @default 0.002 */
  silenceRate?: number;
  /** How long a silent device stays silent, ms. @default 120,000 */
  silenceMs?: number;
  /** Chance per health report that something in the health changes (a battery level). @default 0.02 */
  healthChangeRate?: number;
  /** JSON file keeping the devices' client credentials between runs (written 0600); none when undefined. */
  credentialsFile?: string;
  /** Concurrent requests while setting up (registration, credentials, tokens). @default 16 */
  setupConcurrency?: number;
  /** Progress lines of the setup. */
  log?: (message: string) => void;
}

/** What the fleet has done so far. */
export interface FleetProgress {
  devices: number;
  /** Devices currently reporting (not silent, not lost). */
  reporting: number;
  silent: number;
  /** Devices whose credentials stopped working (deleted by an operator). */
  lost: number;
  installed: number;
  failed: number;
  /** sha256 mismatches of downloaded archives (each also reported FAILED). */
  checksumMismatches: number;
}

const jitter = (ms: number): number => ms * (0.8 + Math.random() * 0.4);

/** A fleet of simulated devices. `start()` sets it up and sets it going; `stop()` stops every device. */
export class SimulatedFleet {
  readonly stats = new RequestStats();
  private readonly options: Required<Omit<FleetOptions, 'credentialsFile' | 'log'>> & Pick<FleetOptions, 'credentialsFile' | 'log'>;
  private readonly devices: SimulatedDevice[] = [];
  private readonly inFlight = new Set<Promise<unknown>>();
  private operatorToken = '';
  private stopped = false;
  private installed = 0;
  private failed = 0;
  private checksumMismatches = 0;

  constructor(options: FleetOptions) {
    this.options = {
      idPrefix: `${options.company}-sim-`,
      idDigits: 5,
      healthIntervalMs: 10_000,
      pullIntervalMs: 30_000,
      failureRate: 0.05,
      silenceRate: 0.002,
      silenceMs: 120_000,
      healthChangeRate: 0.02,
      setupConcurrency: 16,
      ...options,
    };
    for (let index = 1; index <= options.devices; index += 1) {
      this.devices.push({
        id: `${this.options.idPrefix}${String(index).padStart(this.options.idDigits, '0')}`,
        index,
        tokenRefreshAt: 0,
        health: simulatedHealth(index),
        silentUntil: 0,
        lost: false,
        handled: new Set(),
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
          else if (existing.health !== undefined) device.health = stripServerFields(existing.health);
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
    const headers: Record<string, string> = device.etag === undefined ? {} : { 'if-none-match': device.etag };
    const response = await this.asDevice(device, ENDPOINTS.pull200, 'GET', '/device/deployments', { headers }, [200, 304], (status) =>
      status === 304 ? ENDPOINTS.pull304 : ENDPOINTS.pull200,
    );
    if (response.status === 304) return;
    device.etag = response.headers.get('etag') ?? undefined;
    const { items } = (await response.json()) as { items: DesiredItem[] };
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
      const response = await fetch(item.downloadUrl);
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
    const response = await this.timed(() => ENDPOINTS.deviceToken, `${this.options.authUrl}/token`, 'POST', undefined, { form }, [200]);
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

  /** One HTTP exchange, timed and recorded under `name(status)`; a network failure answers status 0. */
  private async timed(
    name: (status: number) => string,
    url: string,
    method: string,
    token: string | undefined,
    body: { json?: unknown; form?: URLSearchParams; headers?: Record<string, string> },
    expected: number[],
  ): Promise<Response> {
    const headers: Record<string, string> = { ...body.headers };
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    let payload: string | undefined;
    if (body.json !== undefined) {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(body.json);
    } else if (body.form !== undefined) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      payload = body.form.toString();
    }
    const started = performance.now();
    let response: Response;
    try {
      response = await fetch(url, { method, headers, ...(payload === undefined ? {} : { body: payload }) });
    } catch (error) {
      this.stats.record(name(0), performance.now() - started, false);
      response = new Response(JSON.stringify({ detail: (error as Error).message }), { status: 599 });
      return response;
    }
    // The body is part of the exchange: read before the clock stops (the caller reads it again from a copy).
    const bytes = await response.arrayBuffer();
    // 204 and 304 are null-body statuses: a Response with a body (even an empty one) cannot carry them.
    const nullBody = response.status === 204 || response.status === 205 || response.status === 304;
    const buffered = new Response(nullBody ? null : bytes, { status: response.status, headers: response.headers });
    this.stats.record(name(response.status), performance.now() - started, expected.includes(response.status));
    return buffered;
  }
}
