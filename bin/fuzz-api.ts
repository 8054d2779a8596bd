#!/usr/bin/env node
/**
 * `npm run fuzz:api`: schemathesis (pinned in bin/python-tools.txt, run through bin/python-tools.sh) against the
 * OpenAPI document of a local runtime this starts itself (`bin/local.ts`, what `npm start` runs, on free ports with a
 * temporary data folder), every operation of the three addresses the document's `servers` name (main, upload, auth),
 * authenticated as the demo user alice (the administration routes as root, the device routes as a demo device), with
 * a fixed seed. Checks: no 5xx, and status codes, content types, response
 * bodies and response headers as the document declares them. Prints schemathesis' report and the requests it sent;
 * always stops the runtime and removes the folder.
 * Options: `--seed` (fixed by default, so that two runs send the same generated requests), `--max-examples` per
 * operation and phase, `--workers`, `--keep` (keep the folder: the runtime's log, the NDJSON report).
 * Exit code 0 when every check passed; 1 on a failure, an error of schemathesis, fewer than MIN_REQUESTS requests or a
 * runtime that did not start.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { createDssClient, expectOk, requestClientCredentialsToken } from '../client/index.js';
import { DEMO_COMPANIES, DEMO_USERS } from '../functions/local/demo-data.js';
import { freePort } from '../functions/local/free-port.js';
import { wholeNumber } from './whole-number.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Fewest requests a run must send: below, the run checked less than it promises (docs/contract.md, "Checked by schemathesis"). */
const MIN_REQUESTS = 2_000;
/**
 * Longest wait for one answer, s. API Gateway gives an HTTP API integration 30 s, so an answer slower than that would
 * be a 503 on AWS whatever it says locally.
 */
const REQUEST_TIMEOUT_SECONDS = 30;
/**
 * Where schemathesis reads the run's tokens from (`${…}` placeholders of its configuration, so that no token is in a
 * file or on a command line): alice's for the company routes, root's (the platform administrator) for `/admin/`, a
 * demo device's for `/device/`. Each family answers only 403 to the others' tokens, which would test nothing past
 * the scope check.
 */
const TOKEN_VARIABLES = { user: 'DSS_FUZZ_TOKEN', admin: 'DSS_FUZZ_ADMIN_TOKEN', device: 'DSS_FUZZ_DEVICE_TOKEN' } as const;
/** What a run's requests authenticate with, by TOKEN_VARIABLES' keys. */
type Tokens = Record<keyof typeof TOKEN_VARIABLES, string>;
/**
 * The company the administration routes are fuzzed on, created here: a generated quota of 0 or a new name on acme
 * would change what alice's requests meet (uploads refused with 413) from one seed to the next.
 */
const ADMIN_COMPANY = 'fuzz-admin';
/** The checks run on every answer (schemathesis' names). */
const CHECKS = [
  'not_a_server_error',
  'status_code_conformance',
  'content_type_conformance',
  'response_schema_conformance',
  'response_headers_conformance',
];
/**
 * Lifetime of the run's access tokens, s. The default 15 minutes is shorter than a slow machine's start and run
 * together, and a token that expires mid-run would turn every later answer into a 401.
 */
const TOKEN_LIFETIME_SECONDS = 3_600;

const options = new Command('npm run fuzz:api --')
  .description('Runs schemathesis against a local runtime started here, as alice, root and a device, and fails on any finding.')
  .option('--seed <n>', 'random seed of the generated requests', wholeNumber(0, 2 ** 31 - 1), 20_250_101)
  .option('--max-examples <n>', 'generated test cases per operation and phase', wholeNumber(1, 10_000), 45)
  // One operation at a time by default: the answers then come in the same order on every run (what one operation
  // writes, the next reads), and Hypothesis in several threads at once can fail inside Python 3.11's compiler
  // ("AST constructor recursion depth mismatch"), an error of the tool rather than a finding.
  .option('--workers <n>', 'operations tested at once', wholeNumber(1, 16), 1)
  .option('--keep', "keep the temporary folder (the runtime's log, the NDJSON report)")
  .parse()
  .opts<{ seed: number; maxExamples: number; workers: number; keep?: boolean }>();

const log = (message: string) => process.stderr.write(`fuzz:api: ${message}\n`);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** The runtime's addresses, as it listens on them. */
interface Runtime {
  main: string;
  upload: string;
  auth: string;
  stop(): Promise<void>;
}

/**
 * Starts `bin/local.ts` on free ports and `dataDirectory`, its output into `logFile`, and resolves once it prints
 * READY (its last line once it answers). A start that fails or times out is stopped and throws with the log's end.
 */
async function startRuntime(dataDirectory: string, logFile: string): Promise<Runtime> {
  const ports = { api: await freePort(), upload: await freePort(), auth: await freePort() };
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', join(root, 'bin/local.ts')], {
    cwd: root,
    env: {
      ...process.env,
      API_PORT: String(ports.api),
      UPLOAD_PORT: String(ports.upload),
      AUTH_PORT: String(ports.auth),
      DATA_DIR: dataDirectory,
      TOKEN_LIFETIME_SECONDS: String(TOKEN_LIFETIME_SECONDS),
      // A device token's longest (15 minutes, the device issuer's bound), well beyond the minutes a run takes.
      DEVICE_TOKEN_LIFETIME_SECONDS: '900',
      // No simulated kiosks: their reports would change the data under the generated requests from run to run.
      SIMULATE: '0',
      // Warnings and errors only (a 5xx is logged as an error); one line per request would be thousands.
      POWERTOOLS_LOG_LEVEL: 'WARN',
      NODE_NO_WARNINGS: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const file = createWriteStream(logFile);
  let output = '';
  const keep = (chunk: Buffer) => {
    file.write(chunk);
    if (!output.includes('READY')) output += chunk.toString();
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    }
    await new Promise<void>((done) => file.end(() => done()));
  };
  // 20–26 s from a fresh data folder on a busy 2-core machine (README); three times that before giving up.
  const deadline = Date.now() + 90_000;
  while (!output.includes('READY')) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(
        `bin/local.ts ${child.exitCode === null ? 'did not print READY within 90 s' : `exited with ${child.exitCode}`}:\n${output.slice(-4_000)}`,
      );
    }
    await new Promise((done) => setTimeout(done, 100));
  }
  return {
    main: `http://127.0.0.1:${ports.api}`,
    upload: `http://127.0.0.1:${ports.upload}`,
    auth: `http://127.0.0.1:${ports.auth}`,
    stop,
  };
}

/** What the generated requests may name besides random values: the demo's own ids, so that they reach past 404. */
interface Fixtures {
  company: string;
  devices: string[];
  scenarios: string[];
  versions: string[];
  rollouts: string[];
  assets: string[];
}

/**
 * The run's tokens (alice's; root's; the first demo device's, from credentials issued here) and ids of what alice's
 * company holds: its demo devices, scenarios and versions, three rollouts made here (the demo has none: one that
 * completes, a continuous one that stays RUNNING and a scheduled one, so that pause, resume and cancel reach past
 * 409), and the console's assets. Creates ADMIN_COMPANY for the administration routes.
 * @throws ApiError when the service refuses a call.
 */
async function prepare(runtime: Runtime): Promise<{ tokens: Tokens; fixtures: Fixtures }> {
  const signIn = async (username: string) => {
    const user = DEMO_USERS.find((candidate) => candidate.username === username);
    if (user === undefined) throw new Error(`the demo data has no user ${username}`);
    return expectOk(await anonymous.auth.POST('/token', { body: { username: user.username, password: user.password } })).access_token;
  };
  const company = DEMO_COMPANIES.find((candidate) => candidate.id === 'acme');
  if (company === undefined) throw new Error('the demo data has no company acme');
  const addresses = { baseUrl: runtime.main, uploadUrl: runtime.upload, authUrl: runtime.auth };
  const anonymous = createDssClient(addresses);
  const token = await signIn('alice');
  const dss = createDssClient({ ...addresses, token });
  const rootToken = await signIn('root');
  const root = createDssClient({ ...addresses, token: rootToken });
  expectOk(await root.main.POST('/admin/companies', { body: { id: ADMIN_COMPANY, name: 'Fuzzed administration', quotaBytes: 1_048_576 } }));
  const path = { params: { path: { companyId: company.id } } };
  const scenarios = expectOk(await dss.main.GET('/companies/{companyId}/resources/scenarios', path)).items;
  const devices = expectOk(
    await dss.main.GET('/resources/search', { params: { query: { type: ['DEVICE'], company: [company.id], sort: 'id', pageSize: 5 } } }),
  ).resources.map((resource) => resource.id);
  const [scenario] = scenarios;
  const [device] = devices;
  if (scenario === undefined || device === undefined) throw new Error(`the demo company ${company.id} has no scenario or no device`);
  const credentials = expectOk(
    await dss.main.POST('/companies/{companyId}/resources/devices/{deviceId}/credentials', {
      params: { path: { companyId: company.id, deviceId: device } },
    }),
  );
  const deviceToken = expectOk(await requestClientCredentialsToken(anonymous.auth, credentials.clientId, credentials.clientSecret));
  const what = { type: 'SCENARIO' as const, id: scenario.id, subId: scenario.latestVersion };
  const rollouts = [];
  for (const body of [
    { targets: { ids: devices.slice(0, 3) }, waves: [1] },
    { targets: { query: 'health.versionCode=fuzzed' }, continuous: true },
    { targets: { ids: devices.slice(3) }, startAt: new Date(Date.now() + 86_400_000).toISOString() },
  ]) {
    rollouts.push(
      expectOk(await dss.main.POST('/companies/{companyId}/resources/rollouts', { ...path, body: { action: 'DEPLOY', what, ...body } })).id,
    );
  }
  const consolePage = await fetch(`${runtime.main}/console`).then((response) => response.text());
  return {
    tokens: { user: token, admin: rootToken, device: deviceToken.access_token },
    fixtures: {
      company: company.id,
      devices,
      scenarios: scenarios.map((item) => item.id),
      versions: [...new Set(scenarios.flatMap((item) => item.versions))],
      rollouts,
      assets: [...new Set([...consolePage.matchAll(/console\/assets\/([^"']+)/g)].map((match) => match[1] as string))],
    },
  };
}

/**
 * The schemathesis.toml of the run: the tokens by TOKEN_VARIABLES (alice's by default, root's for `/admin/`, the
 * device's for `/device/`), the company fixed to alice's (any other is a 403 before anything else runs; ADMIN_COMPANY
 * for `/admin/`), and the fixtures offered for the parameters that name them, half of the time (the other half is
 * generated).
 */
function configuration(fixtures: Fixtures): string {
  const toml = (value: string | readonly string[]) => JSON.stringify(value);
  const bearer = (token: keyof Tokens) => toml(`Bearer \${${TOKEN_VARIABLES[token]}}`);
  const dictionaries: Record<string, readonly string[]> = {
    devices: fixtures.devices,
    scenarios: fixtures.scenarios,
    versions: fixtures.versions,
    rollouts: fixtures.rollouts,
    assets: fixtures.assets,
  };
  const bindings: Record<string, keyof typeof dictionaries> = {
    'path.deviceId': 'devices',
    'query.deviceId': 'devices',
    'body.requests[*].target.id': 'devices',
    'path.scenarioId': 'scenarios',
    'query.scenarioId': 'scenarios',
    'body.what.id': 'scenarios',
    'body.requests[*].what.id': 'scenarios',
    'path.version': 'versions',
    'query.version': 'versions',
    'body.what.subId': 'versions',
    'body.requests[*].what.subId': 'versions',
    'path.rolloutId': 'rollouts',
    'path.asset': 'assets',
  };
  return [
    '# Written by bin/fuzz-api.ts for one run.',
    `headers = { Authorization = ${bearer('user')} }`,
    '',
    '[parameters]',
    `"path.companyId" = ${toml(fixtures.company)}`,
    ...Object.entries(bindings).map(
      ([parameter, dictionary]) => `${toml(parameter)} = { dictionary = ${toml(dictionary)}, probability = 0.5 }`,
    ),
    '',
    ...Object.entries(dictionaries)
      .filter(([, values]) => values.length > 0)
      .flatMap(([name, values]) => [`[dictionaries.${name}]`, `values = ${toml(values)}`, '']),
    '[[operations]]',
    'include-path-regex = "^/admin/"',
    `headers = { Authorization = ${bearer('admin')} }`,
    `parameters = { "path.companyId" = ${toml(ADMIN_COMPANY)} }`,
    '',
    '[[operations]]',
    'include-path-regex = "^/device/"',
    `headers = { Authorization = ${bearer('device')} }`,
    '',
  ].join('\n');
}

/** Runs `bin/python-tools.sh schemathesis …` with stdout and stderr shown. @returns its exit status */
function schemathesis(args: readonly string[], cwd: string, tokens: Tokens, children: Set<ChildProcess>): Promise<number> {
  return new Promise((done, fail) => {
    const child = spawn(join(root, 'bin/python-tools.sh'), ['schemathesis', ...args], {
      cwd,
      env: {
        ...process.env,
        ...Object.fromEntries(Object.entries(TOKEN_VARIABLES).map(([token, variable]) => [variable, tokens[token as keyof Tokens]])),
      },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    children.add(child);
    child.once('error', fail);
    child.once('exit', (code, signal) => {
      children.delete(child);
      done(code ?? (signal === null ? 1 : 128));
    });
  });
}

/** The requests an NDJSON report of schemathesis records (each interaction is one request and its answer). */
async function requestsIn(reportDirectory: string): Promise<number> {
  let requests = 0;
  for (const name of (await readdir(reportDirectory)).filter((file) => file.endsWith('.ndjson'))) {
    for await (const line of createInterface({ input: createReadStream(join(reportDirectory, name)) })) {
      if (!line.startsWith('{"ScenarioFinished"')) continue;
      const event = JSON.parse(line) as { ScenarioFinished: { recorder?: { interactions?: Record<string, unknown> } } };
      requests += Object.keys(event.ScenarioFinished.recorder?.interactions ?? {}).length;
    }
  }
  return requests;
}

/** The warnings and errors the runtime logged (a 5xx's cause), at most the last 60 lines. */
async function runtimeProblems(logFile: string): Promise<string> {
  const lines = (await readFile(logFile, 'utf8').catch(() => '')).split('\n');
  return lines
    .filter((line) => /\b(WARN|ERROR|CRITICAL)\b|Error|uncaught/i.test(line))
    .slice(-60)
    .join('\n');
}

const started = performance.now();
const folder = await mkdtemp(join(tmpdir(), 'dss-fuzz-'));
const children = new Set<ChildProcess>();
let runtime: Runtime | undefined;
let stopping = false;
const cleanUp = async () => {
  for (const child of children) child.kill('SIGTERM');
  await runtime?.stop();
  if (options.keep !== true) await rm(folder, { recursive: true, force: true });
};
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: stopping schemathesis and the runtime`);
    void cleanUp().then(() => process.exit(130));
  });
}

let status = 1;
try {
  const reportDirectory = join(folder, 'report');
  await mkdir(reportDirectory);
  const logFile = join(folder, 'runtime.log');
  runtime = await startRuntime(join(folder, 'data'), logFile);
  log(`runtime up in ${seconds(performance.now() - started)}: ${runtime.main}, ${runtime.upload}, ${runtime.auth}`);
  const { tokens, fixtures } = await prepare(runtime);
  const configFile = join(folder, 'schemathesis.toml');
  await writeFile(configFile, configuration(fixtures));
  const fuzzing = performance.now();
  status = await schemathesis(
    [
      '--config-file',
      configFile,
      'run',
      `${runtime.main}/openapi.json`,
      `--checks=${CHECKS.join(',')}`,
      `--seed=${options.seed}`,
      `--max-examples=${options.maxExamples}`,
      `--workers=${options.workers}`,
      `--request-timeout=${REQUEST_TIMEOUT_SECONDS}`,
      // No example database: a run must not depend on what earlier runs found, nor leave files behind.
      '--generation-database=none',
      // How fast hypothesis generates a health report's many bounded members depends on the machine's load, not on
      // the service: a busy machine failed that generator's speed check once, on a schema an idle run passes.
      '--suppress-health-check=too_slow',
      '--report=ndjson',
      `--report-dir=${reportDirectory}`,
      '--no-color',
    ],
    folder,
    tokens,
    children,
  );
  const requests = await requestsIn(reportDirectory);
  log(
    `schemathesis sent ${requests} requests in ${seconds(performance.now() - fuzzing)} (seed ${options.seed}, ${options.maxExamples} examples per operation and phase)`,
  );
  if (status === 0 && requests < MIN_REQUESTS) {
    log(`fewer than ${MIN_REQUESTS} requests: raise --max-examples`);
    status = 1;
  }
  if (status !== 0) {
    const problems = await runtimeProblems(logFile);
    if (problems !== '') log(`what the runtime logged as warnings and errors:\n${problems}`);
  }
} catch (error) {
  log(`could not run: ${(error as Error).message}`);
  status = 1;
} finally {
  if (!stopping) {
    await cleanUp();
    if (options.keep === true) log(`kept ${folder}`);
    log(`${status === 0 ? 'passed' : 'FAILED'} in ${seconds(performance.now() - started)}`);
  }
}
process.exit(status);
