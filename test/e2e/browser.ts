/**
 * Headless Chromium for the end-to-end tests that look at pages (the API reference, the console): Debian's
 * /usr/bin/chromium driven by playwright-core, which downloads nothing. When it is missing and the tests run as root
 * with apt-get, the `chromium` package is installed first; when that fails too, those tests are skipped with a line
 * saying so.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type Browser, chromium } from 'playwright-core';

/** Where Debian installs Chromium. */
export const CHROMIUM = '/usr/bin/chromium';

/** Where screenshots go (test-results/ is not committed). */
export const SCREENSHOTS = join(resolve(import.meta.dirname, '../..'), 'test-results');

/**
 * Headless, and quiet on the network: no QUIC, no first-run, background, component-update or sync traffic, so that
 * every request a test sees is one the page made.
 */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Whether Chromium is at CHROMIUM, installing the distribution's package first when it is missing and that is possible. */
export function chromiumAvailable(): boolean {
  if (existsSync(CHROMIUM)) return true;
  if (process.getuid?.() !== 0 || !existsSync('/usr/bin/apt-get')) return false;
  const environment = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = () =>
    spawnSync('apt-get', ['install', '-y', '-qq', 'chromium'], { env: environment, stdio: 'ignore', timeout: 600_000 }).status === 0;
  // Without package lists (a fresh container) the install fails until they are fetched.
  if (!install()) {
    spawnSync('apt-get', ['update', '-qq'], { env: environment, stdio: 'ignore', timeout: 300_000 });
    install();
  }
  return existsSync(CHROMIUM);
}

/** Starts headless Chromium; the caller closes it. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

/** The path of a screenshot named `name` (`console-fleet.png`) under SCREENSHOTS, the folder made if missing. */
export function screenshotPath(name: string): string {
  mkdirSync(SCREENSHOTS, { recursive: true });
  return join(SCREENSHOTS, name);
}
