/**
 * Rebuilding the search index from the source of truth without downtime, as a use case: a source that reads every
 * searchable document (the devices and scenarios tables on AWS and locally) loads an index that can be rebuilt while
 * it serves (the OpenSearch alias moved to a fresh concrete index, or the embedded engine swapped for a fresh one).
 */
import type { SearchIndex } from './ports.js';

/** What a reindex did: the index now serving searches, how many documents it holds, and how long it took. */
export interface ReindexResult {
  /** The new concrete index (OpenSearch, e.g. `resources-20261122t161646712z`) or `embedded-<generation>`. */
  index: string;
  /** Documents written from the full scan (devices and scenarios). */
  documents: number;
  /** Duration, milliseconds. */
  tookMs: number;
}

/** Where a rebuild writes: the upserts of the index being built. */
export type SearchSink = Pick<SearchIndex, 'upsert'>;

/**
 * Loads documents into `sink` and returns how many it wrote. With `since` (ISO-8601), only the documents of items
 * changed at or after it (the catch-up of what changed while a rebuild ran).
 */
export type SearchLoad = (sink: SearchSink, options?: { since?: string }) => Promise<number>;

/** The source of truth of the search documents (the devices and scenarios tables). */
export interface SearchDocumentSource {
  /** Writes every searchable document (or, with `since`, those changed at or after it) into `sink`; returns how many. */
  load: SearchLoad;
}

/** A search index that can be rebuilt while it serves. */
export interface RebuildableSearchIndex {
  /**
   * Builds a fresh index with `load` and makes it the one serving searches; searches answer from the previous one
   * until then.
   * @throws what `load` throws, or the backend's errors; the serving index is then kept.
   */
  rebuild(load: SearchLoad): Promise<ReindexResult>;
}

/** What rebuildSearch works with. */
export interface SearchRebuildDependencies {
  source: SearchDocumentSource;
  index: RebuildableSearchIndex;
}

/**
 * Rebuilds `index` from `source` without downtime (the search-reindex function, `npm run reindex`, the local runtime).
 * @throws what the source or the index throws (ServiceUnavailableError when a backend cannot be reached).
 */
export function rebuildSearch({ source, index }: SearchRebuildDependencies): Promise<ReindexResult> {
  return index.rebuild((sink, options) => source.load(sink, options));
}
