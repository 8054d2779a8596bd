/**
 * The webhook benchmark (`npm run bench -- --only-webhooks`), on the local runtime started as `npm start` is (demo
 * data), with a receiver on 127.0.0.1:
 *
 * 1. **Latency.** A company admin of acme registers WEBHOOKS webhooks (WEBHOOK_BENCH_WEBHOOKS, default 100, the most
 *    a company may have): SUBSCRIBED of them (WEBHOOK_BENCH_SUBSCRIBED, default 1) to `deployment.succeeded` and
 *    `deployment.failed`, the others to event types nothing in the run causes (each event still looks them all up).
 *    KIOSKS demo kiosks get the demo scenario, then report INSTALLED and FAILED in turn at EVENTS_PER_MINUTE
 *    (WEBHOOK_BENCH_EVENTS_PER_MINUTE, default 1,000) for SECONDS (WEBHOOK_BENCH_SECONDS, default 60): each report is
 *    one durable write (the deployments table), whose stream gives a DeploymentStatusChanged bus event, whose
 *    fan-out writes a delivery, whose stream sends it. Measured: from the event's `timestamp` (when the service
 *    received the report) to the delivery's arrival at the receiver, p50 / p99 / max, every signature verified with
 *    the `standardwebhooks` package. Goal: p99 ≤ 2 s.
 * 2. **A receiver down for 10 minutes.** On a runtime whose retry schedule is divided by DIVISOR
 *    (WEBHOOK_BENCH_RETRY_DIVISOR, default 60: the schedule's 5 s, 5 min, 30 min… become 83 ms, 5 s, 30 s…), the
 *    receiver stops listening for 10 minutes of that schedule (10 s at 60) while events keep coming, then listens
 *    again. Measured: events sent, the distinct ones received, deliveries received again after the receiver had
 *    answered 2xx for them (goal: none), and how long the last one took to arrive after the receiver came back.
 *    WEBHOOK_BENCH_RETRY_DIVISOR=1 runs the real schedule (about 40 minutes).
 * JSON to os.tmpdir()/dss-bench/webhooks.json.
 */
import { createServer, type Server } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { freePort } from '../../functions/local/free-port.js';
import { type LocalService, newServiceSettings, removeDataDirectory, startService, tokenFor } from '../e2e/harness.js';
import { deviceToken } from '../support/device-token.js';

const WEBHOOKS = Number(process.env.WEBHOOK_BENCH_WEBHOOKS ?? 100);
const SUBSCRIBED = Number(process.env.WEBHOOK_BENCH_SUBSCRIBED ?? 1);
const EVENTS_PER_MINUTE = Number(process.env.WEBHOOK_BENCH_EVENTS_PER_MINUTE ?? 1_000);
const SECONDS = Number(process.env.WEBHOOK_BENCH_SECONDS ?? 60);
const DIVISOR = Number(process.env.WEBHOOK_BENCH_RETRY_DIVISOR ?? 60);
const KIOSKS = 20;
const OUTAGE_MS = 600_000 / DIVISOR;
const ADMIN_PASSWORD = 'Bench-webhooks-2026!';
/** Event types nothing in the run causes: the other webhooks subscribe to these. */
const QUIET_TYPES = ['device.connected', 'rollout.completed', 'command.expired', 'alert.raised'];

/** The latency part's figures. */
export interface WebhookLatency {
  webhooks: number;
  subscribed: number;
  eventsPerMinute: number;
  reports: number;
  deliveries: number;
  verified: number;
  /** From the event's timestamp to the delivery's arrival, ms. */
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** p99 of the events of each 10 s of the run, ms, first first: whether the latency holds or grows with the run. */
  p99By10sMs: number[];
}

/** The outage part's figures. */
export interface WebhookOutage {
  retryDivisor: number;
  outageMs: number;
  events: number;
  received: number;
  /** Deliveries received again after the receiver had answered 2xx to the same webhook-id. */
  duplicatesAfter2xx: number;
  /** Attempts the receiver answered with 2xx, all deliveries together. */
  answered: number;
  /** From the receiver's return to the last event's arrival, ms. */
  lastArrivalAfterReturnMs: number;
}

/** What the benchmark measured. */
export interface WebhookBenchResult {
  latency: WebhookLatency;
  outage: WebhookOutage;
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** One delivery as the receiver saw it. */
interface Arrival {
  id: string;
  at: number;
  timestamp: string;
  verified: boolean;
}

/** A receiver on 127.0.0.1 that verifies signatures with `secrets` and can stop listening and come back. */
async function startReceiver(secrets: () => string[]) {
  const port = await freePort();
  const arrivals: Arrival[] = [];
  const answeredIds = new Set<string>();
  let duplicatesAfter2xx = 0;
  let answered = 0;
  const listen = (): Promise<Server> => {
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const at = Date.now();
        const body = Buffer.concat(chunks).toString('utf8');
        const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, String(value)]));
        const verified = secrets().some((secret) => {
          try {
            new Webhook(secret).verify(body, headers);
            return true;
          } catch {
            return false;
          }
        });
        const id = headers['webhook-id'] ?? '';
        if (answeredIds.has(id)) duplicatesAfter2xx += 1;
        answeredIds.add(id);
        answered += 1;
        arrivals.push({ id, at, timestamp: (JSON.parse(body) as { timestamp: string }).timestamp, verified });
        response.writeHead(204).end();
      });
    });
    return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)));
  };
  let server: Server | undefined = await listen();
  return {
    url: `http://127.0.0.1:${port}/hook`,
    arrivals,
    counts: () => ({ duplicatesAfter2xx, answered }),
    down: async () => {
      const closing = server;
      server = undefined;
      if (closing === undefined) return;
      closing.closeAllConnections();
      await new Promise((resolve) => closing.close(resolve));
    },
    up: async () => {
      server ??= await listen();
    },
  };
}

type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/** A company admin of acme (the demo users have none), made by root: their token. */
async function companyAdmin(service: LocalService): Promise<string> {
  const root = await tokenFor(service, 'root');
  const invited = await fetch(`${service.api}/admin/users`, {
    method: 'POST',
    headers: { authorization: `Bearer ${root}`, 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'bench-admin', email: 'bench-admin@acme.example', role: 'company-admin', companies: ['acme'] }),
  });
  if (invited.status !== 201) throw new Error(`Inviting a company admin answered ${invited.status}: ${await invited.text()}`);
  const { temporaryPassword } = (await invited.json()) as { temporaryPassword: string };
  const token = await fetch(`${service.auth}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'bench-admin', password: temporaryPassword, new_password: ADMIN_PASSWORD }),
  });
  if (token.status !== 200) throw new Error(`The company admin's token answered ${token.status}: ${await token.text()}`);
  return ((await token.json()) as { access_token: string }).access_token;
}

/** Registers the webhooks: `subscribed` of them to the deployment events, the rest to quiet types. @returns secrets. */
async function registerWebhooks(service: LocalService, admin: string, url: string, total: number, subscribed: number): Promise<string[]> {
  const secrets: string[] = [];
  for (let index = 0; index < total; index += 1) {
    const events = index < subscribed ? ['deployment.succeeded', 'deployment.failed'] : [QUIET_TYPES[index % QUIET_TYPES.length]];
    const response = await fetch(`${service.api}/companies/acme/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${url}?webhook=${index}`, events, description: `bench ${index}` }),
    });
    if (response.status !== 201) throw new Error(`Creating a webhook answered ${response.status}: ${await response.text()}`);
    if (index < subscribed) secrets.push(((await response.json()) as { secret: string }).secret);
  }
  return secrets;
}

/** The kiosks: the demo scenario deployed on each, and a device token each. */
async function readyKiosks(service: LocalService, dataDirectory: string, dynamoPort: number) {
  const alice = await tokenFor(service, 'alice');
  const ids = Array.from({ length: KIOSKS }, (_, index) => `acme-kiosk-${String(index + 1).padStart(4, '0')}`);
  const what = { type: 'SCENARIO', id: 'acme-welcome', subId: '1.1.0' };
  const deployed = await fetch(`${service.api}/companies/acme/resources/deployments`, {
    method: 'POST',
    headers: { authorization: `Bearer ${alice}`, 'content-type': 'application/json' },
    body: JSON.stringify({ requests: ids.map((id) => ({ target: { type: 'DEVICE', id }, what, action: 'DEPLOY' })) }),
  });
  if (deployed.status !== 200) throw new Error(`Deploying answered ${deployed.status}: ${await deployed.text()}`);
  const issuer = { dataDirectory, dynamoDbEndpoint: `http://127.0.0.1:${dynamoPort}`, auth: service.auth };
  const tokens = await Promise.all(ids.map(async (id) => (await deviceToken(issuer, 'acme', id)).token));
  return { what, tokens };
}

/**
 * Reports INSTALLED and FAILED in turn from the kiosks at `perMinute` for `durationMs`.
 * @returns how many reports were recorded (204).
 */
async function report(
  service: LocalService,
  kiosks: { what: object; tokens: string[] },
  perMinute: number,
  durationMs: number,
): Promise<number> {
  const intervalMs = 60_000 / perMinute;
  const started = performance.now();
  const inFlight: Promise<void>[] = [];
  let recorded = 0;
  for (let index = 0; performance.now() - started < durationMs; index += 1) {
    const token = kiosks.tokens[index % kiosks.tokens.length] as string;
    const state = Math.floor(index / kiosks.tokens.length) % 2 === 0 ? 'INSTALLED' : 'FAILED';
    inFlight.push(
      fetch(`${service.api}/device/deployments/status`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ what: kiosks.what, state }),
      }).then(async (response) => {
        await response.arrayBuffer();
        if (response.status === 204) recorded += 1;
      }),
    );
    await sleep(Math.max(0, started + (index + 1) * intervalMs - performance.now()));
  }
  await Promise.all(inFlight);
  return recorded;
}

/** Waits until the receiver has `count` distinct deliveries, or `timeoutMs` passed. */
async function received(receiver: Receiver, count: number, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  const distinct = () => new Set(receiver.arrivals.map((arrival) => arrival.id)).size;
  while (distinct() < count && Date.now() < deadline) await sleep(200);
  return distinct();
}

/** Starts a runtime with `environment`, runs `body` on it, and stops and removes it. */
async function withService<T>(
  environment: Record<string, string>,
  body: (service: LocalService, dataDirectory: string, dynamoPort: number) => Promise<T>,
): Promise<T> {
  const settings = await newServiceSettings();
  const dynamoPort = await freePort();
  const service = await startService(settings, { environment: { DYNAMODB_PORT: String(dynamoPort), ...environment } });
  try {
    return await body(service, settings.dataDirectory, dynamoPort);
  } finally {
    await service.stop();
    await removeDataDirectory(settings);
  }
}

const percentile = (sorted: number[], fraction: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? Number.NaN;

/** Part 1: the latency from the durable change to the delivery. */
function measureLatency(): Promise<WebhookLatency> {
  return withService({}, async (service, dataDirectory, dynamoPort) => {
    let secrets: string[] = [];
    const receiver = await startReceiver(() => secrets);
    const admin = await companyAdmin(service);
    secrets = await registerWebhooks(service, admin, receiver.url, WEBHOOKS, SUBSCRIBED);
    const kiosks = await readyKiosks(service, dataDirectory, dynamoPort);
    // The deploys' own events (none are webhook events) and the stream consumers' start settle first.
    await sleep(3_000);
    const reports = await report(service, kiosks, EVENTS_PER_MINUTE, SECONDS * 1_000);
    await received(receiver, reports * SUBSCRIBED, 60_000);
    await receiver.down();
    const latencies = receiver.arrivals.map((arrival) => arrival.at - Date.parse(arrival.timestamp)).sort((a, b) => a - b);
    const first = Math.min(...receiver.arrivals.map((arrival) => Date.parse(arrival.timestamp)));
    const windows: number[][] = [];
    for (const arrival of receiver.arrivals) {
      const index = Math.floor((Date.parse(arrival.timestamp) - first) / 10_000);
      (windows[index] ??= []).push(arrival.at - Date.parse(arrival.timestamp));
    }
    return {
      webhooks: WEBHOOKS,
      subscribed: SUBSCRIBED,
      eventsPerMinute: EVENTS_PER_MINUTE,
      reports,
      deliveries: receiver.arrivals.length,
      verified: receiver.arrivals.filter((arrival) => arrival.verified).length,
      p50Ms: percentile(latencies, 0.5),
      p99Ms: percentile(latencies, 0.99),
      maxMs: latencies.at(-1) ?? Number.NaN,
      p99By10sMs: [...windows].map((window) =>
        percentile(
          (window ?? []).sort((a, b) => a - b),
          0.99,
        ),
      ),
    };
  });
}

/** Part 2: a receiver down for 10 minutes of the (divided) schedule. */
function measureOutage(): Promise<WebhookOutage> {
  return withService({ WEBHOOK_RETRY_DIVISOR: String(DIVISOR) }, async (service, dataDirectory, dynamoPort) => {
    let secrets: string[] = [];
    const receiver = await startReceiver(() => secrets);
    const admin = await companyAdmin(service);
    secrets = await registerWebhooks(service, admin, receiver.url, 1, 1);
    const kiosks = await readyKiosks(service, dataDirectory, dynamoPort);
    await sleep(3_000);
    await receiver.down();
    const events = await report(service, kiosks, EVENTS_PER_MINUTE, OUTAGE_MS);
    await receiver.up();
    const back = Date.now();
    // The longest wait of the schedule after 10 minutes down is the next retry: at most 30 min (divided), + jitter.
    const count = await received(receiver, events, (1_800_000 * 1.1) / DIVISOR + 60_000);
    await receiver.down();
    const last = Math.max(...receiver.arrivals.map((arrival) => arrival.at));
    return {
      retryDivisor: DIVISOR,
      outageMs: OUTAGE_MS,
      events,
      received: count,
      ...receiver.counts(),
      lastArrivalAfterReturnMs: last - back,
    };
  });
}

/** Runs both parts, each on a fresh local runtime with the demo data. */
export async function runWebhookBench(): Promise<WebhookBenchResult> {
  return { latency: await measureLatency(), outage: await measureOutage() };
}

/** Prints the result as a short table. */
export function reportWebhookBench(result: WebhookBenchResult, log: (line: string) => void): void {
  const { latency, outage } = result;
  log(`  webhooks (subscribed to the events)    ${latency.webhooks} (${latency.subscribed})`);
  log(`  reports at ${latency.eventsPerMinute}/min                  ${latency.reports}`);
  log(`  deliveries received / verified         ${latency.deliveries} / ${latency.verified}`);
  log(
    `  change → delivery p50 / p99 / max      ${latency.p50Ms.toFixed(0)} / ${latency.p99Ms.toFixed(0)} / ${latency.maxMs.toFixed(0)} ms (goal p99 ≤ 2,000 ms)`,
  );
  log(`  p99 of each 10 s of the run            ${latency.p99By10sMs.map((ms) => ms.toFixed(0)).join(' / ')} ms`);
  log(`  outage of 10 min at schedule ÷ ${outage.retryDivisor}       ${outage.outageMs.toFixed(0)} ms down`);
  log(`  events during the outage / received    ${outage.events} / ${outage.received}`);
  log(`  received again after a 2xx             ${outage.duplicatesAfter2xx} (answered ${outage.answered})`);
  log(`  last arrival after the return          ${outage.lastArrivalAfterReturnMs.toFixed(0)} ms`);
}
