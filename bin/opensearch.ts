#!/usr/bin/env node
/**
 * `npm run opensearch`: one real OpenSearch node (the version functions/local/opensearch/pom.xml pins) on 127.0.0.1,
 * until Ctrl+C. Options: `--heap <MiB>` (512), `--port <port>` (0: a free one), `--data <folder>` (kept; default a
 * temporary folder removed at stop), `--prepare` (fetch and compile only, then exit: CI runs it before the tests).
 * Prints the URL to give OPENSEARCH_URL.
 */
import { Command } from 'commander';
import { DEFAULT_HEAP_MIB, prepareOpenSearch, startOpenSearchNode } from '../functions/local/opensearch-node.js';
import { wholeNumber } from './whole-number.js';

const options = new Command('npm run opensearch')
  .description('Starts one OpenSearch node on 127.0.0.1 until Ctrl+C.')
  .option('--heap <MiB>', 'JVM heap, MiB', wholeNumber(256, 32_768), DEFAULT_HEAP_MIB)
  .option('--port <port>', 'HTTP port (0: a free one)', wholeNumber(0, 65_535), 0)
  .option('--data <folder>', 'data folder kept across starts (default: a temporary one, removed at stop)')
  .option('--prepare', 'only fetch the artifacts through Maven and compile the launcher (cached), then exit')
  .parse()
  .opts<{ heap: number; port: number; data?: string; prepare?: boolean }>();

if (options.prepare === true) {
  const prepared = await prepareOpenSearch((message) => process.stderr.write(`${message}\n`)).catch((error: unknown) => {
    process.stderr.write(`Could not prepare OpenSearch: ${(error as Error).message}\n`);
    process.exit(1);
  });
  process.stdout.write(`OpenSearch ${prepared.version} is ready to start (${prepared.classpath.split(':').length - 1} jars).\n`);
  process.exit(0);
}

const started = Date.now();
const node = await startOpenSearchNode({
  heapMiB: options.heap,
  port: options.port,
  ...(options.data === undefined ? {} : { dataDirectory: options.data }),
  log: (message) => process.stderr.write(`${message}\n`),
}).catch((error: unknown) => {
  process.stderr.write(`Could not start OpenSearch: ${(error as Error).message}\n`);
  process.exit(1);
});
process.stdout.write(
  `OpenSearch ${node.version} is up on ${node.url} (${((Date.now() - started) / 1000).toFixed(1)} s, heap ${node.heapMiB} MiB, pid ${node.pid}).\n` +
    `  Use it: OPENSEARCH_URL=${node.url} npm run test:opensearch, or SEARCH_ENGINE=opensearch OPENSEARCH_URL=${node.url} npm start\n` +
    '  Ctrl+C stops it.\n',
);
const stop = () => {
  void node.stop().then(() => process.exit(0));
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
void node.exited.then((status) => {
  process.exit(status.code ?? 1);
});
