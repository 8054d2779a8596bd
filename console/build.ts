/**
 * Builds the operator console (console/src) into its served files with esbuild: one script and one style sheet,
 * each named by its content's hash (`main.<hash>.js`, `main.<hash>.css`) so that browsers may keep them for good, and
 * `manifest.json` naming them for the page (functions/platform/console.ts). The same build runs for `npm start` (into
 * the data folder), `npm run build` and each AWS deployment of the console's function (into its bundle).
 *
 * Run as a script: `tsx console/build.ts <directory>` writes the files into `<directory>`.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';

/** What the page needs to name its files: their names relative to `assets/`. */
export interface ConsoleManifest {
  script: string;
  style: string;
}

/** One built file: its name (`main.<hash>.js`) and bytes. */
export interface ConsoleFile {
  name: string;
  contents: Uint8Array;
}

/** The console's sources, relative to this file. */
const SOURCE = resolve(import.meta.dirname, 'src');

/**
 * Bundles the console: minified ES2022 for the browsers of the last years, Preact's automatic JSX runtime, no source
 * maps (the sources are in the repository), nothing left to fetch from elsewhere.
 * @throws Error (esbuild's) when a source does not compile.
 */
export async function buildConsole(): Promise<{ manifest: ConsoleManifest; files: ConsoleFile[] }> {
  const result = await build({
    entryPoints: [join(SOURCE, 'main.tsx'), join(SOURCE, 'main.css')],
    bundle: true,
    write: false,
    outdir: 'out',
    entryNames: '[name].[hash]',
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'none',
    logLevel: 'warning',
    metafile: true,
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  const files = result.outputFiles.map((file) => ({ name: basename(file.path), contents: file.contents }));
  const named = (extension: string): string => {
    const found = files.find((file) => file.name.startsWith('main.') && file.name.endsWith(extension));
    if (found === undefined) throw new Error(`The console build made no main ${extension} file.`);
    return found.name;
  };
  return { manifest: { script: named('.js'), style: named('.css') }, files };
}

/**
 * Builds the console into `directory` (emptied first): its files and `manifest.json`.
 * @returns the manifest and the total size of the files, bytes
 */
export async function writeConsole(directory: string): Promise<{ manifest: ConsoleManifest; bytes: number }> {
  const { manifest, files } = await buildConsole();
  await rm(directory, { recursive: true, force: true });
  await mkdir(directory, { recursive: true });
  await Promise.all(files.map((file) => writeFile(join(directory, file.name), file.contents)));
  await writeFile(join(directory, 'manifest.json'), `${JSON.stringify(manifest)}\n`);
  return { manifest, bytes: files.reduce((sum, file) => sum + file.contents.byteLength, 0) };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const directory = process.argv[2];
  if (directory === undefined) {
    process.stderr.write('Usage: tsx console/build.ts <directory>\n');
    process.exit(2);
  }
  const { manifest, bytes } = await writeConsole(resolve(directory));
  process.stdout.write(`console: ${manifest.script}, ${manifest.style} (${bytes} bytes) in ${directory}\n`);
}
