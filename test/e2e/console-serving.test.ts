/**
 * End-to-end over `npm start` (bin/local.ts): how the operator console is served. The page at GET {base_url}/console
 * (never cached, under a strict Content-Security-Policy naming the service's other addresses) names its content-hashed
 * script and style sheet by relative URLs; those are served for good, an unknown or malformed name is refused as
 * problem+json; every answer is one the OpenAPI document describes. CORS: the upload and auth addresses allow the main
 * address's origin (where the page comes from) and no other; the main address answers none. In headless Chromium the
 * page loads without an error, requests nothing outside the service, passes the accessibility rules on its sign-in
 * form and signs in.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, launchChromium } from './browser.js';
import { expectAccessible, openConsole, signIn } from './console-harness.js';
import { expectDocumented } from './contract.js';
import { useLocalService } from './harness.js';

const hasChromium = chromiumAvailable();
if (!hasChromium) console.warn('Chromium not installed and could not be installed: skipping the console page in a browser');

const local = useLocalService();

const IMMUTABLE = 'public, max-age=31536000, immutable';

/** The page's script and style sheet, as it names them (relative URLs). */
async function pageAssets(): Promise<{ script: string; style: string }> {
  const html = await (await fetch(`${local.service.api}/console`)).text();
  const script = /<script type="module" src="(console\/assets\/main\.[A-Z0-9]+\.js)"><\/script>/.exec(html)?.[1];
  const style = /<link rel="stylesheet" href="(console\/assets\/main\.[A-Z0-9]+\.css)">/.exec(html)?.[1];
  if (script === undefined || style === undefined) throw new Error(`The console page names no script or style sheet:\n${html}`);
  return { script, style };
}

describe('GET /console and its assets', () => {
  it('is named by the start banner of `npm start`', () => {
    expect(local.service.output()).toContain(`  Operator console                    ${local.service.api}/console\n`);
  });

  it('is an HTML page, never cached, whose Content-Security-Policy allows this origin and calls to the upload and auth addresses only', async () => {
    const response = await fetch(`${local.service.api}/console`);
    expect(response.status).toBe(200);
    await expectDocumented('ConsolePage', response);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('no-cache');
    const policy = response.headers.get('content-security-policy') ?? '';
    const directives = new Map(
      policy.split(';').map((directive) => {
        const [name = '', ...values] = directive.trim().split(/\s+/);
        return [name, values] as const;
      }),
    );
    expect(directives.get('default-src')).toEqual(["'self'"]);
    expect(directives.get('script-src')).toEqual(["'self'"]);
    expect(directives.get('style-src')).toEqual(["'self'"]);
    expect(directives.get('frame-ancestors')).toEqual(["'none'"]);
    expect(policy).not.toContain('unsafe-inline');
    expect(policy).not.toContain('unsafe-eval');
    expect(directives.get('connect-src')).toEqual(
      expect.arrayContaining([
        "'self'",
        new URL(local.service.api).origin,
        new URL(local.service.upload).origin,
        new URL(local.service.auth).origin,
      ]),
    );
    // The page names the addresses it calls (for the console's client) and nothing it would load from elsewhere.
    const html = await response.text();
    expect(html).toContain(`&quot;auth&quot;:&quot;${local.service.auth}&quot;`);
    expect(html).not.toMatch(/(src|href)="https?:/);
  });

  it('names its content-hashed script and style sheet by relative URLs, served with their media types and cached for good', async () => {
    const { script, style } = await pageAssets();
    for (const [path, contentType] of [
      [script, 'application/javascript; charset=utf-8'],
      [style, 'text/css; charset=utf-8'],
    ] as const) {
      const response = await fetch(`${local.service.api}/${path}`);
      expect(response.status, path).toBe(200);
      await expectDocumented('ConsoleAsset', response);
      expect(response.headers.get('content-type'), path).toBe(contentType);
      expect(response.headers.get('cache-control'), path).toBe(IMMUTABLE);
      expect((await response.text()).length, path).toBeGreaterThan(500);
    }
  });

  it('answers 404 problem+json for a well-formed name no build made, telling to reload the page', async () => {
    const response = await fetch(`${local.service.api}/console/assets/main.ABCDEFGH.js`);
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const problem = (await expectDocumented('ConsoleAsset', response)) as { detail: string };
    expect(problem.detail).toContain('Reload the console page');
  });

  it.each([
    ['a name without its hash', 'main.js'],
    ['a path outside the folder', '..%2Fmanifest.json'],
    ['the manifest itself', 'manifest.json'],
  ])('refuses %s (%s) as problem+json without reading it', async (_what, name) => {
    const response = await fetch(`${local.service.api}/console/assets/${name}`);
    expect([400, 404]).toContain(response.status);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    await expectDocumented('ConsoleAsset', response);
    expect(await response.text()).not.toContain('"script"');
  });
});

describe('CORS for the console, whose page comes from the main address', () => {
  const mainOrigin = () => new URL(local.service.api).origin;
  const preflight = (url: string, origin: string) =>
    fetch(url, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, authorization' },
    });
  const uploads = () => `${local.service.upload}/companies/acme/resources/scenarios/uploads`;

  it("answers preflights to {auth}/token and the upload address from the main address's origin with what it allows", async () => {
    for (const url of [`${local.service.auth}/token`, uploads()]) {
      const response = await preflight(url, mainOrigin());
      expect(response.status, url).toBe(204);
      expect(response.headers.get('access-control-allow-origin'), url).toBe(mainOrigin());
      expect(response.headers.get('access-control-allow-methods'), url).toContain('POST');
      expect(response.headers.get('access-control-allow-headers'), url).toMatch(/authorization.*content-type|content-type.*authorization/);
      expect(Number(response.headers.get('access-control-max-age')), url).toBeGreaterThan(0);
    }
  });

  it('allows no other origin', async () => {
    for (const url of [`${local.service.auth}/token`, uploads()]) {
      const response = await preflight(url, 'http://evil.example');
      expect(response.headers.get('access-control-allow-origin'), url).toBeNull();
      expect(response.headers.get('access-control-allow-methods'), url).toBeNull();
    }
  });

  it("lets the main address's origin read the token answer", async () => {
    const response = await fetch(`${local.service.auth}/token`, {
      method: 'POST',
      headers: { origin: mainOrigin(), 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'alice', password: 'alice-demo-password' }),
    });
    expect(response.status).toBe(200);
    await expectDocumented('AuthToken', response);
    expect(response.headers.get('access-control-allow-origin')).toBe(mainOrigin());
  });

  it('answers no CORS on the main address itself (the console calls it from its own origin)', async () => {
    const response = await fetch(`${local.service.api}/openapi.json`, { headers: { origin: 'http://evil.example' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
    const ownOrigin = await fetch(`${local.service.api}/console`, { headers: { origin: mainOrigin() } });
    expect(ownOrigin.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe.skipIf(!hasChromium)('the console page in headless Chromium', () => {
  let browser: Browser;

  beforeAll(async () => {
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
  });

  it('loads without an error, requests nothing outside the service, is accessible on its sign-in form and signs in', {
    timeout: 120_000,
  }, async () => {
    const { page, errors, requested } = await openConsole(browser, local.service);
    try {
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
      await expectAccessible(page, 'sign-in page');
      await signIn(page, 'alice');
      const { script, style } = await pageAssets();
      expect(requested).toEqual(expect.arrayContaining([`${local.service.api}/${script}`, `${local.service.api}/${style}`]));
      // Signing in went across origins to the token endpoint, which CORS let the page read.
      expect(requested).toContain(`${local.service.auth}/token`);
      const allowed = new Set([local.service.api, local.service.upload, local.service.auth].map((url) => new URL(url).origin));
      expect(requested.filter((url) => !allowed.has(new URL(url).origin))).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
