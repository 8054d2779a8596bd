/**
 * End-to-end over `npm start`, in headless Chromium: an operator's whole rollout, in one page that is never reloaded.
 * Six simulated kiosks (test/e2e/simulated-kiosks.ts) have reported their health but pull nothing until the test sets
 * them going, so that each wave ends when the test says: two that install (wave 1), two whose installs fail (wave 2),
 * two that stay quiet (wave 3). Alice filters the fleet by two of its version facet values (the kiosks' firmware,
 * which no demo device has), opens "Roll out to these 6 devices…", checks the preview against the search and filters
 * endpoints for the same query, and creates a rollout in three waves of 2 with a failure threshold of 50 %. The
 * rollout page then shows, by its own polling, wave 1 running and completing once its kiosks install, wave 2 running
 * and completing with its failures, the rollout paused with the reason and the failed devices grouped by message (as
 * the targets listing gives them), wave 3 running after Resume, and CANCELLED after a confirmed Cancel. A mark put on
 * `window` after the page opened stays: nothing reloaded it. The page reads the rollout's targets only for its
 * failures: not while none failed, then for the failing wave alone.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectOk, type operations } from '../../client/index.js';
import type { SimulatedFleet } from '../../simulator/fleet.js';
import { chromiumAvailable, launchChromium } from './browser.js';
import { expectAccessible, screenshot, signedIn } from './console-harness.js';
import { clientFor, eventually, useLocalService } from './harness.js';
import { expectedBreakdown, failedTargets, previewTables, readRollout } from './rollout-reads.js';
import { readySimulatedKiosks } from './simulated-kiosks.js';

const hasChromium = chromiumAvailable();
if (!hasChromium) console.warn('Chromium not installed and could not be installed: skipping the console rollout scenario');

const COMPANY = 'acme';
const VERSION = 'acme-welcome@1.1.0';
// The sweeper looks at running rollouts every 200 ms: a wave ends within a poll of the page once its reports are in.
const local = useLocalService({ users: ['alice'], environment: { ROLLOUT_SWEEP_INTERVAL_MS: '200', ROLLOUT_CHUNK_TIMEOUT_SECONDS: '2' } });

/**
 * The fleet page's filter: the simulated kiosks report firmware version codes 41 and 42 (simulatedHealth: 40 + n % 3
 * for kiosk n, here n = 1 and 2 of each prefix); the demo devices' codes are five-digit.
 */
const VERSION_CODES = ['41', '42'];
const FILTERS = { 'health.versionCode': VERSION_CODES };
/** The fields the preview breaks the targets down by (BREAKDOWN_FIELDS of console/src/compose/plan.ts). */
const BREAKDOWN_FIELDS = ['health.versionCode', 'health.mode', 'health.hubs.devices.capability.type', 'connection.state'];
/** Sorted by id, as the rollout takes them: a-* form wave 1, b-* wave 2, c-* wave 3. */
const PREFIXES = { installs: 'acme-scen-a-', fails: 'acme-scen-b-', quiet: 'acme-scen-c-' };
const KIOSKS = Object.values(PREFIXES).flatMap((prefix) => [`${prefix}01`, `${prefix}02`]);

const alice = () => clientFor(local.service, local.tokens.alice);

/** What the tests read of an element in the page (the root project has no DOM types). */
interface Element {
  textContent: string | null;
  children: ArrayLike<Element>;
  getAttribute(name: string): string | null;
}

let browser: Browser;
const fleets: Record<keyof typeof PREFIXES, SimulatedFleet | undefined> = { installs: undefined, fails: undefined, quiet: undefined };

/** The search API's total and device ids for the filter. */
async function apiSearch(): Promise<{ total: number; ids: string[] }> {
  const query = { ...FILTERS, type: ['DEVICE'], pageSize: '100' } as unknown as operations['Search']['parameters']['query'];
  const answer = expectOk(await alice().main.GET('/resources/search', { params: { query } }));
  return { total: answer.total, ids: answer.resources.map((resource) => resource.id) };
}

/** The filters endpoint's answer for the filter. */
async function apiFilters() {
  const query = { ...FILTERS, type: 'DEVICE' } as unknown as operations['SearchFilters']['parameters']['query'];
  return expectOk(await alice().main.GET('/resources/search/filters', { params: { query } })).items;
}

/** The waves table as the page shows it: per wave its size, state and each counted key (by `data-key`). */
async function waveRows(page: Page, rolloutId: string) {
  const table = page.getByRole('table', { name: `Waves of rollout ${rolloutId}`, exact: true });
  await table.waitFor();
  const keys = await table
    .locator('thead th[data-key]')
    .evaluateAll((cells: Element[]) => cells.map((cell) => cell.getAttribute('data-key') ?? ''));
  const rows = await table
    .locator('tbody tr')
    .evaluateAll((trs: Element[]) => trs.map((tr) => Array.from(tr.children, (cell) => (cell.textContent ?? '').trim())));
  return rows.map(([, size, state, ...values]) => ({
    size: Number(size?.replaceAll(',', '')),
    state: state ?? '',
    counts: Object.fromEntries(keys.map((key, index) => [key, Number(values[index]?.replaceAll(',', ''))])) as Record<string, number>,
  }));
}

/** The waves' states and the rollout's state as the page shows them, e.g. `Running: Completed, Running, Pending`. */
async function shownStates(page: Page, rolloutId: string): Promise<string> {
  const waves = await waveRows(page, rolloutId);
  return `${await page.locator('.rollout-state').textContent()}: ${waves.map((wave) => wave.state).join(', ')}`;
}

/** The same as the API's waves: every key the page counts, 0 when the API has none. */
async function expectWavesAsApi(page: Page, rolloutId: string): Promise<void> {
  const shown = await waveRows(page, rolloutId);
  const rollout = await readRollout(alice(), COMPANY, rolloutId);
  const keys = Object.keys(shown[0]?.counts ?? {});
  for (const wave of rollout.waves) for (const key of Object.keys(wave.counts)) expect(keys).toContain(key);
  expect(shown).toEqual(
    rollout.waves.map((wave) => ({
      size: wave.size,
      state: wave.state.charAt(0) + wave.state.slice(1).toLowerCase(),
      counts: Object.fromEntries(keys.map((key) => [key, wave.counts[key] ?? 0])),
    })),
  );
}

beforeAll(async () => {
  if (!hasChromium) return;
  browser = await launchChromium();
  fleets.installs = await readySimulatedKiosks(local, { company: COMPANY, prefix: PREFIXES.installs, count: 2, failureRate: 0 });
  fleets.fails = await readySimulatedKiosks(local, { company: COMPANY, prefix: PREFIXES.fails, count: 2, failureRate: 1 });
  fleets.quiet = await readySimulatedKiosks(local, { company: COMPANY, prefix: PREFIXES.quiet, count: 2, failureRate: 0 });
  // The search index follows the health reports: wait until the filter finds the six kiosks.
  await eventually(async () => (await apiSearch()).total === KIOSKS.length, 'the six kiosks found by their version codes', 60_000);
}, 180_000);

afterAll(async () => {
  await Promise.all(Object.values(fleets).map((fleet) => fleet?.stop()));
  await browser?.close();
});

describe.skipIf(!hasChromium)('the console rollout scenario', () => {
  it('filters, previews, creates a 3-wave rollout and follows it wave by wave to a pause, a resume and a cancel', async () => {
    const { page, errors, requested } = await signedIn(browser, local.service, 'alice', '#/fleet');
    const targetReads = () => requested.filter((url) => new URL(url).pathname.endsWith('/targets')).map((url) => new URL(url).search);

    // Filter by the version facet: the two values of the simulated kiosks' firmware, as the filters endpoint names them.
    const version = (await apiFilters()).find((descriptor) => descriptor.field === 'health.versionCode');
    const facet = page.getByRole('group', { name: version?.name ?? 'Version' });
    for (const code of VERSION_CODES) {
      const value = version?.definition.parameters.find((parameter) => parameter.value === code);
      expect(value, `version ${code} in the filters`).toBeDefined();
      await facet.getByRole('checkbox', { name: `${value?.name} (${value?.count})`, exact: true }).check();
    }
    await expect.poll(() => new URL(page.url()).hash).toBe('#/fleet?health.versionCode=41&health.versionCode=42');
    const search = await apiSearch();
    expect(search.total).toBe(KIOSKS.length);
    expect([...search.ids].sort()).toEqual(KIOSKS);

    // The form and its preview, against the API for the same query.
    await page.getByRole('button', { name: `Roll out to these ${search.total} devices…` }).click();
    await page.getByLabel('Scenario version').selectOption(VERSION);
    await page.getByLabel('Wave sizes').fill('2, 2');
    await page.getByLabel('Failure threshold (%)').fill('50');
    await page.getByLabel('Note').fill('scenario test');
    await expect.poll(() => page.locator('.compose-targets').textContent()).toBe(`Targets: ${search.total} devices`);
    await expect.poll(() => page.locator('.compose-waves').textContent()).toBe('Wave 1: 2, wave 2: 2, wave 3: 2 (the rest)');
    const breakdown = await expectedBreakdown(alice(), FILTERS, BREAKDOWN_FIELDS);
    await expect.poll(() => previewTables(page), { timeout: 15_000 }).toEqual(breakdown);
    // And what the kiosks are: three of each version, each with a printer and a card terminal.
    expect(breakdown[version?.name ?? 'Version']?.map(([, devices]) => devices)).toEqual(['3', '3']);
    expect(breakdown['Sub-device capability']?.map(([, devices]) => devices)).toEqual(['6', '6']);

    await page.getByRole('button', { name: 'Create rollout' }).click();
    await expect.poll(() => new URL(page.url()).hash, { timeout: 15_000 }).toMatch(/^#\/rollouts\/acme\/[0-9A-Za-z]+$/);
    const rolloutId = new URL(page.url()).hash.split('/')[3] ?? '';
    await page.getByRole('heading', { level: 1, name: `Rollout ${rolloutId}` }).waitFor();
    // From here on the page is only watched: a reload or a navigation would drop this mark.
    await page.evaluate((mark) => Object.assign(globalThis, { scenarioMark: mark }), rolloutId);
    const created = await readRollout(alice(), COMPANY, rolloutId);
    expect(created).toMatchObject({
      targets: 6,
      failureThreshold: 0.5,
      note: 'scenario test',
      what: { id: 'acme-welcome', subId: '1.1.0' },
    });
    expect(created.waves.map((wave) => wave.size)).toEqual([2, 2, 2]);

    // Wave 1 deploys to its kiosks, which have not pulled yet: it runs until they report.
    await expect.poll(() => shownStates(page, rolloutId), { timeout: 60_000 }).toBe('Running: Running, Pending, Pending');
    await expect.poll(async () => (await waveRows(page, rolloutId))[0]?.counts.SUCCESS, { timeout: 60_000 }).toBe(2);

    // Its kiosks install: wave 1 completes and wave 2 runs (its kiosks have not pulled yet either).
    await fleets.installs?.start();
    await expect.poll(() => shownStates(page, rolloutId), { timeout: 60_000 }).toBe('Running: Completed, Running, Pending');
    expect((await waveRows(page, rolloutId))[0]?.counts).toMatchObject({ SUCCESS: 2, INSTALLED: 2, FAILED: 0 });
    // Nothing failed so far: the page says so from the rollout's counts, without reading its targets.
    await page.getByRole('region', { name: 'Why devices failed' }).getByText('No device has failed.').waitFor();
    expect(targetReads()).toEqual([]);

    // Wave 2's kiosks fail their installs: it completes, and 2 of 2 FAILED (above 50 %) pause the rollout before wave 3.
    await fleets.fails?.start();
    await expect.poll(() => shownStates(page, rolloutId), { timeout: 60_000 }).toBe('Paused: Completed, Completed, Pending');
    const paused = await readRollout(alice(), COMPANY, rolloutId);
    expect(paused.state).toBe('PAUSED');
    expect(paused.pausedReason).toMatch(/^Wave 2: 2 of 2 devices reported FAILED/);
    await expect.poll(() => page.locator('.paused-reason').textContent()).toBe(`Paused: ${paused.pausedReason}`);
    await expectWavesAsApi(page, rolloutId);

    // The failed devices, grouped by the message they reported, as the targets listing has them.
    const expected = new Map<string, string[]>();
    for (const target of await failedTargets(alice(), COMPANY, rolloutId)) {
      const message = target.deviceStatus?.message || 'No message';
      expected.set(message, [...(expected.get(message) ?? []), target.deviceId]);
    }
    expect([...expected.values()].flat().sort()).toEqual([`${PREFIXES.fails}01`, `${PREFIXES.fails}02`]);
    const failures = page.getByRole('region', { name: 'Why devices failed' });
    for (const [message, ids] of expected) {
      const group = failures.getByRole('list', { name: `Reported failed: ${message}` });
      await group.waitFor({ timeout: 30_000 });
      const links = await group
        .getByRole('link')
        .evaluateAll((anchors: Element[]) => anchors.map((anchor) => [anchor.textContent, anchor.getAttribute('href')]));
      expect(links).toEqual(ids.map((id) => [id, `#/devices/acme/${id}`]));
    }
    await expectAccessible(page, 'paused rollout page');
    await screenshot(page, 'console-rollout-paused.png');

    // Resume: wave 3 starts and deploys to its kiosks, which stay quiet, so it runs on, waiting for their reports.
    await page.getByRole('button', { name: 'Resume rollout' }).click();
    await expect.poll(() => shownStates(page, rolloutId), { timeout: 60_000 }).toBe('Running: Completed, Completed, Running');
    await expect.poll(async () => (await waveRows(page, rolloutId))[2]?.counts.SUCCESS, { timeout: 60_000 }).toBe(2);
    expect(await page.locator('.paused-reason').count()).toBe(0);
    expect((await readRollout(alice(), COMPANY, rolloutId)).state).toBe('RUNNING');

    // Cancel, confirmed: the rollout and its unfinished wave end CANCELLED.
    await page.getByRole('button', { name: `Cancel rollout ${rolloutId}` }).click();
    await page.getByRole('button', { name: 'Confirm: cancel' }).click();
    await expect.poll(() => shownStates(page, rolloutId), { timeout: 30_000 }).toBe('Cancelled: Completed, Completed, Cancelled');
    await page.getByRole('status').filter({ hasText: 'The rollout is now cancelled.' }).waitFor({ state: 'attached' });
    expect((await readRollout(alice(), COMPANY, rolloutId)).state).toBe('CANCELLED');
    await expectWavesAsApi(page, rolloutId);

    expect(await page.evaluate(() => (globalThis as { scenarioMark?: string }).scenarioMark)).toBe(rolloutId);
    // Watching made no request per device: the rollout's own reads, and its targets listing for the failures, read for
    // the wave that had them only, and again only when their number changed (at most twice: 1 then 2 FAILED).
    expect(targetReads().length).toBeGreaterThanOrEqual(1);
    expect(targetReads().length).toBeLessThanOrEqual(2);
    for (const search of targetReads())
      expect(Object.fromEntries(new URLSearchParams(search))).toEqual({ deviceStatus: 'FAILED', wave: '2', limit: '1000' });
    const deviceReads = requested.filter((url) => KIOSKS.some((id) => new URL(url).pathname.includes(id)));
    expect(deviceReads).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  }, 300_000);
});
