/**
 * Where the CLI finds the service and its token: flags, then the environment (DSS_BASE_URL, DSS_UPLOAD_URL,
 * DSS_AUTH_URL, DSS_TOKEN, DSS_COMPANY), then what `dss login` stored, then the local runtime's default addresses.
 * The login is stored in `{config}/dss/login.json` with 0600 permissions (in a 0700 folder), where `{config}` is
 * DSS_CONFIG_DIR, else XDG_CONFIG_HOME, else `~/.config` (`%APPDATA%` on Windows).
 */
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { decodeJwt } from 'jose';
import { UsageError } from './output.js';

/** The local runtime's addresses (`npm start`). */
export const LOCAL_DEFAULTS = {
  baseUrl: 'http://127.0.0.1:3000',
  uploadUrl: 'http://127.0.0.1:3001',
  authUrl: 'http://127.0.0.1:3002',
} as const;

/** The global options every command accepts (commander's `optsWithGlobals()`). */
export interface GlobalOptions {
  baseUrl?: string;
  uploadUrl?: string;
  authUrl?: string;
  token?: string;
  company?: string;
  json?: boolean;
}

/** What `dss login` stores. */
export interface StoredLogin {
  baseUrl: string;
  uploadUrl: string;
  authUrl: string;
  /** The access token (JWT). */
  token: string;
  /** Who logged in: a username, or `client:<client id>` for a device. */
  subject: string;
  /** When the token expires, ISO-8601. */
  expiresAt: string;
  /** A user's refresh token, which renews `token` when it expires (cli/refresh.ts); none for a device. */
  refreshToken?: string;
}

/** The resolved settings of one command. */
export interface Settings {
  baseUrl: string;
  uploadUrl: string;
  authUrl: string;
  /** The bearer token, when one is known. */
  token?: string;
  /** Where the token came from: `--token`, `DSS_TOKEN`, or the login file's path. */
  tokenSource?: string;
  /** `--company` or DSS_COMPANY, when given. */
  company?: string;
  json: boolean;
}

/** The folder holding the CLI's files (`login.json`, interrupted batch journals). */
export function configDirectory(environment: NodeJS.ProcessEnv = process.env): string {
  if (environment.DSS_CONFIG_DIR) return environment.DSS_CONFIG_DIR;
  if (process.platform === 'win32' && environment.APPDATA) return join(environment.APPDATA, 'dss');
  return join(environment.XDG_CONFIG_HOME || join(homedir(), '.config'), 'dss');
}

/** Path of the stored login. */
export function loginPath(environment: NodeJS.ProcessEnv = process.env): string {
  return join(configDirectory(environment), 'login.json');
}

/** Reads the stored login; undefined when there is none or it cannot be read. */
export async function readLogin(environment: NodeJS.ProcessEnv = process.env): Promise<StoredLogin | undefined> {
  try {
    const login = JSON.parse(await readFile(loginPath(environment), 'utf8')) as StoredLogin;
    return typeof login.token === 'string' ? login : undefined;
  } catch {
    return undefined;
  }
}

/** Stores a login, readable by the user only (file 0600, folder 0700). @returns the file's path */
export async function writeLogin(login: StoredLogin, environment: NodeJS.ProcessEnv = process.env): Promise<string> {
  const directory = configDirectory(environment);
  await mkdir(directory, { recursive: true, mode: 0o700 });
  const path = loginPath(environment);
  await writeFile(path, `${JSON.stringify(login, null, 2)}\n`, { mode: 0o600 });
  // writeFile's mode applies only to a new file: an older, wider file is narrowed too.
  await chmod(path, 0o600);
  return path;
}

/** Removes the stored login. @returns whether there was one */
export async function removeLogin(environment: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  const login = await readLogin(environment);
  await rm(loginPath(environment), { force: true });
  return login !== undefined;
}

/** Resolves the settings of a command from its options, the environment and the stored login. */
export async function resolveSettings(options: GlobalOptions, environment: NodeJS.ProcessEnv = process.env): Promise<Settings> {
  const login = await readLogin(environment);
  const pick = (flag: string | undefined, variable: string, stored: string | undefined, fallback: string): string =>
    (flag ?? environment[variable] ?? stored ?? fallback).replace(/\/+$/, '');
  const settings: Settings = {
    baseUrl: pick(options.baseUrl, 'DSS_BASE_URL', login?.baseUrl, LOCAL_DEFAULTS.baseUrl),
    uploadUrl: pick(options.uploadUrl, 'DSS_UPLOAD_URL', login?.uploadUrl, LOCAL_DEFAULTS.uploadUrl),
    authUrl: pick(options.authUrl, 'DSS_AUTH_URL', login?.authUrl, LOCAL_DEFAULTS.authUrl),
    json: options.json === true,
  };
  const company = options.company ?? environment.DSS_COMPANY;
  if (company) settings.company = company;
  if (options.token) Object.assign(settings, { token: options.token, tokenSource: '--token' });
  else if (environment.DSS_TOKEN) Object.assign(settings, { token: environment.DSS_TOKEN, tokenSource: 'DSS_TOKEN' });
  else if (login) Object.assign(settings, { token: login.token, tokenSource: loginPath(environment) });
  return settings;
}

/** The claims of a token the CLI reads (it does not verify them: the service does). */
export interface TokenClaims {
  sub?: string;
  /** A user's username as the service stores it (Cognito's `sub` is a UUID); absent from device tokens. */
  username?: string;
  companies: string[];
  scope: string[];
  /** Expiry, ISO-8601, when the token has one. */
  expiresAt?: string;
  clientId?: string;
}

/** Reads a JWT's claims without verifying it. @throws UsageError when it is not a JWT */
export function claimsOf(token: string): TokenClaims {
  let payload: ReturnType<typeof decodeJwt>;
  try {
    payload = decodeJwt(token);
  } catch {
    throw new UsageError('The token is not a JWT: run `dss login`, or pass the access token with --token or DSS_TOKEN.');
  }
  const claims: TokenClaims = {
    companies: Array.isArray(payload.companies) ? payload.companies.map(String) : [],
    scope: typeof payload.scope === 'string' ? payload.scope.split(' ').filter(Boolean) : [],
  };
  if (payload.sub !== undefined) claims.sub = payload.sub;
  if (typeof payload.username === 'string') claims.username = payload.username;
  if (typeof payload.exp === 'number') claims.expiresAt = new Date(payload.exp * 1000).toISOString();
  if (typeof payload.client_id === 'string') claims.clientId = payload.client_id;
  return claims;
}

/**
 * The company a command acts on: `--company` (or DSS_COMPANY), else the token's only company.
 * @throws UsageError when there is no token, or the token covers several companies and none was named
 */
export function companyOf(settings: Settings): string {
  if (settings.company) return settings.company;
  if (settings.token === undefined) throw new UsageError('Not logged in: run `dss login`, or name the company with --company.');
  const { companies } = claimsOf(settings.token);
  if (companies.length === 1 && companies[0] !== undefined) return companies[0];
  if (companies.length === 0) throw new UsageError('The token names no company: name one with --company.');
  throw new UsageError(`The token covers ${companies.join(', ')}: name one with --company.`);
}
