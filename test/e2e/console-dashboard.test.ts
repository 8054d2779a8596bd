/**
 * End-to-end over `npm start`, in headless Chromium: the console's dashboard (its home page). The fleet's counts are
 * those of GET /resources/search/filters for the same token, a count's link lands on the fleet page filtered on it
 * with as many devices as the count said, the company picker narrows the counts and the rollouts, the rollouts
 * that are not over (one running and one paused for acme, made here; one running for globex) are listed with their
 * progress as the API reports it and linked to their pages, and each company's open alerts are counted, linked to
 * its Alerts page.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type components, type DssClient, expectOk } from '../../client/index.js';
import { chromiumAvailable, launchChromium } from './browser.js';
import { expectAccessible, screenshot, signedIn } from './console-harness.js';
import { clientFor, eventually, useLocalService } from './harness.js';

const hasChromium = chromiumAvailable();
if (!hasChromium) console.warn('Chromium not installed and could not be installed: skipping the console dashboard tests');

const local = useLocalService({
  users: ['alice', 'bob', 'olivia'],
  environment: { ROLLOUT_SWEEP_INTERVAL_MS: '200', ROLLOUT_CHUNK_TIMEOUT_SECONDS: '2' },
});

type Rollout = components['schemas']['Rollout'];
type FilterDescriptor = components['schemas']['FilterDescriptor'];

/** The dashboard's fields, by its tables' captions. */
const FIELDS = [
  ['connection.state', 'Devices by connection state'],
  ['health.mode', 'Devices by health mode'],
  ['health.versionCode', 'Devices by version'],
  ['health.hubs.devices.health.state', 'Devices by sub-device health'],
] as const;

/** What the tests read of an element in the page (the root project has no DOM types). */
interface Element {
  textContent: string | null;
  children: ArrayLike<Element>;
}

let browser: Browser;
const made: { running: string; paused: string; globex: string } = { running: '', paused: '', globex: '' };

const client = (user: 'alice' | 'bob' | 'olivia'): DssClient => clientFor(local.service, local.tokens[user]);

/** The rollout as `user` reads it through the API. */
async function getRollout(company: string, rolloutId: string, user: 'alice' | 'bob' = company === 'acme' ? 'alice' : 'bob') {
  return expectOk(
    await client(user).main.GET('/companies/{companyId}/resources/rollouts/{rolloutId}', {
      params: { path: { companyId: company, rolloutId } },
    }),
  );
}

/** Devices a rollout has deployed to (or failed to): every wave's deployment results, reports left out. */
function deployed(rollout: Rollout): number {
  let done = 0;
  for (const wave of rollout.waves)
    for (const [key, value] of Object.entries(wave.counts)) if (key !== 'INSTALLED' && key !== 'FAILED') done += value;
  return done;
}

/** Creates a rollout of demo kiosks, which never report: its waves wait an hour, so it stays RUNNING. */
async function createRollout(user: 'alice' | 'bob', company: string, scenario: string, version: string, ids: string[], waves?: number[]) {
  const answer = await client(user).main.POST('/companies/{companyId}/resources/rollouts', {
    params: { path: { companyId: company } },
    body: {
      action: 'DEPLOY',
      what: { type: 'SCENARIO', id: scenario, subId: version },
      targets: { ids },
      waveTimeoutSeconds: 3600,
      note: 'dashboard test',
      ...(waves === undefined ? {} : { waves }),
    },
  });
  expect(answer.response.status).toBe(202);
  return expectOk(answer).id;
}

/** The filters endpoint's descriptors for `user`, DEVICE fields, optionally of one company. */
async function filtersOf(user: 'alice' | 'olivia', company?: string): Promise<FilterDescriptor[]> {
  return expectOk(
    await client(user).main.GET('/resources/search/filters', {
      params: { query: { type: 'DEVICE', ...(company === undefined ? {} : { company: [company] }) } },
    }),
  ).items;
}

/** Each field's table as the page shows it: `[name, count]` per row, as the API's descriptors would give them. */
async function shownCounts(page: Page) {
  const shown: Record<string, [string, number][]> = {};
  for (const [field, caption] of FIELDS) {
    const table = page.getByRole('table', { name: new RegExp(`^${caption}`) });
    await table.waitFor();
    shown[field] = (
      await table
        .locator('tbody tr')
        .evaluateAll((rows: Element[]) => rows.map((row) => Array.from(row.children, (cell) => (cell.textContent ?? '').trim())))
    ).map(([name, value]) => [name ?? '', Number(value?.replaceAll(',', ''))]);
  }
  return shown;
}

/** The same from the API's descriptors. */
function expectedCounts(descriptors: FilterDescriptor[]) {
  return Object.fromEntries(
    FIELDS.map(([field]) => [
      field,
      (descriptors.find((descriptor) => descriptor.field === field)?.definition.parameters ?? []).map((p) => [p.name, p.count]),
    ]),
  );
}

/** The rollouts table's rows by rollout id: its cells' text, and its link's address. */
async function rolloutRows(page: Page) {
  const table = page.getByRole('table', { name: 'Running, paused and scheduled rollouts, newest first' });
  await table.waitFor();
  const headers = await table.locator('thead th').allTextContents();
  const rows = await table
    .locator('tbody tr')
    .evaluateAll((trs: Element[]) => trs.map((tr) => Array.from(tr.children, (cell) => (cell.textContent ?? '').trim())));
  return rows.map((cells) => Object.fromEntries(headers.map((header, index) => [header, cells[index] ?? ''])));
}

beforeAll(async () => {
  if (!hasChromium) return;
  browser = await launchChromium();
  // Running: one wave of two kiosks, both deployed to, waiting for reports that never come.
  made.running = await createRollout('alice', 'acme', 'acme-welcome', '1.1.0', ['acme-kiosk-0001', 'acme-kiosk-0002']);
  // Paused: two waves of one kiosk; paused once the first has deployed, its second wave never starts.
  made.paused = await createRollout('alice', 'acme', 'acme-welcome', '1.0.0', ['acme-kiosk-0003', 'acme-kiosk-0004'], [1]);
  made.globex = await createRollout('bob', 'globex', 'globex-timetable', '1.0.0', ['globex-kiosk-0001']);
  await eventually(async () => deployed(await getRollout('acme', made.running)) === 2, 'the running rollout deployed');
  await eventually(async () => deployed(await getRollout('acme', made.paused)) === 1, 'the first wave deployed');
  await eventually(async () => deployed(await getRollout('globex', made.globex)) === 1, 'the globex rollout deployed');
  expectOk(
    await client('alice').main.POST('/companies/{companyId}/resources/rollouts/{rolloutId}/pause', {
      params: { path: { companyId: 'acme', rolloutId: made.paused } },
    }),
  );
}, 180_000);

afterAll(async () => {
  await browser?.close();
});

describe.skipIf(!hasChromium)('the console dashboard', () => {
  it("is the home page and shows the fleet's counts as the filters endpoint gives them; a count leads to as many devices", async () => {
    const { page, errors } = await signedIn(browser, local.service, 'alice');
    await page.getByRole('heading', { level: 1, name: 'Dashboard' }).waitFor();
    expect(await page.getByRole('link', { name: 'Dashboard' }).getAttribute('aria-current')).toBe('page');
    const descriptors = await filtersOf('alice');
    expect(await shownCounts(page)).toEqual(expectedCounts(descriptors));

    const disconnected = descriptors
      .find((d) => d.field === 'connection.state')
      ?.definition.parameters.find((p) => p.value === 'DISCONNECTED');
    expect(disconnected?.count).toBeGreaterThan(0);
    await page
      .getByRole('table', { name: 'Devices by connection state' })
      .getByRole('link', { name: disconnected?.name ?? '', exact: true })
      .click();
    await expect.poll(() => new URL(page.url()).hash).toBe('#/fleet?connection.state=DISCONNECTED');
    await page.getByRole('heading', { level: 1, name: 'Fleet' }).waitFor();
    await expect.poll(() => page.locator('.fleet-count').textContent()).toBe(`${disconnected?.count} devices match`);
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it('lists the running and paused rollouts with their progress and links, accessible in light and dark', async () => {
    const { page, errors } = await signedIn(browser, local.service, 'alice', '#/');
    const rows = await rolloutRows(page);
    const running = await getRollout('acme', made.running);
    const paused = await getRollout('acme', made.paused);
    expect(paused.state).toBe('PAUSED');
    // Newest first; alice sees acme's only, so no Company column.
    expect(rows.map((row) => row.Rollout)).toEqual([made.paused, made.running]);
    expect(rows[0]).toEqual({
      Rollout: made.paused,
      'Scenario version or command': 'acme-welcome@1.0.0',
      Action: 'Deploy',
      State: 'Paused',
      Waves: '0 of 2 waves done',
      'Devices deployed of targets': `${deployed(paused)} of ${paused.targets}`,
      'Paused reason or start': paused.pausedReason,
    });
    expect(rows[1]).toMatchObject({
      State: 'Running',
      Waves: '0 of 1 wave done',
      'Devices deployed of targets': `${deployed(running)} of 2`,
    });
    expect(await page.getByRole('link', { name: made.paused }).getAttribute('href')).toBe(`#/rollouts/acme/${made.paused}`);
    await page.getByRole('status').filter({ hasText: '2 rollouts are running, paused or scheduled.' }).waitFor();
    await expectAccessible(page, 'dashboard');
    await screenshot(page, 'console-dashboard.png');
    await page.getByRole('link', { name: made.paused }).click();
    await page.getByRole('heading', { level: 1, name: `Rollout ${made.paused}` }).waitFor();
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it("shows a user of two companies both companies' rollouts, and one company's once picked", async () => {
    const { page, errors, requested } = await signedIn(browser, local.service, 'olivia', '#/');
    expect(await shownCounts(page)).toEqual(expectedCounts(await filtersOf('olivia')));
    let rows = await rolloutRows(page);
    expect(rows.map((row) => [row.Rollout, row.Company])).toEqual([
      [made.globex, 'globex'],
      [made.paused, 'acme'],
      [made.running, 'acme'],
    ]);
    // One filters request for every count, one rollouts listing and one open alerts listing per company: none per
    // rollout, alert or device.
    await page.getByRole('link', { name: 'No open alert' }).first().waitFor();
    const paths = requested
      .map((url) => new URL(url).pathname)
      .filter((path) => path.startsWith('/resources/') || path.startsWith('/companies/'));
    expect(paths.sort()).toEqual([
      '/companies/acme/alerts',
      '/companies/acme/resources/rollouts',
      '/companies/globex/alerts',
      '/companies/globex/resources/rollouts',
      '/resources/search/filters',
    ]);
    expect(await page.getByRole('region', { name: 'Alerts' }).getByRole('listitem').allTextContents()).toEqual([
      'acme: No open alert',
      'globex: No open alert',
    ]);
    expect(await page.getByRole('link', { name: 'No open alert' }).first().getAttribute('href')).toBe('#/alerts?company=acme&state=OPEN');
    expect(await page.getByRole('link', { name: made.globex }).getAttribute('href')).toBe(`#/rollouts/globex/${made.globex}`);

    await page.getByLabel('Company').selectOption('globex');
    await expect.poll(() => new URL(page.url()).hash).toBe('#/?company=globex');
    const globex = await filtersOf('olivia', 'globex');
    await expect.poll(() => shownCounts(page)).toEqual(expectedCounts(globex));
    await page.getByRole('status').filter({ hasText: '1 rollout is running, paused or scheduled.' }).waitFor();
    rows = await rolloutRows(page);
    expect(rows.map((row) => row.Rollout)).toEqual([made.globex]);
    // A count's link keeps the company: the fleet shows that company's devices only.
    const connected = globex.find((d) => d.field === 'connection.state')?.definition.parameters.find((p) => p.value === 'CONNECTED');
    await page
      .getByRole('table', { name: 'Devices by connection state' })
      .getByRole('link', { name: connected?.name ?? '', exact: true })
      .click();
    await expect.poll(() => new URL(page.url()).hash).toBe('#/fleet?company=globex&connection.state=CONNECTED');
    await expect.poll(() => page.locator('.fleet-count').textContent()).toBe(`${connected?.count} devices match`);
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);
});
