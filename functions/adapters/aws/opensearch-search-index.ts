/**
 * SearchIndex over OpenSearch. `@opensearch-project/opensearch` is not a dependency of this build, so the adapter
 * talks to a minimal OpenSearchTransport (one JSON/NDJSON request, status and parsed body back); FetchTransport
 * implements it over Node's fetch for a plain HTTP(S) endpoint. SigV4 signing (Amazon OpenSearch Service) is not
 * implemented: a signing transport can be supplied through the same interface.
 */
import { ServiceUnavailableError } from '../../core/errors.js';
import type { SearchIndex } from '../../core/ports.js';
import type { DocumentKey, SearchDocument } from '../../core/search/documents.js';
import type { CountQuery, SearchQuery, SearchResult, ValueCounts } from '../../core/search/query.js';
import {
  bulkBody, countRequestBody, documentId, indexTemplate, searchRequestBody, toSearchResult, toValueCounts, type Json,
} from './opensearch-queries.js';

/** One HTTP request to OpenSearch. A string body is sent as NDJSON (`_bulk`), anything else as JSON. */
export interface OpenSearchRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'HEAD';
  /** Path with query string, e.g. `/resources/_search`. */
  path: string;
  body?: unknown;
}

/** OpenSearch's answer: status code and parsed JSON body (undefined when empty). */
export interface OpenSearchResponse {
  statusCode: number;
  body: unknown;
  /** `Retry-After` in seconds when the server sent one. */
  retryAfterSeconds?: number;
}

/** The smallest client the adapter needs; rejects only when OpenSearch cannot be reached. */
export interface OpenSearchTransport {
  request(request: OpenSearchRequest): Promise<OpenSearchResponse>;
}

/** OpenSearchTransport over fetch, for an endpoint such as `http://localhost:9200` (basic auth in the URL allowed). */
export class FetchTransport implements OpenSearchTransport {
  private readonly base: string;
  private readonly authorization: string | undefined;

  constructor(url: string, private readonly timeoutMs = 10_000) {
    const parsed = new URL(url);
    this.authorization = parsed.username === ''
      ? undefined
      : `Basic ${Buffer.from(`${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}`).toString('base64')}`;
    parsed.username = '';
    parsed.password = '';
    this.base = parsed.toString().replace(/\/$/, '');
  }

  async request(request: OpenSearchRequest): Promise<OpenSearchResponse> {
    const headers: Record<string, string> = {};
    if (this.authorization !== undefined) headers.authorization = this.authorization;
    let body: string | undefined;
    if (typeof request.body === 'string') {
      body = request.body;
      headers['content-type'] = 'application/x-ndjson';
    } else if (request.body !== undefined) {
      body = JSON.stringify(request.body);
      headers['content-type'] = 'application/json';
    }
    const response = await fetch(`${this.base}${request.path}`, {
      method: request.method, headers, ...(body === undefined ? {} : { body }), signal: AbortSignal.timeout(this.timeoutMs),
    });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = text;
    }
    const retryAfter = Number(response.headers.get('retry-after'));
    return { statusCode: response.status, body: parsed, ...(Number.isFinite(retryAfter) && retryAfter > 0 ? { retryAfterSeconds: retryAfter } : {}) };
  }
}

/** Some documents of a `_bulk` request were not written or deleted; `failedIds` are their `_id`s (`TYPE#company#id`). */
export class BulkIndexError extends Error {
  constructor(readonly failedIds: string[], readonly reasons: string[]) {
    super(`OpenSearch bulk request failed for ${failedIds.length} document(s): ${failedIds.map((id, n) => `${id} (${reasons[n] ?? 'unknown'})`).join(', ')}.`);
    this.name = 'BulkIndexError';
  }
}

/** Options of the adapter. */
export interface OpenSearchSearchIndexOptions {
  transport: OpenSearchTransport;
  /** Alias (or index) that searches and writes go to, e.g. `resources`. */
  alias: string;
  /** Concrete index `createIndex` creates behind the alias (reindex writes a new one, then switches the alias). */
  index?: string;
  /** `refresh` of bulk writes: `wait_for` makes writes visible before returning (tests); default none. */
  refresh?: 'wait_for' | 'true' | 'false';
  /** Seconds announced in Retry-After when the backend is unavailable. */
  retryAfterSeconds?: number;
}

const DEFAULT_RETRY_AFTER_SECONDS = 5;

/** SearchIndex on OpenSearch: bodies from opensearch-queries.ts, errors mapped to the domain's. */
export class OpenSearchSearchIndex implements SearchIndex {
  private readonly transport: OpenSearchTransport;
  readonly alias: string;
  readonly index: string;
  private readonly refresh: string | undefined;
  private readonly retryAfterSeconds: number;

  constructor(options: OpenSearchSearchIndexOptions) {
    this.transport = options.transport;
    this.alias = options.alias;
    this.index = options.index ?? options.alias;
    this.refresh = options.refresh;
    this.retryAfterSeconds = options.retryAfterSeconds ?? DEFAULT_RETRY_AFTER_SECONDS;
  }

  /**
   * Creates `index` with the template's settings and mappings, and points `alias` at it when the two differ.
   * @throws Error when the index exists or the template is rejected.
   */
  async createIndex(): Promise<void> {
    const body: Json = { ...indexTemplate(), ...(this.index === this.alias ? {} : { aliases: { [this.alias]: {} } }) };
    await this.call({ method: 'PUT', path: `/${encodeURIComponent(this.index)}`, body });
  }

  /** Deletes `index` (tests, failed reindex); a missing index is ignored. */
  async deleteIndex(): Promise<void> {
    const response = await this.send({ method: 'DELETE', path: `/${encodeURIComponent(this.index)}` });
    if (response.statusCode !== 404) this.check(response, 'delete index');
  }

  async search(query: SearchQuery): Promise<SearchResult> {
    const body = await this.call({ method: 'POST', path: `/${encodeURIComponent(this.alias)}/_search`, body: searchRequestBody(query) });
    return toSearchResult(body);
  }

  async countValues(query: CountQuery): Promise<ValueCounts> {
    const body = await this.call({ method: 'POST', path: `/${encodeURIComponent(this.alias)}/_search`, body: countRequestBody(query) });
    return toValueCounts(body, query);
  }

  /** @throws BulkIndexError listing the ids that failed; ServiceUnavailableError when OpenSearch is unreachable. */
  async upsert(documents: SearchDocument[]): Promise<void> {
    await this.bulk(documents, []);
  }

  /** Unknown keys are ignored (a delete answered `not_found` is not a failure). */
  async remove(keys: DocumentKey[]): Promise<void> {
    await this.bulk([], keys);
  }

  /** Writes documents and deletions in one `_bulk` request. @throws BulkIndexError on partial failure. */
  async bulk(documents: readonly SearchDocument[], removals: readonly DocumentKey[]): Promise<void> {
    const body = bulkBody(documents, removals);
    if (body === '') return;
    const refresh = this.refresh === undefined ? '' : `?refresh=${this.refresh}`;
    const response = await this.call({ method: 'POST', path: `/${encodeURIComponent(this.alias)}/_bulk${refresh}`, body });
    const result = response as { errors?: boolean; items?: Record<string, { _id?: string; status?: number; error?: unknown }>[] };
    if (result.errors !== true) return;
    const failedIds: string[] = [];
    const reasons: string[] = [];
    const expected = [...documents.map(documentId), ...removals.map(documentId)];
    (result.items ?? []).forEach((item, position) => {
      const [action, outcome] = Object.entries(item)[0] ?? [];
      if (outcome === undefined) return;
      const status = outcome.status ?? 500;
      if (status < 300 || (action === 'delete' && status === 404)) return;
      failedIds.push(outcome._id ?? expected[position] ?? `#${position}`);
      const error = outcome.error as { type?: string; reason?: string } | undefined;
      reasons.push(`${status} ${error?.type ?? ''}${error?.reason === undefined ? '' : `: ${error.reason}`}`.trim());
    });
    if (failedIds.length > 0) throw new BulkIndexError(failedIds, reasons);
  }

  /** Sends a request; connection failures become ServiceUnavailableError. */
  private async send(request: OpenSearchRequest): Promise<OpenSearchResponse> {
    try {
      return await this.transport.request(request);
    } catch (error) {
      throw new ServiceUnavailableError(
        `The search backend cannot be reached: ${error instanceof Error ? error.message : String(error)}.`, this.retryAfterSeconds,
      );
    }
  }

  /** Sends a request and returns the body of a 2xx answer. */
  private async call(request: OpenSearchRequest): Promise<unknown> {
    const response = await this.send(request);
    this.check(response, `${request.method} ${request.path}`);
    return response.body;
  }

  /**
   * 2xx passes; 429 and 5xx become ServiceUnavailableError (Retry-After from the answer or the default);
   * any other status is a bug or a misconfiguration (missing index, bad mapping): an Error with OpenSearch's reason.
   */
  private check(response: OpenSearchResponse, what: string): void {
    const { statusCode } = response;
    if (statusCode >= 200 && statusCode < 300) return;
    const error = (response.body as { error?: { type?: string; reason?: string } | string } | undefined)?.error;
    const reason = typeof error === 'string' ? error : error === undefined ? '' : `${error.type ?? ''}: ${error.reason ?? ''}`;
    if (statusCode === 429 || statusCode >= 500) {
      throw new ServiceUnavailableError(
        `The search backend is unavailable (${statusCode}${reason === '' ? '' : ` ${reason}`}).`,
        response.retryAfterSeconds ?? this.retryAfterSeconds,
      );
    }
    throw new Error(`OpenSearch ${what} failed with ${statusCode}${reason === '' ? '' : `: ${reason}`}.`);
  }
}
