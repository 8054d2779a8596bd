/**
 * SearchIndex over OpenSearch: request bodies from opensearch-queries.ts, sent through the OpenSearchTransport port
 * (opensearch-transport.ts: the official client, SigV4-signed in AWS), errors mapped to the domain's
 * (ServiceUnavailableError, 503 with Retry-After, when OpenSearch is unreachable, throttling or failing).
 */
import type { DocumentKey, SearchDocument } from '../../core/search/documents.js';
import { type SearchIndex, SearchIndexWriteError } from '../../core/search/ports.js';
import type { CountQuery, SearchQuery, SearchResult, ValueCounts } from '../../core/search/query.js';
import {
  bulkBody,
  countRequestBody,
  documentId,
  indexTemplate,
  type Json,
  SELECT_PAGE_SIZE,
  searchRequestBody,
  selectIdsRequestBody,
  toSearchResult,
  toSelectedIds,
  toValueCounts,
} from './opensearch-queries.js';
import {
  callOpenSearch,
  DEFAULT_RETRY_AFTER_SECONDS,
  expectSuccess,
  type OpenSearchRequest,
  type OpenSearchTransport,
  sendRequest,
} from './opensearch-transport.js';

export type { OpenSearchRequest, OpenSearchResponse, OpenSearchTransport } from './opensearch-transport.js';

/**
 * Some documents of a `_bulk` request were not written or deleted; `failedIds` are their `_id`s (`TYPE#company#id`).
 * The search port's SearchIndexWriteError with OpenSearch's reasons in its message.
 */
export class BulkIndexError extends SearchIndexWriteError {
  constructor(failedIds: string[], reasons: string[]) {
    super(
      failedIds,
      reasons,
      `OpenSearch bulk request failed for ${failedIds.length} document(s): ${failedIds.map((id, n) => `${id} (${reasons[n] ?? 'unknown'})`).join(', ')}.`,
    );
    this.name = 'BulkIndexError';
  }
}

/** Options of the adapter. */
export interface OpenSearchSearchIndexOptions {
  transport: OpenSearchTransport;
  /** Alias (or, with `requireAlias: false`, concrete index) that searches and writes go to, e.g. `resources`. */
  alias: string;
  /** Concrete index `createIndex` creates behind the alias (tests); defaults to `alias`. */
  index?: string;
  /**
   * Writes carry `require_alias=true`, so a write to a missing alias fails (and is retried) instead of creating an
   * index with dynamic mappings under that name. `false` for writes to a concrete index (the reindex). @default true
   */
  requireAlias?: boolean;
  /** `refresh` of bulk writes: `wait_for` makes writes visible before returning (tests); default none. */
  refresh?: 'wait_for' | 'true' | 'false';
  /** Seconds announced in Retry-After when the backend is unavailable and does not say. @default 5 */
  retryAfterSeconds?: number;
}

/** SearchIndex on OpenSearch: bodies from opensearch-queries.ts, errors mapped to the domain's. */
export class OpenSearchSearchIndex implements SearchIndex {
  private readonly transport: OpenSearchTransport;
  readonly alias: string;
  readonly index: string;
  private readonly bulkQuery: string;
  private readonly retryAfterSeconds: number;

  constructor(options: OpenSearchSearchIndexOptions) {
    this.transport = options.transport;
    this.alias = options.alias;
    this.index = options.index ?? options.alias;
    const query = [
      ...(options.requireAlias === false ? [] : ['require_alias=true']),
      ...(options.refresh === undefined ? [] : [`refresh=${options.refresh}`]),
    ];
    this.bulkQuery = query.length === 0 ? '' : `?${query.join('&')}`;
    this.retryAfterSeconds = options.retryAfterSeconds ?? DEFAULT_RETRY_AFTER_SECONDS;
  }

  /**
   * Creates `index` with the template's settings and mappings, and points `alias` at it when the two differ.
   * @throws OpenSearchRequestError when the index exists or the template is rejected.
   */
  async createIndex(): Promise<void> {
    const body: Json = { ...indexTemplate(), ...(this.index === this.alias ? {} : { aliases: { [this.alias]: {} } }) };
    await this.call({ method: 'PUT', path: `/${encodeURIComponent(this.index)}`, body });
  }

  /** Deletes `index` (tests); a missing index is ignored. */
  async deleteIndex(): Promise<void> {
    const request: OpenSearchRequest = { method: 'DELETE', path: `/${encodeURIComponent(this.index)}` };
    const response = await sendRequest(this.transport, request, this.retryAfterSeconds);
    if (response.statusCode !== 404) expectSuccess(response, 'delete index', this.retryAfterSeconds);
  }

  async search(query: SearchQuery): Promise<SearchResult> {
    const body = await this.call({ method: 'POST', path: `/${encodeURIComponent(this.alias)}/_search`, body: searchRequestBody(query) });
    return toSearchResult(body);
  }

  async countValues(query: CountQuery): Promise<ValueCounts> {
    const body = await this.call({ method: 'POST', path: `/${encodeURIComponent(this.alias)}/_search`, body: countRequestBody(query) });
    return toValueCounts(body, query);
  }

  /**
   * Pages through the matches in id order with `search_after`, SELECT_PAGE_SIZE hits a request (`_source: false`),
   * until `max` ids or the last match. Documents written between two pages may be missed or counted in `total`
   * differently: the selection is as of each page.
   */
  async selectIds(query: { companies: string[]; filters: Map<string, string[]> }, max: number): Promise<{ ids: string[]; total: number }> {
    const ids: string[] = [];
    let total = 0;
    let after: unknown[] | undefined;
    for (;;) {
      const size = Math.max(0, Math.min(SELECT_PAGE_SIZE, max - ids.length));
      const body = await this.call({
        method: 'POST',
        path: `/${encodeURIComponent(this.alias)}/_search`,
        body: selectIdsRequestBody(query, size, after),
      });
      const page = toSelectedIds(body);
      total = page.total;
      for (const id of page.ids) ids.push(id);
      after = page.after;
      if (page.ids.length < size || size === 0 || ids.length >= Math.min(max, total)) return { ids, total };
    }
  }

  /** @throws BulkIndexError listing the ids that failed; ServiceUnavailableError when OpenSearch is unreachable. */
  async upsert(documents: SearchDocument[]): Promise<void> {
    await this.bulk(documents, []);
  }

  /** Unknown keys are ignored (a delete answered `not_found` is not a failure). */
  async remove(keys: DocumentKey[]): Promise<void> {
    await this.bulk([], keys);
  }

  /**
   * Writes documents and deletions in one `_bulk` request.
   * @throws BulkIndexError on partial failure (429 item rejections and a missing alias included);
   *   ServiceUnavailableError when OpenSearch is unreachable or answers 429/5xx.
   */
  async bulk(documents: readonly SearchDocument[], removals: readonly DocumentKey[]): Promise<void> {
    const body = bulkBody(documents, removals);
    if (body === '') return;
    const response = await this.call({ method: 'POST', path: `/${encodeURIComponent(this.alias)}/_bulk${this.bulkQuery}`, body });
    const result = response as { errors?: boolean; items?: Record<string, { _id?: string; status?: number; error?: unknown }>[] };
    if (result.errors !== true) return;
    const failedIds: string[] = [];
    const reasons: string[] = [];
    const expected = [...documents.map(documentId), ...removals.map(documentId)];
    (result.items ?? []).forEach((item, position) => {
      const [action, outcome] = Object.entries(item)[0] ?? [];
      if (outcome === undefined) return;
      const status = outcome.status ?? 500;
      const error = outcome.error as { type?: string; reason?: string } | undefined;
      // A delete of an unknown document answers 404 `not_found` without an error: nothing to do. A 404 with an
      // error (the alias is missing, with require_alias) is a failure.
      if (status < 300 || (action === 'delete' && status === 404 && error === undefined)) return;
      failedIds.push(outcome._id ?? expected[position] ?? `#${position}`);
      reasons.push(`${status} ${error?.type ?? ''}${error?.reason === undefined ? '' : `: ${error.reason}`}`.trim());
    });
    if (failedIds.length > 0) throw new BulkIndexError(failedIds, reasons);
  }

  /** Sends a request and returns the body of a 2xx answer (see callOpenSearch for the errors). */
  private call(request: OpenSearchRequest): Promise<unknown> {
    return callOpenSearch(this.transport, request, this.retryAfterSeconds);
  }
}
