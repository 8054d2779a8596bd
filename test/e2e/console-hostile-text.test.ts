/**
 * End-to-end over `npm start`, in headless Chromium: the console's pages with hostile texts from devices and users.
 * Every text of one device (serial, location, health report, status message), of a scenario (name, description), of
 * a rollout (note), of a company (name) and of a user (username, email) is at the longest the API accepts, written
 * without a space, most of them starting with a right-to-left override that would show `gnp.exe` as "exe.png"
 * ("Trojan Source", CVE-2021-42574). Each page must stay within the window's width, show the override as a visible
 * mark, hold no bidirectional control character in its text or attributes, and isolate the string it shows.
 */
import JSZip from 'jszip';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type components, expectOk } from '../../client/index.js';
import { chromiumAvailable, launchChromium } from './browser.js';
import { expectAccessible, screenshot, signedIn } from './console-harness.js';
import { clientFor, deviceTokenRequest, eventually, uploadArchive, useLocalService } from './harness.js';
import { readRollout } from './rollout-reads.js';

const hasChromium = chromiumAvailable();
if (!hasChromium) console.warn('Chromium not installed and could not be installed: skipping the console hostile text tests');

const local = useLocalService({ users: ['alice', 'root'], environment: { ROLLOUT_SWEEP_INTERVAL_MS: '200' } });

const COMPANY = 'acme';
/** A right-to-left override around "gnp.exe": shown as "exe.png" by a page that lets it act. */
const SPOOF = '\u202Egnp.exe\u202C';
/** How the console shows it: both characters as marks, the text between them in its own order. */
const MARKED = '<U+202E>gnp.exe<U+202C>';

/** `start` followed by wide letters without a break opportunity, `length` characters in all. */
const long = (start: string, length: number) => start + 'W'.repeat(length - start.length);
/** An identifier (letters, digits, ".", "_", "-") of `length` characters. */
const longId = (start: string, length: number) => start + 'w'.repeat(length - start.length);

/** The limits of functions/contract/schemas and functions/core, as the API states them. */
const ID = 128;
const SERIAL = 256;
const LOCATION_NAME = 256;
const LOCATION_DESCRIPTION = 2_000;
const SHORT_TEXT = 256;
const LONG_TEXT = 2_048;
const STATUS_MESSAGE = 1_000;
const NOTE = 2_000;
const SCENARIO_NAME = 200;
const SCENARIO_DESCRIPTION = 2_000;
const COMPANY_NAME = 100;
const USERNAME = 128;
const EMAIL = 254;

const DEVICE = longId('acme-hostile-', ID);
const SCENARIO = longId('hostile-scenario-', ID);
const VERSION = '1.0.0';
const VERSION_CODE = long('code-', SHORT_TEXT);
const OTHER_COMPANY = longId('hostile-company-', ID);
const USER = longId('hostile.user.', USERNAME);
const EMAIL_ADDRESS = `${'w'.repeat(EMAIL - '@example.com'.length)}@example.com`;

type Report = components['schemas']['DeviceHealthReport'];

/** A health report whose every text is at its longest, the labels and messages starting with SPOOF. */
const REPORT: Report = {
  versionCode: VERSION_CODE,
  versionName: long(SPOOF, SHORT_TEXT),
  mode: 'EMBEDDED_PLATFORM_COMPUTER',
  hubs: [
    {
      uid: long('hub-', SHORT_TEXT),
      label: long(SPOOF, SHORT_TEXT),
      version: long('v', SHORT_TEXT),
      registeredSince: '2026-06-14T15:27:41.000Z',
      type: long('type-', SHORT_TEXT),
      battery: { health: { state: 'GOOD', plugged: 'AC', status: 'FULL', level: 100, cycle: 12 } },
      devices: [
        {
          uid: long('sub-', SHORT_TEXT),
          label: long(SPOOF, SHORT_TEXT),
          version: long(SPOOF, SHORT_TEXT),
          health: {
            state: 'WARNING',
            message: long(SPOOF, LONG_TEXT),
            messages: [{ key: long(SPOOF, SHORT_TEXT), message: long(SPOOF, LONG_TEXT), level: 'WARNING' }],
          },
          capability: { type: 'PRINTER', modes: ['PRINTER_PRINT'] },
          commands: [
            {
              command: long('c', SHORT_TEXT),
              title: long(SPOOF, SHORT_TEXT),
              description: long(SPOOF, LONG_TEXT),
              payload: {},
              arguments: [],
            },
          ],
        },
      ],
    },
  ],
};

const alice = () => clientFor(local.service, local.tokens.alice);
const root = () => clientFor(local.service, local.tokens.root);

let browser: Browser;
let rolloutId: string;

/** The skeleton archive of COMPANY with its manifest's id, name and description replaced. */
async function hostileScenario(): Promise<Uint8Array> {
  const { data } = await alice().main.GET('/companies/{companyId}/resources/scenarios/skeleton.zip', {
    params: { path: { companyId: COMPANY }, query: {} },
    parseAs: 'arrayBuffer',
  });
  const zip = await JSZip.loadAsync(data as ArrayBuffer);
  const manifest = JSON.parse(await (zip.file('scenario.json') as JSZip.JSZipObject).async('string')) as Record<string, unknown>;
  Object.assign(manifest, {
    id: SCENARIO,
    version: VERSION,
    name: long(SPOOF, SCENARIO_NAME),
    description: long(SPOOF, SCENARIO_DESCRIPTION),
  });
  zip.file('scenario.json', JSON.stringify(manifest));
  return zip.generateAsync({ type: 'uint8array', compression: 'DEFLATE' });
}

/** Registers DEVICE with every text at its longest, reports REPORT from it, and answers its device client. */
async function hostileDevice() {
  const put = await alice().main.PUT('/companies/{companyId}/resources/devices/{deviceId}', {
    params: { path: { companyId: COMPANY, deviceId: DEVICE } },
    body: {
      serial: long(SPOOF, SERIAL),
      location: { name: long(SPOOF, LOCATION_NAME), description: long(SPOOF, LOCATION_DESCRIPTION) },
    },
  });
  expect(put.response.status).toBe(201);
  const credentials = expectOk(
    await alice().main.POST('/companies/{companyId}/resources/devices/{deviceId}/credentials', {
      params: { path: { companyId: COMPANY, deviceId: DEVICE } },
    }),
  );
  const token = expectOk(await deviceTokenRequest(local.service, credentials.clientId, credentials.clientSecret)).access_token;
  const device = clientFor(local.service, token);
  expect((await device.main.PUT('/device/health', { body: REPORT })).response.status).toBe(204);
  return device;
}

/** The scenario versions active on DEVICE. */
async function activeOnDevice(): Promise<string[]> {
  const page = expectOk(
    await alice().main.GET('/companies/{companyId}/resources/{deviceId}/deployments', {
      params: { path: { companyId: COMPANY, deviceId: DEVICE } },
    }),
  );
  return page.items.map((item) => `${item.what.id}@${item.what.subId}`);
}

beforeAll(async () => {
  if (!hasChromium) return;
  browser = await launchChromium();
  expect((await uploadArchive(local.service, local.tokens.alice, COMPANY, await hostileScenario())).response.status).toBe(201);
  const device = await hostileDevice();
  // Search has the device's health: the fleet page and the rollout's search find it.
  await eventually(async () => {
    const found = expectOk(
      await alice().main.GET('/resources/search', { params: { query: { company: [COMPANY], 'health.versionCode': [VERSION_CODE] } } }),
    );
    return found.total === 1;
  }, 'the device found by its version in search');
  // A continuous rollout to the device with the longest note; the device reports FAILED with the longest message, so
  // the rollout pauses and its page groups the failure by that message.
  const created = await alice().main.POST('/companies/{companyId}/resources/rollouts', {
    params: { path: { companyId: COMPANY } },
    body: {
      action: 'DEPLOY',
      what: { type: 'SCENARIO', id: SCENARIO, subId: VERSION },
      targets: { query: new URLSearchParams({ 'health.versionCode': VERSION_CODE }).toString() },
      continuous: true,
      note: long(SPOOF, NOTE),
    },
  });
  rolloutId = expectOk(created).id;
  await eventually(async () => (await activeOnDevice()).includes(`${SCENARIO}@${VERSION}`), 'the rollout deployed to the device');
  const reported = await device.main.POST('/device/deployments/status', {
    body: { what: { type: 'SCENARIO', id: SCENARIO, subId: VERSION }, state: 'FAILED', message: long(SPOOF, STATUS_MESSAGE) },
  });
  expect(reported.response.status).toBe(204);
  await eventually(async () => (await readRollout(alice(), COMPANY, rolloutId)).state === 'PAUSED', 'the rollout paused on the failure');
  // A company with the longest id and a name starting with SPOOF, and a user of it with the longest username and email.
  expectOk(
    await root().main.POST('/admin/companies', { body: { id: OTHER_COMPANY, name: long(SPOOF, COMPANY_NAME), quotaBytes: 1024 ** 3 } }),
  );
  expectOk(
    await root().main.POST('/admin/users', {
      body: { username: USER, email: EMAIL_ADDRESS, role: 'viewer', companies: [OTHER_COMPANY, COMPANY] },
    }),
  );
}, 180_000);

afterAll(async () => {
  await browser?.close();
});

/** What a page shows of the hostile texts (read in the page; the test's TypeScript knows no DOM). */
interface Shown {
  /** `document.documentElement.scrollWidth` and `window.innerWidth`. */
  scrollWidth: number;
  innerWidth: number;
  /** The page's text as a person reads it (`document.body.innerText`, in logical order). */
  text: string;
  /** Text nodes and attribute values holding a bidirectional control character (U+202A–U+202E, U+2066–U+2069). */
  hidden: string[];
  /**
   * Each text node holding "gnp.exe", outside `<option>`: its element's tag and whether that element isolates it as a
   * run of its own (a `<bdi>`, or inline with `unicode-bidi: isolate`), whatever text its block holds besides. A block
   * (a cell, a paragraph) is isolated from the blocks around it by the browser's own style sheet, not from the text
   * beside the string within it.
   */
  spoofs: { tag: string; isolated: boolean }[];
  /** The marks reading `<U+202E>`: their title and whether they are visible (a box of some size). */
  marks: { title: string; visible: boolean }[];
}

/** Reads what the page shows (see Shown). */
function shown(page: Page): Promise<Shown> {
  return page.evaluate(`(() => {
    const bidi = /[\\u202A-\\u202E\\u2066-\\u2069]/;
    const hidden = [];
    const spoofs = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
      const value = node.nodeValue ?? '';
      if (bidi.test(value)) hidden.push(value.slice(0, 40));
      const element = node.parentElement;
      if (!value.includes('gnp.exe') || element === null || element.closest('option, optgroup, script, style') !== null) continue;
      const style = getComputedStyle(element);
      const isolated = element.tagName === 'BDI' || (style.unicodeBidi === 'isolate' && style.display.startsWith('inline'));
      spoofs.push({ tag: element.tagName, isolated });
    }
    for (const element of document.querySelectorAll('*'))
      for (const attribute of element.attributes) if (bidi.test(attribute.value)) hidden.push(attribute.name + '=' + attribute.value.slice(0, 40));
    const marks = [...document.querySelectorAll('body *')]
      .filter((element) => element.children.length === 0 && element.textContent === '<U+202E>')
      .map((element) => {
        const box = element.getBoundingClientRect();
        return { title: element.getAttribute('title') ?? '', visible: box.width > 0 && box.height > 0 };
      });
    return {
      scrollWidth: document.documentElement.scrollWidth,
      innerWidth: window.innerWidth,
      text: document.body.innerText,
      hidden,
      spoofs,
      marks,
    };
  })()`) as Promise<Shown>;
}

/**
 * Expects the page no wider than the window and, with `spoofs` (the page shows texts starting with SPOOF), each of
 * them isolated, shown with its marks, and no bidirectional control character left to act anywhere in the page.
 */
async function expectContained(page: Page, what: string, spoofs: boolean): Promise<void> {
  const seen = await shown(page);
  expect(seen.scrollWidth, `${what}: the page's width`).toBeLessThanOrEqual(seen.innerWidth);
  expect(seen.hidden, `${what}: bidirectional controls left in the page`).toEqual([]);
  if (!spoofs) return;
  expect(seen.text, `${what}: the override shown as marks`).toContain(MARKED);
  expect(seen.spoofs.length, `${what}: texts holding gnp.exe`).toBeGreaterThan(0);
  expect(
    seen.spoofs.filter((spoof) => !spoof.isolated),
    `${what}: texts not isolated`,
  ).toEqual([]);
  expect(seen.marks.length, `${what}: marks`).toBeGreaterThan(0);
  expect(new Set(seen.marks.map((mark) => JSON.stringify(mark))), `${what}: each mark visible and named`).toEqual(
    new Set([JSON.stringify({ title: 'RIGHT-TO-LEFT OVERRIDE', visible: true })]),
  );
}

describe.skipIf(!hasChromium)('the console with the longest texts and right-to-left overrides', () => {
  it("keeps the device page within the window's width, its texts isolated and the override shown", { timeout: 120_000 }, async () => {
    const { page, errors } = await signedIn(browser, local.service, 'alice', `#/devices/${COMPANY}/${DEVICE}`);
    await page.locator('section.sub-device').waitFor();
    await page.getByRole('table', { name: /Active deployments/ }).waitFor();
    await page
      .getByRole('table', { name: /History/ })
      .getByRole('row', { name: /Device status/ })
      .waitFor();
    await expectContained(page, 'device page', true);
    // The hub and its sub-device keep findable names, with the override as its mark.
    await page.getByRole('region', { name: `Hub ${long(MARKED, SHORT_TEXT + MARKED.length - SPOOF.length)}` }).waitFor();
    await page.getByRole('button', { name: `Delete device ${DEVICE}` }).waitFor();
    await expectAccessible(page, 'device page with hostile texts');
    await screenshot(page, 'console-hostile-device.png');
    expect(errors).toEqual([]);
    await page.close();
  });

  it('keeps the fleet page within the window, the facet, serial, location and version isolated', { timeout: 120_000 }, async () => {
    const { page, errors } = await signedIn(
      browser,
      local.service,
      'alice',
      `#/fleet?health.versionCode=${encodeURIComponent(VERSION_CODE)}&sort=serial`,
    );
    await page.getByRole('status').filter({ hasText: '1 device matches' }).waitFor();
    await page.getByRole('link', { name: DEVICE, exact: true }).waitFor();
    await page.locator('input[type="checkbox"][name="health.versionCode"]:checked').waitFor();
    await expectContained(page, 'fleet page', true);
    await screenshot(page, 'console-hostile-fleet.png');
    expect(errors).toEqual([]);
    await page.close();
  });

  it('keeps the rollout pages, the history, the scenarios and the dashboard within the window, their texts isolated', {
    timeout: 180_000,
  }, async () => {
    const { page, errors } = await signedIn(browser, local.service, 'alice', `#/rollouts/${COMPANY}/${rolloutId}`);
    await page.locator('.paused-reason').waitFor();
    await page.getByRole('region', { name: 'Why devices failed' }).getByRole('link', { name: DEVICE }).waitFor();
    await expectContained(page, 'rollout page', true);
    await screenshot(page, 'console-hostile-rollout.png');

    await page.goto(`${local.service.api}/console#/rollouts?company=${COMPANY}`);
    await page.getByRole('link', { name: rolloutId }).waitFor();
    await expectContained(page, 'rollouts page', false);

    await page.goto(`${local.service.api}/console#/history?company=${COMPANY}&deviceId=${DEVICE}`);
    await page
      .getByRole('table', { name: /Deployment history of acme/ })
      .getByRole('row', { name: /Device status/ })
      .waitFor();
    await expectContained(page, 'history page', true);
    await screenshot(page, 'console-hostile-history.png');

    await page.goto(`${local.service.api}/console#/scenarios?company=${COMPANY}`);
    await page.getByRole('table', { name: `Versions of ${SCENARIO}` }).waitFor();
    await expectContained(page, 'scenarios page', true);

    await page.goto(`${local.service.api}/console#/?company=${COMPANY}`);
    await page.locator(`tr[data-id="${rolloutId}"]`).waitFor();
    await page
      .getByRole('table', { name: 'Devices by version' })
      .getByRole('row', { name: /gnp\.exe/ })
      .waitFor();
    await expectContained(page, 'dashboard', true);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('keeps the users, user and audit pages within the window, the company name isolated', { timeout: 120_000 }, async () => {
    const { page, errors } = await signedIn(browser, local.service, 'root', `#/admin/users?company=${OTHER_COMPANY}`);
    await page.getByRole('link', { name: USER, exact: true }).waitFor();
    // The companies' names are read after the page shows: the one starting with SPOOF labels a checkbox once read.
    const named = page.locator('label', { hasText: 'gnp.exe' }).first();
    await named.waitFor();
    await expectContained(page, 'users page', true);
    await screenshot(page, 'console-hostile-users.png');

    await page.getByRole('link', { name: USER, exact: true }).click();
    await page.getByRole('heading', { level: 1, name: `User ${USER}` }).waitFor();
    await page.locator('dl.facts').waitFor();
    await named.waitFor();
    await expectContained(page, 'user page', true);

    await page.goto(`${local.service.api}/console#/admin/audit`);
    await page.getByRole('link', { name: USER, exact: true }).first().waitFor();
    await expectContained(page, 'audit page', true);
    await screenshot(page, 'console-hostile-audit.png');

    await page.goto(`${local.service.api}/console#/admin/companies`);
    await page.getByRole('link', { name: OTHER_COMPANY, exact: true }).waitFor();
    await expectContained(page, 'companies page', true);
    expect(errors).toEqual([]);
    await page.close();
  });
});
