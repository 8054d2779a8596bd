/**
 * End-to-end over `npm start`, in headless Chromium: signing in to the operator console and what becomes of the
 * session. The console keeps its access token in the tab's sessionStorage; signing out forgets it; a token that expires
 * while the console is open leads to the sign-in form and, once signed in again, back to the same page and state. The
 * service here issues tokens that live 5 s (TOKEN_LIFETIME_SECONDS), so that one expires within the test.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, launchChromium } from './browser.js';
import { expectAccessible, openConsole, signIn } from './console-harness.js';
import { eventually, useLocalService } from './harness.js';

const TOKEN_LIFETIME_SECONDS = 5;
const hasChromium = chromiumAvailable();
if (!hasChromium) console.warn('Chromium not installed and could not be installed: skipping the console session tests');

const local = useLocalService({ environment: { TOKEN_LIFETIME_SECONDS: String(TOKEN_LIFETIME_SECONDS) } });

/** The `exp` claim of a JWT, ms since the epoch. */
function expiryOf(jwt: string): number {
  return (JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8')) as { exp: number }).exp * 1000;
}

describe.skipIf(!hasChromium)('the console session', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('signs in by keyboard alone with the labelled fields, and refuses a wrong password with what the service said', {
    timeout: 120_000,
  }, async () => {
    const { page, errors } = await openConsole(browser, local.service, '#/fleet');
    await expectAccessible(page, 'sign-in page');
    await page.getByLabel('Username').focus();
    await page.keyboard.type('alice');
    await page.keyboard.press('Tab');
    await page.keyboard.type('not-her-password');
    await page.keyboard.press('Enter');
    const refusal = page.getByRole('alert');
    await refusal.waitFor();
    expect(await refusal.textContent()).toMatch(/\w/);
    expect(await page.evaluate('sessionStorage.length')).toBe(0);

    await page.getByLabel('Password').fill('');
    await page.getByLabel('Password').focus();
    await page.keyboard.type('alice-demo-password');
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    expect(await page.getByText('Signed in as alice').count()).toBe(1);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('forgets the token and all it kept in the tab on sign-out: a reload shows the sign-in form', { timeout: 120_000 }, async () => {
    const { page, errors } = await openConsole(browser, local.service, '#/fleet');
    await signIn(page, 'alice');
    expect(await page.evaluate('sessionStorage.length')).toBe(1);
    // What an interrupted deploy leaves (its journal) goes too.
    await page.evaluate("sessionStorage.setItem('dss.deployBatch.example', '{}')");
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
    await page.reload();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(errors).toEqual([]);
    await page.close();
  });

  it('shows a device address with a malformed escape as a page of its own, without failing', { timeout: 120_000 }, async () => {
    const { page, errors } = await openConsole(browser, local.service, '#/devices/acme/%E0%A4%A');
    await signIn(page, 'alice');
    await page
      .getByRole('heading', { level: 1 })
      .filter({ hasText: /%E0%A4%A|not found/i })
      .first()
      .waitFor();
    expect(errors).toEqual([]);
    await page.close();
  });

  it('after the token expired mid-session, leads to sign-in and then back to the same URL', { timeout: 120_000 }, async () => {
    const { page, errors } = await openConsole(browser, local.service, '#/fleet');
    await signIn(page, 'alice');
    const token = (await page.evaluate("sessionStorage.getItem('dss.accessToken')")) as string;
    const expiry = expiryOf(token);
    expect(expiry - Date.now()).toBeLessThanOrEqual(TOKEN_LIFETIME_SECONDS * 1000);
    // The expiry is the service's, in another process: waited for, not faked.
    await eventually(async () => Date.now() > expiry + 1000, 'the access token to expire', (TOKEN_LIFETIME_SECONDS + 5) * 1000, 250);

    // The operator goes on: a new page state whose data the expired token cannot fetch.
    const state = '#/fleet?health.mode=WARNING&sort=serial&direction=DESC';
    await page.evaluate(`location.hash = ${JSON.stringify(state)}`);
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(await page.getByRole('status').first().textContent()).toContain('Sign in again');
    expect(new URL(page.url()).hash).toBe(state);

    await signIn(page, 'alice');
    expect(new URL(page.url()).hash).toBe(state);
    await page.getByRole('heading', { level: 1, name: 'Fleet' }).waitFor();
    expect(errors).toEqual([]);
    await page.close();
  });
});
