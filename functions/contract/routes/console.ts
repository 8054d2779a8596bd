/**
 * The operator console's routes (main address): its page and its content-hashed assets, public like the reference
 * page. The console itself signs in at `{auth_url}/token` and calls the API with the token, as any client does.
 */
import * as z from 'zod';
import { IgnoredQuery } from '../parameters.js';
import { defineRoute } from '../route.js';
import { HtmlPage } from '../schemas/auth.js';
import { BUSY_PROBLEMS, COMMON_PROBLEMS, HEADERS, PROBLEM_RESPONSES, problem } from '../schemas/responses.js';

/** An asset's name: the build's `main.<hash>.js` or `main.<hash>.css` (content hash: base32 letters and digits). */
export const CONSOLE_ASSET_PATTERN = /^[a-z][a-z0-9-]{0,40}\.[A-Z0-9]{6,16}\.(js|css)$/;

const SECURITY_HEADERS = {
  'Content-Security-Policy': {
    description:
      "What the page may load: scripts and styles from this origin only (no inline script or style, no eval), requests to the service's three addresses (and locally the storage endpoint, for presigned uploads; on AWS S3 in the region), images from this origin and `data:`; no frames, no framing (`frame-ancestors 'none'`).",
    schema: z.string(),
    required: true,
  },
  'Cache-Control': HEADERS['Cache-Control'],
} as const;

/** GET /console */
export const consolePage = defineRoute({
  id: 'ConsolePage',
  api: 'main',
  method: 'GET',
  path: '/console',
  summary: 'Operator console',
  description:
    'The operator console, for people: sign in, search the fleet by its facets, open a device, deploy, upload scenarios. No bearer token needed for the page itself; it signs in at `{auth_url}/token` and calls this API with the token. The page is never cached (`Cache-Control: no-cache`); its script and style sheet (`console/assets/…`) have content-hashed names.',
  tags: ['Meta'],
  scope: null,
  request: { query: IgnoredQuery },
  // The page names the three addresses (the console's API calls and its Content-Security-Policy).
  access: { storage: false, memorySize: 256, apiAddresses: true, consoleAssets: true },
  entry: 'functions/handlers/console-page.ts',
  responses: {
    200: { description: 'The console page.', schema: HtmlPage, contentType: 'text/html', headers: SECURITY_HEADERS },
    ...BUSY_PROBLEMS,
    ...COMMON_PROBLEMS,
  },
});

/** The body of a console asset: a script or a style sheet. */
const ConsoleAssetBody = z
  .string()
  .meta({ id: 'ConsoleAsset', description: 'A script (application/javascript) or style sheet (text/css) of the console, UTF-8.' });

/** GET /console/assets/{asset} */
export const consoleAsset = defineRoute({
  id: 'ConsoleAsset',
  api: 'main',
  method: 'GET',
  path: '/console/assets/{asset}',
  summary: 'Script or style sheet of the operator console',
  description:
    "One of the console's files, named by its content's hash (`main.<hash>.js`, `main.<hash>.css`): browsers may keep it for good (`Cache-Control: public, max-age=31536000, immutable`). Compressed with gzip when `Accept-Encoding` allows it. No bearer token needed.",
  tags: ['Meta'],
  scope: null,
  request: {
    params: z.object({
      asset: z
        .string()
        .regex(CONSOLE_ASSET_PATTERN, { error: "'asset' must be a console file name such as main.ABCD1234.js." })
        .meta({ description: 'The file name, as the console page names it.' }),
    }),
    query: IgnoredQuery,
  },
  access: { storage: false, memorySize: 256, consoleAssets: true },
  entry: 'functions/handlers/console-asset.ts',
  responses: {
    200: {
      description: 'The file.',
      schema: ConsoleAssetBody,
      contentType: 'application/javascript',
      alternatives: { 'text/css': ConsoleAssetBody },
      headers: {
        'Cache-Control': HEADERS['Cache-Control'],
        'Content-Encoding': {
          description: "`gzip` when the request's `Accept-Encoding` accepts it (the body is then compressed); absent otherwise.",
          schema: z.literal('gzip'),
        },
      },
    },
    400: { ...PROBLEM_RESPONSES.BadRequest, description: 'Bad Request: the name is not a console file name.' },
    404: problem('NotFound', 'Not Found: no console file has this name (an older build: reload the console page).'),
    ...BUSY_PROBLEMS,
    ...COMMON_PROBLEMS,
  },
});
