/**
 * The device-side benchmark (`npm run bench -- --only-devices`): a fleet of simulated kiosks (simulator/fleet.ts)
 * against the local runtime started as `npm start` is, then the cost of one health report in writes.
 *
 * 1. Traffic: 1,000 devices (DEVICE_BENCH_DEVICES), one health report every 10 s each and a pull every 30 s, for 60 s
 *    (DEVICE_BENCH_SECONDS); 20 s in, the demo scenario is deployed to 50 of them, which download, check and report
 *    it. Goals: 0 errors, p99 health report < 100 ms, p50 304 pull < 5 ms.
 * 2. Cost: 200 more devices report (a) their first health (UNKNOWN → CONNECTED), (b) the same health again, (c) a
 *    changed battery level; after each round the runtime's write counts (GET {admin}/stats/writes) give DynamoDB item
 *    writes and search document updates per report. Goal for (b): at most 1 small write, 0 index updates.
 * JSON to os.tmpdir()/dss-bench/devices.json.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import pLimit from 'p-limit';
import type { WriteCounts } from '../../functions/local/write-counter.js';
import { ENDPOINTS, SimulatedFleet, simulatedHealth } from '../../simulator/fleet.js';
import { newServiceSettings, removeDataDirectory, startService, tokenFor } from '../e2e/harness.js';
import { memoryOf, mib } from './presigned.js';

const COMPANY = 'acme';
const SCENARIO = 'acme-welcome';
const VERSION = '1.0.0';
/** Goals of the traffic phase, ms. */
export const HEALTH_P99_GOAL_MS = 100;
export const PULL_304_P50_GOAL_MS = 5;
const COST_DEVICES = 200;

/** Writes per report in one cost round. */
export interface CostRound {
  round: string;
  reports: number;
  /** DynamoDB item writes per report, by table. */
  writesPerReport: Record<string, number>;
  searchUpdatesPerReport: number;
}

/** What the device benchmark measured. */
export interface DeviceBenchResult {
  devices: number;
  seconds: number;
  endpoints: ReturnType<SimulatedFleet['stats']['figures']>;
  errors: number;
  healthP99Ms: number;
  pull304P50Ms: number;
  installed: number;
  failed: number;
  runtimePeakRssBytes?: number;
  cost: CostRound[];
}

async function writeCounts(admin: string): Promise<WriteCounts> {
  const response = await fetch(`${admin}/stats/writes`);
  return (await response.json()) as WriteCounts;
}

function perReport(
  before: WriteCounts,
  after: WriteCounts,
  reports: number,
): Pick<CostRound, 'writesPerReport' | 'searchUpdatesPerReport'> {
  const writesPerReport: Record<string, number> = {};
  for (const [table, count] of Object.entries(after.dynamoDb)) {
    const delta = count - (before.dynamoDb[table] ?? 0);
    if (delta > 0) writesPerReport[table] = delta / reports;
  }
  return { writesPerReport, searchUpdatesPerReport: (after.searchDocuments - before.searchDocuments) / reports };
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** Runs both phases on a fresh local runtime. */
export async function runDeviceBench(options: { devices?: number; seconds?: number } = {}): Promise<DeviceBenchResult> {
  const devices = options.devices ?? Number(process.env.DEVICE_BENCH_DEVICES ?? 1_000);
  const seconds = options.seconds ?? Number(process.env.DEVICE_BENCH_SECONDS ?? 60);
  const settings = await newServiceSettings();
  const service = await startService(settings, { readyTimeoutMs: 180_000 });
  try {
    const { admin } = JSON.parse(await readFile(join(settings.dataDirectory, 'runtime.json'), 'utf8')) as { admin: string };
    const fleet = new SimulatedFleet({
      baseUrl: service.api,
      authUrl: service.auth,
      username: 'alice',
      password: 'alice-demo-password',
      company: COMPANY,
      devices,
      idPrefix: `${COMPANY}-bench-`,
      healthIntervalMs: 10_000,
      pullIntervalMs: 30_000,
      failureRate: 0.05,
      silenceRate: 0,
      log: (message) => process.stdout.write(`  ${message}\n`),
    });
    const setupStarted = Date.now();
    await fleet.start();
    process.stdout.write(`  fleet set up in ${((Date.now() - setupStarted) / 1000).toFixed(1)} s; ${seconds} s of traffic\n`);
    const alice = await tokenFor(service, 'alice');
    let peakRss = 0;
    const sampler = setInterval(async () => {
      const memory = await memoryOf(service.pid).catch(() => undefined);
      if (memory !== undefined && memory.hwm > peakRss) peakRss = memory.hwm;
    }, 1_000);
    await sleep(Math.min(20_000, (seconds * 1000) / 3));
    const targets = Array.from({ length: Math.min(50, devices) }, (_, index) => `${COMPANY}-bench-${String(index + 1).padStart(5, '0')}`);
    const deploy = await fetch(`${service.api}/companies/${COMPANY}/resources/deployments`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        requests: targets.map((id) => ({
          target: { type: 'DEVICE', id },
          what: { type: 'SCENARIO', id: SCENARIO, subId: VERSION },
          action: 'DEPLOY',
        })),
      }),
    });
    if (deploy.status !== 200) throw new Error(`deploying to the bench devices answered ${deploy.status}: ${await deploy.text()}`);
    await sleep(seconds * 1000 - Math.min(20_000, (seconds * 1000) / 3));
    await fleet.stop();
    clearInterval(sampler);
    const progress = fleet.progress();
    const { errors } = fleet.stats.totals();

    // Cost rounds: the same 200 devices report three times, with a pause for the stream consumers in between.
    const cost = await costRounds(service.api, service.auth, alice, admin);
    return {
      devices,
      seconds,
      endpoints: fleet.stats.figures(),
      errors,
      healthP99Ms: fleet.stats.of(ENDPOINTS.health)?.p99 ?? Number.NaN,
      pull304P50Ms: fleet.stats.of(ENDPOINTS.pull304)?.p50 ?? Number.NaN,
      installed: progress.installed,
      failed: progress.failed,
      ...(peakRss > 0 ? { runtimePeakRssBytes: peakRss } : {}),
      cost,
    };
  } finally {
    await service.stop();
    await removeDataDirectory(settings);
  }
}

async function costRounds(baseUrl: string, authUrl: string, alice: string, admin: string): Promise<CostRound[]> {
  const ids = Array.from({ length: COST_DEVICES }, (_, index) => `${COMPANY}-cost-${String(index + 1).padStart(5, '0')}`);
  const json = { authorization: `Bearer ${alice}`, 'content-type': 'application/json' };
  const registered = await fetch(`${baseUrl}/companies/${COMPANY}/resources/devices`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify(ids.map((id, index) => ({ id, serial: `COST-${index}` }))),
  });
  if (registered.status !== 200) throw new Error(`registering the cost devices answered ${registered.status}`);
  const limit = pLimit(16);
  const tokens = await Promise.all(
    ids.map((id) =>
      limit(async () => {
        const credentials = (await (
          await fetch(`${baseUrl}/companies/${COMPANY}/resources/devices/${id}/credentials`, { method: 'POST', headers: json })
        ).json()) as { clientId: string; clientSecret: string };
        const token = await fetch(`${authUrl}/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            grant_type: 'client_credentials',
            client_id: credentials.clientId,
            client_secret: credentials.clientSecret,
          }),
        });
        return ((await token.json()) as { access_token: string }).access_token;
      }),
    ),
  );
  const healths = ids.map((_, index) => simulatedHealth(index + 1));
  const rounds: CostRound[] = [];
  for (const round of ['first report (UNKNOWN → CONNECTED)', 'unchanged report', 'changed battery level']) {
    if (round === 'changed battery level') {
      for (const health of healths) {
        const battery = (health.hubs as { battery: { health: { level: number } } }[])[0]?.battery;
        if (battery !== undefined) battery.health.level = (battery.health.level + 7) % 100;
      }
    }
    const before = await writeCounts(admin);
    await Promise.all(
      ids.map((_, index) =>
        limit(async () => {
          const response = await fetch(`${baseUrl}/device/health`, {
            method: 'PUT',
            headers: { authorization: `Bearer ${tokens[index]}`, 'content-type': 'application/json' },
            body: JSON.stringify(healths[index]),
          });
          if (response.status !== 204) throw new Error(`health report answered ${response.status}: ${await response.text()}`);
        }),
      ),
    );
    // The search indexer runs off the devices table's stream: give it time to catch up before counting.
    await sleep(3_000);
    rounds.push({ round, reports: ids.length, ...perReport(before, await writeCounts(admin), ids.length) });
  }
  return rounds;
}

/** Prints the result and states each goal as MET or MISSED. */
export function reportDeviceBench(result: DeviceBenchResult): void {
  const fixed = (value: number) => (Number.isNaN(value) ? '-' : value.toFixed(1));
  process.stdout.write(`\nDevice side: ${result.devices} devices, ${result.seconds} s\n`);
  for (const row of result.endpoints) {
    process.stdout.write(
      `  ${row.endpoint.padEnd(34)} ${String(row.requests).padStart(7)} requests ${String(row.errors).padStart(4)} errors  p50 ${fixed(row.p50).padStart(6)} ms  p99 ${fixed(row.p99).padStart(6)} ms\n`,
    );
  }
  process.stdout.write(`  installed ${result.installed}, failed ${result.failed}\n`);
  if (result.runtimePeakRssBytes !== undefined) process.stdout.write(`  runtime peak RSS ${mib(result.runtimePeakRssBytes)} MiB\n`);
  const goal = (met: boolean) => (met ? 'MET' : 'MISSED');
  process.stdout.write(`  errors: ${result.errors} (goal 0: ${goal(result.errors === 0)})\n`);
  process.stdout.write(
    `  health report p99: ${fixed(result.healthP99Ms)} ms (goal < ${HEALTH_P99_GOAL_MS} ms: ${goal(result.healthP99Ms < HEALTH_P99_GOAL_MS)})\n`,
  );
  process.stdout.write(
    `  304 pull p50: ${fixed(result.pull304P50Ms)} ms (goal < ${PULL_304_P50_GOAL_MS} ms: ${goal(result.pull304P50Ms < PULL_304_P50_GOAL_MS)})\n`,
  );
  process.stdout.write('  Writes per health report (DynamoDB item writes by table; search document updates):\n');
  for (const round of result.cost) {
    const writes = Object.entries(round.writesPerReport)
      .map(([table, count]) => `${table} ${count.toFixed(2)}`)
      .join(', ');
    process.stdout.write(`    ${round.round.padEnd(36)} ${writes || 'none'}; search ${round.searchUpdatesPerReport.toFixed(2)}\n`);
  }
  const unchanged = result.cost.find((round) => round.round === 'unchanged report');
  if (unchanged !== undefined) {
    const total = Object.values(unchanged.writesPerReport).reduce((sum, count) => sum + count, 0);
    process.stdout.write(
      `  unchanged report: ${total.toFixed(2)} writes, ${unchanged.searchUpdatesPerReport.toFixed(2)} index updates (goal ≤ 1 small write, 0 index updates: ${goal(total <= 1 && unchanged.searchUpdatesPerReport === 0)})\n`,
    );
  }
}
