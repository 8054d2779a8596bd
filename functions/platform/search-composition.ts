/** The search side of the composition root moved to composition/search.ts; this path re-exports it for older importers. */
export {
  type OpenSearchConnection,
  openSearch,
  openSearchIndexes,
  searchIndex,
  searchRebuild,
  searchSource,
} from './composition/search.js';
