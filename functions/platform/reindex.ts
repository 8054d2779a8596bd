/**
 * Rebuilding the search index from DynamoDB without downtime: the use case is functions/core/search/reindex.ts, its
 * DynamoDB side adapters/aws/dynamodb-search-source.ts, its OpenSearch side adapters/aws/opensearch-reindex.ts, the
 * embedded one adapters/embedded/swappable-search-index.ts, and composition/search.ts wires them. This path keeps the
 * names the local runtime and `npm run reindex` import.
 */
import { type ReindexResult, rebuildSearch } from '../core/search/reindex.js';
import { searchRebuild } from './composition/search.js';

export type { ReindexResult } from '../core/search/reindex.js';

/**
 * Rebuilds the configured search index from DynamoDB without downtime (rebuildSearch on composition/search.ts'
 * searchRebuild()). Used by the search-reindex function, `npm run reindex` and the local runtime.
 * @throws ServiceUnavailableError when OpenSearch is unreachable; Error naming a missing variable
 *   (DEVICES_TABLE, SCENARIOS_TABLE, OPENSEARCH_URL…).
 */
export function reindexSearch(): Promise<ReindexResult> {
  return rebuildSearch(searchRebuild());
}
