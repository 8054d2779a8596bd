/**
 * `npm run build`: bundles every function (each route's `entry` and each event function) with the esbuild options
 * the CDK deploys them with (lib/bundling.ts), into dist/functions/<name>/index.mjs (with its source map), prints
 * each bundle's size and fails when one is over FUNCTION_BUNDLE_LIMIT_BYTES (1 MiB). The bundles of the functions
 * whose access says `consoleAssets` get the operator console's build under `console/` (as the CDK's bundling hook
 * gives them, lib/service-function.ts); its files' sizes are printed, raw and gzip, and the build fails when the
 * console's first load (page, script, style sheet, gzip) is over CONSOLE_FIRST_LOAD_LIMIT_BYTES.
 * `npm run build -- <name>…` bundles only the named functions (e.g. `rollout-create`).
 */
import { cp, readFile, rm } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { writeConsole } from '../console/build.js';
import { API_ADDRESS_ENV, ENV } from '../functions/contract/environment.js';
import { FUNCTIONS } from '../functions/contract/functions.js';
import { AWS_ROUTES } from '../functions/contract/routes.js';
import { consolePage } from '../functions/platform/console.js';
import { CONSOLE_FIRST_LOAD_LIMIT_BYTES, FUNCTION_BUNDLE_LIMIT_BYTES, FUNCTION_BUNDLING } from '../lib/bundling.js';

const root = resolve(import.meta.dirname, '..');

/** Where the bundles are written (gitignored): `<BUNDLE_DIRECTORY>/<name>/index.mjs`. */
export const BUNDLE_DIRECTORY = join(root, 'dist', 'functions');

/** One function to bundle. */
export interface FunctionEntry {
  /** The entry's file name without `.ts` (`rollout-create`): the bundle's folder. */
  name: string;
  /** Handler module, relative to the repository root (`functions/handlers/rollout-create.ts`). */
  entry: string;
}

/**
 * Every function of the service: each route's `entry` (functions/contract/routes.ts, with the routes only AWS serves
 * and the functions AWS serves `auth` routes with), then each function no route runs (functions/contract/functions.ts).
 */
export function functionEntries(): FunctionEntry[] {
  const routeEntries = AWS_ROUTES.flatMap((route) => (route.onAws?.kind === 'function' ? [route.entry, route.onAws.entry] : [route.entry]));
  const entries = [...new Set([...routeEntries, ...FUNCTIONS.map((definition) => definition.entry)])];
  return entries.map((entry) => ({ name: basename(entry, '.ts'), entry }));
}

/** A built bundle. */
export interface FunctionBundle extends FunctionEntry {
  /** The bundle's `index.mjs`, absolute path. */
  file: string;
  /** Size of `index.mjs`, bytes (the source map apart). */
  bytes: number;
  /** The AWS SDK packages the bundle imports statically (left to the runtime), e.g. `@aws-sdk/client-dynamodb`. */
  sdkModules: string[];
}

/**
 * Bundles `entries` (default: functionEntries()) into BUNDLE_DIRECTORY, two at a time (the build shares the machine).
 * @throws the esbuild error of a bundle that fails to build.
 */
export async function buildFunctionBundles(entries: readonly FunctionEntry[] = functionEntries()): Promise<FunctionBundle[]> {
  const bundles: FunctionBundle[] = [];
  const pending = [...entries];
  const worker = async (): Promise<void> => {
    for (let entry = pending.shift(); entry !== undefined; entry = pending.shift()) bundles.push(await bundle(entry));
  };
  await Promise.all([worker(), worker()]);
  return bundles.sort((a, b) => entries.indexOf(a) - entries.indexOf(b));
}

async function bundle(entry: FunctionEntry): Promise<FunctionBundle> {
  const outdir = join(BUNDLE_DIRECTORY, entry.name);
  await rm(outdir, { recursive: true, force: true });
  const file = join(outdir, 'index.mjs');
  const result = await build({
    absWorkingDir: root,
    entryPoints: [join(root, entry.entry)],
    outfile: file,
    bundle: true,
    platform: FUNCTION_BUNDLING.platform,
    format: FUNCTION_BUNDLING.format,
    target: FUNCTION_BUNDLING.target,
    mainFields: [...FUNCTION_BUNDLING.mainFields],
    banner: { js: FUNCTION_BUNDLING.banner },
    minify: FUNCTION_BUNDLING.minify,
    sourcemap: FUNCTION_BUNDLING.sourceMap,
    sourcesContent: FUNCTION_BUNDLING.sourcesContent,
    external: [...FUNCTION_BUNDLING.externalModules],
    metafile: true,
    logLevel: 'warning',
  });
  const output = Object.entries(result.metafile.outputs).find(([path]) => path.endsWith('index.mjs'));
  if (output === undefined) throw new Error(`esbuild wrote no index.mjs for ${entry.entry}.`);
  const sdkModules = [
    ...new Set(
      output[1].imports
        // Only the static imports load with the bundle; a dynamic `import()` (e.g. the OpenSearch signer's credential
        // provider) loads when first called, so counting it would give the SDK file work the bundle's init does not do.
        .filter((imported) => imported.external && imported.kind === 'import-statement' && imported.path.startsWith('@aws-sdk/'))
        .map((imported) => imported.path),
    ),
  ].sort();
  return { ...entry, file, bytes: output[1].bytes, sdkModules };
}

/** The bundle folders (functionEntries names) of the functions whose access says `consoleAssets`. */
export function consoleFunctionNames(): string[] {
  return [...new Set(AWS_ROUTES.filter((route) => route.access?.consoleAssets === true).map((route) => basename(route.entry, '.ts')))];
}

/** One file of the console's first load: its name, size and gzip size (zlib's default level), bytes. */
export interface ConsoleFileSize {
  name: string;
  bytes: number;
  gzipBytes: number;
}

/** The console as the browser first loads it: the page, its script and style sheet, and the gzip total, bytes. */
export interface ConsoleSizes {
  files: ConsoleFileSize[];
  firstLoadGzipBytes: number;
}

/** Addresses of the shape API Gateway gives (the page names them), so the page measured is the size of the deployed one. */
const DEPLOYED_ADDRESSES = {
  main: 'https://a1b2c3d4e5.execute-api.eu-west-1.amazonaws.com/',
  upload: 'https://f6g7h8i9j0.execute-api.eu-west-1.amazonaws.com/',
  auth: 'https://k1l2m3n4o5.execute-api.eu-west-1.amazonaws.com/',
};

/**
 * Builds the console (console/build.ts) into `<bundle>/console` of each of `names` (BUNDLE_DIRECTORY's folders) and
 * measures its first load: the page as functions/platform/console.ts renders it on AWS, the script and style sheet.
 * @throws the build's error; Error when `names` is empty.
 */
export async function buildConsoleInto(names: readonly string[]): Promise<ConsoleSizes> {
  const [first, ...others] = names.map((name) => join(BUNDLE_DIRECTORY, name, 'console'));
  if (first === undefined) throw new Error('No function serves the console.');
  const { manifest } = await writeConsole(first);
  await Promise.all(others.map((directory) => cp(first, directory, { recursive: true })));
  const saved = { ...process.env };
  Object.assign(process.env, {
    [ENV.consoleDirectory]: first,
    [ENV.awsRegion]: 'eu-west-1',
    ...Object.fromEntries(
      Object.entries(DEPLOYED_ADDRESSES).map(([api, url]) => [API_ADDRESS_ENV[api as keyof typeof API_ADDRESS_ENV], url]),
    ),
  });
  let html: string;
  try {
    ({ html } = await consolePage());
  } finally {
    for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
    Object.assign(process.env, saved);
  }
  const sized = (name: string, contents: Buffer): ConsoleFileSize => ({
    name,
    bytes: contents.byteLength,
    gzipBytes: gzipSync(contents).byteLength,
  });
  const files = [
    sized('page (GET /console)', Buffer.from(html, 'utf8')),
    sized(manifest.script, await readFile(join(first, manifest.script))),
    sized(manifest.style, await readFile(join(first, manifest.style))),
  ];
  return { files, firstLoadGzipBytes: files.reduce((sum, file) => sum + file.gzipBytes, 0) };
}

/** `12.3 KB`-style size (1 KB = 1,024 bytes). */
export function kibibytes(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KB`;
}

/** `1.03 MiB`-style size. */
export function mebibytes(bytes: number): string {
  return `${(bytes / 1_048_576).toFixed(2)} MiB`;
}

async function main(): Promise<void> {
  const only = process.argv.slice(2);
  const entries = functionEntries().filter((entry) => only.length === 0 || only.includes(entry.name));
  if (entries.length === 0) throw new Error(`No function named ${only.join(', ')}.`);
  const started = Date.now();
  const bundles = await buildFunctionBundles(entries);
  const width = Math.max(...bundles.map((built) => built.name.length));
  for (const built of [...bundles].sort((a, b) => b.bytes - a.bytes)) {
    const over = built.bytes > FUNCTION_BUNDLE_LIMIT_BYTES ? '  OVER 1 MiB' : '';
    process.stdout.write(`${built.name.padEnd(width)}  ${String(built.bytes).padStart(9)} B  ${mebibytes(built.bytes)}${over}\n`);
  }
  const over = bundles.filter((built) => built.bytes > FUNCTION_BUNDLE_LIMIT_BYTES);
  process.stdout.write(
    `${bundles.length} bundles in ${((Date.now() - started) / 1000).toFixed(1)} s under ${BUNDLE_DIRECTORY}; ` +
      `largest ${mebibytes(Math.max(...bundles.map((built) => built.bytes)))}, limit ${mebibytes(FUNCTION_BUNDLE_LIMIT_BYTES)}.\n`,
  );
  if (over.length > 0) {
    process.stderr.write(`Over the limit: ${over.map((built) => built.name).join(', ')}.\n`);
    process.exitCode = 1;
  }
  const withConsole = consoleFunctionNames().filter((name) => bundles.some((built) => built.name === name));
  if (withConsole.length > 0) reportConsole(withConsole, await buildConsoleInto(withConsole));
}

/** Prints the console's sizes; sets a failing exit code when its first load is over CONSOLE_FIRST_LOAD_LIMIT_BYTES. */
function reportConsole(names: readonly string[], sizes: ConsoleSizes): void {
  const width = Math.max(...sizes.files.map((file) => file.name.length));
  process.stdout.write(`Operator console (in ${names.map((name) => `${name}/console`).join(', ')}):\n`);
  for (const file of sizes.files) {
    process.stdout.write(
      `  ${file.name.padEnd(width)}  ${String(file.bytes).padStart(7)} B  ${String(file.gzipBytes).padStart(7)} B gzip\n`,
    );
  }
  const over = sizes.firstLoadGzipBytes > CONSOLE_FIRST_LOAD_LIMIT_BYTES;
  process.stdout.write(
    `  first load ${sizes.firstLoadGzipBytes} B gzip (${kibibytes(sizes.firstLoadGzipBytes)}), limit ${kibibytes(CONSOLE_FIRST_LOAD_LIMIT_BYTES)}` +
      `${over ? '  OVER' : ''}.\n`,
  );
  if (over) {
    process.stderr.write("The console's first load is over its limit (lib/bundling.ts CONSOLE_FIRST_LOAD_LIMIT_BYTES).\n");
    process.exitCode = 1;
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
