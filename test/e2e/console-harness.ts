/**
 * What the console's browser tests share: a signed-in page of headless Chromium on a local service, the page's errors
 * collected, the accessibility check (axe-core, WCAG 2.1 A and AA rules) in light and dark, and screenshots under
 * test-results/.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, Page } from 'playwright-core';
import { expect } from 'vitest';
import { screenshotPath } from './browser.js';
import { DEMO_PASSWORDS, type LocalService } from './harness.js';

/** The demo users' passwords (functions/local/demo-data.ts), the platform administrator `root` among them. */
export const PASSWORDS = DEMO_PASSWORDS;

/** A console page and what went wrong on it so far. */
export interface ConsolePage {
  page: Page;
  /** Console errors, uncaught exceptions and failed requests (status ≥ 500, or any request failure) seen so far. */
  errors: string[];
  /** Every URL the page requested. */
  requested: string[];
}

/**
 * Opens `{base_url}/console` + `hash` (`#/fleet?…`) in a new page of `browser` (1280×900), collecting errors and
 * requests, without signing in.
 */
export async function openConsole(browser: Browser, service: LocalService, hash = ''): Promise<ConsolePage> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const errors: string[] = [];
  const requested: string[] = [];
  page.on('console', (message) => {
    // A 4xx the console shows on purpose (a refused deploy, a 401 that ends the session) is not an error of the page.
    if (message.type() === 'error' && !/status of 4\d\d/.test(message.text())) errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('request', (request) => requested.push(request.url()));
  page.on('requestfailed', (request) => {
    // The console aborts a request it no longer needs (a newer search superseded it): by design, not a failure.
    const reason = request.failure()?.errorText ?? '';
    if (reason !== 'net::ERR_ABORTED') errors.push(`failed: ${request.url()} ${reason}`);
  });
  page.on('response', (answer) => {
    if (answer.status() >= 500) errors.push(`${answer.status()} ${answer.url()}`);
  });
  await page.goto(`${service.api}/console${hash}`);
  return { page, errors, requested };
}

/** Signs in on the sign-in form as the page shows it (labels "Username", "Password", button "Sign in"). */
export async function signIn(page: Page, username: keyof typeof PASSWORDS): Promise<void> {
  await signInWith(page, username, PASSWORDS[username]);
}

/** Signs in on the sign-in form with any user's credentials (one the test invited), and waits until signed in. */
export async function signInWith(page: Page, username: string, password: string): Promise<void> {
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

/** Opens the console at `hash` and signs in as `username`: the page the URL names is then shown. */
export async function signedIn(browser: Browser, service: LocalService, username: keyof typeof PASSWORDS, hash = ''): Promise<ConsolePage> {
  const opened = await openConsole(browser, service, hash);
  await signIn(opened.page, username);
  return opened;
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** One axe-core violation as a line a person can act on: rule, impact, and the first elements concerned. */
function describeViolation(violation: { id: string; impact?: string | null; help: string; nodes: { target: unknown[] }[] }): string {
  return `${violation.id} (${violation.impact ?? 'n/a'}): ${violation.help} at ${violation.nodes
    .slice(0, 3)
    .map((node) => JSON.stringify(node.target))
    .join(', ')}`;
}

/**
 * Runs axe-core's WCAG 2.0/2.1 A and AA rules on the page as it is, in light then dark colour scheme, and expects no
 * violation. axe is evaluated through the DevTools protocol, which the page's Content-Security-Policy does not
 * govern, so the page is checked under its real policy.
 */
export async function expectAccessible(page: Page, what: string): Promise<void> {
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme });
    // Evaluated as strings: the test's TypeScript knows no DOM.
    if (!(await page.evaluate("'axe' in window"))) await page.evaluate(AXE_SOURCE);
    const violations = (await page.evaluate(
      "axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } }).then((result) => result.violations)",
    )) as Parameters<typeof describeViolation>[0][];
    expect(violations.map(describeViolation), `${what}, ${colorScheme}`).toEqual([]);
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

/** Saves a full-page screenshot as test-results/<name> and says where. */
export async function screenshot(page: Page, name: string): Promise<void> {
  const path = screenshotPath(name);
  await page.screenshot({ path, fullPage: true });
  console.log(`console screenshot: ${path}`);
}
