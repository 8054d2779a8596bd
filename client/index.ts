/**
 * The typed client of the service: one openapi-fetch client per address (main `{base_url}`, `{scenario_upload_url}`,
 * `{auth_url}`), all typed by `paths` of client/api-types.ts, which `npm run generate` makes from the route definitions.
 * A call names its path and method as the OpenAPI document does and gets its documented body types:
 *
 * ```ts
 * const dss = createDssClient({ baseUrl, uploadUrl, authUrl, token });
 * const items = expectOk(await dss.main.GET('/companies/{companyId}/resources/DEVICE/deployments', {
 *   params: { path: { companyId: 'acme' }, query: { limit: 50 } },
 * }));
 * ```
 */
import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { components, paths } from './api-types.js';

export type { components, operations, paths } from './api-types.js';

/** A problem+json body (RFC 9457) with the optional `errors` list of violations. */
export type ProblemBody = components['schemas']['Problem'] & { errors?: components['schemas']['ProblemViolation'][] };

/** Where the service is and who calls it. */
export interface DssClientOptions {
  /** `{base_url}`, e.g. `http://127.0.0.1:3000` (a trailing `/` is dropped). */
  baseUrl: string;
  /** `{scenario_upload_url}`, e.g. `http://127.0.0.1:3001`. */
  uploadUrl: string;
  /** `{auth_url}`, e.g. `http://127.0.0.1:3002`. */
  authUrl: string;
  /** Bearer token sent on every request of the main and upload addresses; a function is read at each request. */
  token?: string | (() => string | undefined);
  /** Replaces the global fetch (tests, proxies). */
  fetch?: typeof globalThis.fetch;
  /** More openapi-fetch middleware, run on every address after the bearer token's. */
  middleware?: readonly Middleware[];
}

/** The service's three addresses, each an openapi-fetch client over every operation of the document. */
export interface DssClient {
  /** `{base_url}`: scenarios, deployments, devices, search, rollouts, device routes. */
  main: Client<paths>;
  /** `{scenario_upload_url}`: uploads (direct and presigned slots). */
  upload: Client<paths>;
  /** `{auth_url}`: tokens and the key set. */
  auth: Client<paths>;
}

/** Creates the typed client. Nothing is sent until a call is made. */
export function createDssClient(options: DssClientOptions): DssClient {
  const bearer: Middleware = {
    onRequest({ request }) {
      const token = typeof options.token === 'function' ? options.token() : options.token;
      if (token !== undefined && !request.headers.has('authorization')) request.headers.set('authorization', `Bearer ${token}`);
      return request;
    },
  };
  const clientFor = (baseUrl: string, withToken: boolean): Client<paths> => {
    const client = createClient<paths>({
      baseUrl: baseUrl.replace(/\/+$/, ''),
      ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    });
    if (withToken) client.use(bearer);
    for (const middleware of options.middleware ?? []) client.use(middleware);
    return client;
  };
  return { main: clientFor(options.baseUrl, true), upload: clientFor(options.uploadUrl, true), auth: clientFor(options.authUrl, false) };
}

/**
 * Asks `{auth_url}/token` for a device token with the OAuth 2.0 client credentials grant, form-encoded as RFC 6749
 * §4.4 asks (the JSON body of the route is a user's password sign-in).
 * @returns the openapi-fetch result: `data` (the token) on 200, the OAuth or problem `error` otherwise
 */
export function requestClientCredentialsToken(auth: DssClient['auth'], clientId: string, clientSecret: string) {
  return auth.POST('/token', {
    body: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret },
    bodySerializer: (body) => new URLSearchParams(body as Record<string, string>).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
}

/**
 * Asks `{auth_url}/token` for a new access token for a user's refresh token (RFC 6749 §6), form-encoded as the RFC
 * has it.
 * @returns the openapi-fetch result: `data` (the access token, no new refresh token) on 200, the OAuth `error`
 *   (`invalid_grant` when the refresh token is unknown, expired or revoked, or its user disabled) otherwise
 */
export function requestRefreshToken(auth: DssClient['auth'], refreshToken: string) {
  return auth.POST('/token', {
    body: { grant_type: 'refresh_token', refresh_token: refreshToken },
    bodySerializer: (body) => new URLSearchParams(body as Record<string, string>).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
}

/**
 * Revokes a user's refresh token at `{auth_url}/revoke` (RFC 7009 §2.1), form-encoded as the RFC has it: signing out,
 * so that the token renews nothing from then on. `init.signal` bounds the wait; `init.keepalive` lets the request
 * outlive a page being closed (fetch's own options).
 * @returns the openapi-fetch result: 200 without a body when revoked or not one to revoke (unknown, expired, already
 *   revoked), the OAuth `error` (`unsupported_token_type` for an access token) otherwise
 */
export function revokeRefreshToken(
  auth: DssClient['auth'],
  refreshToken: string,
  init: { signal?: AbortSignal; keepalive?: boolean } = {},
) {
  return auth.POST('/revoke', {
    ...init,
    body: { token: refreshToken, token_type_hint: 'refresh_token' },
    bodySerializer: (body) => new URLSearchParams(body as Record<string, string>).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
}

/** An answer outside 2xx (or 304 where a body was expected): its status and, when it sent one, its problem body. */
export class ApiError extends Error {
  constructor(
    /** HTTP status. */
    readonly status: number,
    /** The problem+json body, or a problem made from a non-problem body (an OAuth error, text). */
    readonly problem: ProblemBody,
    /** The response, for its headers (`Retry-After`, `WWW-Authenticate`). */
    readonly response: Response,
  ) {
    super(problem.detail);
    this.name = 'ApiError';
  }
}

/** What every openapi-fetch call resolves to. */
export interface FetchResult<D, E> {
  data?: D;
  error?: E;
  response: Response;
}

/**
 * The body of a successful call.
 * @returns `data` (undefined for a body-less 204)
 * @throws ApiError when the status is not 2xx, with the problem body (or one made from an OAuth error or text).
 */
export function expectOk<D, E>(result: FetchResult<D, E>): D {
  const { response } = result;
  if (response.ok) return result.data as D;
  throw new ApiError(response.status, problemOf(response, result.error), response);
}

/** A problem body from whatever an error answer carried (problem+json, an OAuth `{ error, error_description }`, text). */
function problemOf(response: Response, error: unknown): ProblemBody {
  const base = { type: 'about:blank', title: response.statusText || `HTTP ${response.status}`, status: response.status };
  if (typeof error === 'object' && error !== null) {
    const body = error as Record<string, unknown>;
    if (typeof body.detail === 'string') return { ...base, ...body } as ProblemBody;
    if (typeof body.error === 'string') {
      const description = typeof body.error_description === 'string' ? `: ${body.error_description}` : '';
      return { ...base, detail: `${body.error}${description}` };
    }
  }
  const text = typeof error === 'string' && error.trim() !== '' ? error.trim() : `The service answered ${response.status}.`;
  return { ...base, detail: text };
}
