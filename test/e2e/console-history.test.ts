/**
 * End-to-end over `npm start`, in headless Chromium: the console's history page. Three batches of deployments are made
 * through the API (alice), each in its own second so that the time filters split them; the page's rows, filters (by
 * device, scenario and version, and by time range through the form's datetime-local fields), paging, refusal of a
 * `from` after `to` and CSV export are checked against the API's answers for the same filters.
 */
import { readFile } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectOk, type operations } from '../../client/index.js';
import { chromiumAvailable, launchChromium } from './browser.js';
import { expectAccessible, screenshot, signedIn } from './console-harness.js';
import { clientFor, eventually, expectError, useLocalService } from './harness.js';

const hasChromium = chromiumAvailable();
if (!hasChromium) console.warn('Chromium not installed and could not be installed: skipping the console history tests');

const local = useLocalService({ users: ['alice', 'olivia'] });

type HistoryQuery = NonNullable<operations['DeploymentsHistory']['parameters']['query']>;

const D1 = 'acme-kiosk-0020';
const D2 = 'acme-kiosk-0021';
const SCENARIO = 'acme-welcome';
/** A note a spreadsheet would run as a formula, were it not guarded. */
const FORMULA_NOTE = '=SUM(1,2)';
/** History entries of the three batches: one per request entry. */
const ENTRIES = 8;

let browser: Browser;
/** Whole seconds between the batches: batch 1 < t1 ≤ batch 2 < t2 ≤ batch 3. */
let t1: string;
let t2: string;

const alice = () => clientFor(local.service, local.tokens.alice);

/** Deploys (or undeploys) scenario versions on devices as alice, with a note. */
async function deploy(note: string, entries: [device: string, version: string, action: 'DEPLOY' | 'UNDEPLOY'][]) {
  expectOk(
    await alice().main.POST('/companies/{companyId}/resources/deployments', {
      params: { path: { companyId: 'acme' } },
      body: {
        requests: entries.map(([id, subId, action]) => ({
          target: { type: 'DEVICE', id },
          what: { type: 'SCENARIO', id: SCENARIO, subId },
          action,
        })),
        note,
      },
    }),
  );
}

/** Waits for the next whole second and returns it as an ISO-8601 instant. */
async function nextSecond(): Promise<string> {
  const next = Math.ceil((Date.now() + 1) / 1000) * 1000;
  await new Promise((resolve) => setTimeout(resolve, next - Date.now() + 5));
  return new Date(next).toISOString();
}

/** One page of acme's history as alice reads it. */
function historyPage(query: HistoryQuery) {
  return alice().main.GET('/companies/{companyId}/resources/deployments/history', { params: { path: { companyId: 'acme' }, query } });
}

/** One history entry as the typed client answers it. */
type Entry = NonNullable<Awaited<ReturnType<typeof historyPage>>['data']>['items'][number];

/** Every entry of acme's history matching `query`, following the cursors. */
async function history(query: HistoryQuery = {}): Promise<Entry[]> {
  const entries: Entry[] = [];
  let cursor: string | undefined;
  do {
    const answer = expectOk(await historyPage({ ...query, ...(cursor === undefined ? {} : { cursor }) }));
    entries.push(...answer.items);
    cursor = answer.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return entries;
}

/** What the tests read of an element in the page (the root project has no DOM types). */
interface Element {
  textContent: string | null;
  children: ArrayLike<Element>;
  getAttribute(name: string): string | null;
}

/** `DEPLOY` → `Deploy`, as the page writes enumerations. */
const humanized = (value: string) => value.charAt(0) + value.slice(1).toLowerCase().replaceAll('_', ' ');

/** The table's rows: entry id and the cells a reader compares (device, scenario version, action, outcome, note). */
async function shownRows(page: Page) {
  const table = page.getByRole('table', { name: /^Deployment history of acme/ });
  await table.waitFor();
  return table.locator('tbody tr').evaluateAll((rows: Element[]) =>
    rows.map((row) => {
      const cells = Array.from(row.children, (cell) => (cell.textContent ?? '').trim());
      return { id: row.getAttribute('data-id'), device: cells[2], version: cells[3], action: cells[4], outcome: cells[6], note: cells[8] };
    }),
  );
}

/** The same from the API's entries. */
function expectedRows(entries: Entry[]) {
  return entries.map((entry) => ({
    id: entry.id,
    device: entry.target.id,
    version: `${entry.what.id}@${entry.what.subId}`,
    action: entry.kind === 'ACTION' ? humanized(entry.action) : '—',
    outcome: humanized(entry.kind === 'ACTION' ? entry.state : entry.deviceStatus.state),
    note: (entry.kind === 'ACTION' ? entry.note : entry.deviceStatus.message) || '—',
  }));
}

/** Waits until the table shows the API's entries. */
async function expectRows(page: Page, entries: Entry[]): Promise<void> {
  await expect.poll(() => shownRows(page)).toEqual(expectedRows(entries));
}

/**
 * An instant as the page's datetime-local field shows it, in the browser's time zone: the value set, read back from
 * a field, since the browser normalizes it (HTML's normalized local date and time string drops `:00` seconds).
 */
function localValue(page: Page, iso: string): Promise<string> {
  return page.evaluate((value) => {
    const date = new Date(value);
    const pad = (n: number) => String(n).padStart(2, '0');
    // The root type check has no DOM library: the page's document, as far as this uses it.
    const { document } = globalThis as unknown as {
      document: { createElement(tag: 'input'): { type: string; step: string; value: string } };
    };
    const field = document.createElement('input');
    field.type = 'datetime-local';
    field.step = '1';
    field.value = `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
    return field.value;
  }, iso);
}

/** CSV text (RFC 4180: quoted cells, doubled quotes, CRLF records) as rows of cells. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index];
    if (quoted) {
      if (char === '"' && text[index + 1] === '"') {
        cell += '"';
        index += 1;
      } else if (char === '"') quoted = false;
      else cell += char;
    } else if (char === '"') quoted = true;
    else if (char === ',') {
      row.push(cell);
      cell = '';
    } else if (char === '\r' && text[index + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      index += 1;
    } else cell += char;
  }
  return rows;
}

beforeAll(async () => {
  if (!hasChromium) return;
  browser = await launchChromium();
  // Eight entries: D1's second deploy of 1.0.0 fails (ALREADY_DEPLOYED), as do the deploy of a version that does not
  // exist and the unknown kiosk's.
  await deploy('first batch, "quoted"', [
    [D1, '1.0.0', 'DEPLOY'],
    [D2, '1.0.0', 'DEPLOY'],
    [D1, '1.0.0', 'DEPLOY'],
    [D1, '9.9.9', 'DEPLOY'],
  ]);
  t1 = await nextSecond();
  await deploy(FORMULA_NOTE, [
    [D1, '1.1.0', 'DEPLOY'],
    [D2, '1.0.0', 'UNDEPLOY'],
  ]);
  t2 = await nextSecond();
  await deploy('line one\nline two', [
    [D2, '1.1.0', 'DEPLOY'],
    ['acme-no-such-kiosk', '1.0.0', 'DEPLOY'],
  ]);
  // The SUCCESS entries are derived from the deployments table's stream a moment after each answer (the FAILURE
  // entries are written before it): read right away, the history may still lack some of them.
  await eventually(async () => (await history()).length === ENTRIES, 'the history of the three batches');
}, 120_000);

afterAll(async () => {
  await browser?.close();
});

describe.skipIf(!hasChromium)('the console history page', () => {
  it('lists the entries as the API does and pages them with "Show more"', async () => {
    const { page, errors } = await signedIn(browser, local.service, 'alice', '#/history?limit=3');
    // The page names its company in the URL.
    await expect.poll(() => new URL(page.url()).hash).toBe('#/history?limit=3&company=acme');
    const all = await history();
    expect(all.length).toBe(ENTRIES);
    await expectRows(page, all.slice(0, 3));
    await page.getByRole('button', { name: 'Show more entries' }).click();
    await expectRows(page, all.slice(0, 6));
    await page.getByRole('button', { name: 'Show more entries' }).click();
    await expectRows(page, all);
    await page
      .getByRole('status')
      .filter({ hasText: `${ENTRIES} entries shown.` })
      .waitFor();
    expect(await page.getByRole('button', { name: 'Show more entries' }).count()).toBe(0);
    await expectAccessible(page, 'history page');
    await screenshot(page, 'console-history.png');
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it('filters by device, scenario and version, then by time range, through the form; the URL keeps them', async () => {
    const { page, errors } = await signedIn(browser, local.service, 'alice', '#/history?company=acme');
    await page.getByRole('table', { name: /^Deployment history of acme/ }).waitFor();
    await page.getByLabel('Device', { exact: true }).fill(D1);
    await page.getByLabel('Scenario', { exact: true }).fill(SCENARIO);
    await page.getByLabel('Version (of the scenario)', { exact: true }).fill('1.1.0');
    await page.getByRole('button', { name: 'Show history' }).click();
    await expect.poll(() => new URL(page.url()).hash).toBe(`#/history?company=acme&deviceId=${D1}&scenarioId=${SCENARIO}&version=1.1.0`);
    const byDevice = await history({ deviceId: D1, scenarioId: SCENARIO, version: '1.1.0' });
    expect(byDevice.length).toBe(1);
    await expectRows(page, byDevice);
    await page.reload();
    await expectRows(page, byDevice);
    expect(await page.getByLabel('Device', { exact: true }).inputValue()).toBe(D1);

    await page.getByRole('button', { name: 'Clear filters' }).click();
    await expect.poll(() => new URL(page.url()).hash).toBe('#/history?company=acme');
    await page.getByLabel('From (inclusive)', { exact: true }).fill(await localValue(page, t1));
    await page.getByLabel('To (exclusive)', { exact: true }).fill(await localValue(page, t2));
    await page.getByRole('button', { name: 'Show history' }).click();
    await expect
      .poll(() => new URL(page.url()).hash)
      .toBe(`#/history?company=acme&from=${encodeURIComponent(t1)}&to=${encodeURIComponent(t2)}`);
    const between = await history({ from: t1, to: t2 });
    // The second batch alone: D1's deploy and D2's undeploy.
    expect(between.map((entry) => entry.target.id).sort()).toEqual([D1, D2]);
    await expectRows(page, between);
    await page.reload();
    await expectRows(page, between);
    expect(await page.getByLabel('From (inclusive)', { exact: true }).inputValue()).toBe(await localValue(page, t1));
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it("shows the service's problem detail for a `from` after `to`", async () => {
    const { page, errors } = await signedIn(browser, local.service, 'alice', '#/history?company=acme');
    await page.getByLabel('From (inclusive)', { exact: true }).fill(await localValue(page, t2));
    await page.getByLabel('To (exclusive)', { exact: true }).fill(await localValue(page, t1));
    await page.getByRole('button', { name: 'Show history' }).click();
    const problem = expectError(
      await alice().main.GET('/companies/{companyId}/resources/deployments/history', {
        params: { path: { companyId: 'acme' }, query: { from: t2, to: t1 } },
      }),
      400,
    );
    const alert = page.getByRole('alert');
    await expect.poll(() => alert.textContent()).toContain(problem.detail ?? '');
    for (const violation of problem.errors ?? []) expect(await alert.textContent()).toContain(violation.message);
    expect(await page.getByRole('table').count()).toBe(0);
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it("exports every matching entry as CSV, the API's entries row for row, formulas guarded", async () => {
    const { page, errors } = await signedIn(browser, local.service, 'alice', '#/history?company=acme&limit=2');
    await page.getByRole('table', { name: /^Deployment history of acme/ }).waitFor();
    const downloading = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Export CSV' }).click();
    const file = await downloading;
    expect(file.suggestedFilename()).toBe('history.csv');
    const rows = parseCsv(await readFile(await file.path(), 'utf8'));
    const all = await history();
    // Every page, not the two entries shown.
    expect(all.length).toBeGreaterThan(2);
    const guard = (cell: string) => (/^[=+\-@\t\r]/.test(cell) ? `'${cell}` : cell);
    expect(rows).toEqual([
      ['at', 'kind', 'deviceId', 'scenarioId', 'version', 'action', 'outcome', 'cause', 'by', 'note', 'message', 'id', 'deploymentId'],
      ...all.map((entry) =>
        (entry.kind === 'ACTION'
          ? [
              entry.at,
              entry.kind,
              entry.target.id,
              entry.what.id,
              entry.what.subId,
              entry.action,
              entry.state,
              entry.cause ?? '',
              entry.by,
              entry.note ?? '',
              '',
              entry.id,
              '',
            ]
          : [
              entry.at,
              entry.kind,
              entry.target.id,
              entry.what.id,
              entry.what.subId,
              '',
              entry.deviceStatus.state,
              '',
              entry.by,
              '',
              entry.deviceStatus.message ?? '',
              entry.id,
              entry.deploymentId,
            ]
        ).map(guard),
      ),
    ]);
    expect(rows.some((row) => row.includes(`'${FORMULA_NOTE}`))).toBe(true);
    await page
      .getByRole('status')
      .filter({ hasText: `Exported ${all.length} entries to history.csv.` })
      .waitFor();
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it('offers a user of two companies the company as a field of the form', async () => {
    const { page, errors } = await signedIn(browser, local.service, 'olivia', '#/history');
    await expect.poll(() => new URL(page.url()).hash).toBe('#/history?company=acme');
    await page.getByRole('table', { name: /^Deployment history of acme/ }).waitFor();
    await page.getByRole('combobox', { name: /^Company/ }).selectOption('globex');
    await page.getByRole('button', { name: 'Show history' }).click();
    await expect.poll(() => new URL(page.url()).hash).toBe('#/history?company=globex');
    const globex = expectOk(
      await clientFor(local.service, local.tokens.olivia).main.GET('/companies/{companyId}/resources/deployments/history', {
        params: { path: { companyId: 'globex' } },
      }),
    );
    // Nothing was deployed in globex here.
    expect(globex.items).toEqual([]);
    await page.getByRole('status').filter({ hasText: 'No entry matches these filters.' }).waitFor();
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it("links a device's page to its full history", async () => {
    const { page, errors } = await signedIn(browser, local.service, 'alice', `#/devices/acme/${D2}`);
    await page.getByRole('link', { name: 'Full history' }).click();
    await expect.poll(() => new URL(page.url()).hash).toBe(`#/history?company=acme&deviceId=${D2}`);
    await expectRows(page, await history({ deviceId: D2 }));
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);
});
