/**
 * The console as served (functions/platform/console.ts), on a build folder of the test's own: the page carries the
 * service's addresses escaped in its meta attribute; its Content-Security-Policy lets it call the upload and auth
 * addresses and where presigned uploads go (the local storage endpoint, or S3 in the Lambda's region); asset names
 * outside the build's pattern are never read; a folder without a manifest fails the page until the build is there.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { API_ADDRESS_ENV, ENV } from '../../../functions/contract/environment.js';
import { consoleAsset, consolePage } from '../../../functions/platform/console.js';

const SCRIPT = 'main.ABCD1234.js';
const STYLE = 'main.WXYZ5678.css';

const folders: string[] = [];

/** A build folder: the manifest (unless `withManifest` is false), the script, the style sheet and a stray file. */
async function buildFolder(withManifest = true): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), 'console-unit-'));
  folders.push(folder);
  if (withManifest) await writeManifest(folder);
  await writeFile(join(folder, SCRIPT), 'console.log("console");\n');
  await writeFile(join(folder, STYLE), 'body { margin: 0; }\n');
  await writeFile(join(folder, 'secret.txt'), 'not an asset\n');
  return folder;
}

async function writeManifest(folder: string): Promise<void> {
  await writeFile(join(folder, 'manifest.json'), JSON.stringify({ script: SCRIPT, style: STYLE }));
}

/** Points the module at `folder` with the three addresses, and no storage endpoint or region unless given. */
function environment(folder: string, extra: Record<string, string> = {}): void {
  vi.stubEnv(ENV.consoleDirectory, folder);
  vi.stubEnv(API_ADDRESS_ENV.main, 'http://127.0.0.1:3000/');
  vi.stubEnv(API_ADDRESS_ENV.upload, 'http://127.0.0.1:3001/');
  vi.stubEnv(API_ADDRESS_ENV.auth, 'http://127.0.0.1:3002/');
  vi.stubEnv(ENV.s3Endpoint, '');
  vi.stubEnv(ENV.awsRegion, '');
  for (const [name, value] of Object.entries(extra)) vi.stubEnv(name, value);
}

/** The directives of a policy, by name. */
function directives(policy: string): Map<string, string[]> {
  return new Map(
    policy.split(';').map((directive) => {
      const [name = '', ...values] = directive.trim().split(/\s+/);
      return [name, values] as const;
    }),
  );
}

/** The addresses the page names in its `dss-addresses` meta attribute, unescaped as a browser reads them. */
function namedAddresses(html: string): unknown {
  const attribute = /<meta name="dss-addresses" content="([^"]*)">/.exec(html)?.[1];
  if (attribute === undefined) throw new Error(`No dss-addresses meta element in:\n${html}`);
  return JSON.parse(attribute.replaceAll('&quot;', '"').replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&'));
}

afterEach(async () => {
  vi.unstubAllEnvs();
  await Promise.all(folders.splice(0).map((folder) => rm(folder, { recursive: true, force: true })));
});

describe('consolePage', () => {
  it("names the build's script and style sheet by relative URLs and the addresses without their trailing slash", async () => {
    environment(await buildFolder());
    const { html } = await consolePage();
    expect(html).toContain(`<script type="module" src="console/assets/${SCRIPT}"></script>`);
    expect(html).toContain(`<link rel="stylesheet" href="console/assets/${STYLE}">`);
    expect(namedAddresses(html)).toEqual({ main: 'http://127.0.0.1:3000', upload: 'http://127.0.0.1:3001', auth: 'http://127.0.0.1:3002' });
  });

  it('escapes the addresses in the meta attribute, so that none can end it or open an element', async () => {
    const hostile = 'http://127.0.0.1:3001/x"><script>alert(1)</script>&amp;';
    environment(await buildFolder(), { [API_ADDRESS_ENV.upload]: hostile });
    const { html } = await consolePage();
    expect(html).not.toContain('<script>alert(1)');
    expect(html).not.toContain('x">');
    expect((namedAddresses(html) as { upload: string }).upload).toBe(hostile);
    expect(html.match(/<script/g)).toHaveLength(1);
  });

  it('allows calls to this origin, the three addresses (the main one by its configured name too) and the local storage endpoint', async () => {
    environment(await buildFolder(), { [ENV.s3Endpoint]: 'http://127.0.0.1:4569' });
    const policy = directives((await consolePage()).contentSecurityPolicy);
    expect(policy.get('connect-src')).toEqual([
      "'self'",
      'http://127.0.0.1:3000',
      'http://127.0.0.1:3001',
      'http://127.0.0.1:3002',
      'http://127.0.0.1:4569',
    ]);
    expect(policy.get('default-src')).toEqual(["'self'"]);
    expect(policy.get('script-src')).toEqual(["'self'"]);
    expect(policy.get('style-src')).toEqual(["'self'"]);
    expect(policy.get('frame-ancestors')).toEqual(["'none'"]);
  });

  it("allows S3's virtual-hosted buckets of the Lambda's region when there is no storage endpoint", async () => {
    environment(await buildFolder(), { [ENV.awsRegion]: 'eu-west-1' });
    const policy = directives((await consolePage()).contentSecurityPolicy);
    expect(policy.get('connect-src')).toEqual([
      "'self'",
      'http://127.0.0.1:3000',
      'http://127.0.0.1:3001',
      'http://127.0.0.1:3002',
      'https://*.s3.eu-west-1.amazonaws.com',
    ]);
  });

  it('allows no storage origin when it knows neither an endpoint nor a region', async () => {
    environment(await buildFolder());
    const policy = directives((await consolePage()).contentSecurityPolicy);
    expect(policy.get('connect-src')).toEqual(["'self'", 'http://127.0.0.1:3000', 'http://127.0.0.1:3001', 'http://127.0.0.1:3002']);
  });

  it('rejects while the folder has no manifest, and serves the page once the build is there', async () => {
    const folder = await buildFolder(false);
    environment(folder);
    await expect(consolePage()).rejects.toThrow(/ENOENT/);
    // The failure is not kept: the next call reads the folder again.
    await writeManifest(folder);
    const { html } = await consolePage();
    expect(html).toContain(`console/assets/${SCRIPT}`);
  });
});

describe('consoleAsset', () => {
  it('serves a built file with its media type, and nothing for a well-formed name no build made', async () => {
    environment(await buildFolder());
    const script = await consoleAsset(SCRIPT, false);
    expect(script?.contentType).toBe('application/javascript; charset=utf-8');
    expect(script?.body.toString('utf8')).toBe('console.log("console");\n');
    expect(script?.contentEncoding).toBeUndefined();
    expect((await consoleAsset(STYLE, false))?.contentType).toBe('text/css; charset=utf-8');
    expect(await consoleAsset('main.ZZZZ9999.js', true)).toBeUndefined();
  });

  it('gives the same file gzip-compressed when asked, decompressing to the same bytes', async () => {
    environment(await buildFolder());
    const compressed = await consoleAsset(SCRIPT, true);
    expect(compressed?.contentEncoding).toBe('gzip');
    expect(compressed?.contentType).toBe('application/javascript; charset=utf-8');
    expect(gunzipSync(compressed?.body as Buffer).toString('utf8')).toBe('console.log("console");\n');
  });

  it.each([
    'manifest.json',
    'secret.txt',
    '../manifest.json',
    `../${SCRIPT}`,
    `x/${SCRIPT}`,
    'main.js',
    'main.abcd1234.js',
    'main.ABCD1234.map',
    '.main.ABCD1234.js',
  ])('refuses %s without reading the folder', async (name) => {
    const folder = await buildFolder();
    environment(folder);
    // Even with a file of that name in the folder.
    await writeFile(join(folder, 'main.js'), 'not served\n');
    expect(await consoleAsset(name, true)).toBeUndefined();
  });
});
