/**
 * The console benchmark (`npm run bench -- --only-console`): the operator console in headless Chromium (Debian's, via
 * playwright-core) against the local runtime on a seeded fleet of 100,000 devices (CONSOLE_BENCH_DEVICES).
 *
 * 1. First load of `{base_url}/console` with an empty cache: the page, its script and its style sheet, each as
 *    transferred (the service gzips the script and style sheet for a browser that accepts it) and decoded, from the
 *    responses Chromium received. Goal: at most 80 KB gzip in all (the page's HTML is counted gzip-compressed too, as
 *    a CDN or a browser-facing proxy would send it; the service sends it plain, about 0.4 KB more).
 * 2. Sign-in to first results: from the token's arrival (the click on "Sign in" is timed too: the password check is a
 *    deliberately slow hash) to the fleet page showing its result count, the facet counts and the first page of
 *    100,000 devices; once on the just-started service (every handler module cold, as after a deployment) and once
 *    after signing out. Goal: at most 1 s.
 * 3. Facet clicks: 50 clicks on facet values (toggling values of the health mode and connection state fields in
 *    turn); each timed from the click to the moment both answers (the search and the filter counts) arrived and the
 *    page has rendered them (the next animation frame after the results region is no longer busy). Goal: p95 at most
 *    300 ms.
 * 4. The rollout page of a rollout of every seeded device (console-rollout.ts): navigation to its numbers shown
 *    (goal ≤ 1 s), and the requests it makes while it polls (goal: exactly one per poll).
 * Every request the page makes is recorded: none may name a device (no request per device anywhere).
 * The seeded fleet is made once (`npm run seed`, as the rollout benchmark's) and copied for the run.
 */
import { cp, rm } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import type { Page, Response } from 'playwright-core';
import { freePort } from '../../functions/local/free-port.js';
import { chromiumAvailable, launchChromium } from '../e2e/browser.js';
import { PASSWORDS } from '../e2e/console-harness.js';
import { newServiceSettings, removeDataDirectory, startService, tokenFor } from '../e2e/harness.js';
import { type RolloutPageBenchResult, rolloutPageLines, runRolloutPageBench } from './console-rollout.js';
import { seededTemplate } from './rollouts.js';

/** The first load's goal, bytes gzip (page, script and style sheet together). */
export const FIRST_LOAD_GOAL_BYTES = 80 * 1024;
/** From "Sign in" to the first results, ms. */
export const FIRST_RESULTS_GOAL_MS = 1000;
/** A facet click to updated results and counts, p95, ms. */
export const FACET_CLICK_P95_GOAL_MS = 300;
const FACET_CLICKS = 50;

/** One file of the first load. */
export interface LoadedFile {
  url: string;
  /** Bytes as sent (compressed when `Content-Encoding: gzip`). */
  transferredBytes: number;
  /** Bytes decoded. */
  decodedBytes: number;
  /** The decoded bytes gzip-compressed (level 9), bytes: what the goal counts. */
  gzipBytes: number;
  contentEncoding: string | null;
}

export interface ConsoleBenchResult {
  devices: number;
  firstLoad: { files: LoadedFile[]; gzipBytes: number; decodedBytes: number; goalBytes: number };
  /**
   * Sign-ins, each from the click on "Sign in": when the token arrived (the password check: a deliberately slow
   * scrypt hash) and when the first results were shown; the goal counts from the token to the results. The first on
   * the just-started service (every handler cold), the second after signing out (warm).
   */
  signIns: { label: string; tokenMs: number; resultsMs: number; afterTokenMs: number }[];
  firstResultsGoalMs: number;
  facetClicks: { count: number; p50Ms: number; p95Ms: number; maxMs: number; goalP95Ms: number };
  /** Requests to the API during the run, by path; the check that none is per device. */
  apiRequests: Record<string, number>;
  perDeviceRequests: number;
  /** The rollout page step (console-rollout.ts); its requests are counted there, not in `apiRequests`. */
  rolloutPage: RolloutPageBenchResult;
}

function percentile(sorted: number[], fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)] as number;
}

/** The next animation frame after the results region stopped being busy: what a person sees. */
async function rendered(page: Page): Promise<void> {
  // A function, not a string: a string predicate is evaluated with eval, which the page's Content-Security-Policy refuses.
  await page.waitForFunction(() => {
    const scope = globalThis as unknown as { document: { querySelector(selector: string): unknown } };
    return scope.document.querySelector('[aria-busy="true"]') === null;
  });
  await page.evaluate('new Promise((done) => requestAnimationFrame(() => done(undefined)))');
}

/** Waits for the search's and the filter counts' answers that follow an action, and their rendering. */
async function afterAction(page: Page, act: () => Promise<void>): Promise<number> {
  const isSearch = (response: Response) => new URL(response.url()).pathname.endsWith('/resources/search');
  const isFilters = (response: Response) => new URL(response.url()).pathname.endsWith('/resources/search/filters');
  const started = performance.now();
  const answers = Promise.all([page.waitForResponse(isSearch), page.waitForResponse(isFilters)]);
  await act();
  await answers;
  await rendered(page);
  return performance.now() - started;
}

/** Runs the benchmark (see the module comment). @throws Error when Chromium is missing */
export async function runConsoleBench(options: { devices?: number } = {}): Promise<ConsoleBenchResult> {
  if (!chromiumAvailable()) throw new Error('The console benchmark needs Chromium (/usr/bin/chromium: apt-get install chromium).');
  const devices = options.devices ?? Number(process.env.CONSOLE_BENCH_DEVICES ?? 100_000);
  const template = await seededTemplate(devices);
  const settings = await newServiceSettings();
  await rm(settings.dataDirectory, { recursive: true, force: true });
  await cp(template, settings.dataDirectory, { recursive: true });
  const dynamoDbPort = await freePort();
  const service = await startService(settings, {
    readyTimeoutMs: 900_000,
    environment: { DYNAMODB_PORT: String(dynamoDbPort), SIMULATE: '0' },
  });
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const apiRequests: Record<string, number> = {};
    let counting = true;
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (!counting) return;
      if (!url.pathname.startsWith('/console')) apiRequests[url.pathname] = (apiRequests[url.pathname] ?? 0) + 1;
    });

    const responses: Response[] = [];
    page.on('response', (response) => {
      if (new URL(response.url()).pathname.startsWith('/console')) responses.push(response);
    });
    await page.goto(`${service.api}/console#/fleet`, { waitUntil: 'load' });
    const files: LoadedFile[] = [];
    for (const response of responses) {
      const body = await response.body();
      const headers = await response.allHeaders();
      const sizes = await response.request().sizes();
      files.push({
        url: response.url(),
        transferredBytes: sizes.responseBodySize,
        decodedBytes: body.byteLength,
        gzipBytes: gzipSync(body, { level: 9 }).byteLength,
        contentEncoding: headers['content-encoding'] ?? null,
      });
    }

    const signIns: ConsoleBenchResult['signIns'] = [];
    for (const label of ['cold (first after start)', 'warm (after signing out)']) {
      if (signIns.length > 0) await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByLabel('Username').fill('alice');
      await page.getByLabel('Password').fill(PASSWORDS.alice);
      const started = performance.now();
      let tokenMs = Number.NaN;
      const token = page
        .waitForResponse((response) => new URL(response.url()).pathname.endsWith('/token'))
        .then(() => {
          tokenMs = performance.now() - started;
        });
      const resultsMs = await afterAction(page, () => page.getByRole('button', { name: 'Sign in' }).click());
      await token;
      signIns.push({ label, tokenMs, resultsMs, afterTokenMs: resultsMs - tokenMs });
    }

    const values = [
      ...(await page.getByRole('group', { name: 'Health mode' }).getByRole('checkbox').all()).slice(0, 3),
      ...(await page.getByRole('group', { name: 'Connection state' }).getByRole('checkbox').all()).slice(0, 3),
    ];
    if (values.length === 0) throw new Error('The fleet page shows no facet values to click.');
    const clicks: number[] = [];
    for (let index = 0; index < FACET_CLICKS; index += 1) {
      const value = values[index % values.length];
      if (value === undefined || !(await value.isEnabled())) continue;
      clicks.push(await afterAction(page, () => value.click()));
    }
    const sorted = [...clicks].sort((a, b) => a - b);
    counting = false;
    const issuer = { dataDirectory: settings.dataDirectory, dynamoDbEndpoint: `http://127.0.0.1:${dynamoDbPort}`, auth: service.auth };
    const rolloutPage = await runRolloutPageBench(page, service, issuer, await tokenFor(service, 'alice'));
    const perDeviceRequests = Object.keys(apiRequests).filter((path) => /\/devices\/[^/]+$/.test(path)).length;
    return {
      devices,
      firstLoad: {
        files,
        gzipBytes: files.reduce((sum, file) => sum + file.gzipBytes, 0),
        decodedBytes: files.reduce((sum, file) => sum + file.decodedBytes, 0),
        goalBytes: FIRST_LOAD_GOAL_BYTES,
      },
      signIns,
      firstResultsGoalMs: FIRST_RESULTS_GOAL_MS,
      facetClicks: {
        count: clicks.length,
        p50Ms: percentile(sorted, 0.5),
        p95Ms: percentile(sorted, 0.95),
        maxMs: sorted.at(-1) ?? Number.NaN,
        goalP95Ms: FACET_CLICK_P95_GOAL_MS,
      },
      apiRequests,
      perDeviceRequests,
      rolloutPage,
    };
  } finally {
    await browser.close();
    await service.stop();
    await removeDataDirectory(settings);
  }
}

/** Prints the result with each goal met or missed. */
export function reportConsoleBench(result: ConsoleBenchResult): void {
  const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
  const verdict = (ok: boolean) => (ok ? 'goal met' : 'GOAL MISSED');
  const lines = [
    `  fleet: ${result.devices.toLocaleString('en-US')} devices`,
    '  first load of /console (empty cache):',
    ...result.firstLoad.files.map(
      (file) =>
        `    ${new URL(file.url).pathname}: ${kb(file.decodedBytes)} decoded, ${kb(file.transferredBytes)} transferred${file.contentEncoding === null ? '' : ` (${file.contentEncoding})`}, ${kb(file.gzipBytes)} gzip`,
    ),
    `    in all: ${kb(result.firstLoad.gzipBytes)} gzip (${kb(result.firstLoad.decodedBytes)} decoded); goal ≤ ${kb(result.firstLoad.goalBytes)}: ${verdict(result.firstLoad.gzipBytes <= result.firstLoad.goalBytes)}`,
    ...result.signIns.map(
      (signIn) =>
        `  sign-in, ${signIn.label}: token after ${signIn.tokenMs.toFixed(0)} ms, first results after ${signIn.resultsMs.toFixed(0)} ms, so ${signIn.afterTokenMs.toFixed(0)} ms after signing in; goal ≤ ${result.firstResultsGoalMs} ms: ${verdict(signIn.afterTokenMs <= result.firstResultsGoalMs)}`,
    ),
    `  facet click to updated results and counts (${result.facetClicks.count} clicks): p50 ${result.facetClicks.p50Ms.toFixed(0)} ms, p95 ${result.facetClicks.p95Ms.toFixed(0)} ms, max ${result.facetClicks.maxMs.toFixed(0)} ms; goal p95 ≤ ${result.facetClicks.goalP95Ms} ms: ${verdict(result.facetClicks.p95Ms <= result.facetClicks.goalP95Ms)}`,
    `  API requests: ${Object.entries(result.apiRequests)
      .map(([path, count]) => `${path} ×${count}`)
      .join(', ')}; per device: ${result.perDeviceRequests}`,
    ...rolloutPageLines(result.rolloutPage),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}
