/**
 * End-to-end over `npm start`, in headless Chromium: signing in to the operator console and what becomes of the
 * session. The console keeps its access and refresh tokens in the tab's sessionStorage; signing out revokes the refresh
 * token and forgets them; an access token about to expire is refreshed silently, and one the service refuses is
 * refreshed once and the request sent again; a session whose refresh is refused (the user was disabled) leads to the sign-in form and, once signed in
 * again, back to the same page and state. An invited user signs in with their temporary password and sets their own
 * in the page. The service here issues access tokens that live 5 s (TOKEN_LIFETIME_SECONDS), so that they expire
 * within the tests.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectOk, requestRefreshToken } from '../../client/index.js';
import { chromiumAvailable, launchChromium } from './browser.js';
import { expectAccessible, openConsole, screenshot, signIn, signInWith } from './console-harness.js';
import { clientFor, eventually, tokenFor, useLocalService } from './harness.js';

const TOKEN_LIFETIME_SECONDS = 5;
const hasChromium = chromiumAvailable();
if (!hasChromium) console.warn('Chromium not installed and could not be installed: skipping the console session tests');

const local = useLocalService({ environment: { TOKEN_LIFETIME_SECONDS: String(TOKEN_LIFETIME_SECONDS) } });

/** Root's client, with a token fetched now (they live 5 s here). */
async function root() {
  return clientFor(local.service, await tokenFor(local.service, 'root')).main;
}

/** Invites `username` as a viewer of acme through the API, as root; their temporary password. */
async function invite(username: string): Promise<string> {
  const invited = expectOk(
    await (await root()).POST('/admin/users', {
      body: { username, email: `${username}@example.com`, role: 'viewer', companies: ['acme'] },
    }),
  );
  expect(invited.temporaryPassword).toBeDefined();
  return invited.temporaryPassword ?? '';
}

/** Invites `username` and sets their own password through the token endpoint; that password. */
async function inviteWithPassword(username: string): Promise<string> {
  const temporary = await invite(username);
  const password = `${username[0]?.toUpperCase()}${username.slice(1)}-pass-2026!`;
  const set = await clientFor(local.service).auth.POST('/token', { body: { username, password: temporary, new_password: password } });
  expect(set.response.status).toBe(200);
  return password;
}

/** The access token the page keeps. */
const accessTokenOf = (page: Page) => page.evaluate("sessionStorage.getItem('dss.accessToken')") as Promise<string>;

/** The bodies of the page's requests to the token endpoint, parsed (JSON), as they are sent. */
function tokenRequests(page: Page): Record<string, unknown>[] {
  const bodies: Record<string, unknown>[] = [];
  page.on('request', (request) => {
    if (request.method() === 'POST' && new URL(request.url()).pathname === '/token') bodies.push(JSON.parse(request.postData() ?? '{}'));
  });
  return bodies;
}

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

  it('revokes the refresh token and forgets all it kept in the tab on sign-out: a reload shows the sign-in form', {
    timeout: 120_000,
  }, async () => {
    const { page, errors } = await openConsole(browser, local.service, '#/fleet');
    await signIn(page, 'alice');
    // The access token and the refresh token.
    expect(await page.evaluate('sessionStorage.length')).toBe(2);
    const refreshToken = (await page.evaluate("sessionStorage.getItem('dss.refreshToken')")) as string;
    // What an interrupted deploy leaves (its journal) goes too.
    await page.evaluate("sessionStorage.setItem('dss.deployBatch.example', '{}')");
    const revoked = page.waitForResponse((response) => new URL(response.url()).pathname.endsWith('/revoke'));
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
    expect((await revoked).status()).toBe(200);
    const refused = await requestRefreshToken(clientFor(local.service).auth, refreshToken);
    expect([refused.response.status, (refused.error as { error?: string } | undefined)?.error]).toEqual([400, 'invalid_grant']);
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

  it('stays signed out when a refresh that was on its way at sign-out answers afterwards', { timeout: 120_000 }, async () => {
    const { page, errors } = await openConsole(browser, local.service, '#/fleet');
    await signIn(page, 'alice');
    // The silent refresh (due a quarter of the token's life before expiry) is answered by the service at once, but its
    // answer reaches the page only after the user has signed out (and revoked the refresh token).
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let held = () => {};
    const refreshHeld = new Promise<void>((resolve) => {
      held = resolve;
    });
    await page.route(
      (url) => url.pathname.endsWith('/token'),
      async (route) => {
        if (!(route.request().postData() ?? '').includes('refresh_token')) return route.continue();
        const response = await route.fetch();
        held();
        await released;
        return route.fulfill({ response });
      },
    );
    await refreshHeld;
    const answered = page.waitForResponse((response) => new URL(response.url()).pathname.endsWith('/token'));
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    release();
    await (await answered).finished();
    await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))');
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
    expect(await page.getByRole('button', { name: 'Sign out' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(errors).toEqual([]);
    await page.close();
  });

  it('keeps the session going past the access token expiry by refreshing it silently', { timeout: 120_000 }, async () => {
    const { page, errors } = await openConsole(browser, local.service, '#/fleet');
    const sent = tokenRequests(page);
    await signIn(page, 'alice');
    const first = await accessTokenOf(page);
    const expiry = expiryOf(first);
    expect(expiry - Date.now()).toBeLessThanOrEqual(TOKEN_LIFETIME_SECONDS * 1000);
    // The expiry is the service's, in another process: waited for, not faked.
    await eventually(async () => Date.now() > expiry + 1000, 'the first access token to expire', (TOKEN_LIFETIME_SECONDS + 5) * 1000, 250);

    // Refreshed before it expired, with the refresh token the sign-in gave: a new access token, no sign-in form.
    expect(sent.map((body) => body.grant_type ?? 'password')).toContain('refresh_token');
    const refreshed = await accessTokenOf(page);
    expect(refreshed).not.toBe(first);
    expect(expiryOf(refreshed)).toBeGreaterThan(expiry);

    // The operator goes on: a new page state whose data only a valid token can fetch.
    const state = '#/fleet?health.mode=WARNING&sort=serial&direction=DESC';
    await page.evaluate(`location.hash = ${JSON.stringify(state)}`);
    await page.getByRole('heading', { level: 1, name: 'Fleet' }).waitFor();
    await page.getByRole('table').first().waitFor();
    expect(await page.getByRole('button', { name: 'Sign in' }).count()).toBe(0);
    expect(new URL(page.url()).hash).toBe(state);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('refreshes once when the service refuses the access token, and sends the request again', { timeout: 120_000 }, async () => {
    const { page, errors } = await openConsole(browser, local.service, '#/fleet');
    await signIn(page, 'alice');
    await page.getByRole('heading', { level: 1, name: 'Fleet' }).waitFor();
    // A token the service no longer accepts (its signature does not verify, as after a key rotation), which does
    // not expire before the end of the test: only the 401 can lead to a refresh.
    const [header, payload, signature] = (await accessTokenOf(page)).split('.');
    const claims = JSON.parse(Buffer.from(payload ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
    const later = Buffer.from(JSON.stringify({ ...claims, exp: Math.floor(Date.now() / 1000) + 600 })).toString('base64url');
    const forged = `${header}.${later}.${signature}`;
    await page.evaluate(`sessionStorage.setItem('dss.accessToken', ${JSON.stringify(forged)})`);
    const answers: string[] = [];
    page.on('response', (answer) => answers.push(`${answer.request().method()} ${new URL(answer.url()).pathname} ${answer.status()}`));
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Fleet' }).waitFor();
    // The search is refused, the session refreshed, and the same search sent again and answered.
    await expect
      .poll(
        () => {
          const refusal = answers.indexOf('GET /resources/search 401');
          const refreshed = answers.indexOf('POST /token 200', refusal);
          return refusal >= 0 && refreshed > refusal && answers.indexOf('GET /resources/search 200', refreshed) > refreshed;
        },
        { timeout: 10_000 },
      )
      .toBe(true);
    expect(await page.getByRole('button', { name: 'Sign in' }).count()).toBe(0);
    expect(await accessTokenOf(page)).not.toBe(forged);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('ends the session when the refresh is refused (the user was disabled), then returns to the same URL', {
    timeout: 120_000,
  }, async () => {
    const password = await inviteWithPassword('henry');
    const { page, errors } = await openConsole(browser, local.service, '#/scenarios?company=acme');
    await signInWith(page, 'henry', password);
    await page.getByRole('heading', { level: 1, name: 'Scenarios' }).waitFor();
    const state = '#/fleet?health.mode=WARNING&sort=serial&direction=DESC';
    await page.evaluate(`location.hash = ${JSON.stringify(state)}`);

    // Disabled: the next refresh, shortly before the access token expires, is refused and the session ends.
    expectOk(await (await root()).PATCH('/admin/users/{username}', { params: { path: { username: 'henry' } }, body: { enabled: false } }));
    await page.getByRole('button', { name: 'Sign in' }).waitFor({ timeout: (TOKEN_LIFETIME_SECONDS + 5) * 1000 });
    expect(await page.getByRole('status').first().textContent()).toContain('Sign in again');
    expect(new URL(page.url()).hash).toBe(state);
    expect(await page.evaluate('sessionStorage.length')).toBe(0);

    expectOk(await (await root()).PATCH('/admin/users/{username}', { params: { path: { username: 'henry' } }, body: { enabled: true } }));
    await signInWith(page, 'henry', password);
    expect(new URL(page.url()).hash).toBe(state);
    await page.getByRole('heading', { level: 1, name: 'Fleet' }).waitFor();
    expect(errors).toEqual([]);
    await page.close();
  });

  it('lets an invited user set their own password at their first sign-in, then signs them in', { timeout: 120_000 }, async () => {
    const temporary = await invite('grace');
    const { page, errors } = await openConsole(browser, local.service, '#/scenarios?company=acme');
    await page.getByLabel('Username').fill('grace');
    await page.getByLabel('Password').fill(temporary);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const step = page.getByRole('form', { name: 'Set a new password' });
    await step.waitFor();
    // The policy in the service's own words (the challenge's passwordPolicy), not a copy the page keeps.
    expect(await step.textContent()).toContain('The new password must have at least 12 and at most 256 characters');
    await expectAccessible(page, 'new password step');
    await screenshot(page, 'console-new-password.png');

    // The two fields differ: said in the page, nothing sent.
    await step.getByLabel('New password', { exact: true }).fill('Grace-pass-2026!');
    await step.getByLabel('Confirm the new password').fill('Grace-pass-2026?');
    await step.getByRole('button', { name: 'Set the password and sign in' }).click();
    await step.getByRole('alert').filter({ hasText: 'The two passwords differ' }).waitFor();

    // A password the policy refuses: the service's detail, which states the policy.
    await step.getByLabel('New password', { exact: true }).fill('alllowercase');
    await step.getByLabel('Confirm the new password').fill('alllowercase');
    await step.getByRole('button', { name: 'Set the password and sign in' }).click();
    await step
      .getByRole('alert')
      .filter({ hasText: /uppercase/ })
      .waitFor();

    await step.getByLabel('New password', { exact: true }).fill('Grace-pass-2026!');
    await step.getByLabel('Confirm the new password').fill('Grace-pass-2026!');
    await step.getByRole('button', { name: 'Set the password and sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    expect(await page.getByText('Signed in as grace').count()).toBe(1);
    await page.getByRole('heading', { level: 1, name: 'Scenarios' }).waitFor();
    expect(new URL(page.url()).hash).toBe('#/scenarios?company=acme');

    // The new password is hers now; the temporary one no longer signs in.
    const signInWithPassword = (password: string) =>
      clientFor(local.service).auth.POST('/token', { body: { username: 'grace', password } });
    expect((await signInWithPassword('Grace-pass-2026!')).response.status).toBe(200);
    expect((await signInWithPassword(temporary)).response.status).toBe(401);
    expect(errors).toEqual([]);
    await page.close();
  });
});
