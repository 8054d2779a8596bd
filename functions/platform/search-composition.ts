/**
 * The composition root of search: the one place that picks the search adapter (SEARCH_BACKEND) and builds the
 * OpenSearch client. Kept apart from composition.ts so that only the functions that search, index or reindex
 * bundle the OpenSearch client (about 300 KB minified); the other functions never import this module.
 */
import type { SearchIndex } from '../core/ports.js';
import { createDocumentClient } from '../adapters/aws/clients.js';
import { EmbeddedSearchIndex } from '../adapters/embedded/search-engine.js';
import { OpenSearchIndexes } from '../adapters/aws/opensearch-indexes.js';
import { OpenSearchSearchIndex } from '../adapters/aws/opensearch-search-index.js';
import { createOpenSearchTransport, type OpenSearchTransport } from '../adapters/aws/opensearch-transport.js';
import { openSearchConfig, searchBackend, searchSourceConfig } from './config.js';
import { traced } from './observability.js';
import type { SearchSource } from './reindex.js';
import { SwappableSearchIndex } from './swappable-search-index.js';

let openSearchConnection: { transport: OpenSearchTransport; alias: string; replicas: number } | undefined;

/**
 * The OpenSearch transport (official client; SigV4-signed with OPENSEARCH_AUTH=aws-sigv4), the alias
 * (OPENSEARCH_INDEX, default `resources`) and the replicas of new indexes (OPENSEARCH_REPLICAS, default 0), built once.
 * @throws Error naming OPENSEARCH_URL, OPENSEARCH_AUTH, OPENSEARCH_REPLICAS or AWS_REGION when they are missing or wrong.
 */
export function openSearch(): { transport: OpenSearchTransport; alias: string; replicas: number } {
  if (openSearchConnection === undefined) {
    const config = openSearchConfig();
    openSearchConnection = {
      transport: createOpenSearchTransport({
        url: config.url,
        auth: config.auth,
        ...(config.region === undefined ? {} : { region: config.region }),
      }),
      alias: config.alias,
      replicas: config.replicas,
    };
  }
  return openSearchConnection;
}

/** Index administration (template, concrete indexes, alias) of the OpenSearch alias: the setup custom resource. */
export function openSearchIndexes(): OpenSearchIndexes {
  const { transport, alias, replicas } = openSearch();
  return new OpenSearchIndexes(transport, alias, { replicas });
}

let index: SearchIndex | undefined;

/**
 * The search index, built once: `embedded` (default: the local runtime) is an in-memory EmbeddedSearchIndex that
 * reindexSearch() (reindex.ts) rebuilds and swaps; `opensearch` searches and writes the OpenSearch alias.
 * @throws Error naming a missing or wrong variable (SEARCH_BACKEND, OPENSEARCH_*).
 */
export function searchIndex(): SearchIndex {
  if (index === undefined) {
    switch (searchBackend()) {
      case 'embedded':
        index = new SwappableSearchIndex(() => new EmbeddedSearchIndex());
        break;
      case 'opensearch': {
        const { transport, alias } = openSearch();
        index = new OpenSearchSearchIndex({ transport, alias });
        break;
      }
    }
  }
  return index;
}

let source: SearchSource | undefined;

/** The tables the index is rebuilt from (DEVICES_TABLE, SCENARIOS_TABLE, DYNAMODB_ENDPOINT). @throws Error naming a missing one. */
export function searchSource(): SearchSource {
  if (source === undefined) {
    const config = searchSourceConfig();
    source = {
      dynamoDb: traced(createDocumentClient(config.dynamoDbEndpoint)),
      tables: { devices: config.devicesTable, scenarios: config.scenariosTable },
    };
  }
  return source;
}
