/**
 * Who is signed in and how the console reaches the service: the three addresses (named by the page), the access
 * token (kept in sessionStorage, so it ends with the tab and is never written to disk by us), its claims as the
 * console reads them (companies, scopes: what to offer; the service checks them again on every call), and the typed
 * client every page calls the API through.
 */
import { computed, signal } from '@preact/signals';
import { createDssClient, type DssClient, type ProblemBody } from '../../client/index.js';

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

/** Keeps `jwt` for this tab and clears any sign-in reason. */
export function keepToken(jwt: string): void {
  sessionStorage.setItem(TOKEN_KEY, jwt);
  signInReason.value = null;
  token.value = jwt;
}

/**
 * Forgets the token: the sign-in form shows, with `reason` when the session ended rather than the user left. Signing
 * out also forgets everything else the console kept in the tab (an interrupted deploy's journal); an ended session
 * keeps it, so that the same user, signed in again, can resume.
 */
export function signOut(reason: string | null = null): void {
  if (reason === null) sessionStorage.clear();
  else sessionStorage.removeItem(TOKEN_KEY);
  signInReason.value = reason;
  token.value = null;
}

/**
 * The typed client (client/index.ts) over the three addresses with the current token. A 401 from the main or upload
 * address ends the session: the sign-in form shows and, once signed in again, the same URL (page and state) returns.
 */
export const api: DssClient = createDssClient({
  baseUrl: addresses.main,
  uploadUrl: addresses.upload,
  authUrl: addresses.auth,
  token: () => token.value ?? undefined,
  middleware: [
    {
      onResponse({ request, response }) {
        if (response.status === 401 && request.headers.has('authorization')) {
          signOut('Your session has ended. Sign in again to go on where you were.');
        }
        return response;
      },
    },
  ],
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
 * Signs in with a username and password at `{auth_url}/token`.
 * @returns null when signed in, else what to tell the user
 */
export async function signIn(username: string, password: string): Promise<string | null> {
  try {
    const { data, error, response } = await api.auth.POST('/token', { body: { username, password } });
    if (data !== undefined && 'access_token' in data) {
      keepToken(data.access_token);
      return null;
    }
    return problemText(error, response.status);
  } catch {
    return 'The authentication service could not be reached. Check your connection and try again.';
  }
}
