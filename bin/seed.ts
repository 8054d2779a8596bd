#!/usr/bin/env node
/**
 * `npm run seed -- --devices 100000`: a large fleet in the local data folder (DATA_DIR, default .data), ready for a
 * fast `npm start`. Starts the local runtime on that folder (free ports; it creates the tables and the demo data on an
 * empty folder), writes the company's kiosks with BatchWriteItem (functions/local/fleet-seed.ts), each with a
 * credential for one shared secret (hashed once, kept in `{data}/simulator/seed-credentials.json`, mode 0600), waits
 * until the search stream consumer has indexed them, and stops the runtime, which writes the search snapshot: the
 * next `npm start` loads it instead of scanning the tables.
 * Exit code 0 on success, 1 on failure (the reason on stderr).
 */
// First: settings read by modules as they load (tracing off).
import '../functions/local/process-defaults.js';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, InvalidArgumentError } from 'commander';
import { ENV, readEnvironment } from '../functions/contract/environment.js';
import { hashDeviceSecret } from '../functions/core/devices/tokens.js';
import { RUNTIME_FILE } from '../functions/local/admin.js';
import { DEMO_COMPANIES } from '../functions/local/demo-data.js';
import { earlierSeedSecret, seedCredentialsFile, seedFleet, writeSeedCredentials } from '../functions/local/fleet-seed.js';
import { LOCAL_TABLES, startLocalRuntime } from '../functions/local/runtime.js';
import { wholeNumber } from './whole-number.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
// The handlers' own log lines (one per stream batch) would drown the progress lines.
process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';

const program = new Command('npm run seed --')
  .description('Seeds a fleet of kiosks into the local data folder (DATA_DIR, default .data) and writes its search snapshot.')
  .requiredOption('--devices <count>', 'kiosks to write: {company}-kiosk-0001 …', wholeNumber(1, 1_000_000))
  .option(
    '--company <id>',
    `demo company owning them (${DEMO_COMPANIES.map((company) => company.id).join(', ')})`,
    (value) => {
      if (!DEMO_COMPANIES.some((company) => company.id === value)) throw new InvalidArgumentError('not a demo company');
      return value;
    },
    'acme',
  )
  .option('--concurrency <calls>', 'BatchWriteItem calls in flight', wholeNumber(1, 64), 16)
  .showHelpAfterError();
program.parse();
const options = program.opts<{ devices: number; company: string; concurrency: number }>();
const log = (message: string) => process.stderr.write(`${message}\n`);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** Whether a local runtime (npm start) runs on the data folder: two would share one DynamoDB Local database. */
async function runtimeRunsOn(dataDirectory: string): Promise<number | undefined> {
  try {
    const { pid } = JSON.parse(await readFile(join(dataDirectory, RUNTIME_FILE), 'utf8')) as { pid: number };
    process.kill(pid, 0);
    return pid;
  } catch {
    return undefined;
  }
}

try {
  const dataDirectory = resolve(root, readEnvironment('localData', process.env)[ENV.dataDir]);
  const running = await runtimeRunsOn(dataDirectory);
  if (running !== undefined) throw new Error(`npm start (pid ${running}) runs on ${dataDirectory}; stop it first.`);
  const owner = DEMO_COMPANIES.find((company) => company.id === options.company) as (typeof DEMO_COMPANIES)[number];
  const credentialsFile = seedCredentialsFile(dataDirectory);
  const secret = (await earlierSeedSecret(credentialsFile)) ?? randomBytes(32).toString('base64url');
  const secretHash = await hashDeviceSecret(secret);

  const started = performance.now();
  const runtime = await startLocalRuntime({
    root,
    dataDirectory,
    ports: { api: 0, upload: 0, auth: 0, dynamoDb: 0, s3: 0 },
    log,
  });
  try {
    log(`Local runtime started on ${dataDirectory} in ${seconds(performance.now() - started)}.`);
    const writing = performance.now();
    await seedFleet({
      endpoint: runtime.dynamoDbEndpoint,
      table: LOCAL_TABLES.devices,
      owner,
      count: options.devices,
      secretHash,
      concurrency: options.concurrency,
      progress: (written) => log(`  ${written} of ${options.devices} devices written (${seconds(performance.now() - writing)})`),
    });
    await writeSeedCredentials(credentialsFile, {
      company: owner.id,
      devices: options.devices,
      clientIdFormat: '{company}~{deviceId}',
      secret,
      credentialIds: 'seededCredentialId(company, deviceId) in functions/local/fleet-seed.ts',
    });
    log(`Wrote ${options.devices} devices in ${seconds(performance.now() - writing)}; shared secret in ${credentialsFile}.`);
    const indexing = performance.now();
    await runtime.searchCaughtUp();
    log(`Search index caught up with the writes ${seconds(performance.now() - indexing)} later.`);
  } finally {
    await runtime.stop();
  }
  log(
    `Seeded ${options.devices} kiosks of ${owner.id} in ${seconds(performance.now() - started)}. npm start now loads the search snapshot.`,
  );
  process.exit(0);
} catch (error) {
  log(`Seed failed: ${(error as Error).message}`);
  process.exit(1);
}
