/**
 * The search port: what the domain needs from a search index (OpenSearch on AWS, the embedded engine locally).
 */
import type { DocumentKey, SearchDocument } from './documents.js';
import type { CountQuery, SearchQuery, SearchResult, ValueCounts } from './query.js';

/** The search index (OpenSearch in AWS, the embedded engine locally). Never the source of truth. */
export interface SearchIndex {
  /**
   * Runs one page of a search: company restriction always applied, filters OR within a field and AND across
   * fields, or `global` full text; sorted with the (type, company, id) tie-breaker. Callers must treat the returned
   * documents as read-only (the embedded adapter hands out its stored documents, frozen).
   * @throws ServiceUnavailableError when the backend cannot be reached.
   */
  search(query: SearchQuery): Promise<SearchResult>;
  /** Counts, per field of `query.fields`, how many matching documents carry each value. */
  countValues(query: CountQuery): Promise<ValueCounts>;
  /**
   * Inserts or replaces documents (by their DocumentKey).
   * @throws SearchIndexWriteError naming the documents the index refused (the others are written).
   */
  upsert(documents: SearchDocument[]): Promise<void>;
  /**
   * Removes documents; unknown keys are ignored.
   * @throws SearchIndexWriteError naming the documents the index refused (the others are removed).
   */
  remove(keys: DocumentKey[]): Promise<void>;
  /**
   * The ids of the device documents of `query.companies` matching `query.filters` (OR within a field, AND across
   * fields, as `search`): every match up to `max`, sorted by id ascending, and `total`, the number of matches (also
   * those beyond `max`). Scenario documents never match. What a rollout's targets are resolved with.
   * @throws ServiceUnavailableError when the backend cannot be reached.
   */
  selectIds(query: { companies: string[]; filters: Map<string, string[]> }, max: number): Promise<{ ids: string[]; total: number }>;
}

/**
 * Some documents of one `upsert` or `remove` were not written or removed, the others were: `failedIds` are their
 * keys as documentKeyString writes them (`TYPE#company#id`), `reasons[n]` the index's reason for `failedIds[n]`.
 * Sending those documents again is the retry; it is no outage of the index (that is ServiceUnavailableError).
 */
export class SearchIndexWriteError extends Error {
  constructor(
    readonly failedIds: string[],
    readonly reasons: string[],
    message = `The search index refused ${failedIds.length} document(s): ${failedIds.join(', ')}.`,
  ) {
    super(message);
    this.name = new.target.name;
  }
}
