/**
 * Start-up benchmark (`npm run bench -- --only-startup`): how long `npm start` takes to READY on a 100,000-device
 * data folder, with the search snapshot and without it.
 *
 * 1. The fleet: STARTUP_BENCH_DATA_DIR names a data folder to reuse (seeded before with `npm run seed`); otherwise a
 *    temporary one is seeded with `npm run seed -- --devices N` (STARTUP_BENCH_DEVICES, default 100,000; timed) and
 *    removed at the end.
 * 2. With the snapshot: starts `bin/local.ts` (the e2e harness) on the folder, times the start to READY (the
 *    startLocalRuntime call resolved), reads the runtime's peak RSS (VmHWM) and DynamoDB Local's, stops it.
 * 3. Without: the snapshot moved aside, the same start (the index rebuilt from a parallel scan of the tables), then
 *    the snapshot put back (the start's own snapshot at stop is replaced by it).
 * The goal: READY in at most 10 s with the snapshot, and the runtime's peak RSS at most 512 MiB.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from '../../functions/local/free-port.js';
import { searchSnapshotFile } from '../../functions/local/search-snapshot.js';
import { type LocalService, startService } from '../e2e/harness.js';
import { javaChildOf } from './deployments.js';
import { memoryOf, mib } from './presigned.js';

const root = resolve(import.meta.dirname, '../..');
/** STARTUP_BENCH_DEVICES=N seeds another fleet size (default 100,000). */
export const STARTUP_DEVICE_COUNT = Number(process.env.STARTUP_BENCH_DEVICES ?? 100_000);
/** READY within this with the snapshot, ms. */
export const STARTUP_GOAL_MS = 10_000;

/** One measured start. */
export interface StartMeasure {
  /** Spawn of bin/local.ts to READY, ms. */
  readyMs: number;
  /** The runtime's own account: `Search index loaded|rebuilt … in X s`. */
  searchLine: string;
  /** Peak RSS (VmHWM) of the runtime (node) at READY and after 10 s more (background full-text indexing), bytes. */
  runtimeHwmReadyBytes: number;
  runtimeHwmSettledBytes: number;
  /** DynamoDB Local (java, a separate process) VmHWM at READY, bytes. */
  dynamoHwmBytes: number;
}

export interface StartupBenchResult {
  devices: number;
  dataDirectory: string;
  /** `npm run seed` time, ms (undefined when a folder was reused). */
  seedMs?: number;
  withSnapshot: StartMeasure;
  withoutSnapshot: StartMeasure;
  goalMs: number;
  goalMet: boolean;
}

/** Runs `npm run seed` (bin/seed.ts) on `dataDirectory`; resolves when it succeeded. */
function seed(dataDirectory: string, devices: number, log: (line: string) => void): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'bin/seed.ts'), '--devices', String(devices)], {
    cwd: root,
    env: { ...process.env, DATA_DIR: dataDirectory, NODE_NO_WARNINGS: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const take = (chunk: Buffer) => {
    output += chunk.toString();
    for (const line of chunk.toString().split('\n'))
      if (/devices written|Wrote|caught up|snapshot written|Seeded \d/.test(line)) log(`  seed: ${line.trim()}`);
  };
  child.stdout.on('data', take);
  child.stderr.on('data', take);
  return new Promise((done, fail) =>
    child.once('exit', (code) => (code === 0 ? done() : fail(new Error(`npm run seed exited with ${code}:\n${output.slice(-4000)}`)))),
  );
}

/** Starts bin/local.ts on `dataDirectory` and measures the start (see StartMeasure); always stops it. */
export async function measureStart(dataDirectory: string): Promise<StartMeasure> {
  const settings = { dataDirectory, ports: { api: await freePort(), upload: await freePort(), auth: await freePort() } };
  const started = performance.now();
  const service: LocalService = await startService(settings, { readyTimeoutMs: 30 * 60_000, stopGraceMs: 120_000 });
  try {
    const readyMs = performance.now() - started;
    const ready = await memoryOf(service.pid);
    const java = await javaChildOf(service.pid);
    const dynamo = java === undefined ? undefined : await memoryOf(java);
    await new Promise((done) => setTimeout(done, 10_000));
    const settled = await memoryOf(service.pid);
    return {
      readyMs,
      searchLine: /Search index (loaded|rebuilt)[^\n]*/.exec(service.output())?.[0] ?? '(no search line)',
      runtimeHwmReadyBytes: ready?.hwm ?? Number.NaN,
      runtimeHwmSettledBytes: settled?.hwm ?? Number.NaN,
      dynamoHwmBytes: dynamo?.hwm ?? Number.NaN,
    };
  } finally {
    await service.stop();
  }
}

/** Runs the benchmark (see the file comment); `log` prints progress. */
export async function runStartupBench(log: (line: string) => void): Promise<StartupBenchResult> {
  const reused = process.env.STARTUP_BENCH_DATA_DIR;
  const dataDirectory = reused === undefined || reused === '' ? await mkdtemp(join(tmpdir(), 'dss-startup-')) : resolve(reused);
  try {
    let seedMs: number | undefined;
    if (reused === undefined || reused === '') {
      log(`Seeding ${STARTUP_DEVICE_COUNT} devices into ${dataDirectory} (npm run seed)…`);
      const started = performance.now();
      await seed(dataDirectory, STARTUP_DEVICE_COUNT, log);
      seedMs = performance.now() - started;
      log(`  seeded in ${(seedMs / 1000).toFixed(1)} s`);
    } else log(`Reusing the data folder ${dataDirectory} (STARTUP_BENCH_DATA_DIR).`);

    log('Start with the snapshot…');
    const withSnapshot = await measureStart(dataDirectory);
    log(`  READY in ${(withSnapshot.readyMs / 1000).toFixed(1)} s; ${withSnapshot.searchLine}`);

    const snapshot = searchSnapshotFile(dataDirectory);
    await rename(snapshot, `${snapshot}.bench`);
    let withoutSnapshot: StartMeasure;
    try {
      log('Start without the snapshot (rebuild from a parallel scan)…');
      withoutSnapshot = await measureStart(dataDirectory);
      log(`  READY in ${(withoutSnapshot.readyMs / 1000).toFixed(1)} s; ${withoutSnapshot.searchLine}`);
    } finally {
      await rename(`${snapshot}.bench`, snapshot);
    }
    return {
      devices: STARTUP_DEVICE_COUNT,
      dataDirectory,
      ...(seedMs === undefined ? {} : { seedMs }),
      withSnapshot,
      withoutSnapshot,
      goalMs: STARTUP_GOAL_MS,
      goalMet: withSnapshot.readyMs < STARTUP_GOAL_MS,
    };
  } finally {
    if (reused === undefined || reused === '') await rm(dataDirectory, { recursive: true, force: true });
  }
}

/** Prints the result as a table and the goal's verdict. */
export function reportStartupBench(result: StartupBenchResult, log: (line: string) => void): void {
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const rows: [string, string, string][] = [
    ['spawn to READY', s(result.withSnapshot.readyMs), s(result.withoutSnapshot.readyMs)],
    [
      'runtime VmHWM at READY',
      `${mib(result.withSnapshot.runtimeHwmReadyBytes)} MiB`,
      `${mib(result.withoutSnapshot.runtimeHwmReadyBytes)} MiB`,
    ],
    [
      'runtime VmHWM 10 s after READY',
      `${mib(result.withSnapshot.runtimeHwmSettledBytes)} MiB`,
      `${mib(result.withoutSnapshot.runtimeHwmSettledBytes)} MiB`,
    ],
    [
      'DynamoDB Local VmHWM at READY',
      `${mib(result.withSnapshot.dynamoHwmBytes)} MiB`,
      `${mib(result.withoutSnapshot.dynamoHwmBytes)} MiB`,
    ],
  ];
  const widths = [0, 1, 2].map((column) =>
    Math.max(...[['', 'with snapshot', 'without'], ...rows].map((row) => (row[column] as string).length)),
  );
  const line = (cells: string[]) => `| ${cells.map((cell, column) => cell.padEnd(widths[column] as number)).join(' | ')} |`;
  log(`${result.devices.toLocaleString('en-US')} devices${result.seedMs === undefined ? '' : `, seeded in ${s(result.seedMs)}`}:`);
  log(line(['', 'with snapshot', 'without']));
  for (const row of rows) log(line(row));
  log(`With:    ${result.withSnapshot.searchLine}`);
  log(`Without: ${result.withoutSnapshot.searchLine}`);
  log(`Goal: READY < ${s(result.goalMs)} with the snapshot: ${result.goalMet ? 'MET' : 'MISSED'}.`);
}
