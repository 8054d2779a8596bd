/**
 * The rollout benchmark (`npm run bench -- --only-rollouts`): a rollout to a seeded fleet of 100,000 devices
 * (ROLLOUT_BENCH_DEVICES) on the local runtime started as `npm start` is.
 *
 * 1. Baseline: as many raw conditional PutItems of slot-shaped items straight into the runtime's DynamoDB Local, with
 *    as many in flight as the rollout worker keeps (ROLLOUT_WORKER.maxConcurrency × DEPLOYMENT_WRITE_CONCURRENCY).
 * 2. Rollout: a query selecting every seeded device, waves 100, 1,000 and the rest; the devices of the first two waves
 *    report INSTALLED as soon as their deployment is written (device tokens signed with the local issuer's key, made
 *    before the rollout starts). Measured: time from the create request until every deploy is written (the sum of
 *    the waves' SUCCESS counts reaches the target count), and the time the waves spent writing (from a wave's start to
 *    its last write, summed: what compares with the baseline, without the waits for reports); the runtime's peak RSS;
 *    interactive search latency (one search at a time, as alice, during the whole rollout). Goals: ≤ 1.2x the
 *    baseline, < 512 MiB, p99 < 50 ms.
 * 3. Failures: the same rollout of another version with 20 % of the first wave reporting FAILED: it must stop PAUSED
 *    after that wave, with no deploy written beyond it.
 * The seeded fleet is made once (`npm run seed`) into os.tmpdir()/dss-bench and copied for each run.
 * JSON to os.tmpdir()/dss-bench/rollouts.json.
 */
import { execFileSync } from 'node:child_process';
import { cp, mkdir, rm, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import pLimit from 'p-limit';
import { ROLLOUT_WORKER } from '../../functions/contract/functions.js';
import { DEPLOYMENT_WRITE_CONCURRENCY } from '../../functions/core/deployments/deployments.js';
import { freePort } from '../../functions/local/free-port.js';
import { localDocumentClient } from '../e2e/fleet.js';
import { type LocalService, newServiceSettings, removeDataDirectory, startService, tokenFor } from '../e2e/harness.js';
import { deviceToken, type LocalIssuer } from '../support/device-token.js';
import { BENCH_DIRECTORY } from './archives.js';
import { mib, samplePeakRss } from './presigned.js';

const root = resolve(import.meta.dirname, '../..');
const SCENARIO = 'acme-welcome';
/** `npm run seed` writes the demo company's kiosks `acme-kiosk-0001`… (the first 120 are the demo's own). */
const SEED_COMPANY = 'acme';
/** A query selecting every device of the company. */
const SEEDED_QUERY = 'type=DEVICE';
const seededDeviceId = (n: number) => `${SEED_COMPANY}-kiosk-${String(n).padStart(4, '0')}`;
/** The seeded ids in the order a rollout takes them (by id, as strings sort): the first waves' devices. */
const inRolloutOrder = (devices: number) => Array.from({ length: devices }, (_, index) => seededDeviceId(index + 1)).sort();
export const RATIO_GOAL = 1.2;
export const RSS_GOAL_BYTES = 512 * 1024 ** 2;
export const SEARCH_P99_GOAL_MS = 50;
const WAVES = [100, 1_000];
const REPORTING = WAVES.reduce((sum, size) => sum + size, 0);

interface Wave {
  size: number;
  state: string;
  counts: Record<string, number>;
}
interface Rollout {
  id: string;
  state: string;
  targets: number;
  waves: Wave[];
  pausedReason?: string;
}

/** What one rollout run measured. */
export interface RolloutRun {
  version: string;
  failureRate: number;
  targets: number;
  /** From the create request to the last deploy written (or to the pause), ms. */
  totalMs: number;
  /** Sum over waves of the time from the wave's first sight RUNNING to its last deploy written, ms. */
  writingMs: number;
  /** ms each wave spent writing. */
  waveWritingMs: number[];
  finalState: string;
  pausedReason?: string;
  written: number;
  waves: Wave[];
  searches: { count: number; p50Ms: number; p99Ms: number; maxMs: number; errors: number };
}

/** What the rollout benchmark measured. */
export interface RolloutBenchResult {
  devices: number;
  baseline: { puts: number; parallelism: number; ms: number; failures: number };
  run: RolloutRun;
  failureRun: RolloutRun;
  runtimePeakRssBytes: number;
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

function percentile(sorted: number[], fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)] as number;
}

/** A seeded data folder of `devices` devices, made once with `npm run seed` and kept under BENCH_DIRECTORY. */
export async function seededTemplate(devices: number): Promise<string> {
  const template = join(BENCH_DIRECTORY, `rollout-fleet-${devices}`);
  const ready = await stat(join(template, 'seeded')).then(
    () => true,
    () => false,
  );
  if (!ready) {
    await rm(template, { recursive: true, force: true });
    await mkdir(template, { recursive: true });
    process.stdout.write(`  seeding ${devices.toLocaleString('en-US')} devices into ${template} (once)\n`);
    const started = Date.now();
    execFileSync(process.execPath, ['--import', 'tsx', join(root, 'bin/seed.ts'), '--devices', String(devices)], {
      cwd: root,
      env: { ...process.env, DATA_DIR: template, NODE_NO_WARNINGS: '1' },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    process.stdout.write(`  seeded in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
    await mkdir(join(template, 'seeded'));
  }
  return template;
}

async function getRollout(service: LocalService, token: string, id: string): Promise<Rollout> {
  const response = await fetch(`${service.api}/companies/${SEED_COMPANY}/resources/rollouts/${id}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  if (response.status !== 200) throw new Error(`GET rollout answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as Rollout;
}

/** One search at a time as alice until `stop()`; latencies in ms. */
function searchLoad(service: LocalService, token: string): { stop: () => Promise<RolloutRun['searches']> } {
  const latencies: number[] = [];
  let errors = 0;
  let running = true;
  const queries = [
    `type=DEVICE&connection.state=CONNECTED&pageSize=20`,
    `type=DEVICE&health.hubs.devices.capability.type=PRINTER&sort=serial&pageSize=20`,
    `global=lyon&pageSize=20`,
  ];
  const loop = (async () => {
    for (let index = 0; running; index += 1) {
      const started = performance.now();
      try {
        const response = await fetch(`${service.api}/resources/search?${queries[index % queries.length]}`, {
          headers: { authorization: `Bearer ${token}` },
        });
        await response.arrayBuffer();
        if (response.status !== 200) errors += 1;
        else latencies.push(performance.now() - started);
      } catch {
        errors += 1;
      }
      await sleep(50);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      const sorted = [...latencies].sort((a, b) => a - b);
      return {
        count: sorted.length,
        p50Ms: percentile(sorted, 0.5),
        p99Ms: percentile(sorted, 0.99),
        maxMs: sorted.at(-1) ?? Number.NaN,
        errors,
      };
    },
  };
}

/** Posts `state` for `version` on behalf of each device as soon as its deployment is written (404 until then). */
async function report(
  service: LocalService,
  tokens: Map<string, string>,
  deviceIds: string[],
  version: string,
  failed: Set<string>,
): Promise<void> {
  const limit = pLimit(16);
  await Promise.all(
    deviceIds.map((deviceId) =>
      limit(async () => {
        for (;;) {
          const response = await fetch(`${service.api}/device/deployments/status`, {
            method: 'POST',
            headers: { authorization: `Bearer ${tokens.get(deviceId)}`, 'content-type': 'application/json' },
            body: JSON.stringify({
              what: { type: 'SCENARIO', id: SCENARIO, subId: version },
              state: failed.has(deviceId) ? 'FAILED' : 'INSTALLED',
            }),
          });
          await response.arrayBuffer();
          if (response.status === 204) return;
          if (response.status !== 404) throw new Error(`status report of ${deviceId} answered ${response.status}`);
          await sleep(200);
        }
      }),
    ),
  );
}

/** Device tokens (15 minutes) for the devices that report: the first waves' (made before each run, as they expire). */
async function reportingTokens(issuer: LocalIssuer, devices: number): Promise<Map<string, string>> {
  const tokens = new Map<string, string>();
  const limit = pLimit(8);
  await Promise.all(
    inRolloutOrder(devices)
      .slice(0, REPORTING)
      .map((deviceId) =>
        limit(async () => {
          tokens.set(deviceId, (await deviceToken(issuer, SEED_COMPANY, deviceId)).token);
        }),
      ),
  );
  return tokens;
}

async function rollout(
  service: LocalService,
  alice: string,
  issuer: LocalIssuer,
  devices: number,
  version: string,
  failureRate: number,
): Promise<RolloutRun> {
  const tokens = await reportingTokens(issuer, devices);
  const ids = [...tokens.keys()].sort();
  const failed = new Set(ids.slice(0, WAVES[0]).filter((_, index) => index < Math.round((WAVES[0] as number) * failureRate)));
  const searches = searchLoad(service, alice);
  const started = performance.now();
  const response = await fetch(`${service.api}/companies/${SEED_COMPANY}/resources/rollouts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${alice}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      action: 'DEPLOY',
      what: { type: 'SCENARIO', id: SCENARIO, subId: version },
      targets: { query: SEEDED_QUERY },
      waves: WAVES,
      failureThreshold: 0.1,
      note: 'rollout benchmark',
    }),
  });
  if (response.status !== 202) throw new Error(`creating the rollout answered ${response.status}: ${await response.text()}`);
  const created = (await response.json()) as Rollout;
  process.stdout.write(
    `  rollout ${created.id} of ${version}: ${created.targets.toLocaleString('en-US')} targets, waves ${created.waves.map((wave) => wave.size).join(', ')}\n`,
  );
  // The devices of the first two waves report as soon as their deployment is written.
  const reporting = report(service, tokens, ids, version, failed).catch((error: unknown) => error as Error);

  const waveStart: (number | undefined)[] = [];
  const waveEnd: (number | undefined)[] = [];
  let current = created;
  let lastLine = '';
  for (;;) {
    current = await getRollout(service, alice, created.id);
    const now = performance.now();
    current.waves.forEach((wave, index) => {
      if (wave.state !== 'PENDING' && waveStart[index] === undefined) waveStart[index] = now;
      if ((wave.counts.SUCCESS ?? 0) >= wave.size && waveEnd[index] === undefined) waveEnd[index] = now;
    });
    const written = current.waves.reduce((sum, wave) => sum + (wave.counts.SUCCESS ?? 0), 0);
    const line = `  ${current.state} ${current.waves.map((wave) => `${wave.state[0]}:${wave.counts.SUCCESS ?? 0}/${wave.size}`).join(' ')}`;
    if (line !== lastLine) {
      process.stdout.write(`${line} (${((now - started) / 1000).toFixed(1)} s)\n`);
      lastLine = line;
    }
    if (written >= current.targets || current.state === 'PAUSED' || current.state === 'CANCELLED' || current.state === 'COMPLETED') break;
    await sleep(250);
  }
  const totalMs = performance.now() - started;
  if (current.state === 'PAUSED') await sleep(3_000);
  const settled = await getRollout(service, alice, created.id);
  const searchFigures = await searches.stop();
  if (failureRate === 0) {
    const error = await reporting;
    if (error instanceof Error) throw error;
  }
  const waveWritingMs = waveStart.map((start, index) => (waveEnd[index] ?? start ?? 0) - (start ?? 0));
  return {
    version,
    failureRate,
    targets: created.targets,
    totalMs,
    writingMs: waveWritingMs.reduce((sum, ms) => sum + ms, 0),
    waveWritingMs,
    finalState: settled.state,
    ...(settled.pausedReason === undefined ? {} : { pausedReason: settled.pausedReason }),
    written: settled.waves.reduce((sum, wave) => sum + (wave.counts.SUCCESS ?? 0), 0),
    waves: settled.waves,
    searches: searchFigures,
  };
}

/** Runs the benchmark (see the module comment). */
export async function runRolloutBench(options: { devices?: number } = {}): Promise<RolloutBenchResult> {
  const devices = options.devices ?? Number(process.env.ROLLOUT_BENCH_DEVICES ?? 100_000);
  const template = await seededTemplate(devices);
  const settings = await newServiceSettings();
  await rm(settings.dataDirectory, { recursive: true, force: true });
  await cp(template, settings.dataDirectory, { recursive: true });
  const dynamoPort = await freePort();
  const startedAt = performance.now();
  const service = await startService(settings, {
    readyTimeoutMs: 900_000,
    environment: { DYNAMODB_PORT: String(dynamoPort), ROLLOUT_SWEEP_INTERVAL_MS: '500' },
  });
  process.stdout.write(
    `  runtime READY in ${((performance.now() - startedAt) / 1000).toFixed(1)} s on ${devices.toLocaleString('en-US')} devices\n`,
  );
  const rss = samplePeakRss(service.pid);
  try {
    const alice = await tokenFor(service, 'alice');
    const issuer = { dataDirectory: settings.dataDirectory, dynamoDbEndpoint: `http://127.0.0.1:${dynamoPort}`, auth: service.auth };

    const client = localDocumentClient(issuer.dynamoDbEndpoint, 128);
    const parallelism = ROLLOUT_WORKER.maxConcurrency * DEPLOYMENT_WRITE_CONCURRENCY;
    const at = new Date().toISOString();
    let failures = 0;
    const putLimit = pLimit(parallelism);
    const baselineStarted = performance.now();
    await Promise.all(
      Array.from({ length: devices }, (_, index) =>
        putLimit(async () => {
          const deviceId = seededDeviceId(index + 1);
          try {
            await client.send(
              new PutCommand({
                TableName: 'deployments',
                Item: {
                  pk: `BENCH#${SEED_COMPANY}#${index % 16}`,
                  sk: `${deviceId}#${SCENARIO}#0.0.0-bench`,
                  id: `bench-${index}`,
                  company: SEED_COMPANY,
                  deviceId,
                  scenarioId: SCENARIO,
                  version: '0.0.0-bench',
                  deployedAt: at,
                  deployedBy: 'bench',
                  // Not a deployment slot: the deployments stream's consumer derives nothing from the baseline.
                  entity: 'BENCH_SCRATCH',
                },
                ConditionExpression: 'attribute_not_exists(pk)',
              }),
            );
          } catch {
            failures += 1;
          }
        }),
      ),
    );
    const baseline = { puts: devices, parallelism, ms: performance.now() - baselineStarted, failures };
    client.destroy();
    process.stdout.write(
      `  baseline: ${devices.toLocaleString('en-US')} conditional puts, ${parallelism} in flight: ${(baseline.ms / 1000).toFixed(1)} s\n`,
    );
    await sleep(5_000);

    const run = await rollout(service, alice, issuer, devices, '1.0.0', 0);
    await sleep(5_000);
    const failureRun = await rollout(service, alice, issuer, devices, '1.1.0', 0.2);
    return { devices, baseline, run, failureRun, runtimePeakRssBytes: rss.peakBytes() };
  } finally {
    rss.stop();
    await service.stop();
    await removeDataDirectory(settings);
  }
}

/** Prints the figures and the verdict of each goal. */
export function reportRolloutBench(result: RolloutBenchResult): void {
  const log = (line: string) => process.stdout.write(`${line}\n`);
  const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const { run, failureRun, baseline } = result;
  const ratio = run.writingMs / baseline.ms;
  log('');
  log(
    `  baseline (raw conditional puts):      ${seconds(baseline.ms)} for ${baseline.puts.toLocaleString('en-US')} (${baseline.failures} failed)`,
  );
  log(
    `  rollout, create → every deploy written: ${seconds(run.totalMs)} (${run.written.toLocaleString('en-US')} written, state ${run.finalState})`,
  );
  log(`  rollout, waves writing:               ${seconds(run.writingMs)} (${run.waveWritingMs.map(seconds).join(' + ')})`);
  log(
    `  search during the rollout:            ${run.searches.count} searches, p50 ${run.searches.p50Ms.toFixed(1)} ms, p99 ${run.searches.p99Ms.toFixed(1)} ms, max ${run.searches.maxMs.toFixed(1)} ms, ${run.searches.errors} errors`,
  );
  log(
    `  20 % failures:                        ${failureRun.finalState} after ${seconds(failureRun.totalMs)}; ${failureRun.written} deploys written; ${failureRun.pausedReason ?? ''}`,
  );
  log(`  runtime peak RSS:                     ${mib(result.runtimePeakRssBytes)}`);
  const verdict = (met: boolean) => (met ? 'MET' : 'MISSED');
  log('');
  log(
    `  Goal waves writing ≤ ${RATIO_GOAL}x raw puts: ${verdict(ratio <= RATIO_GOAL)} (${ratio.toFixed(2)}x; create → all written ${(run.totalMs / baseline.ms).toFixed(2)}x)`,
  );
  log(`  Goal runtime peak RSS < 512 MiB: ${verdict(result.runtimePeakRssBytes < RSS_GOAL_BYTES)}`);
  log(`  Goal search p99 < ${SEARCH_P99_GOAL_MS} ms during the rollout: ${verdict(run.searches.p99Ms < SEARCH_P99_GOAL_MS)}`);
  log(
    `  Goal 20 % failures pause after wave 1 with nothing beyond: ${verdict(
      failureRun.finalState === 'PAUSED' &&
        failureRun.written === (failureRun.waves[0]?.counts.SUCCESS ?? -1) &&
        failureRun.waves.slice(1).every((wave) => (wave.counts.SUCCESS ?? 0) === 0),
    )}`,
  );
}
