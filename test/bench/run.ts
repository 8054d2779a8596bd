/**
 * `npm run bench`: the archive-validation benchmark (a benchmark, not a test).
 *
 * For scenario archives of 10 MiB, 100 MiB and 1 GiB made of incompressible files (see archives.ts; generated once
 * and cached under os.tmpdir()/dss-bench), measures `validateScenarioArchive` over a file-backed RandomAccessSource
 * in a child process (wall and CPU time inside the child, peak RSS of the child; the child then validates a second
 * time to show the warm figure) and `unzip -t -qq` on the same file in the same run (wall and CPU time through
 * bash's `time`), each 3 times (median reported), interleaved, after one warm-up read that puts the file in the
 * page cache. Then runs the largest selected archive through the presigned upload flow of the local runtime
 * (presigned.ts). Prints a table and writes JSON to os.tmpdir()/dss-bench/archive-validation.json.
 *
 * Options: --only=10MiB,100MiB (or env BENCH_SIZES=10MiB,100MiB) limits the sizes; --skip-presigned skips the
 * presigned flow; --repeat=N changes the number of measurements per tool (default 3).
 *
 * Then the deployment benchmark (deployments.ts): one POST of 5,000 DEPLOY entries on the local runtime
 * vs 5,000 conditional PutItems sent straight to its DynamoDB Local, twice; JSON to os.tmpdir()/dss-bench/deployments.json.
 * --only-deployments runs only that step, --skip-deployments skips it; --deployment-runs=N (default 2);
 * --profile-deployments preloads a DynamoDB call probe into the runtime and adds three raw baselines.
 *
 * Then the search benchmark (search.ts): 100,000 generated devices (SEARCH_BENCH_DEVICES=N to scale) in the
 * embedded engine, three queries measured in-process and over HTTP; --only-search runs only it, --skip-search skips it.
 *
 * Then the device benchmark (devices.ts): 1,000 kiosks at 10 s health / 5 s pull and at 60 s / 30 s, 60 s each
 * (DEVICE_BENCH_DEVICES, DEVICE_BENCH_SECONDS), a step search of the offered rate (DEVICE_BENCH_STEPS,
 * DEVICE_BENCH_STEP_SECONDS), and the writes per health report; DEVICE_BENCH_ADMISSION=off runs the runtime without
 * admission control; --only-devices runs only it, --skip-devices skips it.
 *
 * Then the rollout benchmark (rollouts.ts): a rollout to 100,000 seeded devices (ROLLOUT_BENCH_DEVICES) against raw
 * conditional puts, with search latency and peak RSS, then a rollout with 20 % failures; --only-rollouts / --skip-rollouts.
 *
 * Then the start-up benchmark (startup.ts): `npm start` to READY on 100,000 seeded devices with the search snapshot and
 * without it (STARTUP_BENCH_DEVICES, STARTUP_BENCH_DATA_DIR); --only-startup runs only it, --skip-startup skips it.
 *
 * Then the token flood benchmark (token-flood.ts): real devices' token latency while 1,000 wrong client secrets at a
 * time arrive from another address (TOKEN_FLOOD_DEVICES, TOKEN_FLOOD_ATTEMPTS, TOKEN_FLOOD_SECONDS);
 * --only-token-flood runs only it, --skip-token-flood skips it.
 *
 * Then the cold-start benchmark (cold-start.ts): every function bundle's size, and the module init of the five largest
 * against a file importing only their AWS SDK clients and against `node -e 0` (COLD_START_RUNS);
 * --only-cold-start runs only it, --skip-cold-start skips it.
 *
 * Then the continuous rollouts benchmark (continuous.ts): what 10 continuous rollouts add per device change, on DynamoDB
 * Local's stream (CONTINUOUS_BENCH_CHANGES); --only-continuous runs only it, --skip-continuous skips it.
 *
 * Then the command delivery benchmark (commands.ts): commands run on a kiosk polling every second, the time until its
 * poll carries each (COMMAND_BENCH_COMMANDS, COMMAND_BENCH_POLL_MS); --only-commands runs only it, --skip-commands skips it.
 *
 * Then the alert rule benchmark (alerts.ts): what evaluating 1 and 100 alert rules adds to each of 100,000 device
 * changes, in process (ALERT_BENCH_DEVICES); --only-alerts runs only it, --skip-alerts skips it.
 *
 * Then the webhook benchmark (webhooks.ts): from a durable change to its signed delivery with 100 webhooks at 1,000
 * events a minute, and a receiver down for 10 minutes of the retry schedule (WEBHOOK_BENCH_*); --only-webhooks runs
 * only it, --skip-webhooks skips it.
 *
 * Then the console benchmark (console.ts): the operator console in Chromium on 100,000 seeded devices (first load,
 * sign-in to first results, facet clicks, the page of a rollout of every device; CONSOLE_BENCH_DEVICES); --only-console
 * runs only it, --skip-console skips it.
 *
 * Then the OpenSearch benchmark (opensearch.ts): 1,000,000 devices (OPENSEARCH_BENCH_DEVICES) indexed into a real
 * OpenSearch node through the indexer's bulk path, the search benchmark's queries over HTTP at 100,000 and at the end,
 * the embedded engine at 100,000 for the ratio, the node's heap and RSS; --only-opensearch / --skip-opensearch.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, loadavg, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { reportAlertBench, runAlertBench } from './alerts.js';
import { ALL_SIZES, BENCH_DIRECTORY, type BenchSize, ensureArchive } from './archives.js';
import { reportColdStartBench, runColdStartBench } from './cold-start.js';
import { reportCommandBench, runCommandBench } from './commands.js';
import { reportConsoleBench, runConsoleBench } from './console.js';
import { reportContinuousBench, runContinuousBench } from './continuous.js';
import { PRODUCT_PARALLELISM, reportDeploymentBench, runDeploymentBench } from './deployments.js';
import { reportDeviceBench, runDeviceBench } from './devices.js';
import { OPENSEARCH_DEVICE_COUNT, reportOpenSearchBench, runOpenSearchBench } from './opensearch.js';
import { mib, type PresignedResult, runPresigned } from './presigned.js';
import { reportRolloutBench, runRolloutBench } from './rollouts.js';
import { reportSearchBench, runSearchBench, SEARCH_DEVICE_COUNT } from './search.js';
import { reportStartupBench, runStartupBench, STARTUP_DEVICE_COUNT } from './startup.js';
import { reportTokenFloodBench, runTokenFloodBench } from './token-flood.js';
import { reportWebhookBench, runWebhookBench } from './webhooks.js';

// The AWS SDK announces on Node 20 that its 2027 releases will need Node 22; the SDK's own switch (as bin/local.ts).
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const root = resolve(import.meta.dirname, '../..');
const MiB = 1024 ** 2;
const RSS_GOAL_BYTES = 256 * MiB;
const RATIO_GOAL = 1.5;

function usage(message?: string): never {
  if (message !== undefined) process.stderr.write(`${message}\n`);
  process.stderr.write(
    `usage: npm run bench -- [--only=${ALL_SIZES.map((size) => size.label).join(',')}] [--skip-presigned] [--repeat=N]\n` +
      '       [--only-deployments | --skip-deployments] [--deployment-runs=N] [--profile-deployments]\n' +
      '       [--only-search | --skip-search] [--only-devices | --skip-devices] [--only-rollouts | --skip-rollouts]\n' +
      '       [--only-startup | --skip-startup] [--only-token-flood | --skip-token-flood]\n' +
      '       [--only-cold-start | --skip-cold-start] [--only-continuous | --skip-continuous] [--only-console | --skip-console]\n' +
      '       [--only-opensearch | --skip-opensearch] [--only-commands | --skip-commands] [--only-alerts | --skip-alerts]\n' +
      '       [--only-webhooks | --skip-webhooks]\n' +
      '       (BENCH_SIZES=10MiB,100MiB also limits the sizes; SEARCH_BENCH_DEVICES=N scales the search fleet, default 100000)\n',
  );
  process.exit(message === undefined ? 0 : 2);
}

interface Options {
  sizes: BenchSize[];
  presigned: boolean;
  repeat: number;
  deployments: 'run' | 'only' | 'skip';
  deploymentRuns: number;
  profileDeployments: boolean;
}

function parseArguments(): Options {
  let only = process.env.BENCH_SIZES;
  let presigned = true;
  let repeat = 3;
  let deployments: Options['deployments'] = 'run';
  let deploymentRuns = 2;
  let profileDeployments = false;
  for (const argument of process.argv.slice(2)) {
    if (argument === '--help' || argument === '-h') usage();
    else if (argument === '--skip-presigned') presigned = false;
    else if (argument === '--only-deployments' || argument === '--skip-deployments') {
      const wanted = argument === '--only-deployments' ? 'only' : 'skip';
      if (deployments !== 'run' && deployments !== wanted) usage('--only-deployments and --skip-deployments exclude each other.');
      deployments = wanted;
    } else if (argument === '--profile-deployments') profileDeployments = true;
    else if (argument.startsWith('--deployment-runs=')) {
      deploymentRuns = Number(argument.slice('--deployment-runs='.length));
      if (!Number.isInteger(deploymentRuns) || deploymentRuns < 1)
        usage(`--deployment-runs must be a positive integer; got '${argument}'.`);
    } else if (argument.startsWith('--only=')) only = argument.slice('--only='.length);
    else if (argument.startsWith('--repeat=')) {
      repeat = Number(argument.slice('--repeat='.length));
      if (!Number.isInteger(repeat) || repeat < 1) usage(`--repeat must be a positive integer; got '${argument}'.`);
    } else usage(`unknown argument '${argument}'`);
  }
  let sizes = [...ALL_SIZES];
  if (only !== undefined && only.trim() !== '') {
    const labels = only
      .split(',')
      .map((label) => label.trim())
      .filter((label) => label !== '');
    for (const label of labels) {
      if (!ALL_SIZES.some((size) => size.label.toLowerCase() === label.toLowerCase())) usage(`unknown size '${label}'`);
    }
    const wanted = labels.map((label) => label.toLowerCase());
    sizes = sizes.filter((size) => wanted.includes(size.label.toLowerCase()));
  }
  return { sizes, presigned, repeat, deployments, deploymentRuns, profileDeployments };
}

interface ValidationRun {
  ok: boolean;
  ms: number;
  cpuMs: number;
  warmMs?: number;
  warmCpuMs?: number;
  maxRssBytes: number;
  reads?: number;
  smallReads?: number;
  readBytes?: number;
  largestReadBytes?: number;
  problem?: unknown;
}

/** Runs test/bench/validate-file.ts in a child process and parses its JSON line. */
function validateInChild(...args: string[]): Promise<ValidationRun> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'test/bench/validate-file.ts'), ...args], {
      cwd: root,
      env: { ...process.env, NODE_NO_WARNINGS: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', fail);
    child.on('close', (code) => {
      const line = stdout.trim().split('\n').pop() ?? '';
      try {
        done(JSON.parse(line) as ValidationRun);
      } catch {
        fail(new Error(`validate-file.ts exited with ${code} without a result:\n${stdout}${stderr}`));
      }
    });
  });
}

const unzipAvailable = !spawnSync('unzip', ['-v'], { stdio: 'ignore' }).error;
const bashAvailable = !spawnSync('bash', ['-c', 'true'], { stdio: 'ignore' }).error;

/**
 * Times `unzip -t -qq <path>`: wall ms and CPU ms (user + system). Through bash's `time` when bash exists (wall
 * and CPU of unzip alone), else wall time around spawnSync without CPU. @throws when unzip reports a problem.
 */
function timeUnzip(path: string): { ms: number; cpuMs?: number } {
  if (bashAvailable) {
    const script = 'TIMEFORMAT="BENCHTIME %3R %3U %3S"; time unzip -t -qq "$1" > /dev/null';
    const result = spawnSync('bash', ['-c', script, 'bench', path], { stdio: ['ignore', 'ignore', 'pipe'] });
    const stderr = result.stderr?.toString() ?? '';
    const times = /BENCHTIME (\d+\.\d+) (\d+\.\d+) (\d+\.\d+)/.exec(stderr);
    if (result.status !== 0 || times === null) throw new Error(`unzip -t failed (${result.status}): ${stderr}`);
    return { ms: Number(times[1]) * 1000, cpuMs: (Number(times[2]) + Number(times[3])) * 1000 };
  }
  const started = performance.now();
  const result = spawnSync('unzip', ['-t', '-qq', path], { stdio: ['ignore', 'ignore', 'pipe'] });
  const ms = performance.now() - started;
  if (result.error !== undefined || result.status !== 0)
    throw new Error(`unzip -t failed (${result.status}): ${result.stderr?.toString() ?? result.error?.message}`);
  return { ms };
}

/** Reads the whole file once so that every measured run starts from the page cache. */
async function warm(path: string): Promise<void> {
  for await (const _ of createReadStream(path, { highWaterMark: 4 * MiB })) {
    // discard
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((header, column) => Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: string[]) =>
    `| ${cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column] as number) : cell.padStart(widths[column] as number))).join(' | ')} |`;
  return [line(headers), `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

interface SizeResult {
  label: string;
  archivePath: string;
  archiveBytes: number;
  files: number;
  generatedMs: number;
  validation: {
    medianMs: number;
    runsMs: number[];
    medianCpuMs: number;
    runsCpuMs: number[];
    medianWarmMs?: number;
    runsWarmMs: number[];
    medianMaxRssBytes: number;
    maxRssRunsBytes: number[];
    reads: number;
    smallReads: number;
    readBytes: number;
    largestReadBytes: number;
  };
  unzip?: { medianMs: number; runsMs: number[]; medianCpuMs?: number; runsCpuMs: number[] };
  /** Validation wall time / unzip -t wall time (medians): the goal's measure. */
  ratio?: number;
  /** The same with CPU time (user + system), less sensitive to other load on the machine. */
  cpuRatio?: number;
  /** Warm validation (second in the same process) wall time / unzip -t wall time. */
  warmRatio?: number;
}

const log = (line: string) => process.stdout.write(`${line}\n`);

/**
 * Whether the step `name` runs as usual, alone (`--only-<name>`) or not at all (`--skip-<name>`); the flags are taken
 * out of process.argv before parseArguments. Both flags: usage error.
 */
function stepMode(name: string): 'run' | 'only' | 'skip' {
  const only = process.argv.includes(`--only-${name}`);
  const skip = process.argv.includes(`--skip-${name}`);
  if (only && skip) usage(`--only-${name} and --skip-${name} exclude each other.`);
  process.argv = process.argv.filter((argument) => argument !== `--only-${name}` && argument !== `--skip-${name}`);
  return only ? 'only' : skip ? 'skip' : 'run';
}

/**
 * One benchmark step: prints `title` and the machine (Node, CPUs, `context`, load average), runs `measure` (which
 * prints its own report), and writes its result with the machine's figures to BENCH_DIRECTORY/`jsonName`. A failure
 * is printed and sets the exit code; the next steps still run.
 */
async function benchmarkStep(title: string, name: string, jsonName: string, measure: () => Promise<object>, context = ''): Promise<void> {
  log(title);
  log(
    `Node ${process.version}, ${cpus().length} CPU(s) (${cpus()[0]?.model ?? 'unknown'}); ${context}load average ${loadavg()
      .map((value) => value.toFixed(2))
      .join(' ')}.`,
  );
  try {
    const result = await measure();
    await mkdir(BENCH_DIRECTORY, { recursive: true });
    const output = join(BENCH_DIRECTORY, jsonName);
    await writeFile(
      output,
      `${JSON.stringify({ when: new Date().toISOString(), node: process.version, cpus: cpus().length, loadAfter: loadavg(), ...result }, null, 2)}\n`,
    );
    log('');
    log(`JSON results: ${output}`);
  } catch (error) {
    log(`  ${name} benchmark FAILED: ${(error as Error).stack ?? String(error)}`);
    process.exitCode = 1;
  }
}

/** Search benchmark (search.ts): --only-search runs only it, --skip-search skips it. */
const searchMode = stepMode('search');

function searchStep(): Promise<void> {
  return benchmarkStep(
    `Search benchmark: ${SEARCH_DEVICE_COUNT.toLocaleString('en-US')} devices in the embedded engine, direct in-process vs over HTTP on the local runtime.`,
    'Search',
    'search.json',
    async () => {
      const result = await runSearchBench(log);
      log('');
      reportSearchBench(result, log);
      return result;
    },
  );
}

/** Device benchmark (devices.ts): --only-devices runs only it, --skip-devices skips it. */
const deviceMode = stepMode('devices');

function deviceStep(): Promise<void> {
  return benchmarkStep(
    'Device benchmark: kiosks against the local runtime (health 10 s / pull 5 s, then 60 s / 30 s), a step search of the offered rate, then writes per health report.',
    'Device',
    'devices.json',
    async () => {
      const result = await runDeviceBench();
      reportDeviceBench(result);
      return result;
    },
  );
}

/** Continuous rollouts benchmark (continuous.ts): --only-continuous runs only it, --skip-continuous skips it. */
const continuousMode = stepMode('continuous');

function continuousStep(): Promise<void> {
  return benchmarkStep(
    'Continuous rollouts benchmark: 10 continuous rollouts, 10,000 changed devices on the local devices stream, against a company without any.',
    'Continuous rollouts',
    'continuous.json',
    async () => {
      const result = await runContinuousBench();
      reportContinuousBench(result, log);
      return result;
    },
  );
}

/** Command delivery benchmark (commands.ts): --only-commands runs only it, --skip-commands skips it. */
const commandMode = stepMode('commands');

function commandStep(): Promise<void> {
  return benchmarkStep(
    'Command benchmark: commands run on a kiosk that polls its desired state every second with If-None-Match, on the demo data.',
    'Commands',
    'commands.json',
    async () => {
      const result = await runCommandBench();
      reportCommandBench(result, log);
      return result;
    },
  );
}

/** Alert rule benchmark (alerts.ts): --only-alerts runs only it, --skip-alerts skips it. */
const alertMode = stepMode('alerts');

function alertStep(): Promise<void> {
  return benchmarkStep(
    'Alert rule benchmark: 1 and 100 alert rules evaluated on each of 100,000 device changes, in process.',
    'Alerts',
    'alerts.json',
    async () => {
      const result = await runAlertBench();
      reportAlertBench(result, log);
      return result;
    },
  );
}

/** Webhook benchmark (webhooks.ts): --only-webhooks runs only it, --skip-webhooks skips it. */
const webhookMode = stepMode('webhooks');

function webhookStep(): Promise<void> {
  return benchmarkStep(
    'Webhook benchmark: durable change to signed delivery, 100 webhooks at 1,000 events a minute; then a receiver down for 10 minutes of the retry schedule.',
    'Webhooks',
    'webhooks.json',
    async () => {
      const result = await runWebhookBench();
      reportWebhookBench(result, log);
      return result;
    },
  );
}

/** Rollout benchmark (rollouts.ts): --only-rollouts runs only it, --skip-rollouts skips it. */
const rolloutMode = stepMode('rollouts');

function rolloutStep(): Promise<void> {
  return benchmarkStep(
    'Rollout benchmark: a rollout to a seeded fleet of 100,000 devices (waves 100, 1,000, rest) vs raw conditional puts; then one with 20 % failures.',
    'Rollout',
    'rollouts.json',
    async () => {
      const result = await runRolloutBench();
      reportRolloutBench(result);
      return result;
    },
  );
}

/** Start-up benchmark (startup.ts): --only-startup runs only it, --skip-startup skips it. */
const startupMode = stepMode('startup');

function startupStep(): Promise<void> {
  return benchmarkStep(
    `Start-up benchmark: npm start to READY on ${STARTUP_DEVICE_COUNT.toLocaleString('en-US')} devices, with the search snapshot and without it.`,
    'Start-up',
    'startup.json',
    async () => {
      const result = await runStartupBench(log);
      log('');
      reportStartupBench(result, log);
      return result;
    },
  );
}

/** Token flood benchmark (token-flood.ts): --only-token-flood runs only it, --skip-token-flood skips it. */
const tokenFloodMode = stepMode('token-flood');

function tokenFloodStep(): Promise<void> {
  return benchmarkStep(
    'Token flood benchmark: real devices asking for tokens while 1,000 wrong client secrets at a time arrive from another address.',
    'Token flood',
    'token-flood.json',
    async () => {
      const result = await runTokenFloodBench(log);
      log('');
      reportTokenFloodBench(result, log);
      return result;
    },
  );
}

/** Cold-start benchmark (cold-start.ts): --only-cold-start runs only it, --skip-cold-start skips it. */
const coldStartMode = stepMode('cold-start');

function coldStartStep(): Promise<void> {
  return benchmarkStep(
    'Cold-start benchmark: every function bundle (npm run build), and the module init of the five largest vs their AWS SDK clients alone vs node -e 0.',
    'Cold-start',
    'cold-start.json',
    async () => {
      const result = await runColdStartBench(log);
      log('');
      reportColdStartBench(result, log);
      return result;
    },
  );
}

/** Console benchmark (console.ts): --only-console runs only it, --skip-console skips it. */
const consoleMode = stepMode('console');

function consoleStep(): Promise<void> {
  return benchmarkStep(
    'Console benchmark: the operator console in Chromium on a seeded fleet of 100,000 devices: first load, sign-in to first results, 50 facet clicks, the page of a rollout of every device.',
    'Console',
    'console.json',
    async () => {
      const result = await runConsoleBench();
      reportConsoleBench(result);
      return result;
    },
  );
}

/** OpenSearch benchmark (opensearch.ts): --only-opensearch runs only it, --skip-opensearch skips it. */
const openSearchMode = stepMode('opensearch');

function openSearchStep(): Promise<void> {
  return benchmarkStep(
    `OpenSearch benchmark: ${OPENSEARCH_DEVICE_COUNT.toLocaleString('en-US')} devices indexed into a real OpenSearch node through the indexer's bulk path, then the search benchmark's queries over HTTP on the runtime, with the embedded engine at 100,000 for the ratio.`,
    'OpenSearch',
    'opensearch.json',
    async () => {
      const result = await runOpenSearchBench(log);
      log('');
      reportOpenSearchBench(result, log);
      if (result.error !== undefined) throw new Error(result.error);
      return result;
    },
  );
}

if (openSearchMode === 'only') {
  await openSearchStep();
  process.exit();
}
if (continuousMode === 'only') {
  await continuousStep();
  process.exit();
}
if (commandMode === 'only') {
  await commandStep();
  process.exit();
}
if (alertMode === 'only') {
  await alertStep();
  process.exit();
}
if (webhookMode === 'only') {
  await webhookStep();
  process.exit();
}
if (consoleMode === 'only') {
  await consoleStep();
  process.exit();
}
if (coldStartMode === 'only') {
  await coldStartStep();
  process.exit();
}
if (tokenFloodMode === 'only') {
  await tokenFloodStep();
  process.exit();
}
if (rolloutMode === 'only') {
  await rolloutStep();
  process.exit();
}
if (startupMode === 'only') {
  await startupStep();
  process.exit();
}
if (deviceMode === 'only' && searchMode !== 'only') {
  await deviceStep();
  process.exit();
}
if (searchMode === 'only') {
  await searchStep();
  process.exit();
}
const options = parseArguments();

/** The deployment benchmark (deployments.ts): prints its tables and writes deployments.json. */
function deploymentStep(): Promise<void> {
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['log', '-1', '--format=%h'], { cwd: resolve(import.meta.dirname, '../..'), encoding: 'utf8' }).trim();
    if (
      execFileSync('git', ['status', '--porcelain', '--', 'functions', 'lib', 'bin'], {
        cwd: resolve(import.meta.dirname, '../..'),
        encoding: 'utf8',
      }).trim() !== ''
    ) {
      commit += ' + uncommitted changes in functions/lib/bin';
    }
  } catch {
    // not a git checkout
  }
  return benchmarkStep(
    `Deployment benchmark: one POST of 5,000 DEPLOY entries vs 5,000 conditional PutItems on the same DynamoDB Local; ${options.deploymentRuns} run(s).`,
    'Deployment',
    'deployments.json',
    async () => {
      const result = await runDeploymentBench(log, { runs: options.deploymentRuns, profile: options.profileDeployments });
      result.commit = commit;
      log('');
      reportDeploymentBench(result, log);
      return result;
    },
    `commit ${commit}; product write parallelism ${PRODUCT_PARALLELISM}; `,
  );
}

if (options.deployments === 'only') {
  await deploymentStep();
  process.exit();
}
log(`Archive validation benchmark: ${options.sizes.map((size) => size.label).join(', ')}; ${options.repeat} run(s) each, median reported.`);
log(
  `Node ${process.version}, ${cpus().length} CPU(s) (${cpus()[0]?.model ?? 'unknown'}), ${(totalmem() / 1024 ** 3).toFixed(1)} GiB RAM; archives cached in ${BENCH_DIRECTORY}.`,
);
log(
  'Archives: incompressible (crypto-random) files of 8 MiB, deflate-compressed (yazl level 6), scenario.json + README.md + PNG thumbnail.',
);
if (!unzipAvailable) log('unzip is not installed: unzip -t times and ratios are skipped.');
const formatLoad = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');
const loadBefore = formatLoad();
log(`Load average before: ${loadBefore} (other work on the machine inflates wall times; CPU times are less sensitive).`);

const baseline = await validateInChild('--baseline');
log(`Validator child baseline (Node + tsx + validator loaded, nothing validated): peak RSS ${mib(baseline.maxRssBytes)} MiB.`);

const results: SizeResult[] = [];
for (const size of options.sizes) {
  const archive = await ensureArchive(size);
  log(
    archive.generated
      ? `${size.label}: generated ${archive.path} (${archive.bytes} bytes, ${archive.files} files) in ${(archive.generateMs / 1000).toFixed(1)} s.`
      : `${size.label}: reusing cached ${archive.path} (${archive.bytes} bytes, ${archive.files} files).`,
  );
  await warm(archive.path);
  const validationRuns: ValidationRun[] = [];
  const unzipRuns: { ms: number; cpuMs?: number }[] = [];
  for (let run = 1; run <= options.repeat; run += 1) {
    const validation = await validateInChild('--twice', archive.path);
    if (!validation.ok)
      throw new Error(`${size.label}: the validator rejected the benchmark archive: ${JSON.stringify(validation.problem)}`);
    validationRuns.push(validation);
    const unzip = unzipAvailable ? timeUnzip(archive.path) : undefined;
    if (unzip !== undefined) unzipRuns.push(unzip);
    log(
      `  run ${run}: validation ${validation.ms.toFixed(0)} ms (CPU ${validation.cpuMs.toFixed(0)} ms; warm ${validation.warmMs?.toFixed(0)} ms), ` +
        `peak RSS ${mib(validation.maxRssBytes)} MiB, ${validation.reads} ranged reads (${mib(validation.readBytes ?? 0)} MiB)` +
        (unzip === undefined
          ? ''
          : `; unzip -t ${unzip.ms.toFixed(0)} ms (CPU ${unzip.cpuMs === undefined ? 'n/a' : `${unzip.cpuMs.toFixed(0)} ms`})`),
    );
  }
  const first = validationRuns[0] as ValidationRun;
  const result: SizeResult = {
    label: size.label,
    archivePath: archive.path,
    archiveBytes: archive.bytes,
    files: archive.files,
    generatedMs: archive.generateMs,
    validation: {
      medianMs: median(validationRuns.map((run) => run.ms)),
      runsMs: validationRuns.map((run) => run.ms),
      medianCpuMs: median(validationRuns.map((run) => run.cpuMs)),
      runsCpuMs: validationRuns.map((run) => run.cpuMs),
      runsWarmMs: validationRuns.flatMap((run) => (run.warmMs === undefined ? [] : [run.warmMs])),
      medianMaxRssBytes: median(validationRuns.map((run) => run.maxRssBytes)),
      maxRssRunsBytes: validationRuns.map((run) => run.maxRssBytes),
      reads: first.reads ?? 0,
      smallReads: first.smallReads ?? 0,
      readBytes: first.readBytes ?? 0,
      largestReadBytes: first.largestReadBytes ?? 0,
    },
  };
  if (result.validation.runsWarmMs.length > 0) result.validation.medianWarmMs = median(result.validation.runsWarmMs);
  if (unzipRuns.length > 0) {
    const cpuRuns = unzipRuns.flatMap((run) => (run.cpuMs === undefined ? [] : [run.cpuMs]));
    result.unzip = { medianMs: median(unzipRuns.map((run) => run.ms)), runsMs: unzipRuns.map((run) => run.ms), runsCpuMs: cpuRuns };
    result.ratio = result.validation.medianMs / result.unzip.medianMs;
    if (result.validation.medianWarmMs !== undefined) result.warmRatio = result.validation.medianWarmMs / result.unzip.medianMs;
    if (cpuRuns.length > 0) {
      result.unzip.medianCpuMs = median(cpuRuns);
      result.cpuRatio = result.validation.medianCpuMs / result.unzip.medianCpuMs;
    }
  }
  results.push(result);
}

let presigned: PresignedResult | { error: string } | undefined;
const largest = results.at(-1);
if (options.presigned && largest !== undefined) {
  log('');
  log(`Presigned upload flow (local runtime, ${largest.label} archive):`);
  try {
    presigned = await runPresigned(largest.archivePath, largest.archiveBytes, log);
  } catch (error) {
    presigned = { error: (error as Error).message };
    log(`  FAILED: ${(error as Error).message}`);
  }
}

log('');
log('Validation (validateScenarioArchive over a file-backed RandomAccessSource, in a child process) vs unzip -t -qq:');
log(
  table(
    ['Size', 'Archive MiB', 'Files', 'Validation ms', 'unzip -t ms', 'Ratio', 'Peak RSS MiB', 'MiB/s'],
    results.map((result) => [
      result.label,
      mib(result.archiveBytes),
      String(result.files),
      result.validation.medianMs.toFixed(0),
      result.unzip === undefined ? 'n/a' : result.unzip.medianMs.toFixed(0),
      result.ratio === undefined ? 'n/a' : result.ratio.toFixed(2),
      mib(result.validation.medianMaxRssBytes),
      (result.archiveBytes / MiB / (result.validation.medianMs / 1000)).toFixed(0),
    ]),
  ),
);
log('');
log('Details:');
log(
  table(
    ['Size', 'CPU ms', 'unzip CPU ms', 'CPU ratio', 'Warm ms', 'Warm ratio', 'Ranged reads', 'of which < 4 KiB', 'Read MiB'],
    results.map((result) => [
      result.label,
      result.validation.medianCpuMs.toFixed(0),
      result.unzip?.medianCpuMs === undefined ? 'n/a' : result.unzip.medianCpuMs.toFixed(0),
      result.cpuRatio === undefined ? 'n/a' : result.cpuRatio.toFixed(2),
      result.validation.medianWarmMs === undefined ? 'n/a' : result.validation.medianWarmMs.toFixed(0),
      result.warmRatio === undefined ? 'n/a' : result.warmRatio.toFixed(2),
      String(result.validation.reads),
      String(result.validation.smallReads),
      mib(result.validation.readBytes),
    ]),
  ),
);
log(
  [
    `Validation ms, CPU ms (user + system, all threads) and peak RSS are the first validation in a fresh child process;`,
    `peak RSS is the whole child (its floor with Node, tsx and the validator loaded is ${mib(baseline.maxRssBytes)} MiB).`,
    'Warm ms: a second validation of the same file in the same process. Ratio = validation / unzip -t (medians).',
    `Load average before: ${loadBefore}; after the validation runs: ${formatLoad()}.`,
  ].join('\n'),
);

const verdicts: { goal: string; measured: string; met: boolean | undefined }[] = [];
const gib = results.find((result) => result.label === '1GiB');
verdicts.push({
  goal: 'peak RSS < 256 MiB validating the 1 GiB archive',
  measured: gib === undefined ? 'not measured (1GiB not selected)' : `${mib(gib.validation.medianMaxRssBytes)} MiB`,
  met: gib === undefined ? undefined : gib.validation.medianMaxRssBytes < RSS_GOAL_BYTES,
});
for (const result of results) {
  verdicts.push({
    goal: `validation time <= 1.5x unzip -t (${result.label})`,
    measured: result.ratio === undefined ? 'n/a (no unzip)' : `${result.ratio.toFixed(2)}x`,
    met: result.ratio === undefined ? undefined : result.ratio <= RATIO_GOAL,
  });
}
if (presigned !== undefined) {
  verdicts.push({
    goal: `presigned ${largest?.label} upload ends STORED`,
    measured: 'error' in presigned ? `error: ${presigned.error}` : presigned.status,
    met: !('error' in presigned) && presigned.status === 'STORED',
  });
}
log('');
log('Goals:');
log(
  table(
    ['Goal', 'Measured', 'Verdict'],
    verdicts.map((verdict) => [verdict.goal, verdict.measured, verdict.met === undefined ? 'SKIPPED' : verdict.met ? 'MET' : 'MISSED']),
  ),
);

if (presigned !== undefined && !('error' in presigned)) {
  log('');
  log(`Presigned flow (${largest?.label}, ${mib(presigned.archiveBytes)} MiB): ${presigned.status}`);
  log(
    table(
      ['Measure', 'Value'],
      [
        ['runtime start to READY', `${(presigned.startMs / 1000).toFixed(1)} s`],
        ['slot request + PUT (streamed from disk)', `${(presigned.putMs / 1000).toFixed(1)} s`],
        ['PUT answered -> STORED/REJECTED seen', `${(presigned.processMs / 1000).toFixed(1)} s`],
        ['runtime VmHWM at READY', `${mib(presigned.hwmReadyBytes)} MiB`],
        ['runtime VmHWM after PUT', `${mib(presigned.hwmAfterPutBytes)} MiB`],
        ['runtime VmHWM at the end (peak RSS)', `${mib(presigned.hwmEndBytes)} MiB`],
        ['highest sampled VmRSS during PUT', `${mib(presigned.sampledPeakPutBytes)} MiB`],
        ['highest sampled VmRSS during processing', `${mib(presigned.sampledPeakProcessBytes)} MiB`],
      ],
    ),
  );
  log(
    '(The runtime process hosts s3rver, the upload API and the S3-event validation handler; DynamoDB Local is a separate Java process, not counted.)',
  );
  log(`Result: ${JSON.stringify(presigned.result)}`);
}

const output = join(BENCH_DIRECTORY, 'archive-validation.json');
await writeFile(
  output,
  `${JSON.stringify({ when: new Date().toISOString(), node: process.version, loadBefore, loadAfter: formatLoad(), cpus: cpus().length, cpuModel: cpus()[0]?.model, totalMemBytes: totalmem(), baselineMaxRssBytes: baseline.maxRssBytes, results, presigned, verdicts }, null, 2)}\n`,
);
log('');
log(`JSON results: ${output}`);

if (options.deployments === 'run') {
  log('');
  await deploymentStep();
}

if (searchMode === 'run') {
  log('');
  await searchStep();
}

if (deviceMode === 'run') {
  log('');
  await deviceStep();
}

if (tokenFloodMode === 'run') {
  log('');
  await tokenFloodStep();
}

if (coldStartMode === 'run') {
  log('');
  await coldStartStep();
}

if (continuousMode === 'run') {
  log('');
  await continuousStep();
}

if (commandMode === 'run') {
  log('');
  await commandStep();
}

if (alertMode === 'run') {
  log('');
  await alertStep();
}

if (webhookMode === 'run') {
  log('');
  await webhookStep();
}

if (consoleMode === 'run') {
  log('');
  await consoleStep();
}

if (openSearchMode === 'run') {
  log('');
  await openSearchStep();
}

if (rolloutMode === 'run') {
  log('');
  await rolloutStep();
  process.exit();
}
if (startupMode === 'run') {
  log('');
  await startupStep();
}
