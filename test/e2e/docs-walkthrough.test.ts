/**
 * The documented walkthrough, run as a reader would run it: every ```console block of README.md and
 * docs/walkthrough.md is read, its `$ ` commands are sent one by one to a bash session (curl, jq, zip and the `dss`
 * CLI) against `bin/local.ts` on a fresh data folder, and what each command prints is compared with the lines the
 * document shows under it. The documents name the default addresses (127.0.0.1:3000, :3001, :3002); the commands are
 * sent with the test's ports instead, and the answers read back with the defaults.
 *
 * Values that differ on every run are compared by kind, on both sides: ISO times, ULIDs, generated scenario ids,
 * SHA-256 digests, JWTs, client secrets, ETags, archive sizes in bytes (a zip tool's output varies by a few bytes),
 * the archive store's port, the CLI's config folder; table padding is
 * ignored; `…` in a document line stands for any text. A read whose answer is derived after the write it follows
 * (search, history, an upload's status) is sent again for a few seconds until it matches. A changed answer fails the
 * test, and so does a step the walkthrough no longer shows: REQUIRED lists the calls it must keep.
 *
 * `UPDATE_DOCS=1 npx vitest run test/e2e/docs-walkthrough.test.ts` writes the answers of the run into the documents
 * instead of comparing them; review the diff before committing it.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalService, newServiceSettings, removeDataDirectory, type ServiceSettings, startService } from './harness.js';

const root = resolve(import.meta.dirname, '../..');
const UPDATE = process.env.UPDATE_DOCS === '1';
const DEFAULTS = { api: 'http://127.0.0.1:3000', upload: 'http://127.0.0.1:3001', auth: 'http://127.0.0.1:3002' } as const;
const DOCUMENTED_CONFIG = '/home/you/.config/dss';

/** Calls each document must keep showing (a pattern of the command text), so that a removed step fails the test. */
const REQUIRED: Record<string, RegExp[]> = {
  'README.md': [/:3002\/token/, /\/resources\/search\?/, /npx dss search/],
  'docs/walkthrough.md': [
    /:3002\/token/,
    /scenarios\/skeleton\.zip/,
    /-F payload=@my-scenario\.zip/,
    /\/scenarios\/uploads\b/,
    /-X POST .*\/resources\/deployments|\/resources\/deployments'? *\\?$/m,
    /\/acme-kiosk-0001\/deployments/,
    /\/DEVICE\/deployments/,
    /\/deployments\/history/,
    /\/resources\/search\/filters/,
    /\/resources\/search\?.*global=/,
    /devices\/acme-lobby-01\/credentials/,
    /grant_type=client_credentials/,
    /\/device\/health/,
    /If-None-Match/,
    /\/device\/deployments\/status/,
    /-X DELETE .*devices\/acme-lobby-01/,
    /npx dss login/,
    /npx dss upload/,
    /npx dss deploy/,
    /npx dss search/,
  ],
};

/** The tools the documents' commands use, as a reader's machine has them (README, prerequisites). */
const MISSING_TOOLS = ['bash', 'curl', 'jq', 'zip', 'unzip', 'sha256sum'].filter(
  (tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0,
);

/** One `$ ` command of a console block and the lines shown under it. */
interface Step {
  command: string;
  expected: string[];
}

/** A console block: where it is in its document (line indexes of its body) and its steps. */
interface Block {
  start: number;
  end: number;
  steps: Step[];
}

function consoleBlocks(text: string): Block[] {
  const lines = text.split('\n');
  const blocks: Block[] = [];
  for (let index = 0; index < lines.length; index++) {
    if (lines[index] !== '```console') continue;
    const start = index + 1;
    let end = start;
    while (end < lines.length && lines[end] !== '```') end++;
    const steps: Step[] = [];
    for (let line = start; line < end; line++) {
      const text = lines[line]!;
      if (text.startsWith('$ ')) {
        let command = text.slice(2);
        // A command goes on while its line ends with a backslash or a single-quoted string is still open.
        while ((command.endsWith('\\') || (command.match(/'/g) ?? []).length % 2 === 1) && line + 1 < end) {
          command = `${command}\n${lines[++line]}`;
        }
        steps.push({ command, expected: [] });
      } else if (steps.length > 0) {
        steps.at(-1)!.expected.push(text);
      } else {
        throw new Error(`A console block (line ${start}) must start with a "$ " command, not: ${text}`);
      }
    }
    blocks.push({ start, end, steps });
    index = end;
  }
  return blocks;
}

let settings: ServiceSettings;
let service: LocalService;
let workDirectory: string;
let configDirectory: string;

beforeAll(async () => {
  if (MISSING_TOOLS.length > 0) return;
  settings = await newServiceSettings();
  service = await startService(settings);
  workDirectory = await mkdtemp(join(tmpdir(), 'dss-docs-'));
  configDirectory = join(workDirectory, '.config', 'dss');
});

afterAll(async () => {
  await service?.stop();
  if (settings !== undefined) await removeDataDirectory(settings);
  if (workDirectory !== undefined) await rm(workDirectory, { recursive: true, force: true });
});

/** The documents' addresses replaced by the test service's. */
function toService(command: string): string {
  return command.replaceAll(DEFAULTS.api, service.api).replaceAll(DEFAULTS.upload, service.upload).replaceAll(DEFAULTS.auth, service.auth);
}

/** What a command printed, as the documents show it: default addresses, the documented config folder. */
function asDocumented(output: string): string {
  return output
    .replaceAll(service.api, DEFAULTS.api)
    .replaceAll(service.upload, DEFAULTS.upload)
    .replaceAll(service.auth, DEFAULTS.auth)
    .replaceAll(configDirectory, DOCUMENTED_CONFIG);
}

/** Values that differ on every run, by kind; table padding dropped. Applied to both sides. */
function normalize(text: string): string {
  return text
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<time>')
    .replace(/eyJ[\w-]+\.[\w-]+\.[\w-]+/g, '<jwt>')
    .replace(/scenario-[0-9a-z]{26}/g, 'scenario-<id>')
    .replace(/(?<![0-9A-Za-z])[0-9A-HJKMNP-TV-Z]{26}(?![0-9A-Za-z])/g, '<ulid>')
    .replace(/(?<![0-9a-f])[0-9a-f]{64}(?![0-9a-f])/g, '<sha256>')
    .replace(/(?<![\w-])[\w-]{43}(?![\w-])/g, '<secret>')
    .replace(/"[\w-]{22}"/g, '"<etag>"')
    .replace(/"size":\d+/g, '"size":<bytes>')
    .replace(/\(\d[\d,]* bytes\)/g, '(<bytes> bytes)')
    .replace(/127\.0\.0\.1:(?!300[012]\b)\d+/g, '127.0.0.1:<port>')
    .replace(/─+/g, '─')
    .replace(/ {2,}/g, ' ')
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .trim();
}

/** Whether `actual` is what `expected` shows, `…` standing for any text within a line. */
function matches(expected: string, actual: string): boolean {
  const wanted = normalize(expected);
  if (!wanted.includes('…')) return wanted === normalize(actual);
  const pattern = wanted
    .split('…')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('[^\\n]*');
  return new RegExp(`^${pattern}$`).test(normalize(actual));
}

/** A read-only command: sent again while its answer, derived from an earlier write, is not there yet. */
function isRead(command: string): boolean {
  if (/-X *(POST|PUT|DELETE)|-F |(^| )-d |--data/.test(command)) return false;
  return /^curl /.test(command) || /^npx dss (search|filters|deployments|history|scenarios|usage|whoami)\b/.test(command);
}

/** Printed around a command's exit code after its output, to tell where the output ends. */
const MARK = '<<docs-step>>';
const DONE = /<<docs-step>>\d+<<docs-step>>$/;

/** A bash session that keeps its variables and folder from one command to the next, as a terminal does. */
class Session {
  private readonly child: ChildProcess;
  private output = '';
  private waiting: (() => void) | undefined;

  constructor(directory: string) {
    // Commands arrive on fd 3, NUL-terminated; each one's stdin is /dev/null, its stderr joins its stdout.
    const loop = [
      `npx() { if [ "$1" = dss ]; then shift; node ${JSON.stringify(join(root, 'bin/dss.mjs'))} "$@"; else command npx "$@"; fi; }`,
      `while IFS= read -r -d '' __command <&3; do eval "$__command" </dev/null 2>&1; printf '${MARK}%d${MARK}' "$?"; done`,
    ].join('\n');
    const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('DSS_')));
    this.child = spawn('bash', ['--noprofile', '--norc', '-c', loop], {
      cwd: directory,
      env: {
        ...inherited,
        // The CLI's default addresses are the documents'; the test's service listens elsewhere.
        DSS_BASE_URL: service.api,
        DSS_UPLOAD_URL: service.upload,
        DSS_AUTH_URL: service.auth,
        DSS_CONFIG_DIR: configDirectory,
        NODE_NO_WARNINGS: '1',
        COLUMNS: '200',
      },
      stdio: ['ignore', 'pipe', 'inherit', 'pipe'],
    });
    this.child.stdout!.on('data', (chunk: Buffer) => {
      this.output += chunk.toString();
      this.waiting?.();
    });
  }

  async run(command: string): Promise<string> {
    this.output = '';
    const done = new Promise<void>((resolveDone) => {
      this.waiting = () => {
        if (DONE.test(this.output)) resolveDone();
      };
    });
    (this.child.stdio[3] as Writable).write(`${command}\0`);
    await done;
    return this.output.replace(DONE, '');
  }

  close(): void {
    this.child.kill();
  }
}

/** Runs one document's console blocks in a session of its own; answers the mismatches (or rewrites the document). */
async function runDocument(document: string): Promise<string[]> {
  const path = join(root, document);
  const text = await readFile(path, 'utf8');
  const blocks = consoleBlocks(text);
  const commands = blocks.flatMap((block) => block.steps.map((step) => step.command));
  for (const required of REQUIRED[document] ?? []) {
    expect(
      commands.some((command) => required.test(command.replace(/\\\n\s*/g, ' '))),
      `${document} no longer shows a command matching ${required}`,
    ).toBe(true);
  }
  const session = new Session(workDirectory);
  const mismatches: string[] = [];
  const lines = text.split('\n');
  try {
    for (const block of blocks) {
      for (const step of block.steps) {
        const expected = step.expected.join('\n');
        // Rewriting the documents, a read waits for what it derives from rather than for an answer to compare with.
        if (UPDATE && isRead(step.command)) await new Promise((done) => setTimeout(done, 2_000));
        let actual = asDocumented(await session.run(toService(step.command)));
        const deadline = Date.now() + 15_000;
        while (!UPDATE && !matches(expected, actual) && isRead(step.command) && Date.now() < deadline) {
          await new Promise((done) => setTimeout(done, 250));
          actual = asDocumented(await session.run(toService(step.command)));
        }
        if (UPDATE) step.expected = actual === '' ? [] : actual.replace(/\n+$/, '').split('\n');
        if (!UPDATE && !matches(expected, actual)) {
          mismatches.push(`${document}: $ ${step.command}\n--- shown ---\n${expected}\n--- answered ---\n${actual}`);
        }
      }
    }
  } finally {
    session.close();
  }
  if (UPDATE) {
    for (const block of [...blocks].reverse()) {
      const body = block.steps.flatMap((step) => [`$ ${step.command}`, ...step.expected]);
      lines.splice(block.start, block.end - block.start, ...body);
    }
    await writeFile(path, lines.join('\n'));
  }
  return mismatches;
}

/** The block under "`npm start` prints" in the README: the start banner. */
function documentedBanner(readme: string): string {
  const start = readme.indexOf('```\n', readme.indexOf('`npm start` prints')) + 4;
  return readme.slice(start, readme.indexOf('```', start));
}

describe.skipIf(MISSING_TOOLS.length > 0)(
  `the documented walkthrough, run against npm start${MISSING_TOOLS.length > 0 ? ` (skipped: ${MISSING_TOOLS.join(', ')} not installed)` : ''}`,
  () => {
    it('prints the start banner the README shows', async () => {
      // On other ports than the defaults, the banner's CLI line also names the addresses; the README shows the defaults.
      const output = asDocumented(service.output()).replace(/ --base-url \S+ --upload-url \S+ --auth-url \S+/, '');
      const banner = output.slice(output.indexOf('Device scenario service is up'), output.indexOf('READY') + 'READY'.length);
      const started = (text: string) => normalize(text).replace(/\(\d+\.\d s, \d+ documents indexed\)/, '(<time to start>)');
      expect(started(banner)).toBe(started(documentedBanner(await readFile(join(root, 'README.md'), 'utf8'))));
    });

    it('answers the README taste as shown', async () => {
      expect(await runDocument('README.md')).toEqual([]);
    }, 120_000);

    it('answers every command of docs/walkthrough.md as shown', async () => {
      expect(await runDocument('docs/walkthrough.md')).toEqual([]);
    }, 600_000);
  },
);
