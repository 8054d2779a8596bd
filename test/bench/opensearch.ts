/**
 * OpenSearch benchmark (`npm run bench -- --only-opensearch`): the search benchmark's questions on a real OpenSearch
 * node (functions/local/opensearch-node.ts, OPENSEARCH_BENCH_HEAP_MIB, default 512) at 1,000,000 devices
 * (OPENSEARCH_BENCH_DEVICES; 60 % acme, 40 % globex, generated one at a time as the demo's, ids from 121 on so
 * that the runtime's demo devices stay as they are).
 *
 * 1. Starts the node, then the local runtime on it (SEARCH_ENGINE=opensearch, its own alias; the start-up rebuild
 *    puts the 242 demo documents there).
 * 2. Writes the fleet into that alias through the stream indexer's bulk path (OpenSearchSearchIndex.upsert, 1,000
 *    documents a request, OPENSEARCH_BENCH_PARALLEL requests at once, default 2): documents per second, wall clock.
 * 3. At 100,000 documents and at the end: the three queries of the search benchmark, (a) the filtered sorted second
 *    page, (b) `global` (printer / Lyon / Amsterdam), (c) the filters endpoint with counts, over HTTP (the runtime,
 *    olivia's token, one keep-alive connection) and in-process through the adapter; at 100,000 also the embedded
 *    engine in-process on the same documents, for the ratio.
 * 4. The node's JVM heap used (`_nodes/stats/jvm`, after a refresh) and its process RSS and peak RSS (/proc).
 */
import { Agent } from 'node:http';
import { OpenSearchSearchIndex } from '../../functions/adapters/aws/opensearch-search-index.js';
import { createOpenSearchTransport } from '../../functions/adapters/aws/opensearch-transport.js';
import { searchDocumentFromItem } from '../../functions/adapters/aws/search-documents.js';
import { EmbeddedSearchIndex } from '../../functions/adapters/embedded/search-engine.js';
import type { SearchDocument } from '../../functions/core/search/documents.js';
import type { SearchIndex } from '../../functions/core/search/ports.js';
import { describeFilters, searchResources } from '../../functions/core/search/service.js';
import { DEMO_COMPANIES } from '../../functions/local/demo-data.js';
import { iterateDemoDevices } from '../../functions/local/demo-fleet.js';
import { startOpenSearchNode } from '../../functions/local/opensearch-node.js';
import { newServiceSettings, removeDataDirectory, startService, tokenFor } from '../e2e/harness.js';
import { memoryOf, mib, type RunningService } from './presigned.js';
import { fakeCompanies, GLOBAL_TERMS, get, NO_FILTERS, OLIVIA, pairs, QUERY_A, type Stats, timeLoop } from './search.js';

/** OPENSEARCH_BENCH_DEVICES=N scales the fleet (default 1,000,000). */
export const OPENSEARCH_DEVICE_COUNT = Number(process.env.OPENSEARCH_BENCH_DEVICES ?? 1_000_000);
/** Where the comparison with the embedded engine is made (the embedded engine's benchmark size). */
const CHECKPOINT = Math.min(100_000, OPENSEARCH_DEVICE_COUNT);
const HEAP_MIB = Number(process.env.OPENSEARCH_BENCH_HEAP_MIB ?? 512);
const PARALLEL = Number(process.env.OPENSEARCH_BENCH_PARALLEL ?? 2);
const BULK_DOCUMENTS = 1_000;
/** Devices the runtime's demo data already has per company (ids kiosk-0001 to 0120). */
const DEMO_IDS = 120;
const SEED = 5_005;
const ALIAS = 'bench';
/** The goals on a 2-core machine. */
export const OPENSEARCH_GOALS = { documentsPerSecond: 5_000, searchP99: 50, filtersP99: 100 };

/** One query's figures at one fleet size. */
export interface OpenSearchQueryMeasure {
  name: string;
  http: Stats;
  /** In-process through the adapter (the node's HTTP answer included, not the runtime's). */
  adapter: Stats;
  /** The embedded engine in-process on the same documents (at the checkpoint only). */
  embedded?: Stats;
  responseBytes: number;
  total?: number;
}

/** What the OpenSearch benchmark measured. */
export interface OpenSearchBenchResult {
  devices: number;
  heapMiB: number;
  parallel: number;
  nodeStartMs: number;
  indexing: { documents: number; ms: number; documentsPerSecond: number; generateMs: number };
  checkpoint: { devices: number; queries: OpenSearchQueryMeasure[] };
  final: { devices: number; queries: OpenSearchQueryMeasure[] };
  memory: { heapUsedBytes: number; heapMaxBytes: number; rssBytes: number; hwmBytes: number };
  error?: string;
}

/** The bench fleet's search documents `from` to `to` (0-based, exclusive) in fleet order: acme's 60 %, then globex's. */
function* fleetDocuments(from: number, to: number): Generator<SearchDocument> {
  const acme = Math.round(OPENSEARCH_DEVICE_COUNT * 0.6);
  const split = [
    { company: DEMO_COMPANIES[0], start: 0, count: acme },
    { company: DEMO_COMPANIES[1], start: acme, count: OPENSEARCH_DEVICE_COUNT - acme },
  ];
  for (const { company, start, count } of split) {
    if (company === undefined) throw new Error('the demo companies changed');
    const first = Math.max(from, start);
    const last = Math.min(to, start + count);
    if (first >= last) continue;
    for (const device of iterateDemoDevices(company, SEED, DEMO_IDS + 1 + first - start, DEMO_IDS + last - start)) {
      yield searchDocumentFromItem({ ...device, deviceId: device.id, entity: 'DEVICE' }) as SearchDocument;
    }
  }
}

/** The node's JVM heap, from its node stats. */
async function heapOf(url: string): Promise<{ used: number; max: number }> {
  const stats = (await (await fetch(`${url}/_nodes/stats/jvm`)).json()) as {
    nodes: Record<string, { jvm: { mem: { heap_used_in_bytes: number; heap_max_in_bytes: number } } }>;
  };
  const node = Object.values(stats.nodes)[0];
  return { used: node?.jvm.mem.heap_used_in_bytes ?? Number.NaN, max: node?.jvm.mem.heap_max_in_bytes ?? Number.NaN };
}

/** The three questions, timed over HTTP and through `index` in-process (and through `embedded` when given). */
async function measure(
  service: RunningService,
  token: string,
  index: SearchIndex,
  embedded: SearchIndex | undefined,
  iterations: number,
): Promise<OpenSearchQueryMeasure[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const globalQuery = (i: number) => `global=${encodeURIComponent(GLOBAL_TERMS[i % GLOBAL_TERMS.length] as string)}`;
  const questions = [
    {
      name: '(a) filtered, sorted page 2',
      url: () => `/resources/search?${QUERY_A}`,
      direct: (target: SearchIndex) => searchResources(target, OLIVIA, pairs(QUERY_A)),
    },
    {
      name: `(b) global (${GLOBAL_TERMS.join('/')})`,
      url: (i: number) => `/resources/search?${globalQuery(i)}`,
      direct: (target: SearchIndex, i: number) => searchResources(target, OLIVIA, pairs(globalQuery(i))),
    },
    {
      name: '(c) filters with counts',
      url: () => '/resources/search/filters',
      direct: (target: SearchIndex) => describeFilters({ index: target, companies: fakeCompanies }, OLIVIA, NO_FILTERS),
    },
  ];
  const measures: OpenSearchQueryMeasure[] = [];
  try {
    for (const question of questions) {
      const check = async (i: number) => {
        const answer = await get(agent, `${service.api}${question.url(i)}`, token);
        if (answer.status !== 200) throw new Error(`GET ${question.url(i)}: ${answer.status} ${answer.body.slice(0, 300)}`);
        return answer;
      };
      const first = await check(0);
      const total = (JSON.parse(first.body) as { total?: number }).total;
      measures.push({
        name: question.name,
        http: await timeLoop(iterations, 20, check),
        adapter: await timeLoop(iterations, 20, (i) => question.direct(index, i)),
        ...(embedded === undefined ? {} : { embedded: await timeLoop(iterations, 20, (i) => question.direct(embedded, i)) }),
        responseBytes: first.bytes,
        ...(total === undefined ? {} : { total }),
      });
    }
  } finally {
    agent.destroy();
  }
  return measures;
}

/** Runs the OpenSearch benchmark; `log` receives progress lines. Always stops the runtime and the node. */
export async function runOpenSearchBench(log: (line: string) => void): Promise<OpenSearchBenchResult> {
  let started = performance.now();
  const node = await startOpenSearchNode({ heapMiB: HEAP_MIB, log });
  const nodeStartMs = performance.now() - started;
  log(`  OpenSearch ${node.version} on ${node.url} (heap ${HEAP_MIB} MiB, pid ${node.pid}) in ${(nodeStartMs / 1000).toFixed(1)} s`);
  const settings = await newServiceSettings();
  let service: RunningService | undefined;
  const result: OpenSearchBenchResult = {
    devices: OPENSEARCH_DEVICE_COUNT,
    heapMiB: HEAP_MIB,
    parallel: PARALLEL,
    nodeStartMs,
    indexing: { documents: 0, ms: Number.NaN, documentsPerSecond: Number.NaN, generateMs: 0 },
    checkpoint: { devices: CHECKPOINT, queries: [] },
    final: { devices: OPENSEARCH_DEVICE_COUNT, queries: [] },
    memory: { heapUsedBytes: Number.NaN, heapMaxBytes: Number.NaN, rssBytes: Number.NaN, hwmBytes: Number.NaN },
  };
  try {
    service = await startService(settings, {
      environment: { SEARCH_ENGINE: 'opensearch', OPENSEARCH_URL: node.url, OPENSEARCH_INDEX: ALIAS },
      readyTimeoutMs: 180_000,
      stopGraceMs: 20_000,
    });
    const token = await tokenFor(service, 'olivia');
    const transport = createOpenSearchTransport({ url: node.url, auth: 'none' });
    const index = new OpenSearchSearchIndex({ transport, alias: ALIAS });
    const refresh = async () => {
      const response = await fetch(`${node.url}/${ALIAS}/_refresh`, { method: 'POST' });
      if (!response.ok) throw new Error(`refresh answered ${response.status}`);
    };

    /** Writes documents [from, to) in bulk requests of BULK_DOCUMENTS, PARALLEL at once; returns the time spent generating. */
    const load = async (from: number, to: number): Promise<number> => {
      let generateMs = 0;
      const documents = fleetDocuments(from, to);
      const nextBatch = (): SearchDocument[] => {
        const before = performance.now();
        const batch: SearchDocument[] = [];
        while (batch.length < BULK_DOCUMENTS) {
          const next = documents.next();
          if (next.done === true) break;
          batch.push(next.value);
        }
        generateMs += performance.now() - before;
        return batch;
      };
      const worker = async () => {
        for (let batch = nextBatch(); batch.length > 0; batch = nextBatch()) {
          await index.upsert(batch);
          result.indexing.documents += batch.length;
          if (result.indexing.documents % 100_000 < BULK_DOCUMENTS)
            log(`  ${result.indexing.documents.toLocaleString('en-US')} documents written`);
        }
      };
      await Promise.all(Array.from({ length: PARALLEL }, worker));
      return generateMs;
    };

    started = performance.now();
    result.indexing.generateMs += await load(0, CHECKPOINT);
    let loadMs = performance.now() - started;
    await refresh();
    log(`  checkpoint: ${CHECKPOINT.toLocaleString('en-US')} documents; measuring against the embedded engine on the same documents`);
    const embedded = new EmbeddedSearchIndex();
    const copy = [...fleetDocuments(0, CHECKPOINT)];
    for (let start = 0; start < copy.length; start += 340) await embedded.upsert(copy.slice(start, start + 340));
    copy.length = 0;
    result.checkpoint.queries = await measure(service, token, index, embedded, 200);

    started = performance.now();
    result.indexing.generateMs += await load(CHECKPOINT, OPENSEARCH_DEVICE_COUNT);
    loadMs += performance.now() - started;
    await refresh();
    result.indexing.ms = loadMs;
    result.indexing.documentsPerSecond = (result.indexing.documents / loadMs) * 1000;
    log(
      `  indexed ${result.indexing.documents.toLocaleString('en-US')} documents in ${(loadMs / 1000).toFixed(1)} s: ${result.indexing.documentsPerSecond.toFixed(0)} documents/s (of which generating them here ${(result.indexing.generateMs / 1000).toFixed(1)} s)`,
    );
    result.final.queries = await measure(service, token, index, undefined, 300);
    const heap = await heapOf(node.url);
    const memory = await memoryOf(node.pid);
    result.memory = {
      heapUsedBytes: heap.used,
      heapMaxBytes: heap.max,
      rssBytes: memory?.rss ?? Number.NaN,
      hwmBytes: memory?.hwm ?? Number.NaN,
    };
  } catch (error) {
    result.error = (error as Error).stack ?? String(error);
    log(`  OpenSearch benchmark FAILED: ${result.error}`);
  } finally {
    await service?.stop();
    await node.stop();
    await removeDataDirectory(settings);
  }
  return result;
}

/** Prints the tables and the goal verdicts of a run. */
export function reportOpenSearchBench(result: OpenSearchBenchResult, log: (line: string) => void): void {
  const f = (value: number | undefined, digits = 2) => (value === undefined || Number.isNaN(value) ? 'n/a' : value.toFixed(digits));
  const rows = (queries: OpenSearchQueryMeasure[]) =>
    queries.map((query) => [
      query.name,
      String(query.total ?? ''),
      f(query.http.p50),
      f(query.http.p99),
      f(query.adapter.p50),
      f(query.adapter.p99),
      f(query.embedded?.p50),
      f(query.embedded?.p99),
      query.embedded === undefined ? '' : f(query.adapter.p50 / query.embedded.p50, 1),
    ]);
  const header = [
    'Query',
    'Total',
    'HTTP p50',
    'HTTP p99',
    'adapter p50',
    'adapter p99',
    'embedded p50',
    'embedded p99',
    'adapter / embedded p50',
  ];
  log(`At ${result.checkpoint.devices.toLocaleString('en-US')} devices (ms):`);
  for (const row of [header, ...rows(result.checkpoint.queries)]) log(`  ${row.join(' | ')}`);
  log(`At ${result.final.devices.toLocaleString('en-US')} devices (ms):`);
  for (const row of [header.slice(0, 6), ...rows(result.final.queries).map((row) => row.slice(0, 6))]) log(`  ${row.join(' | ')}`);
  log(
    `Indexing: ${result.indexing.documents.toLocaleString('en-US')} documents at ${f(result.indexing.documentsPerSecond, 0)} documents/s (${result.parallel} bulk requests of ${BULK_DOCUMENTS} at once).`,
  );
  log(
    `Node: heap ${result.heapMiB} MiB, used ${mib(result.memory.heapUsedBytes)} MiB after the load; process RSS ${mib(result.memory.rssBytes)} MiB, peak ${mib(result.memory.hwmBytes)} MiB; started in ${f(result.nodeStartMs / 1000, 1)} s.`,
  );
  const finalSearchP99 = Math.max(...result.final.queries.slice(0, 2).map((query) => query.http.p99));
  const filtersP99 = result.final.queries[2]?.http.p99 ?? Number.NaN;
  const verdicts = [
    [
      `indexing >= ${OPENSEARCH_GOALS.documentsPerSecond} documents/s`,
      f(result.indexing.documentsPerSecond, 0),
      result.indexing.documentsPerSecond >= OPENSEARCH_GOALS.documentsPerSecond,
    ],
    [
      `search HTTP p99 <= ${OPENSEARCH_GOALS.searchP99} ms at ${result.final.devices.toLocaleString('en-US')} (worst of a, b)`,
      `${f(finalSearchP99)} ms`,
      finalSearchP99 <= OPENSEARCH_GOALS.searchP99,
    ],
    [
      `filters HTTP p99 <= ${OPENSEARCH_GOALS.filtersP99} ms at ${result.final.devices.toLocaleString('en-US')}`,
      `${f(filtersP99)} ms`,
      filtersP99 <= OPENSEARCH_GOALS.filtersP99,
    ],
  ] as const;
  log('Goals:');
  for (const [goal, measured, met] of verdicts)
    log(`  ${goal}: ${measured} ${Number.isNaN(Number.parseFloat(measured)) ? 'SKIPPED' : met ? 'MET' : 'MISSED'}`);
}
