/**
 * A real OpenSearch node on this machine, for `npm run opensearch`, `SEARCH_ENGINE=opensearch npm start`, the
 * OpenSearch contract and parity tests and the OpenSearch bench: the pinned artifacts of `opensearch/pom.xml`
 * fetched by Maven (checksums verified, `-C`), the small launcher `opensearch/EmbeddedOpenSearch.java` compiled once,
 * both cached outside the repository (CACHE_ROOT) and reused without Maven or the network once there.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { javaTool } from './java.js';

/** The folder of the pom, the launcher's source and its log4j2 configuration. */
const SOURCES = join(dirname(fileURLToPath(import.meta.url)), 'opensearch');
const POM = join(SOURCES, 'pom.xml');
const LAUNCHER = join(SOURCES, 'EmbeddedOpenSearch.java');
const LOG4J = join(SOURCES, 'log4j2.properties');

/** Heap of the node, MiB, unless the caller says otherwise (`-Xms` = `-Xmx`, as OpenSearch recommends). */
export const DEFAULT_HEAP_MIB = 512;
/** How long a node may take from launch to a yellow cluster, ms (about 5 s here; a cold JVM on a busy CI machine more). */
const START_TIMEOUT_MS = 120_000;
/** How long stop() waits for the node to close before SIGKILL, ms. */
const STOP_TIMEOUT_MS = 20_000;
/** Prefix of the temporary folders of nodes started without a data folder: `<prefix><pid>-<random>`. */
const TEMPORARY_PREFIX = 'dss-opensearch-';

/** A running node. */
export interface OpenSearchNode {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** The OpenSearch version it runs (the pom's `opensearch.version`). */
  version: string;
  /** Heap, MiB. */
  heapMiB: number;
  /** The JVM's process id. */
  pid: number;
  /** Resolves when the JVM has exited, whether stop() asked it to or not. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Closes the node (SIGKILL after STOP_TIMEOUT_MS), waits for the JVM's exit and removes a temporary data folder. */
  stop(): Promise<void>;
}

/** Options of startOpenSearchNode. */
export interface OpenSearchNodeOptions {
  /** Folder kept across starts (created if missing); without it the node runs on a temporary folder removed at stop. */
  dataDirectory?: string;
  /** @default DEFAULT_HEAP_MIB */
  heapMiB?: number;
  /** HTTP port on 127.0.0.1. @default 0 (one the system picks) */
  port?: number;
  /** Progress (the first fetch through Maven) and the node's warnings and errors. */
  log?: (message: string) => void;
}

/** What prepareOpenSearch leaves in the cache: enough to launch a node without Maven. */
export interface PreparedOpenSearch {
  version: string;
  /** The `-cp` of the JVM: the compiled launcher's folder, then every resolved jar. */
  classpath: string;
  /** The log4j2 configuration file. */
  log4jConfiguration: string;
}

/** Where prepared nodes are cached: `$XDG_CACHE_HOME/dss` or `~/.cache/dss`, outside any checkout. */
function cacheRoot(): string {
  return join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'dss');
}

/** The OpenSearch version the pom pins. @throws Error when the pom names none */
async function pinnedVersion(pom: string): Promise<string> {
  const version = /<opensearch\.version>([^<]+)<\/opensearch\.version>/.exec(pom)?.[1];
  if (version === undefined) throw new Error(`${POM} names no <opensearch.version>.`);
  return version;
}

/** Runs a command to its end: its exit code and its output (stdout and stderr together, the last 8,000 characters). */
function run(command: string, args: readonly string[]): Promise<{ code: number | null; output: string; error?: Error }> {
  return new Promise((done) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const append = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-8_000);
    };
    child.stdout.on('data', append);
    child.stderr.on('data', append);
    child.once('error', (error) => done({ code: null, output, error }));
    child.once('close', (code) => done({ code, output }));
  });
}

/** Whether every entry of a cached classpath file still exists (Maven's local repository may have been cleaned). */
async function cachedClasspath(file: string): Promise<string | undefined> {
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined || text.trim() === '') return undefined;
  const jars = text.trim().split(':');
  return jars.every((jar) => existsSync(jar)) ? text.trim() : undefined;
}

/**
 * Resolves the pom's artifacts through Maven (`mvn -B -C dependency:build-classpath`: strict checksums, Maven's local
 * repository as the download cache) and compiles the launcher with `javac`, once per version of those three files
 * (the cache folder's name carries their hash); later calls read the cache and need neither Maven nor the network.
 * @throws Error in one line naming the Debian package when `java`, `javac` or `mvn` is missing; with Maven's output
 *   when the resolution fails (no network and nothing cached, say).
 */
export function prepareOpenSearch(log: (message: string) => void = () => undefined): Promise<PreparedOpenSearch> {
  // One preparation per process (two test projects' setups start nodes at once); a failed one may be tried again.
  preparing ??= prepare(log).catch((error: unknown) => {
    preparing = undefined;
    throw error;
  });
  return preparing;
}

/** The preparation under way or done in this process. */
let preparing: Promise<PreparedOpenSearch> | undefined;

/** prepareOpenSearch's work. */
async function prepare(log: (message: string) => void): Promise<PreparedOpenSearch> {
  const java = javaTool('java', 'The OpenSearch node');
  const [pom, launcher, log4j] = await Promise.all([readFile(POM, 'utf8'), readFile(LAUNCHER, 'utf8'), readFile(LOG4J, 'utf8')]);
  const version = await pinnedVersion(pom);
  const hash = createHash('sha256').update(pom).update('\0').update(launcher).update('\0').update(log4j).update('\0').update(java);
  const folder = join(cacheRoot(), `opensearch-${version}-${hash.digest('hex').slice(0, 12)}`);
  const classpathFile = join(folder, 'classpath.txt');
  const classes = join(folder, 'classes');
  const log4jConfiguration = join(folder, 'log4j2.properties');

  let jars = await cachedClasspath(classpathFile);
  if (jars !== undefined && existsSync(join(classes, 'EmbeddedOpenSearch.class')) && existsSync(log4jConfiguration)) {
    return { version, classpath: `${classes}:${jars}`, log4jConfiguration };
  }
  const javac = javaTool('javac', 'The OpenSearch node');
  await mkdir(folder, { recursive: true });
  if (jars === undefined) {
    log(`Fetching OpenSearch ${version} through Maven (once; cached in ${folder} and Maven's local repository)…`);
    const partial = `${classpathFile}.${randomUUID()}.tmp`;
    const maven = await run(process.env.MAVEN_COMMAND || 'mvn', [
      '-B',
      '-q',
      '-C',
      '-Dstyle.color=never',
      '-f',
      POM,
      'dependency:build-classpath',
      `-Dmdep.outputFile=${partial}`,
    ]);
    if (maven.error !== undefined) {
      throw new Error('The OpenSearch node is fetched by Maven: install it (`apt-get install maven`) or put `mvn` on the PATH.');
    }
    if (maven.code !== 0)
      throw new Error(`Maven could not resolve OpenSearch ${version} (mvn exited with ${maven.code}):\n${maven.output}`);
    await rename(partial, classpathFile);
    jars = await cachedClasspath(classpathFile);
    if (jars === undefined) throw new Error(`Maven wrote no usable classpath for OpenSearch ${version} in ${classpathFile}.`);
  }
  // Compiled into a fresh folder, then renamed: a concurrent preparation never sees half a build.
  const building = `${classes}.${randomUUID()}.tmp`;
  await rm(building, { recursive: true, force: true });
  const compiled = await run(javac, ['-d', building, '-cp', jars, LAUNCHER]);
  if (compiled.code !== 0) throw new Error(`javac could not compile ${LAUNCHER}:\n${compiled.output}`);
  await rm(classes, { recursive: true, force: true });
  await rename(building, classes).catch(async (error: NodeJS.ErrnoException) => {
    // Another process renamed its build first: theirs is the same.
    if (!existsSync(join(classes, 'EmbeddedOpenSearch.class'))) throw error;
    await rm(building, { recursive: true, force: true });
  });
  const configuration = `${log4jConfiguration}.${randomUUID()}.tmp`;
  await writeFile(configuration, log4j);
  await rename(configuration, log4jConfiguration);
  return { version, classpath: `${classes}:${jars}`, log4jConfiguration };
}

/** Whether a process with this id runs (signal 0 checks without sending). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes the temporary folders of earlier nodes whose starting process is gone (one killed before its stop). */
function pruneAbandonedFolders(): void {
  for (const name of readdirSync(tmpdir())) {
    const pid = Number(name.startsWith(TEMPORARY_PREFIX) ? name.slice(TEMPORARY_PREFIX.length).split('-')[0] : Number.NaN);
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && !alive(pid))
      rmSync(join(tmpdir(), name), { recursive: true, force: true });
  }
}

/**
 * Reads the JVM's standard output until its `http=<host>:<port>` line.
 * @throws Error with the node's last output when it exits first or START_TIMEOUT_MS passes
 */
function boundAddress(jvm: ChildProcess, output: () => string): Promise<string> {
  return new Promise((done, fail) => {
    const timer = setTimeout(
      () => fail(new Error(`The OpenSearch node did not start within ${START_TIMEOUT_MS / 1000} s:\n${output()}`)),
      START_TIMEOUT_MS,
    );
    const lines = createInterface({ input: jvm.stdout as NodeJS.ReadableStream });
    lines.on('line', (line) => {
      const address = /^http=(.+)$/.exec(line)?.[1];
      if (address === undefined) return;
      clearTimeout(timer);
      lines.close();
      done(address);
    });
    jvm.once('exit', (code, signal) => {
      clearTimeout(timer);
      fail(new Error(`The OpenSearch node exited while starting (${signal ?? `code ${code}`}):\n${output()}`));
    });
  });
}

/**
 * Waits until the node's cluster is at least yellow (`GET /_cluster/health?wait_for_status=yellow`).
 * @throws Error when it is not within START_TIMEOUT_MS
 */
async function waitUntilYellow(url: string): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    const response = await fetch(`${url}/_cluster/health?wait_for_status=yellow&timeout=10s`).catch(() => undefined);
    if (response?.ok && !((await response.json()) as { timed_out?: boolean }).timed_out) return;
    if (Date.now() > deadline)
      throw new Error(`The OpenSearch node on ${url} did not report a yellow cluster within ${START_TIMEOUT_MS / 1000} s.`);
    await new Promise((next) => setTimeout(next, 250));
  }
}

/** The folders a node runs in: `root` (data and home), and the temporary one to remove at stop, if any. */
interface NodeFolders {
  root: string;
  home: string;
  temporary?: string;
}

/** Creates the node's folders: in `dataDirectory`, or in a new temporary folder (TEMPORARY_PREFIX). */
async function nodeFolders(dataDirectory: string | undefined): Promise<NodeFolders> {
  const temporary = dataDirectory === undefined ? await mkdtemp(join(tmpdir(), `${TEMPORARY_PREFIX}${process.pid}-`)) : undefined;
  const root = dataDirectory ?? (temporary as string);
  const home = join(root, 'home');
  await mkdir(join(home, 'tmp'), { recursive: true });
  await mkdir(join(root, 'data'), { recursive: true });
  return { root, home, ...(temporary === undefined ? {} : { temporary }) };
}

/**
 * Launches the launcher's JVM with `heapMiB` of heap on `port` (0: any), in its own process group (so that Ctrl+C
 * in a terminal reaches only this process, whose stop() closes the node).
 */
function launchJvm(java: string, prepared: PreparedOpenSearch, folders: NodeFolders, heapMiB: number, port: number): ChildProcess {
  return spawn(
    java,
    [
      `-Xms${heapMiB}m`,
      `-Xmx${heapMiB}m`,
      '-XX:+UseG1GC',
      '-Djava.awt.headless=true',
      '-Dfile.encoding=UTF-8',
      `-Djava.io.tmpdir=${join(folders.home, 'tmp')}`,
      `-Dlog4j2.configurationFile=${prepared.log4jConfiguration}`,
      '-Dlog4j2.disable.jmx=true',
      '-cp',
      prepared.classpath,
      'EmbeddedOpenSearch',
      folders.home,
      join(folders.root, 'data'),
      String(port),
    ],
    { stdio: ['pipe', 'pipe', 'pipe'], detached: true },
  );
}

/**
 * Keeps the JVM's last 4,000 characters of standard error (for a failed start's message) and, once `started()` is
 * called, logs each of its lines.
 */
function watchStandardError(jvm: ChildProcess, log: (message: string) => void): { output(): string; started(): void } {
  let output = '';
  let started = false;
  const stderr = createInterface({ input: jvm.stderr as NodeJS.ReadableStream });
  stderr.on('line', (line) => {
    output = `${output}${line}\n`.slice(-4_000);
    if (started) log(`OpenSearch: ${line}`);
  });
  return {
    output: () => output,
    started: () => {
      started = true;
    },
  };
}

/** A node whose JVM is up: its stop closes it (standard input's end), SIGKILL after STOP_TIMEOUT_MS. */
function runningNode(
  jvm: ChildProcess,
  details: { url: string; version: string; heapMiB: number },
  exited: OpenSearchNode['exited'],
  release: () => Promise<void>,
  log: (message: string) => void,
): OpenSearchNode {
  let stopping = false;
  let stopped: Promise<void> | undefined;
  void exited.then((status) => {
    if (!stopping) log(`The OpenSearch node on ${details.url} exited unexpectedly (${status.signal ?? `code ${status.code}`}).`);
  });
  return {
    ...details,
    pid: jvm.pid as number,
    exited,
    stop() {
      stopped ??= (async () => {
        stopping = true;
        jvm.stdin?.end();
        const timer = setTimeout(() => jvm.kill('SIGKILL'), STOP_TIMEOUT_MS);
        await exited;
        clearTimeout(timer);
        await release();
      })();
      return stopped;
    },
  };
}

/**
 * Starts one OpenSearch node (the pinned 2.19 version, with the HTTP transport and the common analysis plugin) in a
 * JVM of `heapMiB` MiB, bound to 127.0.0.1 only, and waits until it answers with a yellow cluster. The JVM stops with
 * this process however it ends (it reads its standard input, held by this process, and closes the node at its end:
 * SIGKILL of this process included); it runs in its own process group, so Ctrl+C in a terminal reaches only this
 * process, whose stop() closes it.
 * @throws Error naming the Debian package when Java 17, `javac` or Maven is missing; with the node's output when it
 *   does not start.
 */
export async function startOpenSearchNode(options: OpenSearchNodeOptions = {}): Promise<OpenSearchNode> {
  const log = options.log ?? (() => undefined);
  const heapMiB = options.heapMiB ?? DEFAULT_HEAP_MIB;
  const prepared = await prepareOpenSearch(log);
  const java = javaTool('java', 'The OpenSearch node');
  pruneAbandonedFolders();
  const folders = await nodeFolders(options.dataDirectory);
  const { temporary } = folders;
  const jvm = launchJvm(java, prepared, folders, heapMiB, options.port ?? 0);
  const stderr = watchStandardError(jvm, log);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    jvm.once('exit', (code, signal) => done({ code, signal })),
  );
  // An ordinary exit of this process ends the JVM's standard input too; SIGKILL here frees the port at once.
  const killOnExit = () => {
    jvm.kill('SIGKILL');
    if (temporary !== undefined) rmSync(temporary, { recursive: true, force: true });
  };
  process.once('exit', killOnExit);
  const release = async () => {
    process.off('exit', killOnExit);
    if (temporary !== undefined) await rm(temporary, { recursive: true, force: true });
  };

  let url: string;
  try {
    url = `http://${await boundAddress(jvm, stderr.output)}`;
    await waitUntilYellow(url);
  } catch (error) {
    jvm.kill('SIGKILL');
    await exited;
    await release();
    throw error;
  }
  stderr.started();
  return runningNode(jvm, { url, version: prepared.version, heapMiB }, exited, release, log);
}
