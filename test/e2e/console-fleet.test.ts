/**
 * End-to-end over `npm start` in headless Chromium: the console's fleet page (`#/fleet?<search query>`). What it shows
 * (facets and their counts, rows, the count announced, the order) is checked against the API's own answers for the
 * same parameters with the same user's token; its URL holds the search, so reload and back/forward give the same
 * state; the copied curl command, the CSV export, the keyboard and a read-only user's page are checked too, and so are
 * the selection kept fixed while a deploy is open and a refused search (no stale count, no page "NaN").
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectOk, type operations } from '../../client/index.js';
import { chromiumAvailable, launchChromium } from './browser.js';
import { dssJson, dssUser, runDss } from './cli-runner.js';
import { type ConsolePage, expectAccessible, PASSWORDS, screenshot, signedIn } from './console-harness.js';
import { clientFor, useLocalService } from './harness.js';

const hasChromium = chromiumAvailable();
if (!hasChromium) console.warn('Chromium not installed and could not be installed: skipping the fleet page tests');

const local = useLocalService({ users: ['alice', 'olivia'] });

type Params = Record<string, string | string[]>;

/** The API's search answer for `params` as alice (the page always searches devices). */
async function apiSearch(params: Params) {
  const dss = clientFor(local.service, local.tokens.alice);
  // Built from strings as the page's URL is: the service validates them.
  const query = { ...params, type: ['DEVICE'] } as operations['Search']['parameters']['query'];
  return expectOk(await dss.main.GET('/resources/search', { params: { query } }));
}

/** The API's filter descriptors for `params` as alice, devices only, as the page asks for them. */
async function apiFilters(params: Params) {
  const dss = clientFor(local.service, local.tokens.alice);
  const query = { ...params, type: 'DEVICE' } as operations['SearchFilters']['parameters']['query'];
  return expectOk(await dss.main.GET('/resources/search/filters', { params: { query } })).items;
}

/** The query of the page's URL (`#/fleet?<query>`). */
function queryOf(page: Page): URLSearchParams {
  return new URLSearchParams(new URL(page.url()).hash.split('?')[1] ?? '');
}

/** The ids of the rows the table shows, in order (each row's id is its one link). */
function rowIds(page: Page): Promise<string[]> {
  return page.getByRole('table').locator('tbody tr a').allTextContents();
}

/** The live region's words. */
async function countText(page: Page): Promise<string> {
  return (await page.locator('p[role="status"].fleet-count').textContent()) ?? '';
}

/** The checkbox labels of each facet fieldset, by legend. */
function facetLabels(page: Page): Promise<Record<string, string[]>> {
  return page.evaluate(`Object.fromEntries([...document.querySelectorAll('.fleet-facets fieldset')].map((fieldset) =>
    [fieldset.querySelector('legend').textContent, [...fieldset.querySelectorAll('label')].map((label) => label.textContent)]))`);
}

/** The labels the page should show for the descriptors: `{name} ({count})`, without the type (and company) fields. */
function expectedLabels(descriptors: Awaited<ReturnType<typeof apiFilters>>, withCompany = false): Record<string, string[]> {
  return Object.fromEntries(
    descriptors
      .filter((descriptor) => descriptor.field !== 'type' && (withCompany || descriptor.field !== 'company'))
      .map((descriptor) => [
        descriptor.name,
        descriptor.definition.parameters.map((parameter) => `${parameter.name} (${parameter.count.toLocaleString('en-US')})`),
      ]),
  );
}

/** "N devices match" as the page words it. */
function matchWords(total: number): string {
  return `${total.toLocaleString('en-US')} ${total === 1 ? 'device matches' : 'devices match'}`;
}

/** "N results match": the words of a full-text search, which also finds scenarios. */
function resultWords(total: number): string {
  return `${total.toLocaleString('en-US')} ${total === 1 ? 'result matches' : 'results match'}`;
}

/** The words of a command line as bash splits them (quotes and escapes undone). */
function shellWords(command: string): string[] {
  const run = spawnSync('bash', ['-c', `printf '%s\\0' ${command}`], { encoding: 'utf8' });
  expect(run.status, run.stderr).toBe(0);
  return run.stdout.split('\0').slice(0, -1);
}

/** The page's errors, but for the stale requests it aborts on purpose when a newer search replaces them. */
function realErrors(opened: ConsolePage): string[] {
  return opened.errors.filter((error) => !error.includes('net::ERR_ABORTED'));
}

/** Waits until the table and the count show the API's answer for `params`. */
async function expectResults(page: Page, params: Params, words = matchWords): Promise<void> {
  const answer = await apiSearch(params);
  await expect.poll(() => rowIds(page), { timeout: 15_000 }).toEqual(answer.resources.map((resource) => resource.id));
  await expect.poll(() => countText(page)).toBe(words(answer.total));
}

/** How many search and filters requests are among `urls`. */
function searchRequests(urls: readonly string[]): { search: number; filters: number } {
  const paths = urls.map((url) => new URL(url).pathname);
  return {
    search: paths.filter((path) => path === '/resources/search').length,
    filters: paths.filter((path) => path === '/resources/search/filters').length,
  };
}

/** A parsed RFC 4180 CSV text: records of cells. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let cell = '';
  let quoted = false;
  for (let at = 0; at < text.length; at += 1) {
    const char = text[at];
    if (quoted) {
      if (char === '"' && text[at + 1] === '"') {
        cell += '"';
        at += 1;
      } else if (char === '"') quoted = false;
      else cell += char;
    } else if (char === '"') quoted = true;
    else if (char === ',') {
      record.push(cell);
      cell = '';
    } else if (char === '\r' && text[at + 1] === '\n') {
      record.push(cell);
      records.push(record);
      record = [];
      cell = '';
      at += 1;
    } else cell += char;
  }
  return records;
}

describe.skipIf(!hasChromium)('the console fleet page', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
  });

  it('filters by facets, searches full text and keeps its state in the URL through reload and history', { timeout: 180_000 }, async () => {
    const opened = await signedIn(browser, local.service, 'alice', '#/fleet');
    const { page } = opened;
    await page.getByRole('heading', { level: 1, name: 'Fleet' }).waitFor();

    // One fieldset per field, named as the API names them, counts as the API counts them.
    const initial = await apiFilters({});
    await expect.poll(() => facetLabels(page), { timeout: 15_000 }).toEqual(expectedLabels(initial));
    for (const name of ['Connection state', 'Health mode', 'Version', 'Sub-device health']) {
      await page.getByRole('group', { name, exact: true }).waitFor();
    }
    await expectResults(page, {});

    // Two values of one field (OR), one of another (AND), chosen by their labels.
    const label = (descriptors: typeof initial, field: string, value: string) => {
      const parameter = descriptors.find((descriptor) => descriptor.field === field)?.definition.parameters.find((p) => p.value === value);
      if (parameter === undefined) throw new Error(`no ${field}=${value}`);
      return `${parameter.name} (${parameter.count.toLocaleString('en-US')})`;
    };
    await page.getByRole('checkbox', { name: label(initial, 'connection.state', 'CONNECTED'), exact: true }).check();
    await expect.poll(() => queryOf(page).getAll('connection.state')).toEqual(['CONNECTED']);
    const afterOne = await apiFilters({ 'connection.state': ['CONNECTED'] });
    await expect.poll(() => facetLabels(page)).toEqual(expectedLabels(afterOne));
    await page.getByRole('checkbox', { name: label(afterOne, 'connection.state', 'DISCONNECTED'), exact: true }).check();
    await expect.poll(() => queryOf(page).getAll('connection.state')).toEqual(['CONNECTED', 'DISCONNECTED']);
    const afterTwo = await apiFilters({ 'connection.state': ['CONNECTED', 'DISCONNECTED'] });
    await expect.poll(() => facetLabels(page)).toEqual(expectedLabels(afterTwo));
    await page.getByRole('checkbox', { name: label(afterTwo, 'health.mode', 'EMBEDDED_PLATFORM_ANDROID'), exact: true }).check();

    const selection = { 'connection.state': ['CONNECTED', 'DISCONNECTED'], 'health.mode': ['EMBEDDED_PLATFORM_ANDROID'] };
    await expect.poll(() => queryOf(page).getAll('health.mode')).toEqual(['EMBEDDED_PLATFORM_ANDROID']);
    expect(queryOf(page).getAll('connection.state')).toEqual(['CONNECTED', 'DISCONNECTED']);
    await expectResults(page, selection);
    await expect.poll(() => facetLabels(page)).toEqual(expectedLabels(await apiFilters(selection)));
    await expect(page.getByRole('checkbox', { name: /^Connected \(/ }).isChecked()).resolves.toBe(true);

    await expectAccessible(page, 'fleet page');
    await screenshot(page, 'console-fleet.png');

    // Full text: the API ignores the filters; the page says so and sets them aside, keeping them in the URL.
    await page.getByRole('searchbox', { name: 'Search' }).fill('Lyon');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await expect.poll(() => queryOf(page).get('global')).toBe('Lyon');
    await page.getByText('Full-text search ignores the filters; clear the search text to apply them again.').waitFor();
    expect(queryOf(page).getAll('connection.state')).toEqual(['CONNECTED', 'DISCONNECTED']);
    const resultWords = (total: number) => `${total.toLocaleString('en-US')} ${total === 1 ? 'result matches' : 'results match'}`;
    await expectResults(page, { global: 'Lyon' }, resultWords);
    const checkboxes = page.locator('.fleet-facets input[type="checkbox"]');
    expect(await checkboxes.count()).toBeGreaterThan(10);
    await expect
      .poll(() => checkboxes.evaluateAll((boxes) => boxes.every((box) => (box as unknown as { disabled: boolean }).disabled)))
      .toBe(true);
    await expect(page.getByRole('checkbox', { name: /^Connected \(/ }).isChecked()).resolves.toBe(true);
    await expectAccessible(page, 'fleet page with full text');

    // Reload: the same state.
    const rowsWithText = await rowIds(page);
    await page.reload();
    await expect.poll(() => rowIds(page), { timeout: 15_000 }).toEqual(rowsWithText);
    await expect(page.getByRole('searchbox', { name: 'Search' }).inputValue()).resolves.toBe('Lyon');
    await expect.poll(() => page.getByRole('checkbox', { name: /^Connected \(/ }).isChecked()).toBe(true);
    await expect.poll(() => page.getByRole('checkbox', { name: /^Connected \(/ }).isDisabled()).toBe(true);

    // Back: the facets' search again; forward: the full text again.
    await page.goBack();
    await expect.poll(() => queryOf(page).has('global')).toBe(false);
    await expectResults(page, selection);
    await expect(page.getByRole('searchbox', { name: 'Search' }).inputValue()).resolves.toBe('');
    await expect.poll(() => page.getByRole('checkbox', { name: /^Connected \(/ }).isDisabled()).toBe(false);
    await expect(page.getByRole('checkbox', { name: /^Connected \(/ }).isChecked()).resolves.toBe(true);
    await page.goBack();
    await expect.poll(() => queryOf(page).getAll('health.mode')).toEqual([]);
    await expectResults(page, { 'connection.state': ['CONNECTED', 'DISCONNECTED'] });
    await page.goForward();
    await page.goForward();
    await expect.poll(() => queryOf(page).get('global')).toBe('Lyon');
    await expectResults(page, { global: 'Lyon' }, resultWords);
    await expect(page.getByRole('searchbox', { name: 'Search' }).inputValue()).resolves.toBe('Lyon');

    // Clearing the text applies the filters again.
    await page.getByRole('button', { name: 'Clear search text' }).click();
    await expectResults(page, selection);
    expect(realErrors(opened)).toEqual([]);
    await page.close();
  });

  it('sorts by a column through the URL, in the API order', { timeout: 120_000 }, async () => {
    const opened = await signedIn(browser, local.service, 'alice', '#/fleet?connection.state=CONNECTED');
    const { page } = opened;
    await expectResults(page, { 'connection.state': ['CONNECTED'] });
    await expect(page.getByRole('columnheader', { name: /^Serial/ }).getAttribute('aria-sort')).resolves.toBe('ascending');

    const before = opened.requested.length;
    await page.getByRole('button', { name: /^Location/ }).click();
    await expect.poll(() => [queryOf(page).get('sort'), queryOf(page).get('direction')]).toEqual(['location.name', 'ASC']);
    await expectResults(page, { 'connection.state': ['CONNECTED'], sort: 'location.name', direction: 'ASC' });
    // One search request; the filters' counts do not depend on the sort, so they are not asked for again.
    expect(searchRequests(opened.requested.slice(before))).toEqual({ search: 1, filters: 0 });
    await expect(page.getByRole('columnheader', { name: /^Location/ }).getAttribute('aria-sort')).resolves.toBe('ascending');

    await page.getByRole('button', { name: /^Location/ }).click();
    await expect.poll(() => queryOf(page).get('direction')).toBe('DESC');
    await expectResults(page, { 'connection.state': ['CONNECTED'], sort: 'location.name', direction: 'DESC' });
    await expect(page.getByRole('columnheader', { name: /^Location/ }).getAttribute('aria-sort')).resolves.toBe('descending');
    await expect(page.getByRole('columnheader', { name: /^Serial/ }).getAttribute('aria-sort')).resolves.toBe(null);

    // The peripherals column has no API sort: a plain header.
    await expect(page.getByRole('button', { name: /^Peripherals/ }).count()).resolves.toBe(0);

    // Paging through the URL.
    await page.getByRole('button', { name: 'Next page' }).click();
    await expect.poll(() => queryOf(page).get('page')).toBe('2');
    await expectResults(page, { 'connection.state': ['CONNECTED'], sort: 'location.name', direction: 'DESC', page: '2' });
    const answer = await apiSearch({ 'connection.state': ['CONNECTED'] });
    await page.getByText(`Page 2 of ${answer.page.pages}`, { exact: true }).waitFor();
    expect(realErrors(opened)).toEqual([]);
    await page.close();
  });

  it('copies the search as curl and as a dss command, and the curl URL gives the same total', { timeout: 120_000 }, async () => {
    const hash = '#/fleet?connection.state=DISCONNECTED&health.hubs.devices.health.state=WARNING&sort=updated&direction=DESC';
    const opened = await signedIn(browser, local.service, 'alice', hash);
    const { page } = opened;
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: local.service.api });
    const params = {
      'connection.state': ['DISCONNECTED'],
      'health.hubs.devices.health.state': ['WARNING'],
      sort: 'updated',
      direction: 'DESC',
    };
    await expectResults(page, params);
    const shown = await countText(page);

    await page.getByRole('button', { name: 'Copy as curl' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /^Copied$/ })
      .waitFor();
    const command = await page.getByRole('textbox', { name: 'Copied command (curl)' }).inputValue();
    expect(command).toMatch(/^curl -H "Authorization: Bearer \$TOKEN" '[^']+'$/);
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(command);
    const url = /'([^']+)'/.exec(command)?.[1] ?? '';
    expect(url.startsWith(`${local.service.api}/resources/search?`)).toBe(true);
    const response = await fetch(url, { headers: { authorization: `Bearer ${local.tokens.alice}` } });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { total: number };
    expect(matchWords(body.total)).toBe(shown);

    await page.getByRole('button', { name: 'Copy as CLI' }).click();
    const cliBox = page.getByRole('textbox', { name: 'Copied command (CLI)' });
    await expect
      .poll(() => cliBox.inputValue())
      .toBe('dss search connection.state=DISCONNECTED health.hubs.devices.health.state=WARNING --type DEVICE --sort updated:desc');
    // Run as a shell would split it, the command gives the same search.
    const cli = await dssUser(local.service);
    try {
      const login = await runDss(cli, ['login', '--username', 'alice', '--password-stdin'], { stdin: `${PASSWORDS.alice}\n` });
      expect(login.code, login.stderr).toBe(0);
      const runCopied = async (command: string) =>
        dssJson<{ total: number; resources: { id: string }[] }>(cli, shellWords(command.replace(/^dss /, '')));
      const byCli = await runCopied(await cliBox.inputValue());
      expect(matchWords(byCli.total)).toBe(shown);
      expect(byCli.resources.map((resource) => resource.id)).toEqual(await rowIds(page));

      // Full text with quotes and spaces survives the shell.
      await page.getByRole('searchbox', { name: 'Search' }).fill(`Paris 'Rivoli' "4.2.1"`);
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      await expectResults(page, { global: `Paris 'Rivoli' "4.2.1"`, sort: 'updated', direction: 'DESC' }, resultWords);
      await page.getByRole('button', { name: 'Copy as CLI' }).click();
      const withText = await runCopied(await cliBox.inputValue());
      expect(resultWords(withText.total)).toBe(await countText(page));
      expect(withText.resources.map((resource) => resource.id)).toEqual(await rowIds(page));
    } finally {
      await rm(cli.configDirectory, { recursive: true, force: true });
    }
    expect(realErrors(opened)).toEqual([]);
    await page.close();
  });

  it('exports every matching device as CSV', { timeout: 120_000 }, async () => {
    const opened = await signedIn(browser, local.service, 'alice', '#/fleet');
    const { page } = opened;
    const answer = await apiSearch({});
    expect(answer.total).toBeGreaterThan(100); // more than one page of the export
    await expectResults(page, {});

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
    expect(download.suggestedFilename()).toBe('fleet.csv');
    const records = parseCsv(readFileSync(await download.path(), 'utf8'));
    const [head, ...rows] = records;
    expect(head?.slice(0, 3)).toEqual(['ID', 'Serial', 'Location']);
    expect(rows).toHaveLength(answer.total);
    expect(new Set(rows.map((row) => row[0])).size).toBe(answer.total);
    for (const row of rows) expect(row).toHaveLength(head?.length ?? 0);
    await page
      .getByRole('status')
      .filter({ hasText: `Exported ${answer.total.toLocaleString('en-US')} rows to fleet.csv.` })
      .waitFor();
    expect(realErrors(opened)).toEqual([]);
    await page.close();
  });

  it('is operable by keyboard: Tab to a facet and Space toggles it', { timeout: 120_000 }, async () => {
    const opened = await signedIn(browser, local.service, 'alice', '#/fleet');
    const { page } = opened;
    await expectResults(page, {});
    await page.getByRole('searchbox', { name: 'Search' }).focus();
    const focusedType = () => page.evaluate('document.activeElement?.type');
    for (let presses = 0; presses < 10 && (await focusedType()) !== 'checkbox'; presses += 1) await page.keyboard.press('Tab');
    expect(await focusedType()).toBe('checkbox');
    const value = (await page.evaluate('document.activeElement.value')) as string;
    const field = (await page.evaluate('document.activeElement.name')) as string;
    await page.keyboard.press('Space');
    await expect.poll(() => queryOf(page).getAll(field)).toEqual([value]);
    await expectResults(page, { [field]: [value] });

    // A sort header is a button: Enter sorts (serial ascending is the default, so serial descending).
    await page.getByRole('button', { name: /^Serial/ }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => [queryOf(page).get('sort'), queryOf(page).get('direction')]).toEqual(['serial', 'DESC']);
    await expectResults(page, { [field]: [value], sort: 'serial', direction: 'DESC' });
    expect(realErrors(opened)).toEqual([]);
    await page.close();
  });

  it('lets alice select devices for a deployment, and offers olivia (read only) no selection', { timeout: 120_000 }, async () => {
    const alice = await signedIn(browser, local.service, 'alice', '#/fleet?connection.state=DISCONNECTED');
    const answer = await apiSearch({ 'connection.state': ['DISCONNECTED'] });
    await expectResults(alice.page, { 'connection.state': ['DISCONNECTED'] });
    const first = answer.resources[0]?.id ?? '';
    await alice.page.getByRole('checkbox', { name: `Select ${first}`, exact: true }).check();
    await alice.page.getByText('1 device selected.').waitFor();
    await alice.page.getByRole('button', { name: `Select all ${answer.total} matching` }).click();
    await alice.page.getByText(`All ${answer.total} matching devices are selected.`).waitFor();
    await alice.page.getByRole('button', { name: 'Deploy to selection…' }).waitFor();
    await alice.page.getByRole('button', { name: 'Clear selection' }).click();
    await alice.page.getByText('No device selected.').waitFor();
    expect(realErrors(alice)).toEqual([]);
    await alice.page.close();

    const olivia = await signedIn(browser, local.service, 'olivia', '#/fleet');
    const { page } = olivia;
    const total = expectOk(
      await clientFor(local.service, local.tokens.olivia).main.GET('/resources/search', { params: { query: { type: ['DEVICE'] } } }),
    ).total;
    await expect.poll(() => countText(page), { timeout: 15_000 }).toBe(matchWords(total));
    // Olivia has two companies: the company facet is shown.
    await page.getByRole('group', { name: 'Company' }).waitFor();
    await expect(page.getByRole('checkbox', { name: /^Select / }).count()).resolves.toBe(0);
    await expect(page.getByRole('button', { name: 'Deploy to selection…' }).count()).resolves.toBe(0);
    await expect(page.getByRole('button', { name: /^Select / }).count()).resolves.toBe(0);
    expect(realErrors(olivia)).toEqual([]);
    await page.close();
  });

  it('lets the last of two quick clicks win, with one search and one filters request per change', { timeout: 120_000 }, async () => {
    const opened = await signedIn(browser, local.service, 'alice', '#/fleet');
    const { page } = opened;
    await expectResults(page, {});
    const connection = page.getByRole('group', { name: 'Connection state', exact: true });

    // The first change's search is held until the second change's search has been answered: it would answer last.
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let heldDone = () => {};
    const held = new Promise<void>((resolve) => {
      heldDone = resolve;
    });
    await page.route(/\/resources\/search\?/, async (route) => {
      const states = new URL(route.request().url()).searchParams.getAll('connection.state');
      if (states.length === 1 && states[0] === 'CONNECTED') {
        await released;
        // The page has aborted it by now: continuing may fail, which is the point.
        await route.continue().catch(() => {});
        heldDone();
      } else await route.continue();
    });
    const before = opened.requested.length;
    const secondAnswered = page.waitForResponse((response) => {
      const url = new URL(response.url());
      return url.pathname === '/resources/search' && url.searchParams.getAll('connection.state').length === 2;
    });
    await connection.getByRole('checkbox', { name: /^Connected \(/ }).check();
    await connection.getByRole('checkbox', { name: /^Disconnected \(/ }).check();
    await secondAnswered;
    release();
    await held;
    const both = { 'connection.state': ['CONNECTED', 'DISCONNECTED'] };
    await expectResults(page, both);
    await expect.poll(() => facetLabels(page)).toEqual(expectedLabels(await apiFilters(both)));
    expect(searchRequests(opened.requested.slice(before))).toEqual({ search: 2, filters: 2 });
    await page.unroute(/\/resources\/search\?/);
    expect(realErrors(opened)).toEqual([]);
    await page.close();
  });

  it('says when the search is unavailable, keeps the last results and tries again on request', { timeout: 120_000 }, async () => {
    const opened = await signedIn(browser, local.service, 'alice', '#/fleet');
    const { page } = opened;
    await expectResults(page, {});
    const shown = await rowIds(page);
    let refuse = true;
    const detail = 'The search backend is throttling requests. Retry after 1 second.';
    await page.route(/\/resources\/search\?/, (route) =>
      refuse
        ? route.fulfill({
            status: 503,
            headers: { 'content-type': 'application/problem+json', 'retry-after': '1' },
            body: JSON.stringify({ type: 'about:blank', title: 'Service Unavailable', status: 503, detail }),
          })
        : route.continue(),
    );
    await page
      .getByRole('group', { name: 'Connection state', exact: true })
      .getByRole('checkbox', { name: /^Disconnected \(/ })
      .check();
    const alert = page.getByRole('alert').filter({ hasText: detail });
    await alert.waitFor();
    expect(await rowIds(page)).toEqual(shown);
    // Kept, but said to be the previous search's: the count is not the new search's.
    expect(await countText(page)).toBe('The rows below are those of the previous search.');
    refuse = false;
    await alert.getByRole('button', { name: 'Try again' }).click();
    await expectResults(page, { 'connection.state': ['DISCONNECTED'] });
    await expect(page.getByRole('alert').count()).resolves.toBe(0);
    await page.unroute(/\/resources\/search\?/);
    // The 503 answers are the test's own.
    expect(realErrors(opened).filter((error) => !error.includes('503'))).toEqual([]);
    await page.close();
  });

  it('fixes the selection while the deploy is open, and each opening deploys to the selection shown', { timeout: 180_000 }, async () => {
    const params = { 'connection.state': ['DISCONNECTED'] };
    const opened = await signedIn(browser, local.service, 'alice', '#/fleet?connection.state=DISCONNECTED');
    const { page } = opened;
    const answer = await apiSearch(params);
    await expectResults(page, params);
    const [first, second, third] = answer.resources.map((resource) => resource.id);
    const scenario = expectOk(
      await clientFor(local.service, local.tokens.alice).main.GET('/companies/{companyId}/resources/scenarios', {
        params: { path: { companyId: 'acme' } },
      }),
    ).items[0];
    if (first === undefined || second === undefined || third === undefined || scenario === undefined) throw new Error('no demo data');
    const version = `${scenario.id}@${scenario.latestVersion}`;
    const rowBox = (id: string) => page.getByRole('checkbox', { name: `Select ${id}`, exact: true });

    await rowBox(first).check();
    await rowBox(second).check();
    await page.getByText('2 devices selected.').waitFor();
    await page.getByRole('button', { name: 'Deploy to selection…' }).click();
    await page.getByRole('heading', { name: 'Deploy to 2 devices' }).waitFor();

    // While the flow is open nothing changes the selection: not the rows, the selection buttons, the filters nor the text.
    await page.getByText('2 devices selected. Close the deploy to change the selection.').waitFor();
    for (const id of [first, second, third]) await expect(rowBox(id).isDisabled()).resolves.toBe(true);
    for (const name of ['Select this page', `Select all ${answer.total} matching`, 'Clear selection', 'Deploy to selection…']) {
      await expect(page.getByRole('button', { name, exact: true }).isDisabled()).resolves.toBe(true);
    }
    const facetBoxes = page.locator('.fleet-facets input[type="checkbox"]');
    expect(await facetBoxes.count()).toBeGreaterThan(5);
    expect(await facetBoxes.evaluateAll((boxes) => boxes.every((box) => (box as unknown as { disabled: boolean }).disabled))).toBe(true);
    await expect(page.getByRole('searchbox', { name: 'Search' }).isDisabled()).resolves.toBe(true);
    await page.getByLabel('Scenario version').selectOption({ label: `${version} (${scenario.name})` });
    await page.getByRole('button', { name: 'Dry run on 2 devices' }).waitFor();

    // Closed, the selection changes again; opened again, the flow starts anew on the 3 devices now selected.
    await page.getByRole('button', { name: 'Cancel' }).click();
    await rowBox(third).check();
    await page.getByText('3 devices selected.').waitFor();
    await page.getByRole('button', { name: 'Deploy to selection…' }).click();
    await page.getByRole('heading', { name: 'Deploy to 3 devices' }).waitFor();
    await expect(page.getByLabel('Scenario version').inputValue()).resolves.toBe('');
    await page.getByLabel('Scenario version').selectOption({ label: `${version} (${scenario.name})` });
    await page.getByRole('button', { name: 'Dry run on 3 devices' }).click();
    await page.getByRole('table', { name: `Dry run: what deploying ${version} to 3 devices would do` }).waitFor();
    expect(realErrors(opened)).toEqual([]);
    await page.close();
  });

  it('after a refused search shows no stale count nor a page "NaN", and acts on no earlier result', { timeout: 120_000 }, async () => {
    const refused = async (query: string) => {
      const response = await fetch(`${local.service.api}/resources/search?${query}&type=DEVICE`, {
        headers: { authorization: `Bearer ${local.tokens.alice}` },
      });
      expect(response.status).toBe(400);
      return ((await response.json()) as { detail: string }).detail;
    };
    const params = { 'connection.state': ['DISCONNECTED'] };
    const opened = await signedIn(browser, local.service, 'alice', '#/fleet?connection.state=DISCONNECTED');
    const { page } = opened;
    const answer = await apiSearch(params);
    await expectResults(page, params);

    // A link with a page size the API refuses: its words in the alert; the rows shown are said to be the previous search's.
    await page.evaluate(`location.hash = '#/fleet?connection.state=DISCONNECTED&pageSize=500'`);
    await page
      .getByRole('alert')
      .filter({ hasText: await refused('connection.state=DISCONNECTED&pageSize=500') })
      .waitFor();
    await expect.poll(() => countText(page)).toBe('The rows below are those of the previous search.');
    await page.getByRole('table', { name: 'Results of the previous search' }).waitFor();
    await expect(page.getByRole('button', { name: 'Select all 0 matching' }).isDisabled()).resolves.toBe(true);
    await expect(page.getByRole('button', { name: 'Select this page' }).isDisabled()).resolves.toBe(true);
    await expect(page.getByRole('button', { name: 'Export CSV' }).isDisabled()).resolves.toBe(true);
    await expect(page.getByRole('navigation', { name: 'Pages of results' }).count()).resolves.toBe(0);

    // A page size the select offers gives results again.
    await page.getByLabel('Devices per page').selectOption('50');
    await expectResults(page, { ...params, pageSize: '50' });
    await expect(page.getByRole('button', { name: `Select all ${answer.total} matching` }).isEnabled()).resolves.toBe(true);
    await expect(page.getByRole('alert').count()).resolves.toBe(0);
    await page.close();

    // A link to a page that is no number: the API's words, no count and no "Page NaN".
    const notANumber = await signedIn(browser, local.service, 'alice', '#/fleet?page=abc');
    await notANumber.page
      .getByRole('alert')
      .filter({ hasText: await refused('page=abc') })
      .waitFor();
    expect(await countText(notANumber.page)).toBe('');
    expect(await notANumber.page.locator('main').textContent()).not.toContain('NaN');
    await expect(notANumber.page.getByRole('navigation', { name: 'Pages of results' }).count()).resolves.toBe(0);
    // The 400 answers are the test's own.
    expect([...realErrors(opened), ...realErrors(notANumber)].filter((error) => !error.includes('400'))).toEqual([]);
    await notANumber.page.close();
  });
});
