/**
 * The operator console as served (GET {base_url}/console and its assets): the page, which names the console's
 * content-hashed script and style sheet and the service's three addresses, under a Content-Security-Policy that lets
 * the browser load nothing but these files and call nothing but the service; and the files themselves, read once from
 * the build's folder (console/build.ts) and kept in memory.
 */
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { API_ADDRESS_ENV, ENV, readEnvironment } from '../contract/environment.js';
import type { ApiName } from '../contract/route.js';
import { CONSOLE_ASSET_PATTERN } from '../contract/routes/console.js';

/** What the build names: the page's script and style sheet (console/build.ts's manifest). */
interface ConsoleManifest {
  script: string;
  style: string;
}

/** How long browsers keep an asset, seconds: a year, the longest RFC 9111 caches honour; its name changes with it. */
export const CONSOLE_ASSET_MAX_AGE_SECONDS = 31_536_000;

/**
 * The build's folder: CONSOLE_DIRECTORY (the local runtime's build in the data folder), else `console/` beside this
 * module's bundle (the Lambda bundle, into which the deployment builds it).
 */
function consoleDirectory(): string {
  return readEnvironment('console', process.env)[ENV.consoleDirectory] ?? join(dirname(fileURLToPath(import.meta.url)), 'console');
}

const manifests = new Map<string, Promise<ConsoleManifest>>();

/**
 * The build's manifest, read once per folder.
 * @throws Error (a rejected promise) when it cannot be read: the console was not built; the next call tries again.
 */
function manifest(directory: string): Promise<ConsoleManifest> {
  let found = manifests.get(directory);
  if (found === undefined) {
    found = readFile(join(directory, 'manifest.json'), 'utf8').then(
      (text) => JSON.parse(text) as ConsoleManifest,
      (error: unknown) => {
        manifests.delete(directory);
        throw error;
      },
    );
    manifests.set(directory, found);
  }
  return found;
}

/** The origin of a URL (`http://127.0.0.1:3001`), or undefined when it is not one. */
function originOf(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

/** The three addresses the page names, trailing `/` dropped (API Gateway stage URLs end with one). */
function addresses(): Record<ApiName, string | undefined> {
  const address = (api: ApiName) => process.env[API_ADDRESS_ENV[api]]?.replace(/\/+$/, '');
  return { main: address('main'), upload: address('upload'), auth: address('auth') };
}

/**
 * What the page may load and call: scripts and styles of this origin only (no inline code, no eval), requests to
 * this origin, the three addresses and where presigned uploads go (locally the storage endpoint,
 * on AWS the region's S3 virtual-hosted buckets), images of this origin and `data:` (the empty icon); nothing else,
 * and no framing (clickjacking, `frame-ancestors`, CSP Level 2).
 */
function contentSecurityPolicy(connect: readonly string[]): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    `connect-src ${["'self'", ...connect].join(' ')}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** Escapes text for an HTML attribute value in double quotes. */
function attribute(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

/**
 * The console page: its HTML (UTF-8) and the Content-Security-Policy to serve it with. Assets are named by URLs
 * relative to the page (`console/assets/…` from `/console`), so it works under any path prefix (an API Gateway stage).
 * @throws Error when the console's build cannot be read.
 */
export async function consolePage(): Promise<{ html: string; contentSecurityPolicy: string }> {
  const directory = consoleDirectory();
  const { script, style } = await manifest(directory);
  const named = addresses();
  const environment = readEnvironment('console', process.env);
  const storage =
    originOf(environment[ENV.s3Endpoint]) ??
    (environment[ENV.awsRegion] === undefined ? undefined : `https://*.s3.${environment[ENV.awsRegion]}.amazonaws.com`);
  // The main address too, though usually 'self': the console calls it by its configured URL, which differs from the
  // page's origin when the page is reached by another name (a custom domain, `localhost` for `127.0.0.1`).
  const connect = [originOf(named.main), originOf(named.upload), originOf(named.auth), storage].filter(
    (origin): origin is string => origin !== undefined,
  );
  const html = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Device scenario console</title>
<meta name="dss-addresses" content="${attribute(JSON.stringify(named))}">
<link rel="icon" href="data:,">
<link rel="stylesheet" href="console/assets/${style}">
<script type="module" src="console/assets/${script}"></script>
</head>
<body>
<div id="app"></div>
<noscript>The console needs JavaScript; the API and the dss CLI work without it.</noscript>
</body>
</html>
`;
  return { html, contentSecurityPolicy: contentSecurityPolicy([...new Set(connect)]) };
}

/** A built file as served: its bytes, and the same gzip-compressed (RFC 1952), made once. */
interface ServedAsset {
  body: Buffer;
  gzipped: Buffer;
}

const assets = new Map<string, Promise<ServedAsset | undefined>>();

/**
 * Whether an `Accept-Encoding` value (RFC 9110 §12.5.3) accepts gzip: `gzip` (or `x-gzip`) listed without `q=0`.
 * API Gateway HTTP APIs do not compress answers themselves, so the function does.
 */
export function acceptsGzip(acceptEncoding: string | undefined): boolean {
  return (acceptEncoding ?? '').split(',').some((part) => {
    const [coding = '', ...parameters] = part.split(';').map((piece) => piece.trim().toLowerCase());
    if (coding !== 'gzip' && coding !== 'x-gzip') return false;
    const quality = parameters.find((parameter) => parameter.startsWith('q='));
    return quality === undefined || Number(quality.slice(2)) > 0;
  });
}

/**
 * One built file by name (`main.<hash>.js`), read and compressed once and kept in memory, with its media type and,
 * when `gzip`, its gzip-compressed bytes; undefined when there is no such file (a page of an older build asks for it).
 */
export async function consoleAsset(
  name: string,
  gzip: boolean,
): Promise<{ body: Buffer; contentType: string; contentEncoding?: 'gzip' } | undefined> {
  if (!CONSOLE_ASSET_PATTERN.test(name)) return undefined;
  const path = join(consoleDirectory(), name);
  let found = assets.get(path);
  if (found === undefined) {
    found = readFile(path).then(
      (body) => ({ body, gzipped: gzipSync(body, { level: 9 }) }),
      (error: NodeJS.ErrnoException) => {
        assets.delete(path);
        if (error.code === 'ENOENT') return undefined;
        throw error;
      },
    );
    assets.set(path, found);
  }
  const served = await found;
  if (served === undefined) return undefined;
  const contentType = name.endsWith('.css') ? 'text/css; charset=utf-8' : 'application/javascript; charset=utf-8';
  return gzip ? { body: served.gzipped, contentType, contentEncoding: 'gzip' } : { body: served.body, contentType };
}
