/**
 * The console benchmark's rollout page step (console.ts runs it after its facet clicks, on the same service and
 * signed-in page): the page of a rollout targeting every seeded device (100,000).
 *
 * Set-up, through the API and not measured by the goals: a rollout of every device of the seeded company (query
 * `type=DEVICE`) in waves of 100, 1,000 and the rest (failure threshold 50 %, wave timeout 1 h) is created with one
 * POST (its duration is printed); the 100 devices of wave 1 report (device tokens signed with the local issuer's key),
 * 10 of them FAILED with one of two messages and 90 INSTALLED, so that wave 1 completes and wave 2 runs, deployed to
 * and waiting for its 1,000 devices' reports: a live rollout with failures to show.
 *
 * 1. Load: LOADS times, the page `#/rollouts/<company>/<id>` opened as a new document (after `about:blank`; the
 *    session stays in sessionStorage): from the navigation to the waves table showing every wave's numbers (the next
 *    animation frame after). Goal: every load ≤ 1 s. Also timed: until the failed devices are shown, grouped.
 * 2. Polling: while 60 devices of wave 2 report INSTALLED one every 250 ms (so that the rollout's counts change
 *    between two reads, as in a live rollout; the window starts once the API counts the first), every request the page
 *    makes is counted over the next POLLS reads of the rollout (about 2 s apart), and 0.5 s after the last. Goal: exactly one request per poll, the rollout's GET: no
 *    request per wave or per device, and no read of the targets listing while the failures stay the same. The
 *    requests of the load itself (the rollout's GET and the failures section's reads of the targets listing) are
 *    counted apart.
 */
import type { Page, Request, Response } from 'playwright-core';
import type { LocalService } from '../e2e/harness.js';
import { deviceToken, type LocalIssuer } from '../support/device-token.js';

/** Navigation to the rollout's numbers shown, ms: the goal of each load. */
export const ROLLOUT_PAGE_LOAD_GOAL_MS = 1000;
const LOADS = 5;
const POLLS = 5;
const COMPANY = 'acme';
const SCENARIO = { type: 'SCENARIO', id: 'acme-welcome', subId: '1.1.0' } as const;
const WAVES = [100, 1_000];
const FAILED_IN_WAVE_1 = 10;
const MESSAGES = ['Not enough storage for the scenario.', 'The display driver stopped during the installation.'];
const TRICKLE_DEVICES = 60;
const TRICKLE_EVERY_MS = 250;
/** Refusals of the runtime's admission control (503) seen by the reports: it sheds load on a busy machine. */
let shed = 0;

/** What the rollout page step measured. */
export interface RolloutPageBenchResult {
  rolloutId: string;
  targets: number;
  waves: { size: number; state: string; counts: Record<string, number> }[];
  /** The create request, ms (targets resolved and their chunks written). */
  createMs: number;
  /** From the create request to wave 1 completed and wave 2 deployed (the devices' reports included), ms. */
  settleMs: number;
  /** Each load: navigation to the numbers shown, and to the failed devices shown, ms; the API requests made until then, by kind. */
  loads: { numbersMs: number; failuresMs: number; requests: Record<string, number> }[];
  goalMs: number;
  /** The polling window: rollout reads seen, how many of them answered changed counts, and every API request by kind. */
  polling: { polls: number; changed: number; requests: Record<string, number>; perPoll: number };
  /** Status reports refused by the runtime's admission control (503) and sent again. */
  shedReports: number;
}

/** The kind of an API request of the page: `rollout GET`, `targets GET (deviceStatus=FAILED)`, … or its path. */
function kindOf(request: Request, rolloutId: string): string {
  const url = new URL(request.url());
  const base = `/companies/${COMPANY}/resources/rollouts/${rolloutId}`;
  const filters = [...url.searchParams.keys()].filter((name) => name !== 'limit' && name !== 'cursor');
  const query = filters.length === 0 ? '' : ` (${filters.map((name) => `${name}=${url.searchParams.get(name)}`).join('&')})`;
  if (url.pathname === base) return `rollout ${request.method()}`;
  if (url.pathname === `${base}/targets`) return `targets ${request.method()}${query}`;
  return `${request.method()} ${url.pathname}`;
}

/** Counts the page's API requests (not the console's own files) by kind until `stop()`. */
function countRequests(page: Page, service: LocalService, rolloutId: string) {
  const counts: Record<string, number> = {};
  const api = new URL(service.api).origin;
  const listener = (request: Request) => {
    const url = new URL(request.url());
    if (url.origin !== api || url.pathname.startsWith('/console')) return;
    const kind = kindOf(request, rolloutId);
    counts[kind] = (counts[kind] ?? 0) + 1;
  };
  page.on('request', listener);
  return {
    counts,
    stop: () => {
      page.off('request', listener);
      return counts;
    },
  };
}

/** Posts a terminal status for the scenario version as `token`'s device, again while its deployment is not written (404). */
async function report(service: LocalService, token: string, state: 'INSTALLED' | 'FAILED', message?: string): Promise<void> {
  for (;;) {
    const response = await fetch(`${service.api}/device/deployments/status`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ what: SCENARIO, state, ...(message === undefined ? {} : { message }) }),
    });
    await response.arrayBuffer();
    if (response.status === 204) return;
    // 404: its deployment is not written yet; 503: the runtime's admission control sheds load, come back later.
    if (response.status !== 404 && response.status !== 503) throw new Error(`a status report answered ${response.status}`);
    if (response.status === 503) shed += 1;
    // Its Retry-After, at most 2 s: the reports during the polling must keep coming.
    const wait = response.status === 503 ? 1000 * Math.min(2, Number(response.headers.get('retry-after') ?? 1)) : 200;
    await new Promise((done) => setTimeout(done, wait));
  }
}

/** An API GET as alice. @throws Error on any status but 200 */
async function get<T>(service: LocalService, token: string, path: string): Promise<T> {
  const response = await fetch(`${service.api}${path}`, { headers: { authorization: `Bearer ${token}` } });
  if (response.status !== 200) throw new Error(`GET ${path} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as T;
}

/** Device tokens for `ids`, 8 made at a time (each stores a credential with a deliberately slow hash). */
async function tokensOf(issuer: LocalIssuer, ids: string[]): Promise<string[]> {
  const tokens: string[] = [];
  for (let start = 0; start < ids.length; start += 8) {
    const batch = await Promise.all(ids.slice(start, start + 8).map(async (id) => (await deviceToken(issuer, COMPANY, id)).token));
    tokens.push(...batch);
  }
  return tokens;
}

type RolloutAnswer = { id: string; state: string; targets: number; waves: RolloutPageBenchResult['waves'] };

/** Creates the rollout and brings it to wave 2 running with wave 1's reports in (see the module comment). */
async function seedRollout(service: LocalService, issuer: LocalIssuer, alice: string) {
  const started = performance.now();
  const response = await fetch(`${service.api}/companies/${COMPANY}/resources/rollouts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${alice}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      action: 'DEPLOY',
      what: SCENARIO,
      targets: { query: 'type=DEVICE' },
      waves: WAVES,
      failureThreshold: 0.5,
      waveTimeoutSeconds: 3600,
      note: 'console benchmark: the rollout page',
    }),
  });
  if (response.status !== 202) throw new Error(`creating the rollout answered ${response.status}: ${await response.text()}`);
  const created = (await response.json()) as RolloutAnswer;
  const createMs = performance.now() - started;
  process.stdout.write(
    `  rollout ${created.id}: ${created.targets.toLocaleString('en-US')} targets, created in ${createMs.toFixed(0)} ms\n`,
  );
  const path = `/companies/${COMPANY}/resources/rollouts/${created.id}`;
  const idsOf = async (wave: number, limit: number) =>
    (await get<{ items: { deviceId: string }[] }>(service, alice, `${path}/targets?wave=${wave}&limit=${limit}`)).items.map(
      (item) => item.deviceId,
    );
  const first = await idsOf(1, WAVES[0] as number);
  const trickle = await idsOf(2, TRICKLE_DEVICES);
  const firstTokens = await tokensOf(issuer, first);
  // 8 at a time, as a fleet's reports arrive spread out.
  for (let start = 0; start < firstTokens.length; start += 8) {
    await Promise.all(
      firstTokens
        .slice(start, start + 8)
        .map((token, offset) =>
          start + offset < FAILED_IN_WAVE_1
            ? report(service, token, 'FAILED', MESSAGES[(start + offset) % MESSAGES.length])
            : report(service, token, 'INSTALLED'),
        ),
    );
  }
  let rollout = created;
  while (!(rollout.waves[0]?.state === 'COMPLETED' && (rollout.waves[1]?.counts.SUCCESS ?? 0) >= (rollout.waves[1]?.size ?? 0))) {
    if (rollout.state !== 'RUNNING') throw new Error(`the rollout is ${rollout.state}, not RUNNING`);
    await new Promise((done) => setTimeout(done, 250));
    rollout = await get<RolloutAnswer>(service, alice, path);
  }
  const settleMs = performance.now() - started;
  return { rollout, createMs, settleMs, trickleTokens: await tokensOf(issuer, trickle) };
}

/** The waves table shows a row per wave (read from the page: the numbers are its text), then the next frame. */
async function numbersShown(page: Page, waves: number): Promise<void> {
  // A function, not a string: a string predicate is evaluated with eval, which the page's Content-Security-Policy refuses.
  await page.waitForFunction(
    (rows) => {
      const scope = globalThis as unknown as { document: { querySelectorAll(selector: string): { length: number } } };
      return scope.document.querySelectorAll('table.waves tbody tr').length === rows;
    },
    waves,
    { timeout: 60_000 },
  );
  await page.evaluate('new Promise((done) => requestAnimationFrame(() => done(undefined)))');
}

/** The failures section shows its groups (or says none failed). */
async function failuresShown(page: Page): Promise<void> {
  await page.waitForFunction(
    () => {
      const scope = globalThis as unknown as { document: { querySelector(selector: string): unknown } };
      return scope.document.querySelector('ul.failure-groups') !== null;
    },
    undefined,
    { timeout: 300_000 },
  );
}

/**
 * Runs the step on `page` (signed in as alice on `service`), seeding the rollout first. `issuer` makes the reporting
 * devices' tokens; `alice` is her API token.
 */
export async function runRolloutPageBench(
  page: Page,
  service: LocalService,
  issuer: LocalIssuer,
  alice: string,
): Promise<RolloutPageBenchResult> {
  const { rollout, createMs, settleMs, trickleTokens } = await seedRollout(service, issuer, alice);
  const url = `${service.api}/console#/rollouts/${COMPANY}/${rollout.id}`;
  const loads: RolloutPageBenchResult['loads'] = [];
  for (let index = 0; index < LOADS; index += 1) {
    await page.goto('about:blank');
    const counter = countRequests(page, service, rollout.id);
    const started = performance.now();
    await page.goto(url);
    await numbersShown(page, rollout.waves.length);
    const numbersMs = performance.now() - started;
    await failuresShown(page);
    const failuresMs = performance.now() - started;
    loads.push({ numbersMs, failuresMs, requests: { ...counter.stop() } });
  }

  // Polling: wave 2's devices report meanwhile, so the counts change from one read to the next.
  let trickling = true;
  const trickle = (async () => {
    for (const token of trickleTokens) {
      if (!trickling) return;
      await report(service, token, 'INSTALLED');
      await new Promise((done) => setTimeout(done, TRICKLE_EVERY_MS));
    }
  })();
  const path = `/companies/${COMPANY}/resources/rollouts/${rollout.id}`;
  while (((await get<RolloutAnswer>(service, alice, path)).waves[1]?.counts.INSTALLED ?? 0) === 0) {
    await new Promise((done) => setTimeout(done, 200));
  }
  const counter = countRequests(page, service, rollout.id);
  const base = new URL(`/companies/${COMPANY}/resources/rollouts/${rollout.id}`, service.api).pathname;
  const isPoll = (response: Response) => new URL(response.url()).pathname === base && response.request().method() === 'GET';
  let changed = 0;
  let before = '';
  for (let poll = 0; poll < POLLS; poll += 1) {
    const answer = (await (await page.waitForResponse(isPoll, { timeout: 30_000 })).json()) as RolloutAnswer;
    const counts = JSON.stringify(answer.waves.map((wave) => wave.counts));
    if (before !== '' && counts !== before) changed += 1;
    before = counts;
  }
  // Whatever the last answer set off (a read of the failures) is counted too: the next poll is 2 s away.
  await page.evaluate('new Promise((done) => setTimeout(done, 500))');
  const requests = { ...counter.stop() };
  trickling = false;
  await trickle;
  const total = Object.values(requests).reduce((sum, value) => sum + value, 0);
  const settled = await get<RolloutAnswer>(service, alice, `/companies/${COMPANY}/resources/rollouts/${rollout.id}`);
  return {
    rolloutId: rollout.id,
    targets: rollout.targets,
    waves: settled.waves,
    createMs,
    settleMs,
    loads,
    goalMs: ROLLOUT_PAGE_LOAD_GOAL_MS,
    polling: { polls: POLLS, changed, requests, perPoll: total / POLLS },
    shedReports: shed,
  };
}

/** The step's lines in the console benchmark's report, each goal met or missed. */
export function rolloutPageLines(result: RolloutPageBenchResult): string[] {
  const verdict = (ok: boolean) => (ok ? 'goal met' : 'GOAL MISSED');
  const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
  const median = (values: number[]) => sorted(values)[Math.floor(values.length / 2)] ?? Number.NaN;
  const numbers = result.loads.map((load) => load.numbersMs);
  const failures = result.loads.map((load) => load.failuresMs);
  const list = (requests: Record<string, number>) =>
    Object.entries(requests)
      .map(([kind, count]) => `${kind} ×${count}`)
      .join(', ') || 'none';
  const pollRequests = result.polling.requests;
  const onlyRolloutReads = Object.keys(pollRequests).every((kind) => kind === 'rollout GET');
  return [
    `  rollout page of a rollout of ${result.targets.toLocaleString('en-US')} devices (waves ${result.waves.map((wave) => `${wave.size.toLocaleString('en-US')} ${wave.state}`).join(', ')}):`,
    `    set-up (not a goal): created in ${result.createMs.toFixed(0)} ms; wave 1 reported and wave 2 deployed ${(result.settleMs / 1000).toFixed(1)} s after (${result.shedReports} device reports shed with 503 and sent again)`,
    `    load, navigation to the waves' numbers shown (${result.loads.length} loads): ${numbers.map((ms) => ms.toFixed(0)).join(', ')} ms; median ${median(numbers).toFixed(0)} ms, max ${Math.max(...numbers).toFixed(0)} ms; goal each ≤ ${result.goalMs} ms: ${verdict(Math.max(...numbers) <= result.goalMs)}`,
    `    load, navigation to the failed devices shown: median ${median(failures).toFixed(0)} ms, max ${Math.max(...failures).toFixed(0)} ms`,
    `    requests of the first load, until its failed devices were shown (polls included): ${list(result.loads[0]?.requests ?? {})}`,
    `    polling (${result.polling.polls} polls, ${result.polling.changed} of them with changed counts): ${list(pollRequests)}; ${result.polling.perPoll.toFixed(1)} requests per poll; goal exactly 1 (the rollout's GET): ${verdict(result.polling.perPoll === 1 && onlyRolloutReads)}`,
  ];
}
