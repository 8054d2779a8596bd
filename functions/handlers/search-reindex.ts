import { type ReindexResult, rebuildSearch } from '../core/search/reindex.js';
import { searchRebuild } from '../platform/composition/search-rebuild.js';
import { logger } from '../platform/logger.js';
import { eventHandler } from '../platform/observability.js';

/**
 * Rebuilds the search index from DynamoDB without downtime (docs/operations.md, "Reindex"); invoked by hand
 * (`aws lambda invoke --function-name <SearchReindexFunction> out.json`), any payload. With SEARCH_ENGINE=opensearch:
 * a new concrete index `<alias>-<UTC time>`, every document of DEVICES_TABLE and SCENARIOS_TABLE bulk-loaded, the
 * alias switched atomically, the old indexes deleted, then the items changed meanwhile rewritten.
 * Returns `{ index, documents, tookMs }`.
 * @throws ServiceUnavailableError when OpenSearch is unreachable (nothing changed); the invocation then fails.
 */
export const handler = eventHandler<unknown, ReindexResult>().handler(async () => {
  const result = await rebuildSearch(searchRebuild());
  logger.info('Search index rebuilt', { ...result });
  return result;
});
