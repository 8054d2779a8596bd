/**
 * What keeps an API client's live tokens in step with the client: a token is signed for up to 15 minutes, but a client
 * disabled, deleted, moved or given a lower role must stop sooner. Each request of a client's token reads the client
 * (at most once per API_CLIENT_RECHECK_MS per process, so a busy integration costs one read every 30 s, not one per
 * request) and is refused when the client no longer grants what the token carries. The same read keeps `lastUsedAt`.
 */
import { ROLES } from '../access/roles.js';
import { UnauthorizedError } from '../shared/errors.js';
import type { Principal } from '../shared/principal.js';
import { API_CLIENT_RECHECK_MS, LAST_USED_WRITE_INTERVAL_MS, type StoredApiClient } from './model.js';
import type { ApiClientStore } from './ports.js';

/** Clients a process remembers at once; beyond, the oldest read is forgotten (and read again on its next request). */
const MAX_REMEMBERED_CLIENTS = 10_000;

/** A client as read, and when (epoch ms). */
interface Remembered {
  at: number;
  client: Promise<StoredApiClient | undefined>;
  /** Epoch ms of this process's last `lastUsedAt` write for the client. */
  touchedAt?: number;
}

/**
 * Whether `client` still grants a token of `company` carrying `scopes`, issued at `issuedAt` (ISO-8601, whole
 * seconds as `iat`): it exists, is enabled, is of that company, its role holds each scope, and the token is not older
 * than its `tokensNotBefore`.
 */
export function clientGrants(
  client: StoredApiClient | undefined,
  token: { company: string | undefined; scopes: ReadonlySet<string>; issuedAt: string },
): boolean {
  if (client === undefined || !client.enabled || client.company !== token.company) return false;
  // `iat` has whole seconds: a token of the same second as the cut is refused too.
  if (client.tokensNotBefore !== undefined && Date.parse(token.issuedAt) <= Date.parse(client.tokensNotBefore)) return false;
  const held: readonly string[] = ROLES[client.role];
  return [...token.scopes].every((scope) => held.includes(scope));
}

/** The per-process check of API client tokens (one instance per process, built by the composition root). */
export class ApiClientSessions {
  private readonly remembered = new Map<string, Remembered>();

  constructor(
    private readonly clients: Pick<ApiClientStore, 'get' | 'touch'>,
    private readonly clock: () => number = Date.now,
    private readonly recheckMs = API_CLIENT_RECHECK_MS,
  ) {}

  /**
   * Checks the request of a principal acting as an API client (`principal.apiClient`; any other passes untouched),
   * and records its use (`lastUsedAt`, at most one write per client per LAST_USED_WRITE_INTERVAL_MS).
   * @throws UnauthorizedError (401) when the client is gone, disabled, of another company, its role no longer holds
   *   one of the token's scopes, or the token is older than its `tokensNotBefore`: the detail says to request a new
   *   token. A failed read is thrown as it is (503); a failed `lastUsedAt` write is ignored.
   */
  async check(principal: Principal): Promise<void> {
    if (principal.apiClient === undefined) return;
    const { clientId, issuedAt } = principal.apiClient;
    const entry = this.entryOf(clientId);
    const client = await entry.client;
    if (!clientGrants(client, { company: principal.companies[0], scopes: principal.scopes, issuedAt })) {
      throw new UnauthorizedError(
        `API client '${clientId}' is disabled, deleted, has a lower role, or ended its tokens since this one was issued; request a new token.`,
      );
    }
    await this.touch(clientId, entry, client as StoredApiClient);
  }

  /** The remembered read of a client, read again once older than the recheck time (or after a failed read). */
  private entryOf(clientId: string): Remembered {
    const now = this.clock();
    const cached = this.remembered.get(clientId);
    if (cached !== undefined && now - cached.at < this.recheckMs) return cached;
    const client = this.clients.get(clientId);
    const entry: Remembered = { at: now, client, ...(cached?.touchedAt === undefined ? {} : { touchedAt: cached.touchedAt }) };
    client.catch(() => this.remembered.delete(clientId));
    this.remembered.delete(clientId);
    this.remembered.set(clientId, entry);
    if (this.remembered.size > MAX_REMEMBERED_CLIENTS) this.remembered.delete(this.remembered.keys().next().value as string);
    return entry;
  }

  /** Writes `lastUsedAt` when neither the stored value nor this process's last write is within the interval. */
  private async touch(clientId: string, entry: Remembered, client: StoredApiClient): Promise<void> {
    const now = this.clock();
    const since = now - LAST_USED_WRITE_INTERVAL_MS;
    const stored = client.lastUsedAt === undefined ? 0 : Date.parse(client.lastUsedAt);
    if (Math.max(entry.touchedAt ?? 0, stored) > since) return;
    entry.touchedAt = now;
    // Best effort: a throttled write must not fail the request it records.
    await this.clients.touch(clientId, new Date(now).toISOString(), new Date(since).toISOString()).catch(() => undefined);
  }
}
