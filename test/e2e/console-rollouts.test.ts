/**
 * End-to-end over `npm start`, in headless Chromium: the console's rollout pages. Simulated kiosks (simulator/fleet.ts),
 * two whose installs always fail and three that install, are rolled out to in two waves with a failure threshold the
 * first wave exceeds, so the rollout pauses. What the pages show (the listing's row, the waves' numbers, the paused
 * reason, the failed devices grouped by message) is checked against the API's answers for the same token; Resume is
 * followed by polling without a reload, Cancel (confirmed) on a rollout that waits for demo kiosks that never report,
 * and a read-only user is offered no action.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type components, expectOk } from '../../client/index.js';
import type { SimulatedFleet } from '../../simulator/fleet.js';
import { chromiumAvailable, launchChromium } from './browser.js';
import { expectAccessible, screenshot, signedIn } from './console-harness.js';
import { clientFor, eventually, useLocalService } from './harness.js';
import { failedTargets, readRollout } from './rollout-reads.js';
import { startSimulatedKiosks } from './simulated-kiosks.js';

const hasChromium = chromiumAvailable();
if (!hasChromium) console.warn('Chromium not installed and could not be installed: skipping the console rollouts tests');

const COMPANY = 'acme';
const SCENARIO = 'acme-welcome';
const ENVIRONMENT = { ROLLOUT_SWEEP_INTERVAL_MS: '200', ROLLOUT_CHUNK_TIMEOUT_SECONDS: '2' };

const local = useLocalService({ users: ['alice', 'olivia'], environment: ENVIRONMENT });
const fleets: SimulatedFleet[] = [];

type Rollout = components['schemas']['Rollout'];

const BAD = ['acme-cbad-01', 'acme-cbad-02'];
const GOOD = ['acme-cgood-01', 'acme-cgood-02', 'acme-cgood-03'];

const alice = () => clientFor(local.service, local.tokens.alice);

/** What the tests read of an element in the page (the root project has no DOM types). */
interface Element {
  textContent: string | null;
  children: ArrayLike<Element>;
  getAttribute(name: string): string | null;
}

/** A state as the page writes it (`PAUSED` → `Paused`). */
const humanized = (state: string) => state.charAt(0) + state.slice(1).toLowerCase();

let browser: Browser;
let pausedId: string;

/** Starts simulated kiosks of COMPANY (simulated-kiosks.ts), stopped after the file. */
async function startFleet(prefix: string, count: number, failureRate: number): Promise<void> {
  fleets.push(await startSimulatedKiosks(local, { company: COMPANY, prefix, count, failureRate }));
}

/** Creates a rollout of the scenario's 1.1.0 to `ids` as alice; its id. */
async function createRollout(ids: string[], extra: { waves?: number[]; failureThreshold?: number; waveTimeoutSeconds?: number }) {
  const answer = await alice().main.POST('/companies/{companyId}/resources/rollouts', {
    params: { path: { companyId: COMPANY } },
    body: { action: 'DEPLOY', what: { type: 'SCENARIO', id: SCENARIO, subId: '1.1.0' }, targets: { ids }, note: 'console test', ...extra },
  });
  expect(answer.response.status).toBe(202);
  return expectOk(answer).id;
}

/** The waves table as `{ key: number }` per wave, by its column keys (`data-key`), with size and state. */
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
    state,
    counts: Object.fromEntries(keys.map((key, index) => [key, Number(values[index]?.replaceAll(',', ''))])),
  }));
}

/** The same as the API's waves: every counted key (and INSTALLED, FAILED) with its number, 0 when absent. */
function expectedRows(rollout: Rollout, keys: string[]) {
  for (const wave of rollout.waves) for (const key of Object.keys(wave.counts)) expect(keys).toContain(key);
  return rollout.waves.map((wave) => ({
    size: wave.size,
    state: humanized(wave.state),
    counts: Object.fromEntries(keys.map((key) => [key, wave.counts[key] ?? 0])),
  }));
}

/** Checks the page's waves table equals the API's waves of the rollout now. */
async function expectWavesAsApi(page: Page, rolloutId: string): Promise<void> {
  const shown = await waveRows(page, rolloutId);
  expect(shown).toEqual(expectedRows(await readRollout(alice(), COMPANY, rolloutId), Object.keys(shown[0]?.counts ?? {})));
}

beforeAll(async () => {
  if (!hasChromium) return;
  browser = await launchChromium();
  await startFleet('acme-cbad-', 2, 1);
  await startFleet('acme-cgood-', 3, 0);
  // Wave 1 (sorted ids: both failing kiosks and one good) reports 2 of 3 FAILED, above 0.5: the rollout pauses.
  pausedId = await createRollout([...BAD, ...GOOD], { waves: [3], failureThreshold: 0.5 });
  await eventually(async () => (await readRollout(alice(), COMPANY, pausedId)).state === 'PAUSED', 'the rollout PAUSED on its failures');
  await eventually(async () => (await failedTargets(alice(), COMPANY, pausedId)).length === BAD.length, 'both failures reported');
}, 180_000);

afterAll(async () => {
  await Promise.all(fleets.map((fleet) => fleet.stop()));
  await browser?.close();
});

describe.skipIf(!hasChromium)('the console rollout pages', () => {
  it('lists the rollout, shows its waves, paused reason and failed devices as the API does', async () => {
    const { page, errors } = await signedIn(browser, local.service, 'alice', '#/rollouts');
    await expect.poll(() => page.url()).toContain('#/rollouts?company=acme');
    const rollout = await readRollout(alice(), COMPANY, pausedId);
    const row = page.getByRole('table', { name: 'Rollouts of acme' }).getByRole('row').filter({ hasText: pausedId });
    await row.waitFor();
    await expect.poll(() => row.textContent()).toContain('Paused');
    expect(await row.textContent()).toContain(`${SCENARIO}@1.1.0`);
    await row.getByRole('link', { name: pausedId }).click();
    await page.getByRole('heading', { level: 1, name: `Rollout ${pausedId}` }).waitFor();
    await expectWavesAsApi(page, pausedId);
    expect(await page.locator('.paused-reason').textContent()).toContain(rollout.pausedReason);

    const failures = page.getByRole('region', { name: 'Why devices failed' });
    const expected = new Map<string, string[]>();
    for (const target of await failedTargets(alice(), COMPANY, pausedId)) {
      const message = target.deviceStatus?.message ?? '';
      expected.set(message, [...(expected.get(message) ?? []), target.deviceId]);
    }
    for (const [message, ids] of expected) {
      const group = failures.getByRole('list', { name: `Reported failed: ${message}` });
      await group.waitFor();
      const links = await group
        .getByRole('link')
        .evaluateAll((anchors: Element[]) => anchors.map((a) => [a.textContent, a.getAttribute('href')]));
      expect(links).toEqual(ids.map((id) => [id, `#/devices/acme/${id}`]));
    }
    await failures.getByRole('button', { name: /^Roll out again to the failed ones/ }).waitFor();
    await expectAccessible(page, 'rollout page');
    await screenshot(page, 'console-rollout.png');
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it('offers a read-only user no action', async () => {
    const { page, errors } = await signedIn(browser, local.service, 'olivia', `#/rollouts/acme/${pausedId}`);
    await page.getByRole('table', { name: `Waves of rollout ${pausedId}` }).waitFor();
    await page.getByRole('region', { name: 'Why devices failed' }).getByRole('link').first().waitFor();
    for (const name of [/^Pause/, /^Resume/, /^Cancel/, /^Roll out again/])
      expect(await page.getByRole('button', { name }).count()).toBe(0);
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it('resumes the rollout and follows it to its end by polling, without a reload', async () => {
    const { page, errors, requested } = await signedIn(browser, local.service, 'alice', `#/rollouts/acme/${pausedId}`);
    await page.getByRole('button', { name: 'Resume rollout' }).click();
    await page.evaluate(() => Object.assign(globalThis, { notReloaded: true }));
    await expect.poll(() => page.locator('.rollout-state').textContent(), { timeout: 60_000 }).toBe('Completed');
    expect((await readRollout(alice(), COMPANY, pausedId)).state).toBe('COMPLETED');
    expect(await page.evaluate(() => (globalThis as { notReloaded?: boolean }).notReloaded)).toBe(true);
    await expectWavesAsApi(page, pausedId);
    // Polling reads the rollout alone: no request per wave or device.
    const reads = requested.filter((url) => url.includes(`/rollouts/${pausedId}`) && !url.includes('/targets'));
    expect(reads.every((url) => new URL(url).pathname.endsWith(`/rollouts/${pausedId}`) || url.endsWith('/resume'))).toBe(true);
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it('rolls out again to the failed devices, then shows the new rollout', async () => {
    const { page, errors } = await signedIn(browser, local.service, 'alice', `#/rollouts/acme/${pausedId}`);
    const failed = (await failedTargets(alice(), COMPANY, pausedId)).map((target) => target.deviceId).sort();
    await page.getByRole('button', { name: `Roll out again to the failed ones (${failed.length} devices)` }).click();
    await expect.poll(() => page.url()).not.toContain(pausedId);
    const newId = decodeURIComponent(new URL(page.url()).hash.split('/').at(-1) ?? '');
    await page.getByRole('heading', { level: 1, name: `Rollout ${newId}` }).waitFor();
    const created = await readRollout(alice(), COMPANY, newId);
    expect(created).toMatchObject({ action: 'DEPLOY', what: { id: SCENARIO, subId: '1.1.0' }, targets: failed.length });
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it('says when the company has no such rollout, with a link to its rollouts', async () => {
    const { page, errors } = await signedIn(browser, local.service, 'alice', '#/rollouts/acme/no-such-rollout');
    const alert = page.getByRole('alert').filter({ hasText: 'acme has no rollout no-such-rollout' });
    await alert.waitFor();
    expect(await alert.getByRole('link', { name: 'See its rollouts' }).getAttribute('href')).toBe('#/rollouts?company=acme');
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it('polls a running rollout with one request every 2 s, and not while the tab is hidden', async () => {
    const runningId = await createRollout(['acme-kiosk-0003', 'acme-kiosk-0004'], { waveTimeoutSeconds: 3600 });
    const { page, errors, requested } = await signedIn(browser, local.service, 'alice', `#/rollouts/acme/${runningId}`);
    // The page's timers under the test's clock from its first script on: installed, then the page reloaded (the
    // session is kept in sessionStorage). Only the reads of the reloaded page count.
    const start = requested.length;
    await page.clock.install();
    await page.reload();
    const reads = () => requested.slice(start).filter((url) => new URL(url).pathname.endsWith(`/rollouts/${runningId}`)).length;
    // Shown once its first read is answered, by when the next one is scheduled.
    await page.getByRole('table', { name: `Waves of rollout ${runningId}` }).waitFor();
    expect(reads()).toBe(1);
    await page.clock.runFor(2_000);
    await expect.poll(reads).toBe(2);
    // Hidden: the pending read is dropped and none is started, however long it stays hidden.
    const setHidden = (hidden: boolean) =>
      page.evaluate((value) => {
        const doc = (globalThis as unknown as { document: { dispatchEvent(event: unknown): void } }).document;
        Object.defineProperty(doc, 'hidden', { configurable: true, get: () => value });
        doc.dispatchEvent(new Event('visibilitychange'));
      }, hidden);
    await setHidden(true);
    await page.clock.runFor(20_000);
    expect(reads()).toBe(2);
    // Visible again: the reads go on.
    await setHidden(false);
    await expect
      .poll(async () => {
        await page.clock.runFor(500);
        return reads();
      })
      .toBeGreaterThan(2);
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it('cancels a running rollout once confirmed', async () => {
    // Demo kiosks that never report: the wave waits for them, the rollout stays RUNNING.
    const runningId = await createRollout(['acme-kiosk-0001', 'acme-kiosk-0002'], { waveTimeoutSeconds: 3600 });
    const { page, errors } = await signedIn(browser, local.service, 'alice', `#/rollouts/acme/${runningId}`);
    await page.getByRole('button', { name: `Cancel rollout ${runningId}` }).click();
    await page.getByRole('button', { name: 'Confirm: cancel' }).click();
    await expect.poll(() => page.locator('.rollout-state').textContent()).toBe('Cancelled');
    expect((await readRollout(alice(), COMPANY, runningId)).state).toBe('CANCELLED');
    await page.getByRole('status').filter({ hasText: 'The rollout is now cancelled.' }).waitFor({ state: 'attached' });
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it('pages the rollouts with the API\'s cursor: "Show more" adds the next page', async () => {
    const { page, errors } = await signedIn(browser, local.service, 'alice', '#/rollouts?company=acme&limit=1');
    const first = expectOk(
      await alice().main.GET('/companies/{companyId}/resources/rollouts', {
        params: { path: { companyId: COMPANY }, query: { limit: 1 } },
      }),
    );
    // By now the earlier tests have made several rollouts.
    expect(first.nextCursor).not.toBeNull();
    const second = expectOk(
      await alice().main.GET('/companies/{companyId}/resources/rollouts', {
        params: { path: { companyId: COMPANY }, query: { limit: 1, cursor: first.nextCursor ?? '' } },
      }),
    );
    const ids = page.getByRole('table', { name: 'Rollouts of acme' }).locator('tbody tr td:first-child');
    await expect.poll(() => ids.allTextContents()).toEqual(first.items.map((rollout) => rollout.id));
    await page.getByRole('button', { name: 'Show more rollouts' }).click();
    await expect.poll(() => ids.allTextContents()).toEqual([...first.items, ...second.items].map((rollout) => rollout.id));
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);
});
