/**
 * End-to-end over `npm start`, in headless Chromium: alert rules made on the fleet page, and the Alerts page. Alice
 * searches the fleet for a test kiosk's version code, makes "Alert me when these devices… have a battery below 20 %"
 * from that search, and the rule is the API's with the search's filters as its query; the kiosk then reports a hub
 * battery at 5 %, which the service's evaluation of the devices stream turns into an OPEN alert (a battery condition
 * holds at once: no waiting), shown on the Alerts page linked to the kiosk and counted on the dashboard; its next
 * report at 80 % resolves it. A viewer reads the alerts and rules without making or deleting any.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type components, expectOk } from '../../client/index.js';
import { deviceToken } from '../support/device-token.js';
import { chromiumAvailable, launchChromium } from './browser.js';
import { expectAccessible, screenshot, signedIn } from './console-harness.js';
import { clientFor, eventually, useLocalService } from './harness.js';

const hasChromium = chromiumAvailable();
if (!hasChromium) console.warn('Chromium not installed and could not be installed: skipping the console alerts tests');

const local = useLocalService({ users: ['alice', 'olivia'], ownDynamoDbPort: true });

/** The test kiosk and the version code only it reports (its search). */
const KIOSK = 'alerts-kiosk-1';
const CODE = 'ALERTS-E2E';

let browser: Browser;
let kioskToken = '';

const alice = () => clientFor(local.service, local.tokens.alice).main;

/** The kiosk's health report with its hub's battery at `level` %. */
function report(level: number): components['schemas']['DeviceHealthReport'] {
  return {
    versionCode: CODE,
    versionName: '1.0',
    mode: 'SERVER',
    hubs: [
      {
        uid: `${KIOSK}-hub`,
        label: 'Main hub',
        version: '1.0.0',
        registeredSince: '2026-01-01T00:00:00.000Z',
        type: 'USB',
        battery: { health: { state: 'GOOD', plugged: 'USB', status: 'DISCHARGING', level, cycle: 3 } },
        devices: [],
      },
    ],
  } as components['schemas']['DeviceHealthReport'];
}

/** Sends the kiosk's report. */
async function reportBattery(level: number): Promise<void> {
  expect((await clientFor(local.service, kioskToken).main.PUT('/device/health', { body: report(level) })).response.status).toBe(204);
}

/** Acme's alerts in `state`, as the API lists them to alice. */
async function alerts(state: 'OPEN' | 'RESOLVED') {
  return expectOk(await alice().GET('/companies/{companyId}/alerts', { params: { path: { companyId: 'acme' }, query: { state } } })).items;
}

beforeAll(async () => {
  if (!hasChromium) return;
  browser = await launchChromium();
  expectOk(
    await alice().POST('/companies/{companyId}/resources/devices', {
      params: { path: { companyId: 'acme' } },
      body: [{ id: KIOSK, serial: `SN-${KIOSK}` }],
    }),
  );
  kioskToken = (await deviceToken({ ...local.service, dynamoDbEndpoint: local.dynamoDbEndpoint }, 'acme', KIOSK)).token;
  await reportBattery(80);
  await eventually(
    async () => {
      const found = expectOk(
        await alice().GET('/resources/search', { params: { query: { 'health.versionCode': [CODE], type: ['DEVICE'] } } }),
      );
      return found.total === 1;
      // A loaded machine's stream consumers may take a while: the indexing is not what this file tests.
    },
    'the kiosk in search',
    60_000,
  );
}, 120_000);

afterAll(async () => {
  await browser?.close();
});

describe.skipIf(!hasChromium)('alert rules and the Alerts page', () => {
  it("makes a rule from the fleet page's search, raises an alert shown on the Alerts page and the dashboard, and resolves it", {
    timeout: 180_000,
  }, async () => {
    const { page, errors } = await signedIn(browser, local.service, 'alice', `#/fleet?health.versionCode=${CODE}`);
    await page.getByRole('status').filter({ hasText: '1 device matches' }).waitFor();
    await page.getByRole('button', { name: 'Alert me when these devices…' }).click();
    const form = page.getByRole('form', { name: 'Alert me when these devices…' });
    await form.getByText(`health.versionCode=${CODE}`).waitFor();
    const condition = form.getByRole('group', { name: 'Condition' });
    expect(await condition.getByRole('radio').count()).toBe(3);
    await condition.getByRole('radio', { name: 'have a battery below N %' }).check();
    await form.getByLabel('Battery level below (%)').fill('20');
    await form.getByLabel('Rule name').fill('Kiosk battery low');
    await expectAccessible(page, 'the fleet page with the rule form');
    await screenshot(page, 'console-alert-rule-form.png');
    await form.getByRole('button', { name: 'Create the alert rule' }).click();
    await form.getByText('Rule Kiosk battery low created').waitFor();
    const rules = expectOk(await alice().GET('/companies/{companyId}/alert-rules', { params: { path: { companyId: 'acme' } } })).items;
    expect(rules).toMatchObject([
      { name: 'Kiosk battery low', query: `health.versionCode=${CODE}`, condition: { type: 'BATTERY_BELOW', percent: 20 } },
    ]);

    // The kiosk's battery drops: the evaluation of the devices stream raises the alert at once.
    await reportBattery(5);
    await eventually(async () => (await alerts('OPEN')).length === 1, 'the open alert', 60_000);
    const [open] = await alerts('OPEN');
    expect(open).toMatchObject({ ruleName: 'Kiosk battery low', target: { type: 'DEVICE', id: KIOSK }, state: 'OPEN' });

    // The dashboard counts it, linked to the open alerts.
    await page.getByRole('link', { name: 'Dashboard' }).click();
    await page.getByRole('link', { name: '1 open alert' }).click();
    await page.getByRole('heading', { level: 1, name: 'Alerts' }).waitFor();
    expect(page.url()).toContain('#/alerts?company=acme&state=OPEN');
    const table = page.getByRole('table', { name: 'Alerts, newest first' });
    const row = table.getByRole('row').filter({ hasText: KIOSK });
    await row.waitFor();
    // The battery is the hub's: the alert names it, and its link lands on it.
    expect(open?.target.subId).toBe(`${KIOSK}-hub`);
    expect(await row.getByRole('link', { name: KIOSK }).getAttribute('href')).toBe(`#/devices/acme/${KIOSK}?sub=${KIOSK}-hub`);
    await row.getByText(open?.detail as string).waitFor();
    await row.getByText('Kiosk battery low').waitFor();
    await row.getByText(`Sub-device ${KIOSK}-hub`).waitFor();
    const ruleRow = page.getByRole('table', { name: 'Alert rules of acme' }).getByRole('row').filter({ hasText: 'Kiosk battery low' });
    await ruleRow.getByText('A battery below 20 %').waitFor();
    expect(await ruleRow.getByRole('link').getAttribute('href')).toBe(`#/fleet?health.versionCode=${CODE}`);
    await expectAccessible(page, 'the Alerts page with an open alert');
    await screenshot(page, 'console-alerts.png');
    await row.getByRole('link', { name: KIOSK }).click();
    await page.getByRole('heading', { level: 1, name: new RegExp(KIOSK) }).waitFor();
    await eventually(
      async () => (await page.evaluate("document.activeElement?.getAttribute('data-sub-id')")) === `${KIOSK}-hub`,
      'the hub focused',
    );
    await page.goBack();

    // Back to 80 %: resolved, and listed as such.
    await reportBattery(80);
    await eventually(async () => (await alerts('RESOLVED')).length === 1, 'the resolved alert', 60_000);
    await page.getByLabel('Show').selectOption('RESOLVED');
    expect(page.url()).toContain('state=RESOLVED');
    await table.getByRole('row').filter({ hasText: KIOSK }).getByRole('cell', { name: 'Resolved' }).waitFor();
    expect(errors).toEqual([]);
    await page.close();
  });

  it('explains that a full-text search makes no rule, and lets a viewer read without making or deleting', {
    timeout: 120_000,
  }, async () => {
    const fullText = await signedIn(browser, local.service, 'alice', '#/fleet?global=kiosk');
    await fullText.page.getByText("An alert rule watches the search's filters: clear the search text to make one from them.").waitFor();
    expect(await fullText.page.getByRole('button', { name: 'Alert me when these devices…' }).count()).toBe(0);
    await fullText.page.close();

    const { page, errors } = await signedIn(browser, local.service, 'olivia', '#/alerts?company=acme');
    await page.getByRole('table', { name: 'Alert rules of acme' }).getByText('Kiosk battery low').waitFor();
    expect(await page.getByRole('button', { name: /Delete/ }).count()).toBe(0);
    await page.goto(`${local.service.api}/console#/fleet?health.versionCode=${CODE}`);
    await page.getByRole('status').filter({ hasText: '1 device matches' }).waitFor();
    expect(await page.getByRole('button', { name: 'Alert me when these devices…' }).count()).toBe(0);
    expect(errors).toEqual([]);
    await page.close();

    // Alice deletes the rule, confirmed.
    const operator = await signedIn(browser, local.service, 'alice', '#/alerts?company=acme');
    await operator.page.getByRole('button', { name: 'Delete rule Kiosk battery low' }).click();
    await operator.page.getByRole('button', { name: 'Delete Kiosk battery low' }).click();
    await operator.page.getByText('Rule Kiosk battery low deleted.').waitFor();
    await operator.page.getByText('No rule yet.').waitFor();
    expect(expectOk(await alice().GET('/companies/{companyId}/alert-rules', { params: { path: { companyId: 'acme' } } })).items).toEqual(
      [],
    );
    await operator.page.close();
  });
});
