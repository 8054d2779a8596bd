/**
 * The esbuild options of every function bundle, in one place: ServiceFunction (lib/service-function.ts) hands them to
 * CDK's NodejsFunction, and `npm run build` (bin/build.ts) runs esbuild with them, so the bundles measured locally are
 * the bundles deployed. Plain values: no AWS CDK import, so the build script loads only esbuild.
 */

/** esbuild target matching the Lambda runtime (Node.js 24). */
export const ESBUILD_TARGET = 'node24';

/**
 * Defines `require` in the ESM bundle: CommonJS dependencies bundled into ESM (busboy, jszip's helpers…) call
 * `require('node:…')`, which esbuild leaves as a runtime `require` that ESM does not have.
 */
export const ESM_REQUIRE_BANNER =
  "import { createRequire as __serviceCreateRequire } from 'node:module'; const require = __serviceCreateRequire(import.meta.url);";

/**
 * The AWS SDK v3 is NOT bundled: the Node.js 24 runtime ships it (as CDK assumes by default for Node 18+), and
 * bundling it pushed the upload function's `index.mjs` to 1.18 MB, over the 1 MiB budget the infra tests enforced then
 * (measured with esbuild 0.28, minified; zod alone is ~455 KB of every bundle that validates input). The price:
 * the SDK version is the runtime's, not the lockfile's. The calls we make (GetItem, Query, BatchGet/Write,
 * TransactWrite, Put/Get/DeleteObject, presigned URLs) are long-stable, and `@smithy/*` is excluded with it so
 * the bundle never mixes our Smithy core with the runtime's clients.
 */
export const RUNTIME_PROVIDED_MODULES = ['@aws-sdk/*', '@smithy/*'];

/** The largest function bundle (`index.mjs`) allowed, bytes: 1 MiB. */
export const FUNCTION_BUNDLE_LIMIT_BYTES = 1_048_576;

/**
 * The largest first load of the operator console allowed, bytes of gzip: its page, script and style sheet together
 * (`npm run build` measures them and fails above it; docs/console.md gives the figure). A browser on a slow mobile
 * link (~1.6 Mbit/s) fetches this much in under half a second, which leaves room for the pages but not for a
 * framework's weight.
 */
export const CONSOLE_FIRST_LOAD_LIMIT_BYTES = 80 * 1024;

/**
 * What every bundle is: minified ESM for Node.js 24 with source maps (file and line mapping only, which keeps the map
 * and the deployment package small), the runtime's AWS SDK left out, `module` entry points preferred.
 */
export const FUNCTION_BUNDLING = {
  format: 'esm',
  platform: 'node',
  target: ESBUILD_TARGET,
  mainFields: ['module', 'main'],
  banner: ESM_REQUIRE_BANNER,
  minify: true,
  sourceMap: true,
  sourcesContent: false,
  externalModules: RUNTIME_PROVIDED_MODULES,
} as const;
