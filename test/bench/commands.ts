/**
 * The command delivery benchmark (`npm run bench -- --only-commands`): how long a command takes to reach a kiosk
 * that polls its desired state with `If-None-Match`, on the local runtime started as `npm start` is (demo data).
 *
 * One kiosk polls `GET /device/deployments` every POLL_MS (COMMAND_BENCH_POLL_MS, default 1,000) with the ETag it
 * holds, as a real kiosk does; meanwhile, COMMANDS times (COMMAND_BENCH_COMMANDS, default 20), alice runs a command
 * on it at a random instant within a poll interval, and the kiosk reports SUCCEEDED as soon as a poll hands it over.
 * Measured: the time from the 202 to the first poll answer carrying the command (its delivery latency), how many
 * requests the kiosk made in all (only its polls and its reports: a command costs it no extra request) and how many
 * polls were answered 304 (an unchanged poll is one read of the device item: the mocked-DynamoDB unit test of the
 * desired state proves that part). Goal: every command delivered within one poll interval plus the stream's lag
 * (the stored tag follows the commands table's stream, polled locally every 250 ms).
 * JSON to os.tmpdir()/dss-bench/commands.json.
 */
import { freePort } from '../../functions/local/free-port.js';
import { type LocalService, newServiceSettings, removeDataDirectory, startService, tokenFor } from '../e2e/harness.js';
import { deviceToken } from '../support/device-token.js';

const KIOSK = 'acme-kiosk-0001';
const POLL_MS = Number(process.env.COMMAND_BENCH_POLL_MS ?? 1_000);
const COMMANDS = Number(process.env.COMMAND_BENCH_COMMANDS ?? 20);

/** What the benchmark measured. */
export interface CommandBenchResult {
  pollIntervalMs: number;
  commands: number;
  /** From each command's 202 to the first poll answer carrying it, ms, sorted. */
  deliveryMs: number[];
  p50Ms: number;
  maxMs: number;
  /** Requests the kiosk made: polls and reports. */
  requests: { polls: number; notModified: number; reports: number; other: number };
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** The first advertised command of the kiosk: its hub, sub-device and name. */
async function advertised(service: LocalService, token: string): Promise<{ hub: string; device: string; command: string }> {
  const response = await fetch(`${service.api}/companies/acme/resources/devices/${KIOSK}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  const device = (await response.json()) as {
    health?: { hubs: { uid: string; devices: { uid: string; commands: { command: string }[] }[] }[] };
  };
  for (const hub of device.health?.hubs ?? []) {
    for (const sub of hub.devices)
      if (sub.commands[0] !== undefined) return { hub: hub.uid, device: sub.uid, command: sub.commands[0].command };
  }
  throw new Error(`${KIOSK} advertises no command.`);
}

/** The kiosk's poll loop: polls with the tag it holds, reports each command it receives; `delivered` resolves per id. */
function kioskLoop(service: LocalService, token: string) {
  const requests = { polls: 0, notModified: 0, reports: 0, other: 0 };
  const waiting = new Map<string, (at: number) => void>();
  let etag: string | undefined;
  let running = true;
  const headers = { authorization: `Bearer ${token}` };
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      requests.polls += 1;
      const response = await fetch(`${service.api}/device/deployments`, {
        headers: { ...headers, ...(etag === undefined ? {} : { 'if-none-match': etag }) },
      });
      if (response.status === 304) requests.notModified += 1;
      else if (response.status === 200) {
        etag = response.headers.get('etag') ?? undefined;
        const state = (await response.json()) as { commands: { id: string }[] };
        for (const { id } of state.commands) {
          waiting.get(id)?.(performance.now());
          waiting.delete(id);
          requests.reports += 1;
          await fetch(`${service.api}/device/commands/${id}/status`, {
            method: 'POST',
            headers: { ...headers, 'content-type': 'application/json' },
            body: JSON.stringify({ state: 'SUCCEEDED' }),
          });
        }
      } else requests.other += 1;
      await sleep(Math.max(0, POLL_MS - (performance.now() - started)));
    }
  })();
  return {
    requests,
    delivered: (id: string) => new Promise<number>((resolve) => waiting.set(id, resolve)),
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

/** Runs the benchmark on a fresh local runtime with the demo data. */
export async function runCommandBench(): Promise<CommandBenchResult> {
  const settings = await newServiceSettings();
  const dynamoPort = await freePort();
  const service = await startService(settings, { environment: { DYNAMODB_PORT: String(dynamoPort) } });
  try {
    const alice = await tokenFor(service, 'alice');
    const issuer = { dataDirectory: settings.dataDirectory, dynamoDbEndpoint: `http://127.0.0.1:${dynamoPort}`, auth: service.auth };
    const { token } = await deviceToken(issuer, 'acme', KIOSK);
    const target = await advertised(service, alice);
    const kiosk = kioskLoop(service, token);
    const deliveryMs: number[] = [];
    await sleep(2 * POLL_MS);
    for (let index = 0; index < COMMANDS; index += 1) {
      await sleep(Math.random() * POLL_MS);
      const response = await fetch(`${service.api}/companies/acme/resources/devices/${KIOSK}/commands`, {
        method: 'POST',
        headers: { authorization: `Bearer ${alice}`, 'content-type': 'application/json' },
        body: JSON.stringify(target),
      });
      const created = performance.now();
      if (response.status !== 202) throw new Error(`Creating a command answered ${response.status}: ${await response.text()}`);
      const { id } = (await response.json()) as { id: string };
      deliveryMs.push((await kiosk.delivered(id)) - created);
    }
    await kiosk.stop();
    deliveryMs.sort((a, b) => a - b);
    return {
      pollIntervalMs: POLL_MS,
      commands: COMMANDS,
      deliveryMs,
      p50Ms: deliveryMs[Math.floor(deliveryMs.length / 2)] ?? Number.NaN,
      maxMs: deliveryMs.at(-1) ?? Number.NaN,
      requests: kiosk.requests,
    };
  } finally {
    await service.stop();
    await removeDataDirectory(settings);
  }
}

/** Prints the result as a short table. */
export function reportCommandBench(result: CommandBenchResult, log: (line: string) => void): void {
  const { requests } = result;
  log(`  poll interval                          ${result.pollIntervalMs} ms`);
  log(`  commands delivered                     ${result.commands}`);
  log(`  delivery latency p50 / max             ${result.p50Ms.toFixed(0)} / ${result.maxMs.toFixed(0)} ms`);
  log(
    `  within one poll interval               ${result.deliveryMs.filter((ms) => ms <= result.pollIntervalMs).length} of ${result.commands}`,
  );
  log(
    `  kiosk requests: polls / 304 / reports  ${requests.polls} / ${requests.notModified} / ${requests.reports} (other answers: ${requests.other})`,
  );
}
