/**
 * `npx tsx test/bench/device-health.ts [--devices=N] [--rounds=N]`: what a health report costs in DynamoDB writes (a
 * benchmark, not a test). Starts the local runtime with dynamodb-probe.ts preloaded, registers N devices (default 20),
 * then measures three phases, each counted by the probe (the DynamoDB calls the runtime made, by operation):
 *   first      every device's first report (UNKNOWN → CONNECTED);
 *   unchanged  `rounds` (default 5) rounds of the same report from every device;
 *   changed    one round with another health (a new version code).
 * Writes per report are PutItem (the presence entry) + UpdateItem (the device item). The presence table has no
 * stream, so search index updates per report = device item writes per report (each is one devices-stream record,
 * one upsert of the device's search document). Prints a table and writes JSON to os.tmpdir()/dss-bench/device-health.json.
 */
import { readFile, rm, mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DynamoDbDeviceRepository } from '../../functions/adapters/aws/dynamodb-device-repository.js';
import type { DeviceHealthReport } from '../../functions/core/device-health.js';
import { freePort } from '../../functions/local/free-port.js';
import { LOCAL_TABLES } from '../../functions/local/runtime.js';
import { localDocumentClient } from '../e2e/fleet.js';
import { call, newServiceSettings, removeDataDirectory, startService, tokenFor } from '../e2e/harness.js';
import { deviceToken } from '../support/device-token.js';
import { BENCH_DIRECTORY } from './archives.js';
import type { ProbeCall } from './dynamodb-probe.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const root = resolve(import.meta.dirname, '../..');
const argument = (name: string, fallback: number) => {
  const given = process.argv.find((value) => value.startsWith(`--${name}=`));
  const parsed = given === undefined ? fallback : Number(given.slice(name.length + 3));
  if (!Number.isInteger(parsed) || parsed < 1) throw new Error(`--${name} must be a positive integer`);
  return parsed;
};
const DEVICES = argument('devices', 20);
const ROUNDS = argument('rounds', 5);
const WRITES = ['PutItem', 'UpdateItem', 'DeleteItem', 'TransactWriteItems', 'BatchWriteItem'];

const health = (versionCode: string): DeviceHealthReport => ({
  versionCode,
  versionName: versionCode,
  mode: 'EMBEDDED_PLATFORM_ANDROID',
  hubs: [
    {
      uid: 'hub1',
      label: 'Main hub',
      version: '2.2.4',
      registeredSince: '2025-06-14T15:27:41.000Z',
      type: 'STANDARD',
      devices: [
        {
          uid: 'hub1-printer',
          label: 'Receipt printer',
          version: '1.4.0',
          health: { state: 'NOMINAL', message: 'Ready', messages: [{ key: 'printer.ready', message: 'Ready', level: 'INFO' }] },
          capability: { type: 'PRINTER', modes: ['PRINTER_PRINT'] },
          commands: [{ command: 'reboot', title: 'Reboot', description: 'Restart the printer.', payload: {}, arguments: [] }],
        },
      ],
    },
  ],
});

async function dumpProbe(pid: number, file: string): Promise<ProbeCall[]> {
  await rm(file, { force: true });
  process.kill(pid, 'SIGUSR2');
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      return JSON.parse(await readFile(file, 'utf8')) as ProbeCall[];
    } catch {
      if (Date.now() > deadline) throw new Error('the DynamoDB probe did not answer SIGUSR2 within 10 s');
      await sleep(20);
    }
  }
}

const settings = await newServiceSettings();
const dynamoDbPort = await freePort();
const probeFile = join(settings.dataDirectory, 'probe.json');
const service = await startService(settings, {
  environment: { DYNAMODB_PORT: String(dynamoDbPort), BENCH_PROBE_FILE: probeFile },
  imports: [join(root, 'test/bench/dynamodb-probe.ts')],
});
const client = localDocumentClient(`http://127.0.0.1:${dynamoDbPort}`, 8);
try {
  const ids = Array.from({ length: DEVICES }, (_, index) => `bench-health-${String(index + 1).padStart(4, '0')}`);
  const now = new Date().toISOString();
  await new DynamoDbDeviceRepository(client, LOCAL_TABLES).put(
    ids.map((id) => ({ id, company: 'acme', serial: id, created: now, updated: now, connection: { state: 'UNKNOWN' as const } })),
  );
  // A user token first: the local issuer creates its signing key on its first token.
  await tokenFor(service, 'alice');
  const issuer = { ...service, dynamoDbEndpoint: `http://127.0.0.1:${dynamoDbPort}` };
  const tokens: string[] = [];
  for (const id of ids) tokens.push((await deviceToken(issuer, 'acme', id)).token);
  await dumpProbe(service.pid, probeFile);

  const phase = async (name: string, rounds: number, body: DeviceHealthReport) => {
    for (let round = 0; round < rounds; round += 1) {
      for (const token of tokens) {
        const answer = await call(`${service.api}/device/health`, { method: 'PUT', token, json: body });
        if (answer.status !== 204) throw new Error(`${name}: ${answer.status} ${JSON.stringify(answer.body)}`);
      }
    }
    const calls = await dumpProbe(service.pid, probeFile);
    const reports = rounds * tokens.length;
    const byOperation: Record<string, number> = {};
    for (const [operation] of calls)
      if (operation !== 'GetRecords' && operation !== 'GetShardIterator' && operation !== 'DescribeStream')
        byOperation[operation] = (byOperation[operation] ?? 0) + 1;
    const writes = WRITES.reduce((sum, operation) => sum + (byOperation[operation] ?? 0), 0);
    const deviceWrites = byOperation.UpdateItem ?? 0;
    return {
      name,
      reports,
      byOperation,
      writesPerReport: writes / reports,
      deviceWritesPerReport: deviceWrites / reports,
      indexUpdatesPerReport: deviceWrites / reports,
    };
  };
  const results = [
    await phase('first', 1, health('40201')),
    await phase('unchanged', ROUNDS, health('40201')),
    await phase('changed', 1, health('40202')),
  ];
  process.stdout.write(`Health report costs, ${DEVICES} devices (DynamoDB calls made by the runtime, per report):\n`);
  process.stdout.write('  phase      reports  writes/report  device writes/report  index updates/report  calls\n');
  for (const result of results) {
    process.stdout.write(
      `  ${result.name.padEnd(10)} ${String(result.reports).padStart(7)}  ${result.writesPerReport.toFixed(2).padStart(13)}  ${result.deviceWritesPerReport.toFixed(2).padStart(20)}  ${result.indexUpdatesPerReport.toFixed(2).padStart(20)}  ${JSON.stringify(result.byOperation)}\n`,
    );
  }
  await mkdir(BENCH_DIRECTORY, { recursive: true });
  const output = join(BENCH_DIRECTORY, 'device-health.json');
  await writeFile(output, `${JSON.stringify({ when: new Date().toISOString(), devices: DEVICES, rounds: ROUNDS, results }, null, 2)}\n`);
  process.stdout.write(`JSON results: ${output}\n`);
} finally {
  client.destroy();
  await service.stop();
  await removeDataDirectory(settings);
}
