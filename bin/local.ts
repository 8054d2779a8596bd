#!/usr/bin/env node
/**
 * Local entry (`npm start`): the whole service on 127.0.0.1 with embedded backends and the same handlers as Lambda.
 * Environment (functions/contract/environment.ts, groups `localRuntime` and `localData`): API_PORT (3000), UPLOAD_PORT
 * (3001), AUTH_PORT (3002), DYNAMODB_PORT and S3_PORT (0 = any free port), DATA_DIR (.data), UPLOAD_SWEEP_INTERVAL_MS.
 * A malformed one stops the start with its name.
 */
// First: settings read by modules as they load (tracing off).
import '../functions/local/process-defaults.js';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LOCAL_DEFAULTS } from '../cli/settings.js';
import { ENV, readEnvironment } from '../functions/contract/environment.js';
import { DEMO_USERS } from '../functions/local/demo-data.js';
import { guardUncaughtErrors } from '../functions/local/http-gateway.js';
import { startLocalRuntime } from '../functions/local/runtime.js';
import { SimulatedFleet } from '../simulator/fleet.js';
import { fleetSummaryLine } from '../simulator/report.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

// The AWS SDK announces at every start on Node 20 that its 2027 releases will need Node 22; the SDK's own switch.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

// One request's stray error (an unhandled `error` event in a handler) answers that request 500 instead of ending the process.
guardUncaughtErrors((message) => process.stderr.write(`${message}\n`));

const started = Date.now();
const runtime = await (async () => {
  const settings = readEnvironment('localRuntime', process.env);
  return startLocalRuntime({
    root,
    dataDirectory: resolve(root, readEnvironment('localData', process.env)[ENV.dataDir]),
    ports: {
      api: settings[ENV.apiPort],
      upload: settings[ENV.uploadPort],
      auth: settings[ENV.authPort],
      dynamoDb: settings[ENV.dynamoDbPort],
      s3: settings[ENV.s3Port],
    },
    log: (message) => process.stderr.write(`${message}\n`),
  });
})().catch((error: unknown) => {
  process.stderr.write(`Could not start the local runtime: ${(error as Error).message}\n`);
  process.exit(1);
});

// The CLI finds the local runtime by itself on the default ports; on others it needs them once, at login (stored).
const defaultPorts =
  runtime.addresses.main === LOCAL_DEFAULTS.baseUrl &&
  runtime.addresses.upload === LOCAL_DEFAULTS.uploadUrl &&
  runtime.addresses.auth === LOCAL_DEFAULTS.authUrl;
process.stdout.write(
  [
    '',
    `Device scenario service is up (${((Date.now() - started) / 1000).toFixed(1)} s, ${runtime.indexedDocuments} documents indexed${runtime.searchStart?.path === 'snapshot' ? ' from the search snapshot' : ''}).`,
    `  main API     (base_url)             ${runtime.addresses.main}`,
    `  upload API   (scenario_upload_url)  ${runtime.addresses.upload}`,
    `  auth service (token, JWKS)          ${runtime.addresses.auth}`,
    `  OpenAPI document                    ${runtime.addresses.main}/openapi.json`,
    `  API reference                       ${runtime.addresses.main}/docs`,
    `  Operator console                    ${runtime.addresses.main}/console`,
    '',
    'Demo users (username / password: companies; role: scopes):',
    ...DEMO_USERS.map(
      (user) =>
        `  ${user.username} / ${user.password}: ${user.companies.length === 0 ? '(no company)' : user.companies.join(', ')}; ${user.role}: ${user.scope}`,
    ),
    '',
    `Get a token: curl -s -X POST ${runtime.addresses.auth}/token -H 'content-type: application/json' -d '{"username":"alice","password":"alice-demo-password"}'`,
    `Or with the CLI: npx dss login --username alice${defaultPorts ? '' : ` --base-url ${runtime.addresses.main} --upload-url ${runtime.addresses.upload} --auth-url ${runtime.addresses.auth}`}   (then npx dss --help)`,
    'Press Ctrl+C to stop; data is kept in the data folder (npm run reset wipes it).',
    'READY',
    '',
  ].join('\n'),
);

// SIMULATE=N keeps the demo fleet alive: the first N of acme's kiosks (acme-kiosk-0001…, registered beyond the demo's
// 120) report their health and install what is deployed to them, as `npm run simulate` does.
const simulated = readEnvironment('localRuntime', process.env)[ENV.simulate];
const fleet =
  simulated === 0
    ? undefined
    : new SimulatedFleet({
        baseUrl: runtime.addresses.main,
        authUrl: runtime.addresses.auth,
        username: 'alice',
        password: 'alice-demo-password',
        company: 'acme',
        devices: simulated,
        idPrefix: 'acme-kiosk-',
        idDigits: 4,
        credentialsFile: resolve(runtime.dataDirectory, 'simulator', 'acme-kiosk-credentials.json'),
        log: (message) => process.stderr.write(`simulator: ${message}\n`),
      });
let summary: NodeJS.Timeout | undefined;
if (fleet !== undefined) {
  const started = Date.now();
  await fleet.start().then(
    () => {
      process.stderr.write(`simulator: ${simulated} kiosks of acme report every 10 s and pull every 30 s.\n`);
      summary = setInterval(
        () => process.stderr.write(`simulator: ${fleetSummaryLine(fleet, (Date.now() - started) / 1000, 0)}\n`),
        60_000,
      );
    },
    (error: unknown) => process.stderr.write(`simulator: could not start (${(error as Error).message}); the service keeps running.\n`),
  );
}

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    clearInterval(summary);
    void (fleet?.stop() ?? Promise.resolve()).then(() => runtime.stop()).then(() => process.exit(0));
  });
}
