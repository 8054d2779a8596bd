/** What a command's action starts from: its settings, the typed client, the company it acts on. */
import type { Command } from 'commander';
import { createDssClient, type DssClient } from '../client/index.js';
import { expiredClientLogin } from './client-login.js';
import { note } from './output.js';
import { StoredSession } from './refresh.js';
import { companyOf, type GlobalOptions, loginPath, readLogin, resolveSettings, type Settings } from './settings.js';

/** One invocation's settings and client. */
export interface Invocation {
  settings: Settings;
  /** The typed client, with the resolved addresses and token. */
  dss: DssClient;
  /** `--json` was given. */
  json: boolean;
  /** The company the command acts on. @throws UsageError when it cannot be told (see companyOf) */
  company(): string;
}

/**
 * Resolves a command's settings (flags, environment, stored login, local defaults) and makes its client. When the
 * token is the stored login's and it holds a refresh token, the token is renewed first if it has expired, and once
 * more if a call answers 401 (cli/refresh.ts); `refresh: false` (`dss login`, which replaces the login) skips that.
 * A client's stored login, which has no refresh token, gets a note on stderr once its token has expired: to log in
 * again (the command goes on, and the service answers 401).
 */
export async function invocationOf(command: Command, options: { refresh?: boolean } = {}): Promise<Invocation> {
  const settings = await resolveSettings(command.optsWithGlobals<GlobalOptions>());
  const login = options.refresh !== false && settings.tokenSource === loginPath() ? await readLogin() : undefined;
  if (login?.refreshToken === undefined) {
    const expired = login === undefined ? undefined : expiredClientLogin(login, Date.now());
    if (expired !== undefined) note(expired);
    const dss = createDssClient({ ...settings, token: settings.token });
    return { settings, dss, json: settings.json, company: () => companyOf(settings) };
  }
  const session = new StoredSession(login);
  await session.refreshIfExpired();
  settings.token = session.token;
  const dss = createDssClient({ ...settings, token: () => session.token, middleware: [session.retryOnUnauthorized()] });
  return { settings, dss, json: settings.json, company: () => companyOf(settings) };
}
