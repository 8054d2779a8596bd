/**
 * The search side of the composition root: the one place that picks the search adapter (SEARCH_ENGINE) and builds the
 * OpenSearch client. Only the functions that search, index or reindex import this module, so only they bundle the
 * OpenSearch client. The rebuild of the index, which reads the tables, is search-rebuild.ts: the search function itself
 * uses no table, and importing the DynamoDB client here loaded it in its cold start.
 */
import { OpenSearchIndexes, SETUP_RETRY_POLICY } from '../../adapters/aws/opensearch-indexes.js';
import { OpenSearchSearchIndex } from '../../adapters/aws/opensearch-search-index.js';
import { createOpenSearchTransport, type OpenSearchTransport } from '../../adapters/aws/opensearch-transport.js';
import { EmbeddedSearchIndex } from '../../adapters/embedded/search-engine.js';
import { SwappableSearchIndex } from '../../adapters/embedded/swappable-search-index.js';
import { type RetryPolicy, retry } from '../../adapters/retry.js';
import type { SearchIndex } from '../../core/search/ports.js';
import { openSearchConfig, searchEngine } from '../config.js';

/** The OpenSearch connection: transport, the alias searches and writes use, and the replicas of new indexes. */
export interface OpenSearchConnection {
  transport: OpenSearchTransport;
  alias: string;
  replicas: number;
}

let openSearchConnection: OpenSearchConnection | undefined;

/**
 * The OpenSearch transport (official client; SigV4-signed with OPENSEARCH_AUTH=aws-sigv4), the alias
 * (OPENSEARCH_INDEX, default `resources`) and the replicas of new indexes (OPENSEARCH_REPLICAS, default 0), built once.
 * @throws Error naming OPENSEARCH_URL, OPENSEARCH_AUTH, OPENSEARCH_REPLICAS or AWS_REGION when they are missing or wrong.
 */
export function openSearch(): OpenSearchConnection {
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

/** Index administration (template, concrete indexes, alias) of the OpenSearch alias. */
export function openSearchIndexes(): OpenSearchIndexes {
  const { transport, alias, replicas } = openSearch();
  return new OpenSearchIndexes(transport, alias, { replicas });
}

/** Overrides of the setup's retry policy: clock, waits and jitter (tests), and a report of each retry. */
export type SetupWaiting = Pick<RetryPolicy, 'sleep' | 'now' | 'random' | 'onRetry'>;

/** What the index setup custom resource works with. */
export interface SearchIndexSetup {
  /** The alias (OPENSEARCH_INDEX). */
  alias: string;
  /** `number_of_replicas` of the template and the indexes (OPENSEARCH_REPLICAS). */
  replicas: number;
  /**
   * Puts the template and, when the alias does not exist, creates its first concrete index (OpenSearchIndexes.ensure),
   * tried again while the domain refuses or cannot be reached, under SETUP_RETRY_POLICY with `waiting`'s overrides.
   * @returns the indexes behind the alias and whether this call created one.
   * @throws ServiceUnavailableError or OpenSearchRequestError once the policy's budget is spent.
   */
  ensure(waiting: SetupWaiting): Promise<{ indexes: string[]; created: boolean }>;
}

/** The index setup of the OpenSearch alias (the setup custom resource). @throws Error as openSearch() does. */
export function searchIndexSetup(): SearchIndexSetup {
  const indexes = openSearchIndexes();
  return {
    alias: indexes.alias,
    replicas: indexes.replicas,
    ensure: (waiting) => retry(() => indexes.ensure(), { ...SETUP_RETRY_POLICY, ...waiting }),
  };
}

let index: SearchIndex | undefined;

/**
 * The search index, built once: `embedded` (default: the local runtime) is an in-memory EmbeddedSearchIndex that
 * searchRebuild() (search-rebuild.ts) rebuilds and swaps; `opensearch` searches and writes the OpenSearch alias.
 * @throws Error naming a missing or wrong variable (SEARCH_ENGINE, OPENSEARCH_*).
 */
export function searchIndex(): SearchIndex {
  if (index === undefined) {
    switch (searchEngine()) {
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
