/**
 * Who is signed in and how the console reaches the service: the three addresses (named by the page), the access and
 * refresh tokens (kept in sessionStorage, so they end with the tab and are never written to disk by us), their
 * claims as the console reads them (companies, scopes: what to offer; the service checks them again on every call),
 * the silent refresh that keeps the session going, and the typed client every page calls the API through.
 */
import { computed, effect, signal } from '@preact/signals';
import { createDssClient, type DssClient, type ProblemBody, revokeRefreshToken } from '../../client/index.js';
import { ACCESS_TOKEN_LIFETIME_SECONDS } from '../../client/limits.js';

/** The service's three addresses, as the page names them in `<meta name="dss-addresses">`. */
export interface Addresses {
  main: string;
  upload: string;
  auth: string;
}

/** Reads the addresses the page was served with; locally the defaults of `npm start` when absent (a test page). */
function readAddresses(): Addresses {
  const content = document.querySelector('meta[name="dss-addresses"]')?.getAttribute('content');
  const parsed = content === null || content === undefined ? undefined : (JSON.parse(content) as Partial<Addresses>);
  const main = parsed?.main ?? new URL('.', location.href).href.replace(/\/+$/, '');
  return { main, upload: parsed?.upload ?? main, auth: parsed?.auth ?? main };
}

export const addresses: Addresses = readAddresses();

const TOKEN_KEY = 'dss.accessToken';
const REFRESH_KEY = 'dss.refreshToken';

/** What the sign-in form says when a session ends rather than the user leaving. */
const SESSION_ENDED = 'Your session has ended. Sign in again to go on where you were.';

/** The access token (a JWT), or null when signed out. */
export const token = signal<string | null>(sessionStorage.getItem(TOKEN_KEY));

/** Why the sign-in form is shown again (the session ended), or null. */
export const signInReason = signal<string | null>(null);

/** The claims the console reads from the token: it only decides what to offer; the service decides what is allowed. */
export interface Claims {
  subject: string;
  companies: string[];
  scopes: Set<string>;
  /** Expiry, ms since the epoch. */
  expiresAt: number;
  /** When it was issued (`iat`), ms since the epoch; undefined when the token does not say. */
  issuedAt: number | undefined;
}

/** Decodes a JWT's payload (base64url JSON) without verifying it: the service verifies every use. */
function decodeClaims(jwt: string): Claims | null {
  try {
    const payload = JSON.parse(atob((jwt.split('.')[1] ?? '').replace(/-/g, '+').replace(/_/g, '/'))) as Record<string, unknown>;
    const list = (value: unknown): string[] =>
      Array.isArray(value) ? value.map(String) : typeof value === 'string' ? value.split(/[\s,]+/).filter(Boolean) : [];
    const companies = list(
      typeof payload.companies === 'string' && payload.companies.startsWith('[') ? JSON.parse(payload.companies) : payload.companies,
    );
    return {
      subject: String(payload['cognito:username'] ?? payload.username ?? payload.sub ?? ''),
      companies,
      scopes: new Set(list(payload.scope)),
      expiresAt: typeof payload.exp === 'number' ? payload.exp * 1000 : Number.POSITIVE_INFINITY,
      issuedAt: typeof payload.iat === 'number' ? payload.iat * 1000 : undefined,
    };
  } catch {
    return null;
  }
}

/** The signed-in user's claims, or null when signed out. */
export const claims = computed(() => (token.value === null ? null : decodeClaims(token.value)));

/** Whether the signed-in user's token holds `scope` (e.g. `deployments:write`). */
export function can(scope: string): boolean {
  return claims.value?.scopes.has(scope) ?? false;
}

/**
 * Keeps `jwt` for this tab, and `refreshToken` when given (a refresh answers none: the one kept stays), and clears any
 * sign-in reason.
 */
export function keepToken(jwt: string, refreshToken?: string): void {
  sessionStorage.setItem(TOKEN_KEY, jwt);
  if (refreshToken !== undefined) sessionStorage.setItem(REFRESH_KEY, refreshToken);
  signInReason.value = null;
  token.value = jwt;
}

/**
 * Forgets the token: the sign-in form shows, with `reason` when the session ended rather than the user left. Signing
 * out also revokes the refresh token at the service (RFC 7009), so that a copy of it renews nothing, and forgets
 * everything else the console kept in the tab (an interrupted deploy's journal); an ended session keeps it, so that
 * the same user, signed in again, can resume.
 */
export function signOut(reason: string | null = null): void {
  if (reason === null) {
    const refreshToken = sessionStorage.getItem(REFRESH_KEY);
    // Not awaited: the user is signed out here at once; a revocation that fails leaves a token this tab forgot,
    // which expires by itself.
    // keepalive: the revocation goes out even when the tab is closed right after.
    if (refreshToken !== null) void revokeRefreshToken(api.auth, refreshToken, { keepalive: true }).catch(() => undefined);
    sessionStorage.clear();
  } else {
    sessionStorage.removeItem(TOKEN_KEY);
    sessionStorage.removeItem(REFRESH_KEY);
  }
  signInReason.value = reason;
  token.value = null;
}

/** A request of the main or upload address as it was before it was sent, to send again after a refresh. */
const unsent = new WeakMap<Request, Request>();

/**
 * The typed client (client/index.ts) over the three addresses with the current token. A 401 from the main or upload
 * address refreshes the session once (refreshSession) and sends the request again with the new token; when that
 * cannot be done, or the service refuses again, the session ends: the sign-in form shows and, once signed in again,
 * the same URL (page and state) returns.
 */
export const api: DssClient = createDssClient({
  baseUrl: addresses.main,
  uploadUrl: addresses.upload,
  authUrl: addresses.auth,
  token: () => token.value ?? undefined,
  middleware: [
    {
      onRequest({ request }) {
        if (request.headers.has('authorization')) unsent.set(request, request.clone());
        return undefined;
      },
      async onResponse({ request, response, options }) {
        if (response.status !== 401 || !request.headers.has('authorization')) return response;
        const again = unsent.get(request);
        const outcome = again === undefined ? 'refused' : await refreshSession();
        if (again !== undefined && outcome === 'refreshed' && token.value !== null) {
          again.headers.set('authorization', `Bearer ${token.value}`);
          // Called unbound: the browser's fetch refuses to run with `this` set to another object.
          const send = options.fetch;
          const answer = await send(again);
          if (answer.status !== 401) return answer;
        }
        // A session that ended or changed meanwhile (signed out, signed in again) is not this request's to end.
        if (outcome !== 'superseded') signOut(SESSION_ENDED);
        return response;
      },
    },
  ],
});

/**
 * How a refresh went: a new access token kept, refused by the service (the session is over), not reached, or
 * superseded (the user signed out or in while it was on its way: its answer is dropped).
 */
export type RefreshOutcome = 'refreshed' | 'refused' | 'unreachable' | 'superseded';

let refreshing: Promise<RefreshOutcome> | null = null;

/**
 * Exchanges the refresh token (RFC 6749 §6) for a new access token and keeps it; one exchange at a time, whoever asks
 * (the timer, several requests answered 401 together). Refused (`invalid_grant`: expired, revoked, the user disabled
 * or deleted) or without a refresh token, it forgets the refresh token; the caller decides whether the session ends.
 * An answer that arrives after the user signed out or in is dropped (`superseded`): it never signs them in again.
 */
export function refreshSession(): Promise<RefreshOutcome> {
  refreshing ??= (async (): Promise<RefreshOutcome> => {
    const refreshToken = sessionStorage.getItem(REFRESH_KEY);
    if (refreshToken === null) return 'refused';
    try {
      const { data, response } = await api.auth.POST('/token', {
        body: { grant_type: 'refresh_token', refresh_token: refreshToken },
      });
      // Signed out (or in as someone else) while the answer was on its way: it renews a session that is over.
      if (sessionStorage.getItem(REFRESH_KEY) !== refreshToken) return 'superseded';
      if (data !== undefined && 'access_token' in data) {
        keepToken(data.access_token);
        return 'refreshed';
      }
      if (response.status >= 500) return 'unreachable';
      sessionStorage.removeItem(REFRESH_KEY);
      return 'refused';
    } catch {
      return 'unreachable';
    }
  })().finally(() => {
    refreshing = null;
  });
  return refreshing;
}

/**
 * How long before its expiry an access token is refreshed, ms: a minute, or a quarter of the token's lifetime when
 * that is shorter (a short-lived token is still used for most of its life).
 */
function refreshLead(current: Claims): number {
  const lifetime = current.issuedAt === undefined ? ACCESS_TOKEN_LIFETIME_SECONDS * 1000 : current.expiresAt - current.issuedAt;
  return Math.min(60_000, Math.max(0, lifetime / 4));
}

/** When a refresh could not reach the service, how long until it is tried again, ms (while the token lasts). */
const REFRESH_RETRY_MS = 15_000;

let refreshTimer: ReturnType<typeof setTimeout> | undefined;

/** Refreshes now; a refusal ends the session, an unreachable service is tried again while the token lasts. */
async function refreshOnTime(): Promise<void> {
  const outcome = await refreshSession();
  if (outcome === 'refused' && token.value !== null) signOut(SESSION_ENDED);
  else if (outcome === 'unreachable') {
    const expiresAt = claims.value?.expiresAt ?? 0;
    const wait = Math.min(REFRESH_RETRY_MS, (expiresAt - Date.now()) / 2);
    if (wait > 0) refreshTimer = setTimeout(() => void refreshOnTime(), wait);
  }
}

// Each access token (signed in, refreshed, or read from the tab on a reload) schedules its own silent refresh
// shortly before it expires, when there is a refresh token to do it with.
effect(() => {
  clearTimeout(refreshTimer);
  const current = claims.value;
  if (current === null || !Number.isFinite(current.expiresAt) || sessionStorage.getItem(REFRESH_KEY) === null) return;
  const delay = Math.max(0, current.expiresAt - refreshLead(current) - Date.now());
  refreshTimer = setTimeout(() => void refreshOnTime(), delay);
});

/** A failed call's message for people: the problem's `detail` (it says what to do), else its title, else the status. */
export function problemText(error: unknown, status?: number): string {
  const problem = error as Partial<ProblemBody> | undefined;
  if (problem !== undefined && typeof problem === 'object') {
    if (typeof problem.detail === 'string' && problem.detail !== '') return problem.detail;
    if (typeof problem.title === 'string') return problem.title;
    const oauth = problem as { error_description?: unknown };
    if (typeof oauth.error_description === 'string') return oauth.error_description;
  }
  return status === undefined ? 'The service could not be reached. Try again.' : `The service answered ${status}.`;
}

/**
 * How a sign-in went: signed in; asked to set a new password first (an invited user, or one whose password was
 * reset), with the service's words; or refused, with what to tell the user.
 */
export type SignInOutcome =
  | { kind: 'signed-in' }
  | { kind: 'new-password-required'; detail: string; passwordPolicy: string }
  | { kind: 'refused'; message: string };

/**
 * Signs in with a username and password at `{auth_url}/token`, and `newPassword` when the service asked for one (the
 * `new_password_required` challenge): it is then set, and the answer signs in. Keeps the access and refresh tokens.
 */
export async function signIn(username: string, password: string, newPassword?: string): Promise<SignInOutcome> {
  try {
    const { data, error, response } = await api.auth.POST('/token', {
      body: { username, password, ...(newPassword === undefined ? {} : { new_password: newPassword }) },
    });
    if (data !== undefined && 'access_token' in data) {
      keepToken(data.access_token, 'refresh_token' in data ? data.refresh_token : undefined);
      return { kind: 'signed-in' };
    }
    const challenge = error as { challenge?: unknown; passwordPolicy?: unknown } | undefined;
    if (challenge?.challenge === 'new_password_required') {
      const policy = typeof challenge.passwordPolicy === 'string' ? challenge.passwordPolicy : '';
      return { kind: 'new-password-required', detail: problemText(error, response.status), passwordPolicy: policy };
    }
    return { kind: 'refused', message: problemText(error, response.status) };
  } catch {
    return { kind: 'refused', message: 'The authentication service could not be reached. Check your connection and try again.' };
  }
}
