/**
 * The OpenSearch side of a search rebuild without downtime: a new concrete index `<alias>-<UTC time>` from the index
 * template, every document bulk-loaded into it, one atomic `_aliases` call moving the alias to it, the old indexes
 * deleted, then a catch-up pass for the items changed while it ran.
 */

import type { SearchDocument } from '../../core/search/documents.js';
import type { SearchIndex } from '../../core/search/ports.js';
import type { RebuildableSearchIndex, ReindexResult, SearchLoad } from '../../core/search/reindex.js';
import { ServiceUnavailableError } from '../../core/shared/errors.js';
import { retry } from '../retry.js';
import { concreteIndexName, OpenSearchIndexes } from './opensearch-indexes.js';
import { documentId } from './opensearch-queries.js';
import { BulkIndexError, OpenSearchSearchIndex } from './opensearch-search-index.js';
import type { OpenSearchTransport } from './opensearch-transport.js';

/** Settings of an OpenSearchAliasRebuild. */
export interface OpenSearchRebuildSettings {
  transport: OpenSearchTransport;
  /** The alias searches and writes use (OPENSEARCH_INDEX). */
  alias: string;
  /** `number_of_replicas` of the new index (OPENSEARCH_REPLICAS). @default 0 */
  replicas?: number;
  /** Clock (tests). */
  now?: () => Date;
  /** Waits between bulk retries (tests pass a no-op). */
  sleep?: (ms: number) => Promise<void>;
  /**
   * The catch-up pass rewrites items whose `updated` is at or after the reindex start minus this margin (clock
   * skew between writers and this process), ms. @default 300000 (5 minutes)
   */
  catchUpMarginMs?: number;
}

/** Bulk attempts per scan page in a reindex (first try included). */
export const REINDEX_BULK_ATTEMPTS = 4;

/**
 * Upserts through `index`, retrying up to REINDEX_BULK_ATTEMPTS times with jittered exponential back-off (waits of
 * at most 0.5, 1 and 2 s, at least half of each): only the documents a BulkIndexError names are sent again; a
 * ServiceUnavailableError resends the page.
 * @param sleep waits between attempts, ms (tests record the waits instead).
 * @throws the last error when the attempts are exhausted, or any other error at once.
 */
export async function upsertWithRetries(
  index: SearchIndex,
  documents: SearchDocument[],
  sleep?: (ms: number) => Promise<void>,
): Promise<void> {
  let pending = documents;
  await retry(
    async () => {
      try {
        await index.upsert(pending);
      } catch (error) {
        if (error instanceof BulkIndexError) {
          const failed = new Set(error.failedIds);
          pending = pending.filter((document) => failed.has(documentId(document)));
        }
        throw error;
      }
    },
    {
      attempts: REINDEX_BULK_ATTEMPTS,
      minDelayMs: 500,
      retryable: (error) => error instanceof BulkIndexError || error instanceof ServiceUnavailableError,
      ...(sleep === undefined ? {} : { sleep }),
    },
  );
}

/**
 * Rebuilds the OpenSearch index behind `alias` without downtime:
 * 1. puts the index template, reads the indexes behind the alias;
 * 2. creates `<alias>-<UTC time>` (settings and mappings from the template) and bulk-loads every document of the
 *    devices and scenarios tables into it (REINDEX_BULK_ATTEMPTS per page), then refreshes it;
 * 3. moves the alias with one atomic `_aliases` call (remove from the old indexes, add to the new one);
 * 4. deletes the old indexes;
 * 5. catch-up: rewrites, through the alias, the items updated since the start (minus `catchUpMarginMs`): the stream
 *    consumer wrote those changes to the old index while the new one was loading.
 * Searches answer from the old index until step 3 and from the new one after. If step 2 or 3 fails, the new index
 * is deleted and the alias is untouched. `load` writes every document (and, with `since`, the changed ones).
 * @throws ServiceUnavailableError when OpenSearch is unreachable; BulkIndexError when documents are still refused
 *   after the retries; OpenSearchRequestError when OpenSearch refuses a step (e.g. the alias moved meanwhile).
 */
export class OpenSearchAliasRebuild implements RebuildableSearchIndex {
  constructor(private readonly settings: OpenSearchRebuildSettings) {}

  async rebuild(load: SearchLoad): Promise<ReindexResult> {
    const { transport, alias } = this.settings;
    const now = this.settings.now ?? (() => new Date());
    const sleep = this.settings.sleep;
    const started = now();
    const indexes = new OpenSearchIndexes(
      transport,
      alias,
      this.settings.replicas === undefined ? {} : { replicas: this.settings.replicas },
    );
    await indexes.putTemplate();
    const previous = await indexes.aliasIndexes();
    const name = concreteIndexName(alias, started);
    await indexes.createIndex(name);
    let documents: number;
    try {
      const target = new OpenSearchSearchIndex({ transport, alias: name, requireAlias: false });
      documents = await load({ upsert: (batch) => upsertWithRetries(target, batch, sleep) });
      await indexes.refresh(name);
      await indexes.switchAlias(name, previous);
    } catch (error) {
      await indexes.deleteIndexes([name]).catch(() => undefined);
      throw error;
    }
    await indexes.deleteIndexes(previous.filter((index) => index !== name));
    const live = new OpenSearchSearchIndex({ transport, alias });
    const since = new Date(started.getTime() - (this.settings.catchUpMarginMs ?? 300_000)).toISOString();
    await load({ upsert: (batch) => upsertWithRetries(live, batch, sleep) }, { since });
    return { index: name, documents, tookMs: now().getTime() - started.getTime() };
  }
}
