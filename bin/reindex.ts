#!/usr/bin/env node
/**
 * `npm run reindex`: rebuilds the search index from DynamoDB without downtime and prints `{ index, documents, tookMs }`.
 * - SEARCH_ENGINE=opensearch with OPENSEARCH_URL: reindexes that OpenSearch from this process (new concrete index,
 *   atomic alias switch; reindexSearch in functions/platform/composition/search-rebuild.ts), reading DEVICES_TABLE and
 *   SCENARIOS_TABLE (DYNAMODB_ENDPOINT for DynamoDB Local); OPENSEARCH_INDEX, OPENSEARCH_AUTH=aws-sigv4 and AWS_REGION as for the functions.
 * - Otherwise: asks the local runtime (`npm start`) running on DATA_DIR (default .data) to rebuild its index: its
 *   embedded index is rebuilt beside the live one and swapped in (or its OpenSearch reindexed, if it runs on one).
 * Exit code 0 on success, 1 on failure (the reason on stderr).
 */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ENV, readEnvironment } from '../functions/contract/environment.js';
import { requestLocalReindex } from '../functions/local/admin.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

const USAGE = `Usage: npm run reindex

Rebuilds the search index from DynamoDB without downtime and prints { index, documents, tookMs }.

  Local runtime (default): asks the running \`npm start\` (found through DATA_DIR, default .data) to rebuild.
  OpenSearch: SEARCH_ENGINE=opensearch OPENSEARCH_URL=https://… DEVICES_TABLE=… SCENARIOS_TABLE=… npm run reindex
              (also OPENSEARCH_INDEX, default resources; OPENSEARCH_AUTH=aws-sigv4 with AWS_REGION; DYNAMODB_ENDPOINT)
`;

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/** Reindexes OpenSearch from this process (the same code as the search-reindex function). */
async function reindexOpenSearch(): Promise<unknown> {
  const { reindexSearch } = await import('../functions/platform/composition/search-rebuild.js');
  return reindexSearch();
}

if (process.argv.slice(2).some((argument) => argument === '--help' || argument === '-h')) {
  process.stdout.write(USAGE);
  process.exit(0);
}
if (process.argv.length > 2) {
  process.stderr.write(`Unknown argument(s): ${process.argv.slice(2).join(' ')}\n\n${USAGE}`);
  process.exit(1);
}

try {
  // A malformed search variable, or SEARCH_ENGINE=opensearch without OPENSEARCH_URL, fails here with its name.
  const toOpenSearch = readEnvironment('search', process.env)[ENV.searchEngine] === 'opensearch';
  const result = await (toOpenSearch
    ? reindexOpenSearch()
    : requestLocalReindex(resolve(root, readEnvironment('localData', process.env)[ENV.dataDir])));
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
} catch (error) {
  process.stderr.write(`Reindex failed: ${(error as Error).message}\n`);
  process.exit(1);
}
