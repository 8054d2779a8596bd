/** Ports of the API clients area. */
import type { Page } from '../shared/paging.js';
import type { StoredApiClient } from './model.js';

/** The API clients (the apiClients table: one item per client, keyed by its id, listed per company by an index). */
export interface ApiClientStore {
  /**
   * Writes a new client, counted against `max` clients of its company in the same transaction.
   * @returns `created`, or `full` when the company already has `max` clients (nothing written).
   */
  create(client: StoredApiClient, max: number): Promise<'created' | 'full'>;
  /** One client (a strongly consistent read), or undefined. */
  get(clientId: string): Promise<StoredApiClient | undefined>;
  /** A page of clients, of `company` only when given, in id (creation) order; `cursor` from the previous page. */
  list(company: string | undefined, limit: number, cursor: string | undefined): Promise<Page<StoredApiClient>>;
  /** Replaces a client while its `updated` is still `expectedUpdated`. @returns false when it changed or is gone. */
  replace(client: StoredApiClient, expectedUpdated: string): Promise<boolean>;
  /** Deletes a client and uncounts it. @returns the client deleted, or undefined when there was none. */
  delete(clientId: string): Promise<StoredApiClient | undefined>;
  /**
   * Sets `lastUsedAt` to `at` when it is absent or before `olderThan` (both ISO-8601): one conditional UpdateItem,
   * nothing (and no error) when the condition fails or the client is gone.
   */
  touch(clientId: string, at: string, olderThan: string): Promise<void>;
}
