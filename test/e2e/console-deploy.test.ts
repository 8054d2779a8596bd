/**
 * End-to-end over `npm start` in headless Chromium: the console's bulk deploy from the fleet page. Alice selects every
 * device matching a filtered search, chooses a version of acme's scenario, sees a dry run whose counts per state and
 * cause are the API's own dry run of the same entries, deploys, and the summary's counts and failed devices match;
 * the API then lists an active deployment of that version on each of those devices. The keyboard focus follows the
 * steps (heading, dry run's table, summary) and returns to the opening button on Cancel and Close. The chunking and the journal
 * that make a reload safe are unit-tested (test/unit/console/bulk-deploy.test.ts).
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type components, expectOk } from '../../client/index.js';
import { chromiumAvailable, launchChromium } from './browser.js';
import { expectAccessible, screenshot, signedIn } from './console-harness.js';
import { clientFor, eventually, useLocalService } from './harness.js';

const hasChromium = chromiumAvailable();
if (!hasChromium) console.warn('Chromium not installed and could not be installed: skipping the console bulk deploy test');

const local = useLocalService({ users: ['alice'] });

/** The search of the test: a filter with a small count in the demo data. */
const FILTER = 'health.mode=SERVER';

/** The console's words for an enumeration value (console/src/format.ts humanize). */
function humanize(value: string): string {
  const words = value.toLowerCase().split('_');
  const first = words[0] ?? '';
  return [first.charAt(0).toUpperCase() + first.slice(1), ...words.slice(1)].join(' ');
}

/** The rows of the table named `caption`, as cell texts. */
async function rowsOf(page: Page, caption: RegExp): Promise<string[][]> {
  const table = page.getByRole('table', { name: caption });
  await table.waitFor();
  const rows: string[][] = [];
  for (const row of await table.locator('tbody tr').all()) rows.push((await row.locator('td').allInnerTexts()).map((cell) => cell.trim()));
  return rows;
}

/** Counts per state and cause as the console's table shows them, sorted for comparison. */
function countRows(items: readonly { state: string; cause: string | null }[]): string[][] {
  const counts = new Map<string, number>();
  for (const item of items) {
    const key = `${humanize(item.state)}\t${item.cause === null ? '—' : humanize(item.cause)}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([key, n]) => [...key.split('\t'), n.toLocaleString('en-US')]).sort();
}

describe.skipIf(!hasChromium)('console: bulk deploy from the fleet page', () => {
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('deploys a version of acme’s scenario to every device matching a search: dry run and summary match the API', {
    timeout: 180_000,
  }, async () => {
    const dss = clientFor(local.service, local.tokens.alice);
    // The matching devices, as the search API lists them (the index is built at start: wait for the devices).
    let ids: string[] = [];
    await eventually(async () => {
      const page = expectOk(
        await dss.main.GET('/resources/search', {
          params: { query: { 'health.mode': ['SERVER'], type: ['DEVICE'], pageSize: 100 } as never },
        }),
      );
      ids = page.resources.filter((resource) => resource.type === 'DEVICE' && resource.company === 'acme').map((resource) => resource.id);
      return page.total > 0 && ids.length === page.total;
    }, 'the search lists acme’s SERVER devices');
    expect(ids.length).toBeGreaterThan(2);

    const scenario = expectOk(await dss.main.GET('/companies/{companyId}/resources/scenarios', { params: { path: { companyId: 'acme' } } }))
      .items[0];
    if (scenario === undefined) throw new Error('acme has no scenario in the demo data');
    const version = scenario.latestVersion;
    const entries = (targets: string[]): components['schemas']['DeploymentRequest'][] =>
      targets.map((id) => ({
        target: { type: 'DEVICE', id },
        what: { type: 'SCENARIO', id: scenario.id, subId: version },
        action: 'DEPLOY',
      }));
    // Two of the devices have the version already: the dry run and the deploy report them ALREADY_DEPLOYED.
    const already = ids.slice(0, 2);
    expectOk(
      await dss.main.POST('/companies/{companyId}/resources/deployments', {
        params: { path: { companyId: 'acme' } },
        body: { requests: entries(already) },
      }),
    );
    const expected = expectOk(
      await dss.main.POST('/companies/{companyId}/resources/deployments', {
        params: { path: { companyId: 'acme' }, query: { dryRun: true } },
        body: { requests: entries(ids) },
      }),
    ).items;
    expect(expected.filter((item) => item.cause === 'ALREADY_DEPLOYED').map((item) => item.target.id)).toEqual(already);

    const { page, errors } = await signedIn(browser, local.service, 'alice', `#/fleet?${FILTER}`);
    await page.getByRole('button', { name: `Select all ${ids.length.toLocaleString('en-US')} matching` }).click();
    const opener = page.getByRole('button', { name: 'Deploy to selection…' });
    // Evaluated as a string: the test's TypeScript knows no DOM.
    const focused = () => page.evaluate('document.activeElement?.textContent');

    // The flow takes the focus to its heading; Cancel gives it back to the button that opened the flow.
    await opener.click();
    const heading = page.getByRole('heading', { name: `Deploy to ${ids.length} devices` });
    await heading.waitFor();
    await expect.poll(focused).toBe(`Deploy to ${ids.length} devices`);
    await page.getByRole('button', { name: 'Cancel' }).click();
    await heading.waitFor({ state: 'detached' });
    await expect.poll(focused).toBe('Deploy to selection…');

    await opener.click();
    await expect.poll(focused).toBe(`Deploy to ${ids.length} devices`);

    await page.getByLabel('Scenario version').selectOption({ label: `${scenario.id}@${version} (${scenario.name})` });
    await page.getByRole('button', { name: `Dry run on ${ids.length} devices` }).click();
    expect((await rowsOf(page, /^Dry run:/)).sort()).toEqual(countRows(expected));
    // The focus goes to the dry run's table (its caption names it), just before the deploy button.
    await expect
      .poll(() => page.evaluate('document.activeElement?.querySelector("caption")?.textContent'))
      .toBe(`Dry run: what deploying ${scenario.id}@${version} to ${ids.length} devices would do`);
    await expectAccessible(page, 'bulk deploy dry run');

    await page.getByRole('button', { name: `Deploy to ${ids.length} devices` }).click();
    await page.getByRole('heading', { name: `${scenario.id}@${version} deployed: summary` }).waitFor();
    await expect.poll(focused).toBe(`${scenario.id}@${version} deployed: summary`);
    expect((await rowsOf(page, /: results$/)).sort()).toEqual(countRows(expected));
    // The failed devices are listed with their cause and a link to their page.
    const failed = await rowsOf(page, /^Failed devices/);
    expect(failed.map((row) => row[0])).toEqual(already);
    expect(failed.every((row) => row[1] === 'Already deployed')).toBe(true);
    for (const id of already) {
      const failures = page.getByRole('table', { name: /^Failed devices/ });
      await expect.poll(() => failures.getByRole('link', { name: id }).getAttribute('href')).toBe(`#/devices/acme/${id}`);
    }
    await screenshot(page, 'console-bulk-deploy.png');

    // Every matching device now has the version active.
    const active = new Set<string>();
    let cursor: string | undefined;
    do {
      const after = cursor;
      const listing = expectOk(
        await dss.main.GET('/companies/{companyId}/resources/DEVICE/deployments', {
          params: { path: { companyId: 'acme' }, query: { limit: 100, ...(after === undefined ? {} : { cursor: after }) } },
        }),
      );
      for (const item of listing.items) if (item.what.id === scenario.id && item.what.subId === version) active.add(item.target.id);
      cursor = listing.nextCursor ?? undefined;
    } while (cursor !== undefined);
    expect(ids.filter((id) => !active.has(id))).toEqual([]);

    // Close gives the focus back to the button that opened the flow (not to <body>).
    await page.getByRole('button', { name: 'Close' }).click();
    await page.getByRole('heading', { name: /deployed: summary/ }).waitFor({ state: 'detached' });
    await expect.poll(focused).toBe('Deploy to selection…');
    expect(errors).toEqual([]);
    await page.close();
  });
});
