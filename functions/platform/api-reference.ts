/**
 * The API reference page (GET {base_url}/docs): a small HTML page that renders the OpenAPI document with Redoc, and
 * Redoc's standalone script it loads (GET {base_url}/docs/redoc.standalone.js). Everything comes from the service's
 * own origin: the page names its script and the document by URLs relative to itself (so it works under any path
 * prefix, e.g. an API Gateway stage), and its Content-Security-Policy lets the browser load nothing else.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { REDOC_SCRIPT_MODULE } from '../contract/routes/service.js';

/** The script's URL relative to the page at `/docs`: `/docs/redoc.standalone.js`. */
export const REDOC_SCRIPT_PATH = 'docs/redoc.standalone.js';

/** The OpenAPI document's URL relative to the page at `/docs`: `/openapi.json`. */
export const OPENAPI_DOCUMENT_PATH = 'openapi.json';

/** How long browsers may keep the script, seconds: a day (its URL does not change when the `redoc` package does). */
export const REDOC_SCRIPT_MAX_AGE_SECONDS = 86_400;

/** The operating system's fonts: Redoc's default theme names web fonts (Roboto, Montserrat) that would have to be fetched. */
const SYSTEM_FONTS = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif";
const MONOSPACE_FONTS = "ui-monospace, SFMono-Regular, Menlo, Consolas, 'Liberation Mono', monospace";

/** Redoc's options: the system fonts instead of its default web fonts. */
const REDOC_OPTIONS = {
  theme: {
    typography: {
      fontFamily: SYSTEM_FONTS,
      headings: { fontFamily: SYSTEM_FONTS },
      code: { fontFamily: MONOSPACE_FONTS },
    },
  },
};

/** The page's only inline script: renders the document into `#redoc` once the script above it has loaded. */
const START_SCRIPT = `Redoc.init(${JSON.stringify(OPENAPI_DOCUMENT_PATH)}, ${JSON.stringify(REDOC_OPTIONS)}, document.getElementById('redoc'));`;

/**
 * What the page may load. Scripts: this origin and the start-up script by its hash (no other inline script, no
 * eval). Styles: this origin and inline, because Redoc (styled-components) injects its styles in `<style>` elements
 * at run time. Fetches (the document): this origin. Workers: `blob:`, Redoc's search index runs in a worker made from
 * a Blob. Images: this origin and `data:` (Redoc's icons; the page's empty icon, which spares the browser a request
 * for /favicon.ico). No fonts, frames, forms, plugins or `<base>`, and no framing.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  `script-src 'self' 'sha256-${createHash('sha256').update(START_SCRIPT).digest('base64')}'`,
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  'worker-src blob:',
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const PAGE = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference: Device scenario deployment and search service</title>
<link rel="icon" href="data:,">
<style>body { margin: 0; padding: 0; }</style>
</head>
<body>
<div id="redoc"></div>
<script src="${REDOC_SCRIPT_PATH}"></script>
<script>${START_SCRIPT}</script>
</body>
</html>
`;

/** The reference page: its HTML (UTF-8) and the Content-Security-Policy header value to serve it with. */
export function apiReferencePage(): { html: string; contentSecurityPolicy: string } {
  return { html: PAGE, contentSecurityPolicy: CONTENT_SECURITY_POLICY };
}

/**
 * The one thing Redoc loads from elsewhere by itself, whatever its options: the Redocly logo beside the "API docs by
 * Redocly" link at the foot of its sidebar.
 */
export const REDOCLY_LOGO_URL = 'https://cdn.redoc.ly/redoc/logo-mini.svg';

/**
 * The script as served: Redoc's, with the logo's URL (a string literal in it) emptied. A browser requests nothing for
 * an image whose `src` is empty and fires its `error` event, on which Redoc drops the image; the link stays.
 */
export function servedRedocScript(source: string): string {
  return source.replaceAll(JSON.stringify(REDOCLY_LOGO_URL), '""');
}

let script: Promise<string> | undefined;

/**
 * Redoc's standalone script (about 1.1 MB of UTF-8) as served (servedRedocScript), read once from the installed
 * `redoc` package and kept in memory. Resolved from this module, so the same lookup finds `node_modules/redoc` in the
 * repository locally and the copy in the Lambda bundle (`packageFiles` of the route's access) on AWS.
 * @throws Error (a rejected promise) when the file cannot be read; the next call tries again.
 */
export function redocScript(): Promise<string> {
  script ??= readFile(createRequire(import.meta.url).resolve(REDOC_SCRIPT_MODULE), 'utf8').then(servedRedocScript, (error: unknown) => {
    script = undefined;
    throw error;
  });
  return script;
}
