/**
 * Search benchmark: 100,000 generated devices (60,000 acme + 40,000 globex, generateDemoDevices with a
 * bench seed, ids rewritten to `acme-bench-000001`…) in the embedded search engine.
 *
 * 1. Direct, in-process: builds an EmbeddedSearchIndex from the documents (upserts of ~340 documents, the size of a
 *    1 MB scan page, as rebuildSearchIndex does), reports build time and heap/RSS growth, then times (a) a two-field
 *    filtered, sorted second page, (b) `global` queries (terms round-robin) through searchResources, (c) the filter
 *    counts through describeFilters (fake CompanyRepository); principal olivia (acme, globex; search:read).
 * 2. Over HTTP: starts bin/local.ts on free ports, a temporary DATA_DIR and a fixed DYNAMODB_PORT (creates the tables
 *    and the demo data), stops it, starts DynamoDB Local alone on the same data folder and BatchWrites the 100,000
 *    device items (25 per call, 16 in parallel) as DynamoDbDeviceRepository.put writes them, stops it, then starts
 *    the runtime again so that the index is rebuilt from the scan at start (timed: the HTTP-side index build), reads
 *    its VmRSS/VmHWM, gets olivia's token and times the same three requests with a keep-alive node:http agent.
 * 3. Prints tables and goal verdicts; stops the runtime and deletes the data folder.
 */
import { spawn } from 'node:child_process';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { searchDocumentFromItem } from '../../functions/adapters/aws/search-documents.js';
import { EmbeddedSearchIndex } from '../../functions/adapters/embedded/search-engine.js';
import { search } from '../../functions/contract/routes/search.js';
import type { Device } from '../../functions/core/devices/model.js';
import type { SearchDocument } from '../../functions/core/search/documents.js';
import { describeFilters, searchResources } from '../../functions/core/search/service.js';
import type { Company, CompanyRepository } from '../../functions/core/shared/companies.js';
import type { Principal } from '../../functions/core/shared/principal.js';
import { DEMO_COMPANIES } from '../../functions/local/demo-data.js';
import { generateDemoDevices } from '../../functions/local/demo-fleet.js';
import { startDynamoDbLocal } from '../../functions/local/dynamodb-local.js';
import { freePort } from '../../functions/local/free-port.js';
import { localDocumentClient, seedDevices } from '../e2e/fleet.js';
import { newServiceSettings, removeDataDirectory, type ServiceSettings, startService, tokenFor } from '../e2e/harness.js';
import { queryOf } from '../support/route-input.js';
import { cpuWindow, javaChildOf, waitForIdle } from './deployments.js';
import { memoryOf, mib, type RunningService } from './presigned.js';

/** SEARCH_BENCH_DEVICES=N scales the fleet (default 100,000; 60 % acme, 40 % globex). */
export const SEARCH_DEVICE_COUNT = Number(process.env.SEARCH_BENCH_DEVICES ?? 100_000);
const TOTAL = SEARCH_DEVICE_COUNT;
const SPLIT: [string, number][] = [
  ['acme', Math.round(TOTAL * 0.6)],
  ['globex', TOTAL - Math.round(TOTAL * 0.6)],
];
const SEED = 5_005;
const SCAN_PAGE = 340;
export const GOALS = { searchP50: 15, searchP99: 40, filtersP50: 30, overhead: 1.3 };

export const QUERY_A =
  'connection.state=DISCONNECTED&connection.state=UNKNOWN&health.mode=EMBEDDED_PLATFORM_ANDROID&sort=updated&direction=DESC&page=2&pageSize=20';
export const GLOBAL_TERMS = ['printer', 'Lyon', 'Amsterdam'];
export const OLIVIA: Principal = {
  subject: 'olivia',
  companies: ['acme', 'globex'],
  scopes: new Set(['scenarios:read', 'deployments:read', 'search:read']),
};

export interface SearchBenchOptions {
  /** Measured iterations per query (default 300). */
  iterations?: number;
  warmup?: number;
}

export interface Stats {
  p50: number;
  p99: number;
  mean: number;
  max: number;
  n: number;
}
export interface QueryMeasure {
  name: string;
  direct: Stats;
  http?: Stats;
  directSerializeMs?: number;
  responseBytes?: number;
  /** The same request to a bare node:http server in another process answering as many bytes: the transport floor. */
  bare?: Stats;
  /** CPU time per HTTP request during the measured loop, ms: runtime (node), DynamoDB Local, this process, the rest. */
  httpCpuPerRequest?: { runtime: number; dynamo: number; bench: number; other: number; steal: number };
  /** CPU time of this process per direct query, ms. */
  directCpuPerQuery?: number;
}

export interface SearchBenchResult {
  devices: number;
  generateMs: number;
  direct: { buildMs: number; heapGrowthBytes: number; rssGrowthBytes: number; heapAfterBytes: number; documents: number };
  http?: {
    firstStartMs: number;
    seedMs: number;
    restartMs: number;
    indexedDocuments: number;
    rssBytes: number;
    hwmBytes: number;
    idleRssBytes?: number;
  };
  queries: QueryMeasure[];
  httpError?: string;
  notes: string[];
}

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

export function stats(samples: number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (fraction: number) => sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)] as number;
  return {
    p50: at(0.5),
    p99: at(0.99),
    mean: samples.reduce((a, b) => a + b, 0) / samples.length,
    max: sorted.at(-1) as number,
    n: samples.length,
  };
}

export async function timeLoop(iterations: number, warmup: number, body: (index: number) => Promise<unknown>): Promise<Stats> {
  for (let index = 0; index < warmup; index += 1) await body(index);
  const samples: number[] = [];
  for (let index = 0; index < iterations; index += 1) {
    const started = performance.now();
    await body(index);
    samples.push(performance.now() - started);
  }
  return stats(samples);
}

/** The search route's validated parameters of a query string, as the handler passes them to the use case. */
export const pairs = (query: string) => queryOf(search, [...new URLSearchParams(query).entries()]);
/** No filter selected: the filter descriptors of the whole fleet. */
export const NO_FILTERS = { filters: new Map<string, string[]>(), companies: [] };

/** The 100,000 bench devices; every occurrence of the generated id (hub uids embed it) is rewritten. */
export function benchDevices(): Device[] {
  const devices: Device[] = [];
  for (const [companyId, count] of SPLIT) {
    const company = DEMO_COMPANIES.find((candidate) => candidate.id === companyId);
    if (company === undefined) throw new Error(`no demo company ${companyId}`);
    generateDemoDevices(company, count, SEED).forEach((device, index) => {
      const id = `${companyId}-bench-${String(index + 1).padStart(6, '0')}`;
      const rewritten = JSON.parse(JSON.stringify(device).replaceAll(device.id, id)) as Device;
      rewritten.serial = device.serial.replace(/-\d{6}$/, `-8${String(index + 1).padStart(5, '0')}`);
      devices.push(rewritten);
    });
  }
  return devices;
}

export const fakeCompanies: CompanyRepository = {
  async get(companyId) {
    return (await this.getMany([companyId]))[0];
  },
  async getMany(ids) {
    return DEMO_COMPANIES.filter((company) => ids.includes(company.id)).map(
      (company): Company => ({ id: company.id, name: company.name, quotaBytes: company.quotaBytes, usedBytes: 0 }),
    );
  },
};

/** Starts bin/local.ts with a READY timeout long enough for a 100,000-document rebuild. */
function startRuntime(settings: ServiceSettings, dynamoPort: number, readyTimeoutMs = 15 * 60_000): Promise<RunningService> {
  return startService(settings, { environment: { DYNAMODB_PORT: String(dynamoPort) }, readyTimeoutMs, stopGraceMs: 20_000 });
}

/** Writes the devices into the DynamoDB Local at `endpoint` (fleet.ts seedDevices). */
async function seedDevicesAt(endpoint: string, devices: Device[], parallelism = 16): Promise<void> {
  const client = localDocumentClient(endpoint, parallelism);
  try {
    await seedDevices(client, devices, parallelism);
  } finally {
    client.destroy();
  }
}

/** GET with a keep-alive agent; resolves with status and body length once the body is fully read. */
export function get(agent: Agent, url: string, token: string): Promise<{ status: number; bytes: number; body: string }> {
  return new Promise((done, fail) => {
    const outgoing = request(url, { agent, headers: { authorization: `Bearer ${token}`, accept: 'application/json' } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const body = Buffer.concat(chunks);
        done({ status: response.statusCode ?? 0, bytes: body.length, body: body.toString() });
      });
      response.on('error', fail);
    });
    outgoing.on('error', fail);
    outgoing.end();
  });
}

/**
 * Starts a bare node:http server in a child process (127.0.0.1, free port) that answers `GET /bytes/N` with N bytes
 * of JSON text: what any Node.js HTTP service pays to move a response of that size, without routing, auth or handler.
 */
async function startBareServer(): Promise<{ url: string; stop: () => void }> {
  const code = `
    const { createServer } = require('node:http');
    const bodies = new Map();
    const server = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        const size = Number(request.url.split('/').pop());
        if (!bodies.has(size)) bodies.set(size, Buffer.from('"' + 'x'.repeat(Math.max(0, size - 2)) + '"'));
        const body = bodies.get(size);
        response.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.length) });
        response.end(body);
      });
    });
    server.listen(0, '127.0.0.1', () => console.log('PORT ' + server.address().port));`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((done, fail) => {
    child.stdout.on('data', (chunk: Buffer) => {
      const match = /PORT (\d+)/.exec(chunk.toString());
      if (match !== null) done(Number(match[1]));
    });
    child.once('exit', (code) => fail(new Error(`bare server exited with ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}`, stop: () => child.kill() };
}

/** Runs the search benchmark; `log` receives progress lines. Always stops the runtime and removes its data folder. */
export async function runSearchBench(log: (line: string) => void, options: SearchBenchOptions = {}): Promise<SearchBenchResult> {
  const iterations = options.iterations ?? 300;
  const warmup = options.warmup ?? 30;
  const notes: string[] = [];

  let started = performance.now();
  const devices = benchDevices();
  const generateMs = performance.now() - started;
  log(
    `  generated ${devices.length} devices (${SPLIT.map(([company, count]) => `${count} ${company}`).join(', ')}) in ${(generateMs / 1000).toFixed(1)} s`,
  );

  // ---- Direct, in-process ----
  const documents = devices.map((device) => searchDocumentFromItem({ ...device, deviceId: device.id, entity: 'DEVICE' }) as SearchDocument);
  gc();
  gc();
  const heapBefore = process.memoryUsage();
  started = performance.now();
  let index: EmbeddedSearchIndex | undefined = new EmbeddedSearchIndex();
  for (let start = 0; start < documents.length; start += SCAN_PAGE) await index.upsert(documents.slice(start, start + SCAN_PAGE));
  const insertMs = performance.now() - started;
  // The presorted orders are built lazily by the first sorted search; count that in the build.
  await searchResources(index, OLIVIA, pairs(QUERY_A));
  const buildMs = performance.now() - started;
  gc();
  gc();
  const heapAfter = process.memoryUsage();
  const direct = {
    buildMs,
    heapGrowthBytes:
      heapAfter.heapUsed +
      heapAfter.external +
      heapAfter.arrayBuffers -
      (heapBefore.heapUsed + heapBefore.external + heapBefore.arrayBuffers),
    rssGrowthBytes: heapAfter.rss - heapBefore.rss,
    heapAfterBytes: heapAfter.heapUsed,
    documents: documents.length,
  };
  log(
    `  direct: index built in ${buildMs.toFixed(0)} ms (upserts ${insertMs.toFixed(0)} ms + first sorted query ${(buildMs - insertMs).toFixed(0)} ms); heap+external growth ${mib(direct.heapGrowthBytes)} MiB, RSS growth ${mib(direct.rssGrowthBytes)} MiB`,
  );

  const engine = index;
  const dependencies = { index: engine, companies: fakeCompanies };
  const globalQuery = (i: number) => `global=${encodeURIComponent(GLOBAL_TERMS[i % GLOBAL_TERMS.length] as string)}`;
  const responseA = await searchResources(engine, OLIVIA, pairs(QUERY_A));
  const responsesB = await Promise.all(GLOBAL_TERMS.map((_, i) => searchResources(engine, OLIVIA, pairs(globalQuery(i)))));
  const responseC = await describeFilters(dependencies, OLIVIA, NO_FILTERS);
  log(
    `  (a) total ${responseA.total}, ${responseA.resources.length} on page 2; (b) totals ${GLOBAL_TERMS.map((term, i) => `${term} ${responsesB[i]?.total}`).join(', ')}; (c) ${responseC.items.length} filter fields`,
  );
  /** Times a direct loop and the CPU time this process spent per query. */
  const directLoop = async (name: string, body: (index: number) => Promise<unknown>): Promise<QueryMeasure> => {
    for (let index = 0; index < warmup; index += 1) await body(index);
    const cpuBefore = process.cpuUsage();
    const direct = await timeLoop(iterations, 0, body);
    const cpu = process.cpuUsage(cpuBefore);
    return { name, direct, directCpuPerQuery: (cpu.user + cpu.system) / 1000 / iterations };
  };
  const queries: QueryMeasure[] = [
    await directLoop('(a) filtered, sorted page 2', () => searchResources(engine, OLIVIA, pairs(QUERY_A))),
    await directLoop(`(b) global (${GLOBAL_TERMS.join('/')})`, (i) => searchResources(engine, OLIVIA, pairs(globalQuery(i)))),
    await directLoop('(c) filters with counts', () => describeFilters(dependencies, OLIVIA, NO_FILTERS)),
  ];
  // Serialisation cost of the responses (part of the HTTP path, not of the direct figures).
  const serialize = (value: unknown) => timeLoop(200, 20, async () => JSON.stringify(value));
  (queries[0] as QueryMeasure).directSerializeMs = (await serialize(responseA)).p50;
  (queries[1] as QueryMeasure).directSerializeMs = (await serialize(responsesB[0])).p50;
  (queries[2] as QueryMeasure).directSerializeMs = (await serialize(responseC)).p50;
  for (const query of queries) log(`  direct ${query.name}: p50 ${query.direct.p50.toFixed(2)} ms, p99 ${query.direct.p99.toFixed(2)} ms`);
  index = undefined;
  documents.length = 0;
  gc();

  // ---- Over HTTP ----
  const deviceCount = devices.length;
  const result: SearchBenchResult = { devices: deviceCount, generateMs, direct, queries, notes };
  const settings = await newServiceSettings();
  const dynamoPort = await freePort();
  let service: RunningService | undefined;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    started = performance.now();
    service = await startRuntime(settings, dynamoPort);
    const firstStartMs = performance.now() - started;
    log(
      `  runtime pid ${service.pid} READY in ${(firstStartMs / 1000).toFixed(1)} s (empty data folder: tables + demo data); data dir ${settings.dataDirectory}, DynamoDB Local port ${dynamoPort}`,
    );
    await service.stop();
    service = undefined;

    const token0 = { value: '' };
    let restartMs = NaN;
    let indexedDocuments = NaN;
    let seedMs: number;
    if (process.env.SEARCH_BENCH_NO_RESTART === '1') {
      // Fallback: the runtime stays up and its stream poller indexes the items as they are written (the start-up
      // rebuild from a DynamoDB Local scan did not finish at 20,000 or 100,000 devices).
      service = await startRuntime(settings, dynamoPort);
      token0.value = await tokenFor(service, 'olivia');
      started = performance.now();
      await seedDevicesAt(`http://127.0.0.1:${dynamoPort}`, devices);
      seedMs = performance.now() - started;
      log(
        `  wrote ${devices.length} device items through the running runtime's DynamoDB Local in ${(seedMs / 1000).toFixed(1)} s; waiting for the stream poller`,
      );
      for (;;) {
        const answer = await get(agent, `${service.api}/resources/search?pageSize=1`, token0.value);
        const total = (JSON.parse(answer.body) as { total: number }).total;
        if (total >= deviceCount + 240) {
          indexedDocuments = total;
          break;
        }
        await sleep(500);
      }
      restartMs = performance.now() - started;
      notes.push(
        'HTTP index: NOT rebuilt at start; indexed live by the stream poller while the items were written (SEARCH_BENCH_NO_RESTART=1). "runtime start with rebuild" below is seed start -> all devices searchable.',
      );
    } else {
      // DynamoDB Local alone on the runtime's data folder, so that the stream poller does not index the items one
      // batch at a time while they are written (the restart below rebuilds the index from the scan anyway).
      const dynamo = await startDynamoDbLocal({ dataDirectory: join(settings.dataDirectory, 'dynamodb'), port: dynamoPort });
      started = performance.now();
      try {
        await seedDevicesAt(dynamo.endpoint, devices);
      } finally {
        await dynamo.stop();
      }
      seedMs = performance.now() - started;
      log(
        `  wrote ${devices.length} device items into the devices table (BatchWriteItem x25, 16 in parallel) in ${(seedMs / 1000).toFixed(1)} s`,
      );

      started = performance.now();
      service = await startRuntime(settings, dynamoPort);
      restartMs = performance.now() - started;
      indexedDocuments = Number(/(\d+) documents indexed/.exec(service.output())?.[1] ?? NaN);
    }
    // The client's own heap should not hold the fleet while it times requests (its GC would count as HTTP time).
    devices.length = 0;
    gc();
    // Steady state, not the start's aftermath (the rebuild's garbage collected, DynamoDB Local done with the scan).
    const settledMs = await waitForIdle([service.pid, await javaChildOf(service.pid)], 180_000);
    log(`  runtime and DynamoDB Local idle (< 10 % of a CPU over 1.5 s) ${(settledMs / 1000).toFixed(1)} s after READY`);
    const memory = await memoryOf(service.pid);
    log(
      `  runtime ready in ${(restartMs / 1000).toFixed(1)} s with ${indexedDocuments} documents indexed; VmRSS ${mib(memory?.rss ?? NaN)} MiB, VmHWM ${mib(memory?.hwm ?? NaN)} MiB`,
    );
    result.http = { firstStartMs, seedMs, restartMs, indexedDocuments, rssBytes: memory?.rss ?? NaN, hwmBytes: memory?.hwm ?? NaN };

    const token = await tokenFor(service, 'olivia');
    const api = service.api;
    const check = async (url: string) => {
      const answer = await get(agent, url, token);
      if (answer.status !== 200) throw new Error(`GET ${url}: ${answer.status} ${answer.body.slice(0, 500)}`);
      return answer;
    };
    const urlA = `${api}/resources/search?${QUERY_A}`;
    const urlB = (i: number) => `${api}/resources/search?${globalQuery(i)}`;
    const urlC = `${api}/resources/search/filters`;
    const firstA = await check(urlA);
    const bodyA = JSON.parse(firstA.body) as { total: number };
    if (bodyA.total !== responseA.total)
      notes.push(`(a) HTTP total ${bodyA.total} vs direct ${responseA.total} (the runtime also holds the 240 demo devices).`);
    (queries[0] as QueryMeasure).responseBytes = firstA.bytes;
    (queries[1] as QueryMeasure).responseBytes = (await check(urlB(0))).bytes;
    (queries[2] as QueryMeasure).responseBytes = (await check(urlC)).bytes;
    const javaPid = await javaChildOf(service.pid);
    const httpLoop = async (query: QueryMeasure, body: (index: number) => Promise<unknown>) => {
      for (let index = 0; index < warmup; index += 1) await body(index);
      const finish = await cpuWindow(service?.pid, javaPid);
      query.http = await timeLoop(iterations, 0, body);
      const cpu = await finish();
      query.httpCpuPerRequest = {
        runtime: cpu.runtime / iterations,
        dynamo: cpu.dynamo / iterations,
        bench: cpu.bench / iterations,
        other: cpu.other / iterations,
        steal: cpu.steal / iterations,
      };
    };
    await httpLoop(queries[0] as QueryMeasure, () => check(urlA));
    await httpLoop(queries[1] as QueryMeasure, (i) => check(urlB(i)));
    await httpLoop(queries[2] as QueryMeasure, () => check(urlC));
    for (const query of queries)
      log(
        `  HTTP ${query.name}: p50 ${query.http?.p50.toFixed(2)} ms, p99 ${query.http?.p99.toFixed(2)} ms (${query.responseBytes} bytes)`,
      );
    const bare = await startBareServer();
    try {
      for (const query of queries) {
        query.bare = await timeLoop(iterations, warmup, () => get(agent, `${bare.url}/bytes/${query.responseBytes ?? 0}`, token));
        log(`  bare node:http, ${query.responseBytes} bytes: p50 ${query.bare.p50.toFixed(2)} ms, p99 ${query.bare.p99.toFixed(2)} ms`);
      }
    } finally {
      bare.stop();
    }
    // Fixed per-request cost of the HTTP path: an unauthenticated and an authenticated request that do no search work.
    const noAuth = await timeLoop(200, 20, () => get(agent, `${api}/resources/search?${QUERY_A}`, 'not-a-token'));
    const badQuery = await timeLoop(200, 20, () => get(agent, `${api}/resources/search?bogus=1`, token));
    notes.push(
      `HTTP floor: a request rejected for its token (401) p50 ${noAuth.p50.toFixed(2)} ms; an authenticated request rejected by parseSearchQuery (400: JWT verified, no search) p50 ${badQuery.p50.toFixed(2)} ms.`,
    );
    const after = await memoryOf(service.pid);
    if (result.http !== undefined && after !== undefined) {
      result.http.hwmBytes = after.hwm;
      result.http.idleRssBytes = after.rss;
    }
  } catch (error) {
    result.httpError = (error as Error).stack ?? String(error);
    log(`  HTTP part FAILED: ${result.httpError}`);
  } finally {
    agent.destroy();
    await service?.stop();
    await removeDataDirectory(settings);
  }
  return result;
}

function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((header, column) => Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: string[]) =>
    `| ${cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column] as number) : cell.padStart(widths[column] as number))).join(' | ')} |`;
  return [line(headers), `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

const f = (value: number | undefined, digits = 2) => (value === undefined || Number.isNaN(value) ? 'n/a' : value.toFixed(digits));

/** Goal verdicts. */
export function searchVerdicts(result: SearchBenchResult): { goal: string; measured: string; met: boolean | undefined }[] {
  const verdicts: { goal: string; measured: string; met: boolean | undefined }[] = [];
  result.queries.forEach((query, position) => {
    const label = query.name.slice(0, 3);
    const http = query.http;
    if (position < 2) {
      verdicts.push({
        goal: `${label} HTTP p50 <= ${GOALS.searchP50} ms`,
        measured: `${f(http?.p50)} ms`,
        met: http === undefined ? undefined : http.p50 <= GOALS.searchP50,
      });
      verdicts.push({
        goal: `${label} HTTP p99 <= ${GOALS.searchP99} ms`,
        measured: `${f(http?.p99)} ms`,
        met: http === undefined ? undefined : http.p99 <= GOALS.searchP99,
      });
    } else {
      verdicts.push({
        goal: `${label} HTTP p50 <= ${GOALS.filtersP50} ms`,
        measured: `${f(http?.p50)} ms`,
        met: http === undefined ? undefined : http.p50 <= GOALS.filtersP50,
      });
    }
    const ratio = http === undefined ? undefined : http.p50 / query.direct.p50;
    verdicts.push({
      goal: `${label} HTTP / direct (p50) <= ${GOALS.overhead}x`,
      measured: `${f(ratio)}x`,
      met: ratio === undefined ? undefined : ratio <= GOALS.overhead,
    });
  });
  return verdicts;
}

/** Prints the tables of a search benchmark result. */
export function reportSearchBench(result: SearchBenchResult, log: (line: string) => void): void {
  log(
    table(
      [
        'Query',
        'Direct p50 ms',
        'Direct p99 ms',
        'HTTP p50 ms',
        'HTTP p99 ms',
        'Ratio p50',
        'Ratio p99',
        'HTTP - direct p50 ms',
        'JSON.stringify ms',
        'Bare node:http p50 ms',
        'Response bytes',
      ],
      result.queries.map((query) => [
        query.name,
        f(query.direct.p50),
        f(query.direct.p99),
        f(query.http?.p50),
        f(query.http?.p99),
        f(query.http === undefined ? undefined : query.http.p50 / query.direct.p50),
        f(query.http === undefined ? undefined : query.http.p99 / query.direct.p99),
        f(query.http === undefined ? undefined : query.http.p50 - query.direct.p50),
        f(query.directSerializeMs, 3),
        f(query.bare?.p50),
        String(query.responseBytes ?? 'n/a'),
      ]),
    ),
  );
  log(
    `Iterations per query: ${result.queries[0]?.direct.n} measured after warm-up, sequential; HTTP over one keep-alive connection (node:http Agent).`,
  );
  log('');
  log(
    table(
      [
        'Query',
        'Direct: bench CPU ms/query',
        'HTTP: runtime CPU ms/request',
        'DynamoDB Local',
        'bench (client)',
        'other processes',
        'steal',
      ],
      result.queries.map((query) => {
        const cpu = query.httpCpuPerRequest;
        return [query.name, f(query.directCpuPerQuery), f(cpu?.runtime), f(cpu?.dynamo), f(cpu?.bench), f(cpu?.other), f(cpu?.steal)];
      }),
    ),
  );
  log('CPU time per request during the measured loops (user + system from /proc, 10 ms ticks averaged over the loop).');
  log(
    'Bare node:http: the same client against a node:http server in another process that answers as many bytes with no routing, auth or handler (the transport floor).',
  );
  log('');
  log(
    table(
      [`Index build and memory (${TOTAL.toLocaleString('en-US')} devices)`, 'Value'],
      [
        ['direct: EmbeddedSearchIndex upserts (340/page) + first sorted query, ms', f(result.direct.buildMs, 0)],
        ['direct: heap + external growth, MiB', mib(result.direct.heapGrowthBytes)],
        ['direct: RSS growth, MiB', mib(result.direct.rssGrowthBytes)],
        ['HTTP: writing the device items to DynamoDB Local, s', f((result.http?.seedMs ?? NaN) / 1000, 1)],
        ['HTTP: runtime start with rebuild from the scan (to READY), s', f((result.http?.restartMs ?? NaN) / 1000, 1)],
        ['HTTP: runtime start on an empty data folder (for reference), s', f((result.http?.firstStartMs ?? NaN) / 1000, 1)],
        ['HTTP: documents indexed at start', String(result.http?.indexedDocuments ?? 'n/a')],
        ['HTTP: runtime VmRSS at READY, MiB', mib(result.http?.rssBytes ?? NaN)],
        ['HTTP: runtime VmRSS after the queries, MiB', mib(result.http?.idleRssBytes ?? NaN)],
        ['HTTP: runtime VmHWM (peak RSS) at the end, MiB', mib(result.http?.hwmBytes ?? NaN)],
      ],
    ),
  );
  for (const note of result.notes) log(`Note: ${note}`);
  if (result.httpError !== undefined) log(`HTTP part failed: ${result.httpError}`);
  log('');
  log('Goals:');
  log(
    table(
      ['Goal', 'Measured', 'Verdict'],
      searchVerdicts(result).map((verdict) => [
        verdict.goal,
        verdict.measured,
        verdict.met === undefined ? 'SKIPPED' : verdict.met ? 'MET' : 'MISSED',
      ]),
    ),
  );
}
