/**
 * End-to-end over `npm start` in headless Chromium: the fleet page's rollout composer. Its preview (target count,
 * breakdown by facet field, waves) is checked against the search and filters endpoints' answers for the same query
 * with the same token; the rollout it creates (now, and scheduled an hour ahead) is read back through the API; a
 * continuous one shows on its page, without a reload, the device that joins it later; a read-only user is not offered
 * it.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectOk, type operations } from '../../client/index.js';
import { deviceToken } from '../support/device-token.js';
import { chromiumAvailable, launchChromium } from './browser.js';
import { expectAccessible, screenshot, signedIn } from './console-harness.js';
import { clientFor, useLocalService } from './harness.js';
import { expectedBreakdown, previewTables } from './rollout-reads.js';

const hasChromium = chromiumAvailable();
if (!hasChromium) console.warn('Chromium not installed and could not be installed: skipping the rollout composer tests');

const local = useLocalService({ users: ['alice', 'olivia'], ownDynamoDbPort: true });

/** The search of the test: the demo data's few SERVER-mode devices. */
const FILTERS = { 'health.mode': ['SERVER'] };
const HASH = '#/fleet?health.mode=SERVER';
/** The fields the preview breaks the targets down by. */
const BREAKDOWN_FIELDS = ['health.versionCode', 'health.mode', 'health.hubs.devices.capability.type', 'connection.state'];

/** Alice's typed client. */
function alice() {
  return clientFor(local.service, local.tokens.alice);
}

/** The search API's total and device ids for the test's search. */
async function apiSearch(): Promise<{ total: number; ids: string[] }> {
  const query = { ...FILTERS, type: ['DEVICE'], pageSize: '100' } as unknown as operations['Search']['parameters']['query'];
  const answer = expectOk(await alice().main.GET('/resources/search', { params: { query } }));
  return { total: answer.total, ids: answer.resources.map((resource) => resource.id) };
}

/** Acme's first scenario and its first version, as the select's value `id@version`. */
async function acmeVersion(): Promise<string> {
  const list = expectOk(
    await alice().main.GET('/companies/{companyId}/resources/scenarios', {
      params: { path: { companyId: 'acme' }, query: { limit: 100 } },
    }),
  );
  const scenario = list.items[0];
  if (scenario === undefined) throw new Error('acme has no scenario');
  return `${scenario.id}@${scenario.versions[0]}`;
}

/** Opens the composer for the search with `total` devices and fills the scenario version and waves. */
async function openComposer(page: Page, total: number, version: string, waves: string): Promise<void> {
  await page.getByRole('button', { name: `Roll out to these ${total.toLocaleString('en-US')} devices…` }).click();
  await expect.poll(() => page.evaluate('document.activeElement?.id')).toBe('compose-title');
  await page.getByLabel('Scenario version').selectOption(version);
  await page.getByLabel('Wave sizes').fill(waves);
}

/** The rollout the page navigated to (`#/rollouts/acme/<id>`), read through the API. */
async function createdRollout(page: Page) {
  await expect.poll(() => new URL(page.url()).hash, { timeout: 15_000 }).toMatch(/^#\/rollouts\/acme\/[0-9A-Za-z]+$/);
  const rolloutId = new URL(page.url()).hash.split('/')[3] ?? '';
  return expectOk(
    await alice().main.GET('/companies/{companyId}/resources/rollouts/{rolloutId}', {
      params: { path: { companyId: 'acme', rolloutId } },
    }),
  );
}

describe.skipIf(!hasChromium)('the fleet page rollout composer', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
  });

  it('previews the targets as the API counts them and creates the rollout of the search', { timeout: 180_000 }, async () => {
    const { page, errors } = await signedIn(browser, local.service, 'alice', HASH);
    const search = await apiSearch();
    expect(search.total).toBeGreaterThan(2);
    const version = await acmeVersion();
    await openComposer(page, search.total, version, '2');

    await expect.poll(() => page.locator('.compose-targets').textContent()).toBe(`Targets: ${search.total} devices`);
    const expected = await expectedBreakdown(alice(), FILTERS, BREAKDOWN_FIELDS);
    await expect.poll(() => previewTables(page), { timeout: 15_000 }).toEqual(expected);
    expect(expected['Health mode']).toEqual([['Server', String(search.total)]]);
    await expect.poll(() => page.locator('.compose-waves').textContent()).toBe(`Wave 1: 2, wave 2: ${search.total - 2} (the rest)`);
    await expectAccessible(page, 'rollout form with preview');
    await screenshot(page, 'console-compose.png');

    await page.getByRole('button', { name: 'Create rollout' }).click();
    const rollout = await createdRollout(page);
    expect(rollout.targets).toBe(search.total);
    expect(rollout.waves.map((wave) => wave.size)).toEqual([2, search.total - 2]);
    expect(`${rollout.what?.id}@${rollout.what?.subId}`).toBe(version);
    expect(rollout.action).toBe('DEPLOY');
    // The rollout's query is the search's: its targets are the devices the search finds.
    const targets = expectOk(
      await alice().main.GET('/companies/{companyId}/resources/rollouts/{rolloutId}/targets', {
        params: { path: { companyId: 'acme', rolloutId: rollout.id }, query: { limit: 100 } },
      }),
    );
    expect(targets.items.map((target) => target.deviceId).sort()).toEqual([...search.ids].sort());
    expect(errors).toEqual([]);
  });

  it('schedules a rollout at a time an hour ahead', { timeout: 180_000 }, async () => {
    const { page, errors } = await signedIn(browser, local.service, 'alice', HASH);
    const search = await apiSearch();
    await openComposer(page, search.total, await acmeVersion(), '');
    await page.getByRole('radio', { name: 'At a time' }).check();
    const at = Date.now() + 3_600_000;
    // The browser's own local time, as a datetime-local input takes it.
    const localTime = (await page.evaluate(`(() => { const d = new Date(${at}); const p = (n) => String(n).padStart(2, '0');
      return d.getFullYear() + '-' + p(d.getMonth() + 1) + '-' + p(d.getDate()) + 'T' + p(d.getHours()) + ':' + p(d.getMinutes()); })()`)) as string;
    await page.getByLabel('Start date and time').fill(localTime);
    await page.getByRole('button', { name: 'Create rollout' }).click();
    const rollout = await createdRollout(page);
    expect(rollout.state).toBe('SCHEDULED');
    expect(Math.abs(Date.parse(rollout.startAt ?? '') - at)).toBeLessThan(60_000);
    expect(rollout.waves.map((wave) => wave.size)).toEqual([search.total]);
    expectOk(
      await alice().main.POST('/companies/{companyId}/resources/rollouts/{rolloutId}/cancel', {
        params: { path: { companyId: 'acme', rolloutId: rollout.id } },
      }),
    );
    expect(errors).toEqual([]);
  });

  it('says why the service refuses a start in the past, and closes back to its button', { timeout: 120_000 }, async () => {
    const { page, errors } = await signedIn(browser, local.service, 'alice', HASH);
    const search = await apiSearch();
    await openComposer(page, search.total, await acmeVersion(), '');
    await page.getByRole('radio', { name: 'At a time' }).check();
    await page.getByLabel('Start date and time').fill('2020-01-01T10:00');
    await page.getByRole('button', { name: 'Create rollout' }).click();
    const alert = page.locator('.compose [role="alert"]');
    await alert.waitFor();
    // The problem's detail as the service words it (a start not in the future), and the page stays on the fleet.
    expect(await alert.textContent()).toMatch(/future/i);
    expect(new URL(page.url()).hash).toBe(HASH);
    await page.getByRole('button', { name: 'Close the rollout form' }).click();
    await expect.poll(() => page.evaluate('document.activeElement?.textContent')).toBe(`Roll out to these ${search.total} devices…`);
    expect(errors).toEqual([]);
  });

  // Last: the device it registers changes the search's count for the tests above.
  it('creates a continuous rollout, whose page shows the device that joins later without a reload', { timeout: 180_000 }, async () => {
    const { page, errors } = await signedIn(browser, local.service, 'alice', HASH);
    const search = await apiSearch();
    await openComposer(page, search.total, await acmeVersion(), '');
    await page.getByLabel(/Keep going: devices that match this search later/).check();
    await page.getByRole('button', { name: 'Create rollout' }).click();
    const rollout = await createdRollout(page);
    expect(rollout).toMatchObject({ continuous: true, joined: 0, targets: search.total });
    const joined = page.locator('.rollout-joined');
    await expect.poll(() => joined.textContent()).toMatch(/^0 devices joined since creation/);

    // A kiosk registered now, in the search's health mode, joins: the page's next poll shows it.
    const deviceId = `acme-compose-joiner-${Date.now().toString(36)}`;
    expectOk(
      await alice().main.POST('/companies/{companyId}/resources/devices', {
        params: { path: { companyId: 'acme' } },
        body: [{ id: deviceId, serial: `SN-${deviceId}` }],
      }),
    );
    const { token } = await deviceToken({ ...local.service, dynamoDbEndpoint: local.dynamoDbEndpoint }, 'acme', deviceId);
    const reported = await clientFor(local.service, token).main.PUT('/device/health', {
      body: { versionCode: 'compose-joiner', versionName: '1.0', mode: 'SERVER', hubs: [] },
    });
    expect(reported.response.status).toBe(204);
    await expect.poll(() => joined.textContent(), { timeout: 30_000 }).toMatch(/^1 device joined since creation/);
    await expect
      .poll(() => page.locator('.rollout-progress-text, dd').filter({ hasText: 'devices' }).first().textContent())
      .toContain(`of ${search.total + 1} devices`);
    await expectAccessible(page, 'continuous rollout page');
    expectOk(
      await alice().main.POST('/companies/{companyId}/resources/rollouts/{rolloutId}/cancel', {
        params: { path: { companyId: 'acme', rolloutId: rollout.id } },
      }),
    );
    expect(errors).toEqual([]);
  });

  it('is not offered to a user who may not deploy', { timeout: 120_000 }, async () => {
    const { page, errors } = await signedIn(browser, local.service, 'olivia', HASH);
    await page.locator('p[role="status"].fleet-count').filter({ hasText: 'match' }).waitFor();
    expect(await page.getByRole('button', { name: /Roll out to these/ }).count()).toBe(0);
    expect(errors).toEqual([]);
  });
});
