/**
 * End-to-end over `npm start`, in headless Chromium, with the keyboard alone: the console's main path (sign in, filter
 * the fleet, open a device, deploy a version to it) reached by Tab and operated by typing, Space and Enter, as a
 * person without a mouse does. The result is checked against the API.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectOk } from '../../client/index.js';
import { chromiumAvailable, launchChromium } from './browser.js';
import { openConsole, PASSWORDS } from './console-harness.js';
import { clientFor, useLocalService } from './harness.js';

const hasChromium = chromiumAvailable();
if (!hasChromium) console.warn('Chromium not installed and could not be installed: skipping the console keyboard test');

const local = useLocalService({ users: ['alice'] as const });

/** What has the keyboard focus: its tag and accessible words (a field's label, else its text). */
function focused(page: Page): Promise<string> {
  return page.evaluate(`(() => {
    const element = document.activeElement;
    if (element === null) return '';
    const label = element.closest('label') ?? (element.id ? document.querySelector('label[for="' + element.id + '"]') : null);
    return element.tagName.toLowerCase() + ' ' + ((label ?? element).textContent ?? '').replace(/\\s+/g, ' ').trim();
  })()`) as Promise<string>;
}

/**
 * Presses Tab until the focused element's description (focused()) matches `wanted`.
 * @throws Error after `max` presses without reaching it: the control is not reachable by keyboard.
 */
async function tabTo(page: Page, wanted: RegExp, max = 200): Promise<void> {
  for (let presses = 0; presses < max; presses += 1) {
    if (wanted.test(await focused(page))) return;
    await page.keyboard.press('Tab');
  }
  throw new Error(`No element matching ${wanted} was reached with ${max} presses of Tab.`);
}

describe.skipIf(!hasChromium)('the console by keyboard alone', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('signs in, skips to the page, filters the fleet, opens a device and deploys a version to it', { timeout: 180_000 }, async () => {
    const { page, errors } = await openConsole(browser, local.service, '#/fleet');

    await tabTo(page, /^input Username/);
    await page.keyboard.type('alice');
    await tabTo(page, /^input Password/);
    await page.keyboard.type(PASSWORDS.alice);
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Sign out' }).waitFor();

    // The first stop of Tab skips the header: the focus moves to the page, and the page's address stays as it was.
    await page.evaluate('document.activeElement.blur()');
    await page.keyboard.press('Tab');
    expect(await focused(page)).toBe('button Skip to the page');
    const before = page.url();
    await page.keyboard.press('Enter');
    expect(await focused(page)).toMatch(/^main /);
    expect(page.url()).toBe(before);

    // A facet value, by Tab and Space: the URL takes the filter, the table follows.
    await tabTo(page, /^input Server \(\d+\)/);
    await page.keyboard.press('Space');
    await expect.poll(() => new URL(page.url()).hash).toContain('health.mode=SERVER');
    const api = clientFor(local.service, local.tokens.alice);
    const servers = expectOk(
      await api.main.GET('/resources/search', { params: { query: { type: ['DEVICE'], 'health.mode': ['SERVER'] } } }),
    );
    await page
      .getByRole('status')
      .filter({ hasText: `${servers.total} devices match` })
      .waitFor();

    // The first matching device, by Tab and Enter.
    const deviceId = servers.resources[0]?.id as string;
    await tabTo(page, new RegExp(`^a ${deviceId}$`));
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: new RegExp(deviceId) }).waitFor();
    // The new page has the focus, not the body the old page's link left behind.
    expect(await focused(page)).toMatch(/^main /);

    // Deploy a version: the select by arrow keys, the button by Enter.
    const scenarios = expectOk(
      await api.main.GET('/companies/{companyId}/resources/scenarios', { params: { path: { companyId: 'acme' } } }),
    );
    expect(scenarios.items.length).toBeGreaterThan(0);
    await tabTo(page, /^select /);
    await page.keyboard.press('ArrowDown');
    const chosen = ((await page.getByLabel('Scenario version').locator('option:checked').textContent()) ?? '').trim();
    await tabTo(page, new RegExp(`^button Deploy ${chosen.replace(/[.@]/g, '\\$&')}$`));
    await page.keyboard.press('Enter');
    await page
      .getByRole('status')
      .filter({ hasText: `Deploy ${chosen}: SUCCESS` })
      .waitFor();

    const active = expectOk(
      await api.main.GET('/companies/{companyId}/resources/{deviceId}/deployments', {
        params: { path: { companyId: 'acme', deviceId }, query: { limit: 100 } },
      }),
    );
    expect(active.items.map((item) => `${item.what.id}@${item.what.subId}`)).toContain(chosen);
    expect(errors).toEqual([]);
    await page.close();
  });
});
