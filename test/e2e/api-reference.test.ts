/**
 * End-to-end over `npm start` (bin/local.ts): the API reference page at GET {base_url}/docs. Its HTML and Redoc's
 * script are served with the headers their route definitions document; headless Chromium then renders the page and
 * it shows every operation of the OpenAPI document, fetched nothing from anywhere but the service, and logged no
 * error. A full-page screenshot is written to test-results/api-reference.png for people to look at.
 *
 * Chromium comes from test/e2e/browser.ts; without it the browser test is skipped (the HTTP checks still run).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { REDOC_SCRIPT_MODULE } from '../../functions/contract/routes/service.js';
import { ROUTES } from '../../functions/contract/routes.js';
import { servedRedocScript } from '../../functions/platform/api-reference.js';
import { chromiumAvailable, launchChromium, screenshotPath } from './browser.js';
import { expectDocumented } from './contract.js';
import { useLocalService } from './harness.js';

const SCREENSHOT = screenshotPath('api-reference.png');

const hasChromium = chromiumAvailable();
if (!hasChromium) console.warn('Chromium not installed and could not be installed: skipping the API reference screenshot');

const local = useLocalService();

describe('GET /docs', () => {
  it('is named by the start banner of `npm start`', () => {
    expect(local.service.output()).toContain(`  API reference                       ${local.service.api}/docs\n`);
  });

  it('is an HTML page that loads its script and the document by relative URLs, under a same-origin Content-Security-Policy', async () => {
    const response = await fetch(`${local.service.api}/docs`);
    expect(response.status).toBe(200);
    await expectDocumented('ApiReference', response);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const policy = response.headers.get('content-security-policy') ?? '';
    expect(policy).toContain("default-src 'none'");
    expect(policy).toMatch(/script-src 'self' 'sha256-[A-Za-z0-9+/]+=*'(;|$)/);
    expect(policy).toContain("connect-src 'self'");
    // No other origin is allowed anything.
    expect(policy).not.toMatch(/https?:|\*/);
    const html = await response.text();
    expect(html).toContain('<script src="docs/redoc.standalone.js"></script>');
    expect(html).toContain('Redoc.init("openapi.json"');
    expect(html).not.toMatch(/https?:\/\//);
  });

  it("serves Redoc's standalone script from the installed package, cacheable for a day", async () => {
    const response = await fetch(`${local.service.api}/docs/redoc.standalone.js`);
    expect(response.status).toBe(200);
    await expectDocumented('ApiReferenceScript', response);
    expect(response.headers.get('content-type')).toBe('application/javascript; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('public, max-age=86400');
    const packaged = readFileSync(createRequire(import.meta.url).resolve(REDOC_SCRIPT_MODULE), 'utf8');
    expect(await response.text()).toBe(servedRedocScript(packaged));
  });

  it.skipIf(!hasChromium)(
    'renders every operation in headless Chromium, requesting nothing from anywhere else and logging no error',
    { timeout: 120_000 },
    async () => {
      const summaries = ROUTES.flatMap((route) => (route.summary === undefined ? [] : [route.summary]));
      expect(summaries.length).toBeGreaterThan(30);
      const origin = new URL(local.service.api).origin;
      const browser = await launchChromium();
      try {
        const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
        const requested: string[] = [];
        const errors: string[] = [];
        page.on('request', (request) => requested.push(request.url()));
        page.on('console', (message) => {
          if (message.type() === 'error') errors.push(message.text());
        });
        page.on('pageerror', (error) => errors.push(error.message));
        page.on('response', (answer) => {
          if (answer.status() >= 400) errors.push(`${answer.status()} ${answer.url()}`);
        });

        const response = await page.goto(`${local.service.api}/docs`, { waitUntil: 'load' });
        expect(response?.status()).toBe(200);
        // Redoc renders each operation under a heading of its summary once the document has loaded.
        const headings = page.locator('h2:visible');
        const missing = async () => {
          const shown = (await headings.allTextContents()).map((text) => text.trim());
          return summaries.filter((summary) => !shown.includes(summary));
        };
        try {
          await expect.poll(missing, { timeout: 60_000, interval: 500 }).toEqual([]);
        } finally {
          // Also when something is missing: the picture shows what the page did render.
          await page.screenshot({ path: SCREENSHOT, fullPage: true });
          console.log(`API reference screenshot: ${SCREENSHOT}`);
        }

        expect(requested).toContain(`${origin}/docs/redoc.standalone.js`);
        expect(requested).toContain(`${origin}/openapi.json`);
        // The search worker's script is a blob: URL of the page's own origin.
        expect(requested.filter((url) => new URL(url.replace(/^blob:/, '')).origin !== origin)).toEqual([]);
        expect(errors).toEqual([]);
      } finally {
        await browser.close();
      }
    },
  );
});
