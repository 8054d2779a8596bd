/**
 * Cold-start benchmark (`npm run bench -- --only-cold-start`): every function bundle's size, and for the five largest
 * the module initialisation of the bundle against that of a file importing only the AWS SDK clients the bundle
 * imports (the runtime provides them; the bundle cannot load faster than they do) and against `node -e 0`.
 *
 * 1. Bundles every function as `npm run build` does (bin/build.ts: the CDK's esbuild options) into dist/functions.
 * 2. For each of the five largest (and those COLD_START_ALSO names): writes dist/bench/<name>-sdk.mjs, importing the bundle's `@aws-sdk/*` modules.
 * 3. Runs, COLD_START_RUNS times (default 9), interleaved, each in a fresh process: `node -e 0`, the SDK file, the
 *    bundle (`await import()`, then exit: module init only, no invocation); each measured from spawn to exit.
 * 4. Reports the medians, the bundle's time over the SDK file's (the goal: at most COLD_START_GOAL_RATIO), and the
 *    bundle's time above `node -e 0`. A bundle that imports no SDK client has no SDK file: importing "just its SDK
 *    clients" is importing nothing, so its ratio is to `node -e 0`, and the goal applies to it too.
 * The processes get the variables a deployed function has for its storage (dummy names, AWS_REGION), so modules that
 * read configuration at load find it; no AWS call is made at load.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildFunctionBundles, type FunctionBundle, mebibytes } from '../../bin/build.js';
import { FUNCTION_BUNDLE_LIMIT_BYTES } from '../../lib/bundling.js';

const root = resolve(import.meta.dirname, '../..');
/** COLD_START_RUNS=N: fresh processes per variant (default 9; the median is reported). */
export const COLD_START_RUNS = Number(process.env.COLD_START_RUNS ?? 9);
/** How many of the largest bundles are timed. */
export const COLD_START_FUNCTIONS = 5;
/** COLD_START_ALSO=a,b: functions timed besides the five largest (e.g. `rollout-create,search`). */
export const COLD_START_ALSO = (process.env.COLD_START_ALSO ?? '')
  .split(',')
  .map((name) => name.trim())
  .filter((name) => name !== '');
/** A bundle's module init may take at most this times that of its SDK clients alone. */
export const COLD_START_GOAL_RATIO = 1.3;

/** Variables a deployed function has (names only matter; nothing is called at load). */
const FUNCTION_ENVIRONMENT: Readonly<Record<string, string>> = {
  AWS_REGION: 'eu-west-1',
  COMPANIES_TABLE: 'companies',
  DEVICES_TABLE: 'devices',
  SCENARIOS_TABLE: 'scenarios',
  DEPLOYMENTS_TABLE: 'deployments',
  PRESENCE_TABLE: 'presence',
  ROLLOUTS_TABLE: 'rollouts',
  COMMANDS_TABLE: 'commands',
  WEBHOOKS_TABLE: 'webhooks',
  ALERTS_TABLE: 'alerts',
  API_CLIENTS_TABLE: 'api-clients',
  ARCHIVE_BUCKET: 'archives',
  CURSOR_SIGNING_KEY: '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff',
  POWERTOOLS_SERVICE_NAME: 'device-scenario-service',
  POWERTOOLS_LOG_LEVEL: 'WARN',
};

/** One timed bundle. */
export interface ColdStartMeasure {
  name: string;
  bytes: number;
  /** The `@aws-sdk/*` modules the bundle imports (what the SDK file imports). */
  sdkModules: string[];
  /** Medians, spawn to exit, ms; sdkMs undefined when the bundle imports no SDK client. */
  bundleMs: number;
  sdkMs: number | undefined;
  nodeMs: number;
  /** bundleMs / sdkMs, or bundleMs / nodeMs when the bundle imports no SDK client. */
  ratio: number;
  /** Every run, ms, in order. */
  runs: { bundle: number[]; sdk: number[]; node: number[] };
}

export interface ColdStartBenchResult {
  /** Every bundle, largest first. */
  bundles: Array<{ name: string; bytes: number }>;
  limitBytes: number;
  overLimit: string[];
  measures: ColdStartMeasure[];
  runs: number;
  goalRatio: number;
  /** Every bundle under the limit, and each of the five largest within the ratio. */
  goalMet: boolean;
}

/** Wall time of one fresh `node` process running `args`, ms. @throws Error with the child's stderr when it fails. */
function timeProcess(args: string[]): number {
  const started = process.hrtime.bigint();
  const child = spawnSync(process.execPath, args, {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...FUNCTION_ENVIRONMENT },
    encoding: 'utf8',
  });
  const elapsed = Number(process.hrtime.bigint() - started) / 1e6;
  if (child.status !== 0) throw new Error(`node ${args.join(' ')} failed (${child.status}): ${child.stderr}`);
  return elapsed;
}

/** `await import(file)` then exit: the module's initialisation, whatever timers it leaves. */
function importArgs(file: string): string[] {
  return ['--input-type=module', '-e', `await import(${JSON.stringify(pathToFileURL(file).href)}); process.exit(0);`];
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

async function measure(bundle: FunctionBundle, runs: number): Promise<ColdStartMeasure> {
  const directory = join(root, 'dist', 'bench');
  await mkdir(directory, { recursive: true });
  const sdkFile = bundle.sdkModules.length === 0 ? undefined : join(directory, `${bundle.name}-sdk.mjs`);
  if (sdkFile !== undefined) {
    await writeFile(sdkFile, `${bundle.sdkModules.map((module) => `import ${JSON.stringify(module)};`).join('\n')}\n`);
  }
  const times = { bundle: [] as number[], sdk: [] as number[], node: [] as number[] };
  // One unmeasured round first (file cache), then interleaved rounds so that a busy moment hits all three alike.
  timeProcess(importArgs(bundle.file));
  if (sdkFile !== undefined) timeProcess(importArgs(sdkFile));
  for (let run = 0; run < runs; run += 1) {
    times.node.push(timeProcess(['-e', '0']));
    if (sdkFile !== undefined) times.sdk.push(timeProcess(importArgs(sdkFile)));
    times.bundle.push(timeProcess(importArgs(bundle.file)));
  }
  const bundleMs = median(times.bundle);
  const sdkMs = sdkFile === undefined ? undefined : median(times.sdk);
  return {
    name: bundle.name,
    bytes: bundle.bytes,
    sdkModules: bundle.sdkModules,
    bundleMs,
    sdkMs,
    nodeMs: median(times.node),
    // A function that imports no SDK client is compared with what importing "just its SDK clients" costs: nothing
    // beyond starting Node.js (`node -e 0`).
    ratio: bundleMs / (sdkMs ?? median(times.node)),
    runs: times,
  };
}

/** Builds every bundle and times the five largest (see the module comment). */
export async function runColdStartBench(log: (line: string) => void): Promise<ColdStartBenchResult> {
  log('Bundling every function (bin/build.ts)…');
  const bundles = (await buildFunctionBundles()).sort((a, b) => b.bytes - a.bytes);
  const measures: ColdStartMeasure[] = [];
  const timed = [
    ...bundles.slice(0, COLD_START_FUNCTIONS),
    ...bundles.slice(COLD_START_FUNCTIONS).filter((bundle) => COLD_START_ALSO.includes(bundle.name)),
  ];
  for (const bundle of timed) {
    log(`Timing ${bundle.name} (${COLD_START_RUNS} runs of each variant)…`);
    measures.push(await measure(bundle, COLD_START_RUNS));
  }
  const overLimit = bundles.filter((bundle) => bundle.bytes > FUNCTION_BUNDLE_LIMIT_BYTES).map((bundle) => bundle.name);
  return {
    bundles: bundles.map(({ name, bytes }) => ({ name, bytes })),
    limitBytes: FUNCTION_BUNDLE_LIMIT_BYTES,
    overLimit,
    measures,
    runs: COLD_START_RUNS,
    goalRatio: COLD_START_GOAL_RATIO,
    goalMet: overLimit.length === 0 && measures.slice(0, COLD_START_FUNCTIONS).every((measured) => measured.ratio <= COLD_START_GOAL_RATIO),
  };
}

/** Prints the sizes and the timing table. */
export function reportColdStartBench(result: ColdStartBenchResult, log: (line: string) => void): void {
  const width = Math.max(...result.bundles.map((bundle) => bundle.name.length));
  log(`Bundle sizes (index.mjs; limit ${mebibytes(result.limitBytes)}):`);
  for (const bundle of result.bundles) {
    log(
      `  ${bundle.name.padEnd(width)}  ${String(bundle.bytes).padStart(9)} B  ${mebibytes(bundle.bytes)}${bundle.bytes > result.limitBytes ? '  OVER' : ''}`,
    );
  }
  log('');
  log(`Module init, median of ${result.runs} fresh processes each (spawn to exit):`);
  log(`  ${'function'.padEnd(width)}  bundle ms  SDK clients ms  node -e 0 ms  above node ms  bundle/SDK  SDK clients imported`);
  for (const measured of result.measures) {
    log(
      `  ${measured.name.padEnd(width)}  ${measured.bundleMs.toFixed(0).padStart(9)}  ${(measured.sdkMs?.toFixed(0) ?? '-').padStart(14)}  ` +
        `${measured.nodeMs.toFixed(0).padStart(12)}  ${(measured.bundleMs - measured.nodeMs).toFixed(0).padStart(13)}  ` +
        `${measured.ratio.toFixed(2).padStart(10)}  ${measured.sdkModules.length === 0 ? '(none: the ratio is to node -e 0)' : measured.sdkModules.join(' ')}`,
    );
  }
  log('');
  log(
    `Goal: every bundle under ${mebibytes(result.limitBytes)} and each of the five largest within ${result.goalRatio}x of its SDK clients alone (node -e 0 for none): ` +
      `${result.goalMet ? 'met' : 'NOT met'}.`,
  );
}
