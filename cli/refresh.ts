/**
 * The stored login's silent refresh: a command run with the token `dss login` stored (not `--token` or DSS_TOKEN)
 * renews it with the stored refresh token (docs/contract.md, "Tokens") when it has expired, before its first call,
 * or when a call answers 401; once per command. The renewed token is written back to the login file.
 */
import type { Middleware } from 'openapi-fetch';
import { createDssClient, requestRefreshToken } from '../client/index.js';
import { note } from './output.js';
import { type StoredLogin, writeLogin } from './settings.js';

/** How long before its expiry a stored token is renewed ahead of a command, ms: a call sent just before it would fail. */
export const EXPIRY_MARGIN_MS = 30_000;

/** What the session needs besides the login: the file's environment, the HTTP client, the clock (tests inject them). */
export interface StoredSessionOptions {
  environment?: NodeJS.ProcessEnv;
  fetch?: typeof globalThis.fetch;
  /** Epoch ms. @default Date.now */
  now?: () => number;
}

/** The stored login of one command, renewed at most once. */
export class StoredSession {
  private current: StoredLogin;
  /** The one refresh of this command (its outcome: whether a new token came), once started. */
  private refreshing: Promise<boolean> | undefined;
  /** Clones of the requests under way (by openapi-fetch's request id), to send one again after a refresh. */
  private readonly pending = new Map<string, Request>();

  constructor(
    login: StoredLogin,
    private readonly options: StoredSessionOptions = {},
  ) {
    this.current = login;
  }

  /** The access token to send now. */
  get token(): string {
    return this.current.token;
  }

  /** Whether the stored token has expired, or will within EXPIRY_MARGIN_MS. */
  expired(): boolean {
    const expiresAt = Date.parse(this.current.expiresAt);
    return Number.isFinite(expiresAt) && expiresAt - EXPIRY_MARGIN_MS <= (this.options.now ?? Date.now)();
  }

  /** Renews the token before the command's first call when it has expired (expired()). */
  async refreshIfExpired(): Promise<void> {
    if (this.expired()) await this.refresh();
  }

  /**
   * Renews the access token with the refresh token, once per command: a second call answers the first one's outcome.
   * A refused refresh (the session ended: refresh token expired or revoked, user disabled) notes that `dss login` is
   * needed; the command goes on with the old token and gets the service's answer.
   * @returns whether a new token came.
   */
  refresh(): Promise<boolean> {
    this.refreshing ??= this.renew();
    return this.refreshing;
  }

  private async renew(): Promise<boolean> {
    const refreshToken = this.current.refreshToken;
    if (refreshToken === undefined) return false;
    const auth = createDssClient({
      baseUrl: this.current.baseUrl,
      uploadUrl: this.current.uploadUrl,
      authUrl: this.current.authUrl,
      ...(this.options.fetch === undefined ? {} : { fetch: this.options.fetch }),
    }).auth;
    let result: Awaited<ReturnType<typeof requestRefreshToken>>;
    try {
      result = await requestRefreshToken(auth, refreshToken);
    } catch {
      return false;
    }
    if (result.data === undefined) {
      if (result.response.status === 400) note('The stored session has ended (its refresh token was refused): run `dss login` again.');
      return false;
    }
    const now = (this.options.now ?? Date.now)();
    this.current = {
      ...this.current,
      token: result.data.access_token,
      expiresAt: new Date(now + result.data.expires_in * 1000).toISOString(),
    };
    await writeLogin(this.current, this.options.environment);
    return true;
  }

  /**
   * openapi-fetch middleware, after the bearer token's: a call answered 401 is sent once more, with the renewed token,
   * when this command's refresh gives a new one (or gave one since the call was sent); otherwise the 401 stands.
   */
  retryOnUnauthorized(): Middleware {
    return {
      onRequest: ({ request, id }) => {
        // Only calls with the bearer token (not the auth address's sign-ins); kept while the call is under way: its
        // body can be read once, so the retry needs a copy.
        if (request.headers.has('authorization')) this.pending.set(id, request.clone());
        return undefined;
      },
      onResponse: async ({ request, response, id, options }) => {
        const copy = this.pending.get(id);
        this.pending.delete(id);
        if (response.status !== 401 || copy === undefined) return undefined;
        const renewed = request.headers.get('authorization') !== `Bearer ${this.token}` || (await this.refresh());
        if (!renewed) return undefined;
        copy.headers.set('authorization', `Bearer ${this.token}`);
        return options.fetch(copy);
      },
      onError: ({ id }) => {
        this.pending.delete(id);
        return undefined;
      },
    };
  }
}
