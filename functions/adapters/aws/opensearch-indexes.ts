/**
 * The lifecycle of the search index in OpenSearch: the index template, the concrete indexes `<alias>-<UTC time>`
 * and the alias that searches and writes use. Searches and the stream consumer only ever name the alias, so a
 * reindex builds a new concrete index and moves the alias to it in one atomic `_aliases` call (no downtime).
 */
import { createHash } from 'node:crypto';
import { ServiceUnavailableError } from '../../core/shared/errors.js';
import type { RetryPolicy } from '../retry.js';
import { DEFAULT_REPLICAS, indexTemplate, type Json } from './opensearch-queries.js';
import {
  callOpenSearch,
  DEFAULT_RETRY_AFTER_SECONDS,
  expectSuccess,
  OpenSearchRequestError,
  type OpenSearchTransport,
  sendRequest,
} from './opensearch-transport.js';

/** Priority of our index template (higher wins when several templates match a new index). */
export const TEMPLATE_PRIORITY = 100;

/** Name of the index template of `alias`: `<alias>-template`. */
export function templateName(alias: string): string {
  return `${alias}-template`;
}

/**
 * Fingerprint of the template with `replicas` (16 hex digits of a SHA-256 of its JSON): changes whenever the
 * mappings or the settings change. The CDK passes it to the setup custom resource, so a mapping change (or a new
 * data node count) runs its Update.
 */
export function templateVersion(replicas: number = DEFAULT_REPLICAS): string {
  return createHash('sha256')
    .update(JSON.stringify(indexTemplate(replicas)))
    .digest('hex')
    .slice(0, 16);
}

/**
 * Body of `PUT _index_template/<alias>-template`: applies indexTemplate() (settings, explicit mappings) to every
 * index named `<alias>-*`, i.e. to every concrete index the setup and the reindex create.
 */
export function indexTemplateBody(alias: string, replicas: number = DEFAULT_REPLICAS): Json {
  return {
    index_patterns: [`${alias}-*`],
    priority: TEMPLATE_PRIORITY,
    template: indexTemplate(replicas),
    _meta: { alias, version: templateVersion(replicas) },
  };
}

/**
 * Name of a concrete index of `alias` created at `at`: `<alias>-<yyyymmdd>t<hhmmssSSS>z` in UTC, e.g.
 * `resources-20261122t161646712z` (index names are lower case; milliseconds keep two quick reindexes apart).
 */
export function concreteIndexName(alias: string, at: Date): string {
  const stamp = at.toISOString().replace(/[-:.]/g, '').toLowerCase();
  return `${alias}-${stamp}`;
}

/** Options of OpenSearchIndexes. */
export interface OpenSearchIndexesOptions {
  /** Retry-After of the ServiceUnavailableError thrown when OpenSearch is unreachable, seconds. @default 5 */
  retryAfterSeconds?: number;
  /** `number_of_replicas` of the template and of the indexes behind the alias (OPENSEARCH_REPLICAS). @default 0 */
  replicas?: number;
}

/** Index administration for one alias, through the same transport and error mapping as the search adapter. */
export class OpenSearchIndexes {
  private readonly retryAfterSeconds: number;
  readonly replicas: number;

  /** @param alias the alias searches and writes use (OPENSEARCH_INDEX, default `resources`). */
  constructor(
    private readonly transport: OpenSearchTransport,
    readonly alias: string,
    options: OpenSearchIndexesOptions = {},
  ) {
    this.retryAfterSeconds = options.retryAfterSeconds ?? DEFAULT_RETRY_AFTER_SECONDS;
    this.replicas = options.replicas ?? DEFAULT_REPLICAS;
  }

  /** Creates or replaces the index template (`PUT _index_template/<alias>-template`). Existing indexes are unchanged. */
  async putTemplate(): Promise<void> {
    await this.call(
      'PUT',
      `/_index_template/${encodeURIComponent(templateName(this.alias))}`,
      indexTemplateBody(this.alias, this.replicas),
    );
  }

  /**
   * Sets `number_of_replicas` of existing indexes (`PUT <names>/_settings`, a dynamic setting): indexes created
   * before the data node count changed follow it, so a single-node domain does not stay yellow.
   */
  async setReplicas(names: readonly string[]): Promise<void> {
    if (names.length === 0) return;
    await this.call('PUT', `/${names.map(encodeURIComponent).join(',')}/_settings`, { index: { number_of_replicas: this.replicas } });
  }

  /** The concrete indexes the alias points to (sorted), or [] when the alias does not exist. */
  async aliasIndexes(): Promise<string[]> {
    const path = `/_alias/${encodeURIComponent(this.alias)}`;
    const response = await sendRequest(this.transport, { method: 'GET', path }, this.retryAfterSeconds);
    if (response.statusCode === 404) return [];
    expectSuccess(response, `GET ${path}`, this.retryAfterSeconds);
    return Object.keys((response.body ?? {}) as Json).sort();
  }

  /**
   * Creates the concrete index `name`; its settings and mappings come from the index template (put it first).
   * With `withAlias`, the alias is added in the same call (the first index of the setup).
   * @throws OpenSearchRequestError (`resource_already_exists_exception`, `invalid_alias_name_exception` when an
   *   index is named like the alias) on refusal.
   */
  async createIndex(name: string, withAlias = false): Promise<void> {
    await this.call('PUT', `/${encodeURIComponent(name)}`, withAlias ? { aliases: { [this.alias]: {} } } : {});
  }

  /** Makes every write to `name` visible to searches (`POST <name>/_refresh`). */
  async refresh(name: string): Promise<void> {
    await this.call('POST', `/${encodeURIComponent(name)}/_refresh`);
  }

  /**
   * Points the alias at `to` only, in one atomic `POST _aliases`: `remove` from each of `from`, `add` to `to`.
   * Searches see either the old index or the new one, never neither. Fails as a whole (nothing changes) when one
   * of `from` no longer carries the alias, e.g. after a concurrent reindex.
   */
  async switchAlias(to: string, from: readonly string[]): Promise<void> {
    const actions: Json[] = [
      ...from.filter((name) => name !== to).map((index) => ({ remove: { index, alias: this.alias } })),
      { add: { index: to, alias: this.alias } },
    ];
    await this.call('POST', '/_aliases', { actions });
  }

  /** Deletes concrete indexes; missing ones are ignored. Never pass the alias itself. */
  async deleteIndexes(names: readonly string[]): Promise<void> {
    if (names.length === 0) return;
    const path = `/${names.map(encodeURIComponent).join(',')}?ignore_unavailable=true`;
    const response = await sendRequest(this.transport, { method: 'DELETE', path }, this.retryAfterSeconds);
    if (response.statusCode !== 404) expectSuccess(response, `DELETE ${path}`, this.retryAfterSeconds);
  }

  /**
   * The setup (custom resource Create/Update): puts the template, then, when the alias does not exist yet, creates
   * the first concrete index `<alias>-<now>` with the alias. Returns the indexes behind the alias and whether
   * this call created one. Idempotent: a second call only refreshes the template and the replica count of the
   * indexes behind the alias (their mappings and data are untouched).
   */
  async ensure(now: Date = new Date()): Promise<{ indexes: string[]; created: boolean }> {
    await this.putTemplate();
    const existing = await this.aliasIndexes();
    if (existing.length > 0) {
      await this.setReplicas(existing);
      return { indexes: existing, created: false };
    }
    const name = concreteIndexName(this.alias, now);
    await this.createIndex(name, true);
    return { indexes: [name], created: true };
  }

  private call(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: Json): Promise<unknown> {
    return callOpenSearch(this.transport, { method, path, ...(body === undefined ? {} : { body }) }, this.retryAfterSeconds);
  }
}

/**
 * How long the index setup keeps trying a domain that refuses it, ms. A new domain answers 403 until its access
 * policy (applied asynchronously after CloudFormation reports the stateful stack done) names the setup's role;
 * waiting beats failing and rolling the whole stack back. The setup function's timeout (searchIndexSetup in
 * functions/contract/functions.ts) leaves room for the last attempt.
 */
export const SETUP_RETRY_BUDGET_MS = 10 * 60 * 1000;

/**
 * Whether waiting may help: OpenSearch unreachable, 429 or 5xx (ServiceUnavailableError), or 403, which a new
 * domain answers until the access policy naming the caller's role has been applied (asynchronously, minutes after
 * CloudFormation reports it done).
 */
export function isTransientRefusal(error: unknown): boolean {
  return error instanceof ServiceUnavailableError || (error instanceof OpenSearchRequestError && error.statusCode === 403);
}

/**
 * How the index setup waits for a domain that refuses it (for `retry`, ../retry.ts): while the refusal is transient
 * (isTransientRefusal), waits of 2 s doubling to 60 s (jittered: each between half and all of that), no attempt
 * starting later than SETUP_RETRY_BUDGET_MS after the first.
 */
export const SETUP_RETRY_POLICY: RetryPolicy = {
  attempts: Number.POSITIVE_INFINITY,
  minDelayMs: 2_000,
  maxDelayMs: 60_000,
  budgetMs: SETUP_RETRY_BUDGET_MS,
  retryable: isTransientRefusal,
};
