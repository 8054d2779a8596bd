/**
 * End-to-end harness: runs `bin/local.ts` (what `npm start` runs) as a child process on free ports with a
 * temporary data folder, and offers the typed client on it (`clientFor`) plus `call` for hand-built requests. Both
 * check every answer of the service against its route definition. Every test file stops what it starts: a file that
 * needs one service for all its tests calls `useLocalService`, which starts it before the first test and stops it
 * (and removes its data folder) after the last.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Middleware } from 'openapi-fetch';
import { afterAll, beforeAll, expect, inject } from 'vitest';
import { retryDelay } from '../../client/deployment-batch.js';
import { createDssClient, type DssClient, expectOk, type ProblemBody, requestClientCredentialsToken } from '../../client/index.js';
import type { ApiName } from '../../functions/contract/route.js';
import { matchRoute, ROUTES } from '../../functions/contract/routes.js';
import { freePort } from '../../functions/local/free-port.js';
import { expectDocumented } from './contract.js';

/**
 * The search settings of a service started in the `e2e-opensearch` project (SEARCH_ENGINE=opensearch in its
 * environment): the project's one OpenSearch node, and an index of the service's own, named after its main port, so
 * that services side by side never share one and a restart on the same settings finds its own again. None elsewhere.
 */
function searchEnvironment(settings: ServiceSettings): Record<string, string> {
  if (process.env.SEARCH_ENGINE !== 'opensearch' || process.env.OPENSEARCH_URL) return {};
  return { OPENSEARCH_URL: inject('opensearchUrl'), OPENSEARCH_INDEX: `e2e-${settings.ports.api}` };
}

/** The addresses (`host:port`) of the services started here, and which API each serves: `call` checks their answers. */
const ADDRESSES = new Map<string, ApiName>();

const root = resolve(import.meta.dirname, '../..');

/** A running local service. */
export interface LocalService {
  /** Process id of `bin/local.ts` (benchmarks read its peak RSS from /proc). */
  pid: number;
  api: string;
  upload: string;
  auth: string;
  dataDirectory: string;
  /** Everything the process printed (stdout and stderr). */
  output(): string;
  /** Stops the process (SIGTERM, then SIGKILL after StartOptions.stopGraceMs). */
  stop(): Promise<void>;
}

/** Ports and data folder of one service instance; reuse them to restart "the same" service. */
export interface ServiceSettings {
  dataDirectory: string;
  ports: { api: number; upload: number; auth: number };
}

/** Allocates free ports and a fresh temporary data folder. */
export async function newServiceSettings(): Promise<ServiceSettings> {
  return {
    dataDirectory: await mkdtemp(join(tmpdir(), 'dss-e2e-')),
    ports: { api: await freePort(), upload: await freePort(), auth: await freePort() },
  };
}

/** How a test or benchmark starts `bin/local.ts` (startService). */
export interface StartOptions {
  /** Added to the child's environment (e.g. DYNAMODB_PORT). */
  environment?: Record<string, string>;
  /** More `--import` modules, loaded after tsx (e.g. a benchmark probe). */
  imports?: string[];
  /** How long to wait for READY, ms. @default 90_000 */
  readyTimeoutMs?: number;
  /** How long `stop` waits after SIGTERM before SIGKILL, ms. @default 10_000 */
  stopGraceMs?: number;
}

/**
 * Starts `bin/local.ts` and resolves once it prints READY. On a start that fails or times out, the child is stopped
 * (SIGTERM first, so that it stops its DynamoDB Local) and the error carries everything it printed.
 */
export async function startService(settings: ServiceSettings, options: StartOptions = {}): Promise<LocalService> {
  const readyTimeoutMs = options.readyTimeoutMs ?? 90_000;
  const stopGraceMs = options.stopGraceMs ?? 10_000;
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', ...(options.imports ?? []).flatMap((module) => ['--import', module]), join(root, 'bin/local.ts')],
    {
      cwd: root,
      env: {
        ...process.env,
        ...searchEnvironment(settings),
        ...options.environment,
        API_PORT: String(settings.ports.api),
        UPLOAD_PORT: String(settings.ports.upload),
        AUTH_PORT: String(settings.ports.auth),
        DATA_DIR: settings.dataDirectory,
        POWERTOOLS_LOG_LEVEL: 'CRITICAL',
        NODE_NO_WARNINGS: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), stopGraceMs);
      await exited;
      clearTimeout(timer);
    }
  };
  const deadline = Date.now() + readyTimeoutMs;
  while (!output.includes('READY')) {
    if (child.exitCode !== null) throw new Error(`bin/local.ts exited with ${child.exitCode}:\n${output}`);
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`bin/local.ts did not print READY within ${readyTimeoutMs / 1000} s:\n${output}`);
    }
    await new Promise((done) => setTimeout(done, 100));
  }
  if (child.pid === undefined) throw new Error('bin/local.ts has no pid');
  ADDRESSES.set(`127.0.0.1:${settings.ports.api}`, 'main');
  ADDRESSES.set(`127.0.0.1:${settings.ports.upload}`, 'upload');
  ADDRESSES.set(`127.0.0.1:${settings.ports.auth}`, 'auth');
  return {
    pid: child.pid,
    api: `http://127.0.0.1:${settings.ports.api}`,
    upload: `http://127.0.0.1:${settings.ports.upload}`,
    auth: `http://127.0.0.1:${settings.ports.auth}`,
    dataDirectory: settings.dataDirectory,
    output: () => output,
    stop,
  };
}

/** Removes a data folder made by newServiceSettings. */
export async function removeDataDirectory(settings: ServiceSettings): Promise<void> {
  await rm(settings.dataDirectory, { recursive: true, force: true });
}

/** Demo credentials (docs/contract.md, "Local demo data"). */
export const DEMO_PASSWORDS = {
  alice: 'alice-demo-password',
  bob: 'bob-demo-password',
  olivia: 'olivia-demo-password',
  root: 'root-demo-password',
} as const;

/** A demo user's name. */
export type DemoUser = keyof typeof DEMO_PASSWORDS;

/** How useLocalService starts the file's service. */
export interface LocalServiceOptions<User extends DemoUser> extends StartOptions {
  /** Demo users whose access tokens are fetched once the service is up (LocalServiceFixture.tokens). */
  users?: readonly User[];
  /** Runs DynamoDB Local on a port picked here (DYNAMODB_PORT), for tests that read or write the tables directly. */
  ownDynamoDbPort?: boolean;
  /** Runs on the fresh data folder before the service starts (e.g. to leave tables of an older design there). */
  beforeStart?: (settings: ServiceSettings) => Promise<void>;
  /** Runs once the service has stopped, before its data folder is removed (e.g. to end what a failed test left running). */
  afterStop?: (settings: ServiceSettings) => Promise<void> | void;
  /** Timeout of the hooks that start and stop the service, ms. @default 120_000 */
  hookTimeoutMs?: number;
}

/** The service of a test file (useLocalService). Every member throws when read before the service has started. */
export interface LocalServiceFixture<User extends DemoUser> {
  readonly service: LocalService;
  readonly settings: ServiceSettings;
  /** Access tokens of the users named in LocalServiceOptions.users. */
  readonly tokens: Readonly<Record<User, string>>;
  /** Port of DynamoDB Local (LocalServiceOptions.ownDynamoDbPort). */
  readonly dynamoDbPort: number;
  /** `http://127.0.0.1:<dynamoDbPort>`. */
  readonly dynamoDbEndpoint: string;
  /**
   * Starts the service again on the same ports and data folder, after the test stopped or killed it (stopped here
   * first when it still runs); `service` is the new one from then on, and the tokens are fetched again. When a port
   * was taken meanwhile (EADDRINUSE), on new ports: `service` and `settings` name them.
   */
  restart(): Promise<LocalService>;
}

/**
 * One local service for all the tests of a file: registers a `beforeAll` that starts `bin/local.ts` on free ports and
 * a fresh data folder (and fetches the demo users' tokens), and an `afterAll` that stops it and removes the folder.
 * Call it at the top level of the file, before the file's own hooks: those then run after the start and before the
 * stop (Vitest runs `afterAll` hooks in the reverse order of their registration).
 */
export function useLocalService<User extends DemoUser = never>(options: LocalServiceOptions<User> = {}): LocalServiceFixture<User> {
  const { users = [], ownDynamoDbPort = false, beforeStart, afterStop, hookTimeoutMs = 120_000, ...start } = options;
  let settings: ServiceSettings | undefined;
  let service: LocalService | undefined;
  let dynamoDbPort: number | undefined;
  let tokens: Record<User, string> | undefined;

  const started = async (): Promise<LocalService> => {
    const environment = { ...start.environment, ...(dynamoDbPort === undefined ? {} : { DYNAMODB_PORT: String(dynamoDbPort) }) };
    const running = await startService(settings as ServiceSettings, { ...start, environment });
    service = running;
    const fetched = await Promise.all(users.map((user) => tokenFor(running, user)));
    tokens = Object.fromEntries(users.map((user, index) => [user, fetched[index]])) as Record<User, string>;
    return running;
  };
  beforeAll(async () => {
    settings = await newServiceSettings();
    if (ownDynamoDbPort) dynamoDbPort = await freePort();
    await beforeStart?.(settings);
    await started();
  }, hookTimeoutMs);
  afterAll(async () => {
    await service?.stop();
    if (settings === undefined) return;
    await afterStop?.(settings);
    await removeDataDirectory(settings);
  }, hookTimeoutMs);

  const ready = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`${what} is read before useLocalService's beforeAll has started the service`);
    return value;
  };
  return {
    get service() {
      return ready(service, 'service');
    },
    get settings() {
      return ready(settings, 'settings');
    },
    get tokens() {
      return ready(tokens, 'tokens');
    },
    get dynamoDbPort() {
      if (!ownDynamoDbPort) throw new Error('dynamoDbPort is only known with useLocalService({ ownDynamoDbPort: true })');
      return ready(dynamoDbPort, 'dynamoDbPort');
    },
    get dynamoDbEndpoint() {
      return `http://127.0.0.1:${this.dynamoDbPort}`;
    },
    async restart() {
      await service?.stop();
      try {
        return await started();
      } catch (error) {
        // While this runtime was stopped, another test file's server may have been given one of its ports (freePort
        // draws at random): start on new ones rather than fail. The fixture's `service` names the new addresses.
        if (!(error instanceof Error) || !error.message.includes('EADDRINUSE')) throw error;
        const current = settings as ServiceSettings;
        settings = { ...current, ports: { api: await freePort(), upload: await freePort(), auth: await freePort() } };
        return started();
      }
    },
  };
}

/** Gets an access token for a demo user. @throws ApiError when the token endpoint does not answer 200. */
export async function tokenFor(service: LocalService, username: keyof typeof DEMO_PASSWORDS): Promise<string> {
  const dss = clientFor(service);
  return expectOk(await dss.auth.POST('/token', { body: { username, password: DEMO_PASSWORDS[username] } })).access_token;
}

/** Times a read refused by a busy address is sent again (readsAgainWhenRefused): about ten seconds at Retry-After's 1 s. */
const REFUSED_READ_RETRIES = 10;

/**
 * Sends a GET again, after its `Retry-After` (retryDelay, as the CLI and the console wait; at most REFUSED_READ_RETRIES
 * times), when the local runtime's admission control refused it unprocessed (503 "serving as many requests as it
 * admits", functions/local/http-gateway.ts), as a client honouring Retry-After does. On CI's two busy cores a test's polling read can wait past the queue's bound
 * while simulated kiosks load the runtime; that refusal is the runtime protecting itself, not what the test checks. A
 * 503 of a backend that is down says something else and is returned as it is, as is every other answer.
 */
const readsAgainWhenRefused: Middleware = {
  async onResponse({ request, response, options }) {
    let answer = response;
    for (let retry = 0; retry < REFUSED_READ_RETRIES && request.method === 'GET' && answer.status === 503; retry += 1) {
      const problem = (await answer
        .clone()
        .json()
        .catch(() => undefined)) as ProblemBody | undefined;
      if (!problem?.detail?.includes('as many requests as it admits')) break;
      await answer.body?.cancel();
      const waitMs = retryDelay(answer.headers.get('retry-after'), retry);
      // Visible in the test's output: a runtime that sheds load more than it should shows here before tests time out.
      console.warn(
        `${request.method} ${request.url} refused by the busy runtime (${retry + 1} of ${REFUSED_READ_RETRIES}); again in ${waitMs} ms.`,
      );
      await new Promise((done) => setTimeout(done, waitMs));
      answer = await options.fetch(request.clone());
    }
    return answer;
  },
};

/**
 * The typed client (client/index.ts) on a local service, sending `token` as the bearer token on the main and upload
 * addresses. Every answer, on all three addresses, must be one its route definition declares (expectDocumented on a
 * clone, so the client still reads the body), and every request must name a route of the address it is sent to. A
 * GET the busy runtime refuses unprocessed is sent again after its Retry-After (readsAgainWhenRefused); the answer
 * checked is the last one.
 */
export function clientFor(service: LocalService, token?: string): DssClient {
  const apis = new Map<string, ApiName>([
    [new URL(service.api).host, 'main'],
    [new URL(service.upload).host, 'upload'],
    [new URL(service.auth).host, 'auth'],
  ]);
  const documented: Middleware = {
    async onResponse({ request, response }) {
      const { host, pathname } = new URL(request.url);
      const api = apis.get(host);
      const found = api === undefined ? undefined : matchRoute(ROUTES, api, request.method, pathname);
      expect(
        found !== undefined && 'route' in found,
        `${request.method} ${request.url} is no route of the ${api ?? 'unknown'} address`,
      ).toBe(true);
      if (found !== undefined && 'route' in found) await expectDocumented(found.route.id, response.clone());
      return response;
    },
  };
  return createDssClient({
    baseUrl: service.api,
    uploadUrl: service.upload,
    authUrl: service.auth,
    ...(token === undefined ? {} : { token }),
    // openapi-fetch runs onResponse from the last middleware to the first: the retry's answer is the one checked.
    middleware: [documented, readsAgainWhenRefused],
  });
}

/** A JSON response: status, headers and parsed body (undefined when empty). */
export interface JsonResult<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/**
 * Asks for a device token with the client credentials grant, form-encoded as devices send it (RFC 6749 §4.4),
 * through the typed client.
 * @returns the openapi-fetch result: `data` (the token) on 200, the OAuth or problem `error` otherwise.
 */
export function deviceTokenRequest(service: LocalService, clientId: string, clientSecret: string) {
  return requestClientCredentialsToken(clientFor(service).auth, clientId, clientSecret);
}

/** What a typed-client call resolves to: the response and, by status, the parsed `data` (2xx) or `error` body. */
export interface TypedResult {
  response: Response;
  data?: unknown;
  error?: unknown;
}

/**
 * Asserts that a typed-client answer has `status` (not 2xx) with a problem+json body, and returns that body. The
 * client types `error` as the union of every documented error body; the contract check has already validated it
 * against the schema of its status.
 */
export function expectError(result: TypedResult, status: number): ProblemBody {
  expect(result.response.status, `unexpected status; body: ${JSON.stringify(result.error ?? result.data)}`).toBe(status);
  expect(result.response.headers.get('content-type') ?? '').toMatch(/^application\/problem\+json\b/);
  return result.error as ProblemBody;
}

/**
 * The status, headers and parsed body of either kind of answer (a `call` result, or a typed-client result whose body
 * is `data` on 2xx and `error` otherwise), for assertions shared by hand-built and typed requests.
 */
export function answerOf(result: JsonResult | TypedResult): JsonResult {
  if (!('response' in result)) return result;
  // openapi-fetch gives an empty error body as '', `call` as undefined.
  const body = result.response.ok ? result.data : result.error === '' ? undefined : result.error;
  return { status: result.response.status, headers: result.response.headers, body };
}

/**
 * Sends a hand-built request and parses the JSON (or problem+json) answer, checking it against its route definition
 * when it is one of the service's. For what the typed client (clientFor) cannot or must not send: malformed bodies,
 * wrong content types, missing or forged tokens, undocumented query parameters, raw presigned S3 URLs.
 */
export async function call<T = any>(
  url: string,
  options: {
    method?: string;
    token?: string;
    json?: unknown;
    body?: string | FormData | Uint8Array;
    headers?: Record<string, string>;
  } = {},
): Promise<JsonResult<T>> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  let body = options.body;
  if (options.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.json);
  }
  const method = options.method ?? (body === undefined ? 'GET' : 'POST');
  const response = await fetch(url, { method, headers, ...(body === undefined ? {} : { body }) });
  const text = await response.text();
  const result = { status: response.status, headers: response.headers, body: text === '' ? undefined : JSON.parse(text) };
  // Every answer of a route of the service must be one its route definition declares (status, headers, body).
  const { host, pathname } = new URL(url);
  const api = ADDRESSES.get(host);
  if (api !== undefined) {
    const found = matchRoute(ROUTES, api, method.toUpperCase(), pathname);
    if (found !== undefined && 'route' in found) await expectDocumented(found.route.id, result);
  }
  return result;
}

/**
 * Uploads an archive as the `payload` part of a multipart form, like `curl -F payload=@file.zip`, through the typed
 * client (ScenarioUpload).
 * @returns the openapi-fetch result: `data` (the stored version) on 201, the typed problem `error` otherwise.
 */
export function uploadArchive(service: LocalService, token: string, company: string, archive: Uint8Array, filename = 'scenario.zip') {
  return clientFor(service, token).upload.POST('/companies/{companyId}/resources/scenarios', {
    params: { path: { companyId: company } },
    // The document's `format: binary` part is typed as a string; the part is the archive, which FormData sends as a file.
    body: { payload: new Blob([archive], { type: 'application/zip' }) as unknown as string },
    bodySerializer: (body) => {
      const form = new FormData();
      form.append('payload', body.payload as unknown as Blob, filename);
      return form;
    },
  });
}

/** Whether process `pid` exists (signal 0 probes without signalling). */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Polls `check` every `intervalMs` (default 100 ms) until it returns true (default timeout 15 s): for what the streams
 * derive, or whatever else the service does in its own time.
 */
export async function eventually(check: () => Promise<boolean>, what: string, timeoutMs = 15_000, intervalMs = 100): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}.`);
    await new Promise((done) => setTimeout(done, intervalMs));
  }
}

/**
 * Waits (up to 30 s) until nothing answers on DynamoDB Local's port: after a runtime is killed (SIGKILL), its watchdog
 * ends DynamoDB Local with it, which must happen before a restart (another JVM on the same data folder would corrupt it).
 */
export async function dynamoDbLocalStopped(port: number): Promise<void> {
  await eventually(
    async () =>
      !(await fetch(`http://127.0.0.1:${port}`).then(
        () => true,
        () => false,
      )),
    'DynamoDB Local to stop',
    30_000,
  );
}
