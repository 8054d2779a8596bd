/** What a simulated fleet is told (FleetOptions) and what it tells (ENDPOINTS, FleetProgress), and its defaults. */

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
  commandStatus: 'POST /device/commands/{id}/status',
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
  /** Share of commands (reboots aside) reported FAILED, 0..1. @default 0 */
  commandFailureRate?: number;
  /** Mean time from receiving a command to reporting its result, ms. @default 1,000 */
  commandDelayMs?: number;
  /** How long a kiosk that runs a reboot command stays quiet (no health report, no pull), ms. @default 30,000 */
  rebootMs?: number;
  /** JSON file keeping the devices' client credentials between runs (written 0600); none when undefined. */
  credentialsFile?: string;
  /** Concurrent requests while setting up (registration, credentials, tokens). @default 16 */
  setupConcurrency?: number;
  /** Progress lines of the setup. */
  log?: (message: string) => void;
  /** Replaces the global fetch (tests: a service in memory). */
  fetch?: typeof globalThis.fetch;
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
  /** Commands run and reported SUCCEEDED (reboots aside), and FAILED. */
  commandsSucceeded: number;
  commandsFailed: number;
  /** Reboot commands run (reported SUCCEEDED, then quiet for a while). */
  reboots: number;
}

/** FleetOptions with every default filled in (but the credentials file, the log and fetch, which have none). */
export type FleetSettings = Required<Omit<FleetOptions, 'credentialsFile' | 'log' | 'fetch'>> &
  Pick<FleetOptions, 'credentialsFile' | 'log'>;

/** `options` with the defaults each member's docstring names. */
export function fleetSettings(options: FleetOptions): FleetSettings {
  const { fetch: _fetch, ...rest } = options;
  return {
    idPrefix: `${options.company}-sim-`,
    idDigits: 5,
    healthIntervalMs: 10_000,
    pullIntervalMs: 30_000,
    failureRate: 0.05,
    silenceRate: 0.002,
    silenceMs: 120_000,
    healthChangeRate: 0.02,
    commandFailureRate: 0,
    commandDelayMs: 1_000,
    rebootMs: 30_000,
    setupConcurrency: 16,
    ...rest,
  };
}

/** `ms` jittered ±20 %, so that a fleet's devices do not keep in step. */
export const jitter = (ms: number): number => ms * (0.8 + Math.random() * 0.4);
