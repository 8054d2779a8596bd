/**
 * The token flood benchmark (`npm run bench -- --only-token-flood`): real devices asking for tokens on the local
 * runtime while wrong client secrets flood the token endpoint from another address.
 *
 * The runtime is started as `npm start` is. TOKEN_FLOOD_DEVICES (default 10) devices get credentials and then ask for
 * a token in a loop, each from its own loopback address (127.0.1.n: as devices on their own networks), one request
 * at a time, 500 ms apart (20 requests a second in all, a sample that does not load the runtime itself); their
 * latency is the measure, counted for the requests that start while flood attempts are unanswered. Phases:
 *   1. quiet: the devices alone, TOKEN_FLOOD_SECONDS (default 10) (the baseline);
 *   2. bursts, distinct ids: 5 times, 1,000 (TOKEN_FLOOD_ATTEMPTS) wrong attempts for unknown client ids sent at once
 *      from 127.0.0.2, all answered, then 0.5 s of pause: "1,000 wrong attempts arrive";
 *   3. bursts, one id: the same against the client id of the first measured device (which keeps asking from its
 *      own address);
 *   4. throttle rate: wrong attempts at the auth API's default stage throttle (200 a second), what API Gateway lets
 *      through on AWS, for TOKEN_FLOOD_SECONDS;
 *   5. closed loop: 1,000 senders, each sending its next wrong attempt as soon as the last is answered, for
 *      TOKEN_FLOOD_SECONDS: no throttle in front, as on the local runtime; a stress case.
 * Goal: a real device's token p99 under 500 ms in every phase. Also reported: what the flood was answered (by status),
 * how many attempts reached a hash (401 answers), the hash's own cost on this machine, peak RSS.
 * JSON to os.tmpdir()/dss-bench/token-flood.json.
 */
import { Agent, request } from 'node:http';
import { cpus } from 'node:os';
import pLimit from 'p-limit';
import { newDeviceCredential } from '../../functions/core/devices/tokens.js';
import { DEFAULT_SETTINGS } from '../../lib/settings.js';
import { newServiceSettings, removeDataDirectory, startService, tokenFor } from '../e2e/harness.js';
import { mib, samplePeakRss } from './presigned.js';

const COMPANY = 'acme';
/** Goal: a real device's token p99 while the flood runs, ms. */
export const TOKEN_P99_GOAL_MS = 500;
/** Where the flood comes from: another loopback address, which the runtime sees as another client address. */
const FLOOD_ADDRESS = '127.0.0.2';
/** The loopback address device `index` (0-based) asks from. */
const deviceAddress = (index: number) => `127.0.1.${index + 1}`;
/** Pause between two token requests of one measured device, ms. */
const DEVICE_PAUSE_MS = 500;
/** Bursts of a burst phase, and the pause after each (once all its attempts are answered), ms. */
const BURSTS = 5;
const BURST_PAUSE_MS = 500;

/** One phase's figures. */
export interface FloodPhase {
  phase: string;
  seconds: number;
  deviceRequests: number;
  /** Answers other than 200 to the devices. */
  deviceErrors: Record<string, number>;
  deviceP50Ms: number;
  deviceP99Ms: number;
  deviceMaxMs: number;
  floodRequests: number;
  /** The flood's answers by status. */
  floodStatuses: Record<string, number>;
  floodP50Ms: number;
  floodP99Ms: number;
}

/** What the benchmark measured. */
export interface TokenFloodResult {
  devices: number;
  attempts: number;
  cpus: number;
  /** Median of 20 hashes of a device secret in this process (scrypt N=4096, r=8), ms. */
  hashMs: number;
  phases: FloodPhase[];
  runtimePeakRssBytes?: number;
}

function percentile(values: number[], fraction: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] as number;
}

/** POST {auth}/token with a form through `agent`: the status and the time to the whole answer, ms. */
function postToken(authUrl: URL, agent: Agent, body: string): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  return new Promise((done) => {
    const outgoing = request(
      {
        host: authUrl.hostname,
        port: authUrl.port,
        path: '/token',
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        response.resume();
        response.on('end', () => done({ status: response.statusCode ?? 0, ms: performance.now() - started }));
      },
    );
    outgoing.on('error', () => done({ status: -1, ms: performance.now() - started }));
    outgoing.end(body);
  });
}

const form = (clientId: string, clientSecret: string) =>
  new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }).toString();

const count = (tally: Record<string, number>, key: string) => {
  tally[key] = (tally[key] ?? 0) + 1;
};

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/** Runs the phases on a fresh local runtime. */
export async function runTokenFloodBench(
  log: (line: string) => void,
  options: { devices?: number; attempts?: number; seconds?: number } = {},
): Promise<TokenFloodResult> {
  const devices = options.devices ?? Number(process.env.TOKEN_FLOOD_DEVICES ?? 10);
  const attempts = options.attempts ?? Number(process.env.TOKEN_FLOOD_ATTEMPTS ?? 1_000);
  const seconds = options.seconds ?? Number(process.env.TOKEN_FLOOD_SECONDS ?? 10);

  const hashes: number[] = [];
  for (let run = 0; run < 20; run += 1) {
    const started = performance.now();
    await newDeviceCredential('01JBENCH000000000000000000', new Date().toISOString());
    hashes.push(performance.now() - started);
  }
  const hashMs = percentile(hashes, 0.5);
  log(`  one hash of a device secret here: ${hashMs.toFixed(1)} ms (median of 20)`);

  const settings = await newServiceSettings();
  const service = await startService(settings, { readyTimeoutMs: 180_000 });
  const deviceAgents = Array.from({ length: devices }, (_, index) => new Agent({ keepAlive: true, localAddress: deviceAddress(index) }));
  const floodAgent = new Agent({ keepAlive: true, localAddress: FLOOD_ADDRESS, maxSockets: attempts });
  const rss = samplePeakRss(service.pid);
  try {
    const alice = await tokenFor(service, 'alice');
    const json = { authorization: `Bearer ${alice}`, 'content-type': 'application/json' };
    const ids = Array.from({ length: devices }, (_, index) => `${COMPANY}-flood-bench-${String(index + 1).padStart(4, '0')}`);
    const registered = await fetch(`${service.api}/companies/${COMPANY}/resources/devices`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify(ids.map((id) => ({ id, serial: id }))),
    });
    if (registered.status !== 200) throw new Error(`registering the bench devices answered ${registered.status}`);
    const limit = pLimit(8);
    const credentials = await Promise.all(
      ids.map((id) =>
        limit(async () => {
          const issued = await fetch(`${service.api}/companies/${COMPANY}/resources/devices/${id}/credentials`, {
            method: 'POST',
            headers: json,
          });
          if (issued.status !== 201) throw new Error(`credentials of ${id} answered ${issued.status}`);
          return (await issued.json()) as { clientId: string; clientSecret: string };
        }),
      ),
    );
    const authUrl = new URL(service.auth);

    /** What a flood does: sends one wrong attempt (recorded when answered). */
    type Flood = (send: (clientId: string) => Promise<void>) => Promise<void>;

    /**
     * One phase: the devices ask in their loop while `flood` runs; a device request counts when it starts while the
     * flood has attempts unanswered (every request, in the quiet phase).
     */
    const phase = async (name: string, flood: Flood, quiet = false): Promise<FloodPhase> => {
      let stop = false;
      let outstanding = 0;
      const deviceMs: number[] = [];
      const deviceErrors: Record<string, number> = {};
      const floodMs: number[] = [];
      const floodStatuses: Record<string, number> = {};
      const send = async (clientId: string) => {
        outstanding += 1;
        const { status, ms } = await postToken(authUrl, floodAgent, form(clientId, 'wrong-secret'));
        outstanding -= 1;
        count(floodStatuses, String(status));
        floodMs.push(ms);
        // A refused connection answers at once: do not spin on it.
        if (status < 0) await sleep(10);
      };
      const started = performance.now();
      const flooding = flood(send).then(() => {
        stop = true;
      });
      const asking = credentials.map(async (credential, index) => {
        // Spread the devices' first requests over the pause.
        await sleep((index * DEVICE_PAUSE_MS) / devices);
        while (!stop) {
          const during = quiet || outstanding > 0;
          const { status, ms } = await postToken(authUrl, deviceAgents[index] as Agent, form(credential.clientId, credential.clientSecret));
          if (during) {
            deviceMs.push(ms);
            if (status !== 200) count(deviceErrors, String(status));
          }
          await sleep(DEVICE_PAUSE_MS);
        }
      });
      await Promise.all([flooding, ...asking]);
      const result: FloodPhase = {
        phase: name,
        seconds: (performance.now() - started) / 1000,
        deviceRequests: deviceMs.length,
        deviceErrors,
        deviceP50Ms: percentile(deviceMs, 0.5),
        deviceP99Ms: percentile(deviceMs, 0.99),
        deviceMaxMs: Math.max(...deviceMs),
        floodRequests: floodMs.length,
        floodStatuses,
        floodP50Ms: percentile(floodMs, 0.5),
        floodP99Ms: percentile(floodMs, 0.99),
      };
      log(
        `  ${name.padEnd(34)} ${result.seconds.toFixed(1)} s; devices: ${result.deviceRequests} requests, p50 ${result.deviceP50Ms.toFixed(1)} ms, p99 ${result.deviceP99Ms.toFixed(1)} ms, max ${result.deviceMaxMs.toFixed(0)} ms, errors ${JSON.stringify(deviceErrors)}; flood: ${result.floodRequests} requests ${JSON.stringify(floodStatuses)}, p50 ${result.floodP50Ms.toFixed(1)} ms`,
      );
      return result;
    };

    let sequence = 0;
    const unknownId = () => `${COMPANY}~flood-unknown-${(sequence += 1)}`;
    const attacked = credentials[0]?.clientId as string;
    /** BURSTS times: `attempts` wrong attempts at once, all answered, then a pause. */
    const bursts =
      (clientId: () => string): Flood =>
      async (send) => {
        for (let burst = 0; burst < BURSTS; burst += 1) {
          await Promise.all(Array.from({ length: attempts }, () => send(clientId())));
          await sleep(BURST_PAUSE_MS);
        }
      };
    /** `attempts` senders, each sending its next attempt as soon as the last is answered, for `seconds`. */
    const closedLoop: Flood = async (send) => {
      const until = performance.now() + seconds * 1000;
      await Promise.all(
        Array.from({ length: attempts }, async () => {
          while (performance.now() < until) await send(unknownId());
        }),
      );
    };
    /** Attempts at the auth API's default throttle rate (what API Gateway lets through on AWS), for `seconds`. */
    const atThrottleRate: Flood = async (send) => {
      const sent: Promise<void>[] = [];
      const until = performance.now() + seconds * 1000;
      while (performance.now() < until) {
        for (let index = 0; index < DEFAULT_SETTINGS.authThrottle.rateLimit / 100; index += 1) sent.push(send(unknownId()));
        await sleep(10);
      }
      await Promise.all(sent);
    };
    const phases: FloodPhase[] = [];
    phases.push(
      await phase(
        'quiet',
        async () => {
          await sleep(seconds * 1000);
        },
        true,
      ),
    );
    phases.push(await phase(`${BURSTS} bursts of ${attempts}, distinct ids`, bursts(unknownId)));
    phases.push(
      await phase(
        `${BURSTS} bursts of ${attempts}, one id`,
        bursts(() => attacked),
      ),
    );
    phases.push(await phase(`${DEFAULT_SETTINGS.authThrottle.rateLimit}/s, distinct ids`, atThrottleRate));
    phases.push(await phase(`${attempts} senders in a loop, distinct ids`, closedLoop));
    return {
      devices,
      attempts,
      cpus: cpus().length,
      hashMs,
      phases,
      ...(rss.peakBytes() > 0 ? { runtimePeakRssBytes: rss.peakBytes() } : {}),
    };
  } finally {
    rss.stop();
    for (const agent of deviceAgents) agent.destroy();
    floodAgent.destroy();
    await service.stop();
    await removeDataDirectory(settings);
  }
}

/** Prints the result and states the goal as MET or MISSED for each phase. */
export function reportTokenFloodBench(result: TokenFloodResult, log: (line: string) => void): void {
  log(
    `Token flood: ${result.devices} devices asking from their own addresses, ${result.attempts} wrong attempts at a time from ${FLOOD_ADDRESS}.`,
  );
  log(`  one hash: ${result.hashMs.toFixed(1)} ms on ${result.cpus} CPU(s)`);
  for (const phase of result.phases) {
    const hashed = phase.floodStatuses['401'] ?? 0;
    log(
      `  ${phase.phase.padEnd(28)} device p99 ${phase.deviceP99Ms.toFixed(1)} ms (goal < ${TOKEN_P99_GOAL_MS} ms: ${phase.deviceP99Ms < TOKEN_P99_GOAL_MS ? 'MET' : 'MISSED'}), p50 ${phase.deviceP50Ms.toFixed(1)} ms; flood ${phase.floodRequests} answered, ${hashed} hashed (${(hashed / phase.seconds).toFixed(0)}/s)`,
    );
  }
  if (result.runtimePeakRssBytes !== undefined) log(`  runtime peak RSS ${mib(result.runtimePeakRssBytes)} MiB`);
}
