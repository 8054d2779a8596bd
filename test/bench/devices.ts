/**
 * The device-side benchmark (`npm run bench -- --only-devices`): a fleet of kiosks against the local runtime started
 * as `npm start` is (admission control as configured, or none with DEVICE_BENCH_ADMISSION=off), then the cost of one
 * health report in writes.
 *
 * 1. After a warm-up (each device reports and pulls once, unmeasured: the fleet's steady state, every handler loaded),
 *    two loads of 1,000 devices (DEVICE_BENCH_DEVICES) for 60 s each (DEVICE_BENCH_SECONDS), open loop (device-load.ts):
 *    health every 10 s and a pull every 5 s (about 300 requests/s: the overload of the issue this measures), with the
 *    demo scenario deployed to 50 of them 20 s in; then health every 60 s and a pull every 30 s (about 50 requests/s).
 *    For each: requests/s offered and served, p50/p99 per kind of request, the share refused (503, 429) and how fast
 *    those answers came, and the acknowledged health reports (204) that the registry (`GET` of each device) and
 *    search do not show (must be 0), devices without any acknowledged report aside.
 * 2. A step search of the offered rate (DEVICE_BENCH_STEPS requests/s, DEVICE_BENCH_STEP_SECONDS each; the 10 s/5 s
 *    mix of health reports and pulls): p99 of what was served and the share refused at each step, and the first rate
 *    at which p99 passes 1 s.
 * 3. Cost: 200 more devices report (a) their first health (UNKNOWN → CONNECTED), (b) the same health again, (c) a
 *    changed battery level; after each round the runtime's write counts (GET {admin}/stats/writes) give DynamoDB item
 *    writes and search document updates per report. Goal for (b): at most 1 small write, 0 index updates.
 * JSON to os.tmpdir()/dss-bench/devices.json. The whole step takes about 8 minutes on a 2-core machine.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import pLimit from 'p-limit';
import type { WriteCounts } from '../../functions/local/write-counter.js';
import { SimulatedFleet } from '../../simulator/fleet.js';
import { simulatedHealth } from '../../simulator/health.js';
import { newServiceSettings, removeDataDirectory, startService, tokenFor } from '../e2e/harness.js';
import { comparableHealth, DeviceLoad, type LoadFigures } from './device-load.js';
import { mib, samplePeakRss } from './presigned.js';

const COMPANY = 'acme';
const SCENARIO = 'acme-welcome';
const VERSION = '1.0.0';
/** Goals. */
export const SERVED_P99_GOAL_MS = 1_000;
export const HEALTH_P99_GOAL_MS = 100;
export const PULL_304_P50_GOAL_MS = 5;
const COST_DEVICES = 200;
/** Devices the load deploys the demo scenario to, 20 s into the first load. */
const DEPLOY_TARGETS = 50;
/** How long the stream consumers get to bring search up to date before it is checked, ms. */
const SEARCH_SETTLE_MS = 3_000;

/** Writes per report in one cost round. */
export interface CostRound {
  round: string;
  reports: number;
  /** DynamoDB item writes per report, by table. */
  writesPerReport: Record<string, number>;
  searchUpdatesPerReport: number;
}

/** One load and what the registry and search showed after it. */
export interface LoadResult {
  name: string;
  load: LoadFigures;
  /** Devices with an acknowledged health report whose registry health is not it (nor a later one it may hold). */
  notInRegistry: number;
  /** The same in search. */
  notInSearch: number;
  /** Devices checked (those with an acknowledged report). */
  checked: number;
  /** Of the devices deployed to during the load, how many pulled the deployment before it ended; the deploy's attempts. */
  deployment?: { targets: number; seen: number; attempts: number };
  /**
   * CPU the runtime process (handlers, gateway, stream consumers: one event loop) and its backends (DynamoDB Local's
   * JVM) used during the load, ms per request sent, and as a share of one core.
   */
  cpu: { runtimeMsPerRequest: number; backendsMsPerRequest: number; runtimeCoreShare: number; backendsCoreShare: number };
}

/** One step of the offered-rate search. */
export interface RateStep {
  offeredPerSecond: number;
  servedPerSecond: number;
  servedP99Ms: number;
  refusedShare: number;
  refusedP99Ms: number;
  /** Shares of one core used by the runtime, by DynamoDB Local and by this load generator during the step. */
  cores: { runtime: number; backends: number; loadGenerator: number };
}

/** What the device benchmark measured. */
export interface DeviceBenchResult {
  devices: number;
  seconds: number;
  /** The runtime's admission settings, as the bench passed them on (`off`: none). */
  admission: string;
  setupSeconds: number;
  loads: LoadResult[];
  steps: RateStep[];
  /** The first offered rate (requests/s) at which p99 of the served requests passed 1 s, or null within the steps. */
  p99PassesOneSecondAt: number | null;
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

/** Clock ticks per second of /proc's CPU times (USER_HZ: 100 on Linux). */
const CLOCK_TICKS_PER_SECOND = 100;

/** CPU time (user + system) of a process, ms, from /proc/<pid>/stat; 0 once it exited or off Linux. */
async function cpuMsOf(pid: number): Promise<number> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces, between parentheses): utime and stime are the 12th and 13th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** The pids of a process's descendants (Linux /proc/<pid>/task/<tid>/children). */
async function descendantsOf(pid: number): Promise<number[]> {
  const children: number[] = [];
  try {
    const text = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8');
    for (const child of text
      .trim()
      .split(/\s+/)
      .filter((value) => value !== '')) {
      children.push(Number(child), ...(await descendantsOf(Number(child))));
    }
  } catch {
    // exited, or not Linux
  }
  return children;
}

/** CPU time of the runtime process and of its descendants (DynamoDB Local's JVM), ms. */
async function runtimeCpu(pid: number): Promise<{ runtimeMs: number; backendsMs: number }> {
  const descendants = await descendantsOf(pid);
  const backends = await Promise.all(descendants.map(cpuMsOf));
  return { runtimeMs: await cpuMsOf(pid), backendsMs: backends.reduce((sum, value) => sum + value, 0) };
}

/** The runtime's admission variables for this run: as the caller's environment sets them, or none (`off`). */
function admissionEnvironment(): { label: string; environment: Record<string, string> } {
  if (process.env.DEVICE_BENCH_ADMISSION === 'off') {
    return { label: 'off', environment: { MAX_IN_FLIGHT_MAIN: '0', MAX_IN_FLIGHT_UPLOAD: '0', MAX_IN_FLIGHT_AUTH: '0' } };
  }
  const names = ['MAX_IN_FLIGHT_MAIN', 'MAX_IN_FLIGHT_UPLOAD', 'MAX_IN_FLIGHT_AUTH', 'MAX_QUEUED_REQUESTS', 'MAX_QUEUE_WAIT_MS'];
  const set = names.filter((name) => process.env[name] !== undefined).map((name) => `${name}=${process.env[name]}`);
  return { label: set.length === 0 ? 'defaults' : set.join(' '), environment: {} };
}

/** Runs the loads, the step search and the cost rounds on a fresh local runtime. */
export async function runDeviceBench(options: { devices?: number; seconds?: number } = {}): Promise<DeviceBenchResult> {
  const devices = options.devices ?? Number(process.env.DEVICE_BENCH_DEVICES ?? 1_000);
  const seconds = options.seconds ?? Number(process.env.DEVICE_BENCH_SECONDS ?? 60);
  const stepRates = (process.env.DEVICE_BENCH_STEPS ?? '100,200,300,400,500,600').split(',').map(Number);
  const stepSeconds = Number(process.env.DEVICE_BENCH_STEP_SECONDS ?? 15);
  const admission = admissionEnvironment();
  const settings = await newServiceSettings();
  const service = await startService(settings, { readyTimeoutMs: 180_000, environment: admission.environment });
  const log = (message: string) => process.stdout.write(`  ${message}\n`);
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
      log,
    });
    const setupStarted = Date.now();
    await fleet.setUp();
    const setupSeconds = (Date.now() - setupStarted) / 1000;
    log(`fleet set up in ${setupSeconds.toFixed(1)} s (admission: ${admission.label})`);
    const alice = await tokenFor(service, 'alice');
    const rss = samplePeakRss(service.pid);
    const load = new DeviceLoad(service.api, fleet.sessions());
    await load.warmUp();
    const targets = Array.from(
      { length: Math.min(DEPLOY_TARGETS, devices) },
      (_, index) => `${COMPANY}-bench-${String(index + 1).padStart(5, '0')}`,
    );
    // An operator's deploy in the middle of the devices' traffic: refused (503) while the address is full, it is sent
    // again after Retry-After, as the CLI does.
    let deployAttempts = 0;
    const deploy = async () => {
      for (;;) {
        deployAttempts += 1;
        const response = await fetch(`${service.api}/companies/${COMPANY}/resources/deployments`, {
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
        if (response.status === 200) return;
        const text = await response.text();
        if ((response.status !== 503 && response.status !== 429) || deployAttempts >= 20) {
          throw new Error(`deploying to the bench devices answered ${response.status}: ${text}`);
        }
        await sleep(Number(response.headers.get('retry-after') ?? 1) * 1000);
      }
    };

    const loads: LoadResult[] = [];
    for (const [name, healthIntervalMs, pullIntervalMs] of [
      ['health 10 s, pull 5 s', 10_000, 5_000],
      ['health 60 s, pull 30 s', 60_000, 30_000],
    ] as const) {
      log(`load: ${devices} devices, ${name}, ${seconds} s`);
      load.forgetReports();
      const first = loads.length === 0;
      const cpuBefore = await runtimeCpu(service.pid);
      const startedAt = performance.now();
      const figures = await load.run({
        healthIntervalMs,
        pullIntervalMs,
        seconds,
        ...(first ? { at: { seconds: Math.min(20, seconds / 3), action: deploy } } : {}),
      });
      const cpuAfter = await runtimeCpu(service.pid);
      const elapsedMs = performance.now() - startedAt;
      const cpu = {
        runtimeMsPerRequest: (cpuAfter.runtimeMs - cpuBefore.runtimeMs) / figures.sent,
        backendsMsPerRequest: (cpuAfter.backendsMs - cpuBefore.backendsMs) / figures.sent,
        runtimeCoreShare: (cpuAfter.runtimeMs - cpuBefore.runtimeMs) / elapsedMs,
        backendsCoreShare: (cpuAfter.backendsMs - cpuBefore.backendsMs) / elapsedMs,
      };
      const checked = await checkAcknowledged(service.api, alice, load);
      loads.push({
        name,
        load: figures,
        cpu,
        ...checked,
        ...(first ? { deployment: { targets: targets.length, seen: figures.deploymentsSeen, attempts: deployAttempts } } : {}),
      });
      log(
        `  offered ${figures.offeredPerSecond.toFixed(0)}/s, served ${figures.servedPerSecond.toFixed(0)}/s, refused ${(figures.refusedShare * 100).toFixed(1)} %, ` +
          `p99 served ${figures.servedP99Ms.toFixed(0)} ms; not in registry ${checked.notInRegistry}, not in search ${checked.notInSearch}`,
      );
    }

    // The step search: the 10 s / 5 s mix (1 health report to 2 pulls), at each rate.
    const steps: RateStep[] = [];
    let p99PassesOneSecondAt: number | null = null;
    for (const rate of stepRates) {
      const healthIntervalMs = (3 * devices * 1000) / rate;
      const cpuBefore = await runtimeCpu(service.pid);
      const ownBefore = process.cpuUsage();
      const startedAt = performance.now();
      const figures = await load.run({ healthIntervalMs, pullIntervalMs: healthIntervalMs / 2, seconds: stepSeconds });
      const elapsedMs = performance.now() - startedAt;
      const cpuAfter = await runtimeCpu(service.pid);
      const own = process.cpuUsage(ownBefore);
      steps.push({
        offeredPerSecond: figures.offeredPerSecond,
        servedPerSecond: figures.servedPerSecond,
        servedP99Ms: figures.servedP99Ms,
        refusedShare: figures.refusedShare,
        refusedP99Ms: figures.refusedP99Ms,
        cores: {
          runtime: (cpuAfter.runtimeMs - cpuBefore.runtimeMs) / elapsedMs,
          backends: (cpuAfter.backendsMs - cpuBefore.backendsMs) / elapsedMs,
          loadGenerator: (own.user + own.system) / 1000 / elapsedMs,
        },
      });
      log(
        `  step ${rate}/s: offered ${figures.offeredPerSecond.toFixed(0)}/s, served ${figures.servedPerSecond.toFixed(0)}/s, ` +
          `p99 served ${figures.servedP99Ms.toFixed(0)} ms, refused ${(figures.refusedShare * 100).toFixed(1)} % (p99 ${figures.refusedP99Ms.toFixed(0)} ms)`,
      );
      if (figures.servedP99Ms > SERVED_P99_GOAL_MS) {
        p99PassesOneSecondAt = Math.round(figures.offeredPerSecond);
        break;
      }
      await sleep(2_000);
    }
    rss.stop();

    const cost = await costRounds(service.api, service.auth, alice, admin);
    return {
      devices,
      seconds,
      admission: admission.label,
      setupSeconds,
      loads,
      steps,
      p99PassesOneSecondAt,
      ...(rss.peakBytes() > 0 ? { runtimePeakRssBytes: rss.peakBytes() } : {}),
      cost,
    };
  } finally {
    await service.stop();
    await removeDataDirectory(settings);
  }
}

/**
 * Counts the devices whose acknowledged health report (or a later one they may hold) the registry (`GET` of each
 * device) and search (every device document of the company, paged) do not show, once the stream consumers had
 * SEARCH_SETTLE_MS to catch up.
 */
async function checkAcknowledged(
  baseUrl: string,
  token: string,
  load: DeviceLoad,
): Promise<{ notInRegistry: number; notInSearch: number; checked: number }> {
  await sleep(SEARCH_SETTLE_MS);
  const candidates = load.healthCandidates();
  const headers = { authorization: `Bearer ${token}` };
  const limit = pLimit(8);
  let notInRegistry = 0;
  await Promise.all(
    [...candidates].map(([id, allowed]) =>
      limit(async () => {
        const response = await fetch(`${baseUrl}/companies/${COMPANY}/resources/devices/${id}`, { headers });
        const device = response.status === 200 ? ((await response.json()) as { health?: unknown }) : undefined;
        if (device?.health === undefined || !allowed.has(comparableHealth(device.health))) notInRegistry += 1;
      }),
    ),
  );
  const searched = new Map<string, unknown>();
  for (let page = 1; ; page += 1) {
    const response = await fetch(`${baseUrl}/resources/search?type=DEVICE&company=${COMPANY}&pageSize=100&page=${page}`, { headers });
    if (response.status !== 200) throw new Error(`search answered ${response.status}: ${await response.text()}`);
    const body = (await response.json()) as { page: { pages: number }; resources: { id: string; health?: unknown }[] };
    for (const resource of body.resources) searched.set(resource.id, resource.health);
    if (page >= body.page.pages) break;
  }
  let notInSearch = 0;
  for (const [id, allowed] of candidates) {
    const health = searched.get(id);
    if (health === undefined || !allowed.has(comparableHealth(health))) notInSearch += 1;
  }
  return { notInRegistry, notInSearch, checked: candidates.size };
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
  const limit = pLimit(8);
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
    await sleep(SEARCH_SETTLE_MS);
    rounds.push({ round, reports: ids.length, ...perReport(before, await writeCounts(admin), ids.length) });
  }
  return rounds;
}

/** Prints the result and states each goal as MET or MISSED. */
export function reportDeviceBench(result: DeviceBenchResult): void {
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const ms = (value: number) => (Number.isNaN(value) ? '-' : value.toFixed(value < 10 ? 1 : 0));
  const percent = (value: number) => `${(value * 100).toFixed(1)} %`;
  const goal = (met: boolean) => (met ? 'MET' : 'MISSED');
  out(`\nDevice side: ${result.devices} devices, ${result.seconds} s per load; admission control: ${result.admission}`);
  for (const { name, load, notInRegistry, notInSearch, checked, deployment, cpu } of result.loads) {
    out(
      `\n  ${name}: offered ${load.offeredPerSecond.toFixed(0)} requests/s, served ${load.servedPerSecond.toFixed(0)}/s, ` +
        `refused ${percent(load.refusedShare)} (p50 ${ms(load.refusedP50Ms)} ms, p99 ${ms(load.refusedP99Ms)} ms), p99 of all served ${ms(load.servedP99Ms)} ms`,
    );
    out(
      `    ${'request'.padEnd(34)} ${'sent'.padStart(6)} ${'served'.padStart(6)}  p50 ms  p99 ms  refused (by backend)  p50/p99 ms  failed`,
    );
    for (const kind of load.kinds) {
      const label = { health: 'PUT /device/health', pull: 'GET /device/deployments', status: 'POST /device/deployments/status' }[kind.kind];
      out(
        `    ${label.padEnd(34)} ${String(kind.sent).padStart(6)} ${String(kind.served).padStart(6)} ${ms(kind.servedP50Ms).padStart(7)} ${ms(kind.servedP99Ms).padStart(7)}` +
          `  ${`${percent(kind.refused / kind.sent)} (${kind.refusedByBackend})`.padEnd(20)} ${`${ms(kind.refusedP50Ms)}/${ms(kind.refusedP99Ms)}`.padStart(11)} ${String(kind.failed).padStart(7)}`,
      );
    }
    out(
      `    acknowledged reports not in the registry: ${notInRegistry}, not in search: ${notInSearch} (of ${checked} devices; goal 0: ${goal(notInRegistry === 0 && notInSearch === 0)}); ` +
        `devices without an acknowledged report: ${load.devicesWithoutAcknowledgedReport}`,
    );
    if (deployment !== undefined)
      out(
        `    deployed to ${deployment.targets} devices during the load (${deployment.attempts} attempt(s)): ${deployment.seen} pulled it before the end`,
      );
    out(
      `    CPU per request sent: runtime ${cpu.runtimeMsPerRequest.toFixed(2)} ms (${percent(cpu.runtimeCoreShare)} of a core), ` +
        `DynamoDB Local ${cpu.backendsMsPerRequest.toFixed(2)} ms (${percent(cpu.backendsCoreShare)} of a core)`,
    );
    out(`    p99 of what was served < ${SERVED_P99_GOAL_MS} ms: ${goal(load.servedP99Ms < SERVED_P99_GOAL_MS)}`);
  }
  const realistic = result.loads.find((entry) => entry.name.startsWith('health 60 s'));
  if (realistic !== undefined) {
    const health = realistic.load.kinds.find((kind) => kind.kind === 'health');
    out(
      `    health report p99 at 60 s / 30 s: ${ms(health?.servedP99Ms ?? Number.NaN)} ms (goal < ${HEALTH_P99_GOAL_MS} ms: ${goal((health?.servedP99Ms ?? Number.POSITIVE_INFINITY) < HEALTH_P99_GOAL_MS)})`,
    );
  }
  out('\n  Offered rate steps (1 health report to 2 pulls):');
  for (const step of result.steps) {
    out(
      `    offered ${step.offeredPerSecond.toFixed(0).padStart(4)}/s  served ${step.servedPerSecond.toFixed(0).padStart(4)}/s  p99 served ${ms(step.servedP99Ms).padStart(6)} ms  refused ${percent(step.refusedShare).padStart(7)} (p99 ${ms(step.refusedP99Ms)} ms)` +
        `  cores: runtime ${step.cores.runtime.toFixed(2)}, DynamoDB Local ${step.cores.backends.toFixed(2)}, load generator ${step.cores.loadGenerator.toFixed(2)}`,
    );
  }
  out(
    result.p99PassesOneSecondAt === null
      ? `  p99 of what was served stayed under 1 s up to ${Math.round(result.steps.at(-1)?.offeredPerSecond ?? 0)} requests/s offered.`
      : `  p99 of what was served passes 1 s at ${result.p99PassesOneSecondAt} requests/s offered.`,
  );
  if (result.runtimePeakRssBytes !== undefined) out(`  runtime peak RSS ${mib(result.runtimePeakRssBytes)} MiB`);
  out('  Writes per health report (DynamoDB item writes by table; search document updates):');
  for (const round of result.cost) {
    const writes = Object.entries(round.writesPerReport)
      .map(([table, count]) => `${table} ${count.toFixed(2)}`)
      .join(', ');
    out(`    ${round.round.padEnd(36)} ${writes || 'none'}; search ${round.searchUpdatesPerReport.toFixed(2)}`);
  }
  const unchanged = result.cost.find((round) => round.round === 'unchanged report');
  if (unchanged !== undefined) {
    const total = Object.values(unchanged.writesPerReport).reduce((sum, count) => sum + count, 0);
    out(
      `  unchanged report: ${total.toFixed(2)} writes, ${unchanged.searchUpdatesPerReport.toFixed(2)} index updates (goal ≤ 1 small write, 0 index updates: ${goal(total <= 1 && unchanged.searchUpdatesPerReport === 0)})`,
    );
  }
}
