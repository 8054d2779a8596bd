/**
 * The rebuild of the search index from the tables (the source of truth): the source it reads (DynamoDB), and the
 * configured index rebuilt beside the live one. Apart from search.ts so that the functions that only search or index
 * do not load the DynamoDB client at cold start.
 */
import { createDocumentClient } from '../../adapters/aws/clients.js';
import { DynamoDbSearchDocumentSource, type SearchSource } from '../../adapters/aws/dynamodb-search-source.js';
import { OpenSearchAliasRebuild } from '../../adapters/aws/opensearch-reindex.js';
import { SwappableSearchIndex } from '../../adapters/embedded/swappable-search-index.js';
import { type ReindexResult, rebuildSearch, type SearchRebuildDependencies } from '../../core/search/reindex.js';
import { searchSourceConfig } from '../config.js';
import { traced } from '../observability.js';
import { openSearch, searchIndex } from './search.js';

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

/**
 * What rebuildSearch works with: the tables as the source, and the configured index: the embedded one is rebuilt
 * beside the live one and swapped in; OpenSearch gets a new concrete index and the alias moved to it.
 * @throws Error naming a missing variable (DEVICES_TABLE, SCENARIOS_TABLE, OPENSEARCH_URL…).
 */
export function searchRebuild(): SearchRebuildDependencies {
  const search = searchIndex();
  if (search instanceof SwappableSearchIndex) {
    // The tables' variables are read when the rebuild starts: a missing one fails the rebuild, the live index is kept.
    return { source: { load: (sink, options) => new DynamoDbSearchDocumentSource(searchSource()).load(sink, options) }, index: search };
  }
  const { transport, alias, replicas } = openSearch();
  return { source: new DynamoDbSearchDocumentSource(searchSource()), index: new OpenSearchAliasRebuild({ transport, alias, replicas }) };
}

/**
 * Rebuilds the configured search index from DynamoDB without downtime (rebuildSearch on searchRebuild()). Used by
 * `npm run reindex` and the local runtime; the search-reindex function calls the use case itself.
 * @throws ServiceUnavailableError when OpenSearch is unreachable; EnvironmentError naming a missing variable
 *   (DEVICES_TABLE, SCENARIOS_TABLE, OPENSEARCH_URL…).
 */
export function reindexSearch(): Promise<ReindexResult> {
  return rebuildSearch(searchRebuild());
}
