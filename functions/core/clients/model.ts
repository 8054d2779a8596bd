/**
 * API clients (docs/integrations.md): machine identities of one company, for integrators' systems (a store's back
 * office, a CI pipeline). A client authenticates at the token endpoint with the OAuth 2.0 client credentials grant
 * (RFC 6749 §4.4) and gets a short-lived token acting for its company with its role's scopes.
 */

/** The roles a client may hold: a machine reads or operates a company's fleet; it never administers. */
export const API_CLIENT_ROLES = ['viewer', 'operator'] as const;

/** A client's role. */
export type ApiClientRole = (typeof API_CLIENT_ROLES)[number];

/** What every client id starts with: never a device's `{company}~{deviceId}`, which always holds a `~`. */
export const API_CLIENT_ID_PREFIX = 'api_';

/** A client id: `api_` and a ULID (30 characters). */
export const API_CLIENT_ID_PATTERN = /^api_[0-9A-HJKMNP-TV-Z]{26}$/;

/** Whether `clientId` is an API client's id (`api_` and a ULID): the token endpoint sends it to issueClientToken. */
export function isApiClientId(clientId: string | undefined): clientId is string {
  return clientId !== undefined && API_CLIENT_ID_PATTERN.test(clientId);
}

/** Most clients a company may have. */
export const MAX_API_CLIENTS_PER_COMPANY = 50;

/** Longest client name, characters. */
export const MAX_API_CLIENT_NAME_LENGTH = 128;

/** Longest time the previous secret keeps working after a rotation, seconds (24 h), and the default. */
export const MAX_PREVIOUS_SECRET_SECONDS = 86_400;

/**
 * How long a process trusts what it read of a client for the requests of its tokens, ms: a client disabled, deleted
 * or given a lower role stops its live tokens within this time plus one request (docs/contract.md, "API clients").
 */
export const API_CLIENT_RECHECK_MS = 30_000;

/** Least time between two writes of a client's `lastUsedAt`, ms: at most one write per client per minute. */
export const LAST_USED_WRITE_INTERVAL_MS = 60_000;

/** The actor an API client's actions are audited as (`by`): `client:{clientId}`. */
export function clientActor(clientId: string): string {
  return `client:${clientId}`;
}

/** A client as answered (never its secrets). Times are ISO-8601. */
export interface ApiClient {
  clientId: string;
  name: string;
  company: string;
  role: ApiClientRole;
  /** A disabled client gets no token, and its live tokens stop within API_CLIENT_RECHECK_MS. */
  enabled: boolean;
  created: string;
  /** Who created it (username, or `client:{id}`). */
  createdBy: string;
  updated: string;
  /** Last token issued or request served, to the minute (LAST_USED_WRITE_INTERVAL_MS); absent: never used. */
  lastUsedAt?: string;
  /** Until when the secret before the last rotation still works; absent when there is none. */
  previousSecretExpiresAt?: string;
}

/** A client as stored: with the scrypt hashes of its secret and, during a rotation's overlap, of the previous one. */
export interface StoredApiClient extends ApiClient {
  secretHash: string;
  previousSecretHash?: string;
  /**
   * ISO-8601: tokens issued before it are refused. Set when the client is disabled or its secret rotated without an
   * overlap, the answers to a leak: they end every live token, and enabling the client again brings none back.
   */
  tokensNotBefore?: string;
}

/**
 * The claims of an API client's token besides iss, aud, iat, nbf, exp and jti: `sub` and `client_id` the client id,
 * `username` its audit actor (`client:{clientId}`), `companies` its one company, `scope` its scopes.
 */
export interface ClientTokenClaims {
  sub: string;
  username: string;
  companies: [string];
  scope: string;
  client_id: string;
}
