/** `dss login`, `dss logout`, `dss whoami`, `dss password`. */
import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import { createDssClient, type DssClient, expectOk, revokeRefreshToken } from '../../client/index.js';
import { clientCredentialsToken } from '../client-login.js';
import { invocationOf } from '../context.js';
import { note, printJson, printRecord, say, UsageError } from '../output.js';
import { claimsOf, readLogin, removeLogin, type Settings, type StoredLogin, writeLogin } from '../settings.js';

/** Adds the session commands. */
export function registerSessionCommands(program: Command): void {
  registerLogin(program);
  registerLogout(program);
  registerWhoami(program);
  registerPassword(program);
}

/** What a user's sign-in answers (the token endpoint's 200). */
type UserTokens = { access_token: string; expires_in: number; refresh_token?: string };

/** The `challenge` of a problem the token endpoint answered, when it is the new-password challenge. */
export function isNewPasswordChallenge(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { challenge?: unknown }).challenge === 'new_password_required';
}

/**
 * Signs a user in; when the service answers the new-password challenge, gets a new password from `newPassword` and
 * signs in again with it.
 * @param newPassword asked only on the challenge (with the challenge's detail, which states the policy)
 * @throws ApiError for any other refusal (wrong password: 401; a new password outside the policy: 400)
 */
export async function signInUser(
  auth: DssClient['auth'],
  credentials: { username: string; password: string },
  newPassword: (detail: string) => Promise<string>,
): Promise<UserTokens> {
  const first = await auth.POST('/token', { body: credentials });
  if (!isNewPasswordChallenge(first.error)) return expectOk(first) as UserTokens;
  const chosen = await newPassword((first.error as { detail?: string }).detail ?? 'Set a new password.');
  return expectOk(await auth.POST('/token', { body: { ...credentials, new_password: chosen } })) as UserTokens;
}

/** `dss login`: gets an access token and stores it for the next commands. */
function registerLogin(program: Command): void {
  program
    .command('login')
    .description('Get an access token and store it (with the addresses) for the next commands, readable by you only (0600)')
    .option('-u, --username <name>', 'user name (a user signs in with a password)')
    .option('-p, --password <password>', 'password (prefer the prompt or --password-stdin: a flag shows in the process list)')
    .option('--password-stdin', 'read the password from the first line of stdin')
    .option('--new-password <password>', 'when the service asks for a new password (invited or reset user): this one')
    .option('--new-password-stdin', 'when the service asks for a new password: read it from the next line of stdin')
    .option('--client-id <id>', "an API client's id (api_…) or a device's (client credentials grant)")
    .option('--client-secret-stdin', 'read the client secret from the first line of stdin (it is never stored)')
    .option('--client-secret <secret>', 'the client secret (or DSS_CLIENT_SECRET; prefer --client-secret-stdin)')
    .addHelpText(
      'after',
      '\nA user who must set a new password (invited, or reset) is asked for one twice on a terminal, or gives it with\n' +
        '--new-password-stdin or --new-password. The refresh token is stored too: later commands renew the access token\n' +
        'by themselves when it expires (15 minutes), until the refresh token does (30 days).\n' +
        "\nA client's login (an API client's or a device's) stores only its token, never its secret: once the token\n" +
        'expires (15 minutes), commands say to log in again.\n' +
        '\nExamples:\n  dss login --username alice\n  echo "$PASSWORD" | dss login --username alice --password-stdin\n' +
        '  printf "%s\\n%s\\n" "$TEMPORARY" "$NEW" | dss login --username dave --password-stdin --new-password-stdin\n' +
        '  dss login --client-id api_01JPA2B4D6F8H0K2M4P6R8T0W2 --client-secret-stdin < secret.txt\n' +
        '  dss login --client-id acme~kiosk-1 --client-secret …',
    )
    .action(login);
}

/**
 * The client secret of a client's `dss login`: stdin's first line with --client-secret-stdin, else --client-secret,
 * else DSS_CLIENT_SECRET.
 * @throws UsageError when none is given, or stdin's line is empty
 */
async function clientSecretOf(options: LoginOptions): Promise<string> {
  const secret = options.clientSecretStdin
    ? (await new StdinLines().next('--client-secret-stdin')).trim()
    : (options.clientSecret ?? process.env.DSS_CLIENT_SECRET);
  if (!secret) throw new UsageError('--client-id needs the client secret: --client-secret-stdin (or --client-secret, DSS_CLIENT_SECRET).');
  return secret;
}

/**
 * Action of `dss login`: a user's password grant, or a client's (an API client's or a device's) client credentials
 * grant.
 * @throws UsageError when neither --username nor --client-id with its secret is given
 */
async function login(options: LoginOptions, command: Command): Promise<void> {
  const { settings, dss, json } = await invocationOf(command, { refresh: false });
  let token: { access_token: string; expires_in: number; refresh_token?: string };
  let subject: string;
  if (options.clientId !== undefined) {
    token = await clientCredentialsToken(dss.auth, options.clientId, await clientSecretOf(options));
    subject = `client:${options.clientId}`;
  } else {
    if (options.username === undefined) throw new UsageError('Give --username (a user) or --client-id (an API client or a device).');
    const stdin = new StdinLines();
    const password = options.password ?? (options.passwordStdin ? await stdin.next('--password-stdin') : await prompt('Password: '));
    token = await signInUser(dss.auth, { username: options.username, password }, async (detail) => {
      if (options.newPassword !== undefined) return options.newPassword;
      if (options.newPasswordStdin) return stdin.next('--new-password-stdin');
      if (!process.stdin.isTTY) throw new UsageError(`${detail}\nNo terminal to ask it on: give --new-password-stdin or --new-password.`);
      return askNewPassword(detail);
    });
    // As the service names the user: usernames are case-insensitive, and `ALICE` signs in as `alice`.
    subject = claimsOf(token.access_token).username ?? options.username;
  }
  const { path, expiresAt } = await storeLogin(settings, subject, token);
  const claims = claimsOf(token.access_token);
  if (json) printJson({ subject, companies: claims.companies, scope: claims.scope, expiresAt, stored: path });
  else say(`Logged in as ${subject} (${claims.companies.join(', ') || 'no company'}) until ${expiresAt}; token stored in ${path}`);
}

/** `dss logout`: revokes the stored refresh token and forgets the stored login. */
function registerLogout(program: Command): void {
  program
    .command('logout')
    .description("Revoke the stored refresh token (a user's) at the service, then forget the stored login")
    .addHelpText(
      'after',
      '\nThe login is forgotten even when the service cannot be reached; the refresh token then still works until it\n' +
        'expires (30 days), and the command says so and exits with 1.',
    )
    .action(logout);
}

/** How long `dss logout` and a replaced login wait for the revocation, ms. */
const REVOKE_TIMEOUT_MS = 10_000;

/**
 * Revokes `login`'s refresh token at its own authentication address (RFC 7009), waiting REVOKE_TIMEOUT_MS at most.
 * @returns undefined when revoked (or there was none to revoke), else why it was not (the service's answer, or the
 *   network's error).
 */
async function revokeStored(login: StoredLogin): Promise<string | undefined> {
  if (login.refreshToken === undefined) return undefined;
  try {
    const { auth } = createDssClient({ baseUrl: login.baseUrl, uploadUrl: login.uploadUrl, authUrl: login.authUrl });
    expectOk(await revokeRefreshToken(auth, login.refreshToken, { signal: AbortSignal.timeout(REVOKE_TIMEOUT_MS) }));
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/**
 * Action of `dss logout`: revokes the stored login's refresh token, then removes the login file whatever the answer,
 * since a user who logs out wants the token gone from this machine.
 * @throws Error (exit 1) after forgetting the login, when the revocation could not be done: the refresh token then
 *   still works until it expires, or until the user changes their password (which ends every other session).
 */
async function logout(): Promise<void> {
  const stored = await readLogin();
  const unrevoked = stored === undefined ? undefined : await revokeStored(stored);
  const removed = await removeLogin();
  if (unrevoked !== undefined) {
    throw new Error(
      `Logged out here, but the service did not revoke the refresh token (${unrevoked}); it works until it expires. To end it now, change your password (dss password --username ${stored?.subject ?? '<you>'}), which ends every other session.`,
    );
  }
  say(removed ? 'Logged out.' : 'Not logged in.');
}

/** `dss whoami`: shows who the token acts as. */
function registerWhoami(program: Command): void {
  program
    .command('whoami')
    .description("Show who the token acts as: subject, companies, scopes, expiry (read from the token's claims)")
    .action(whoami);
}

/**
 * Action of `dss whoami`: the token's claims, and whether it has expired.
 * @throws UsageError when no token is at hand
 */
async function whoami(_options: unknown, command: Command): Promise<void> {
  const { settings, json } = await invocationOf(command);
  if (settings.token === undefined) throw new UsageError('Not logged in: run `dss login`, or pass --token or DSS_TOKEN.');
  const claims = claimsOf(settings.token);
  const expired = claims.expiresAt !== undefined && Date.parse(claims.expiresAt) <= Date.now();
  const record = {
    subject: claims.sub,
    clientId: claims.clientId,
    companies: claims.companies.join(', '),
    scope: claims.scope.join(' '),
    expiresAt: claims.expiresAt,
    expired,
    tokenFrom: settings.tokenSource,
    baseUrl: settings.baseUrl,
  };
  if (json) printJson({ ...record, companies: claims.companies, scope: claims.scope });
  else printRecord(record);
  if (expired) note('The token has expired: run `dss login` again.');
}

interface LoginOptions {
  username?: string;
  password?: string;
  passwordStdin?: boolean;
  newPassword?: string;
  newPasswordStdin?: boolean;
  clientId?: string;
  clientSecret?: string;
  clientSecretStdin?: boolean;
}

/**
 * Stores a login's token (and refresh token) with the addresses, then revokes the refresh token of the login it
 * replaces (a note on stderr when that cannot be done). @returns the file's path and the token's expiry
 */
async function storeLogin(
  settings: Settings,
  subject: string,
  token: { access_token: string; expires_in: number; refresh_token?: string },
): Promise<{ path: string; expiresAt: string }> {
  const expiresAt = new Date(Date.now() + token.expires_in * 1000).toISOString();
  const replaced = await readLogin();
  const path = await writeLogin({
    baseUrl: settings.baseUrl,
    uploadUrl: settings.uploadUrl,
    authUrl: settings.authUrl,
    token: token.access_token,
    subject,
    expiresAt,
    ...(token.refresh_token === undefined ? {} : { refreshToken: token.refresh_token }),
  });
  // The replaced login's session would otherwise go on, held nowhere: it is revoked, at best effort (the new login stands).
  if (replaced?.refreshToken !== undefined && replaced.refreshToken !== token.refresh_token) {
    const unrevoked = await revokeStored(replaced);
    if (unrevoked !== undefined) note(`The replaced login's refresh token was not revoked (${unrevoked}); it works until it expires.`);
  }
  return { path, expiresAt };
}

/** `dss password`: changes one's own password. */
function registerPassword(program: Command): void {
  program
    .command('password')
    .description("Change your password: asks the current one and the new one (twice), and stores the new session's token")
    .option('-u, --username <name>', "user name (default: the stored login's)")
    .option('--password-stdin', 'read the current password from the first line of stdin')
    .option('--new-password-stdin', 'read the new password from the next line of stdin')
    .addHelpText(
      'after',
      '\nExamples:\n  dss password\n  printf "%s\\n%s\\n" "$CURRENT" "$NEW" | dss password --password-stdin --new-password-stdin',
    )
    .action(changePassword);
}

interface PasswordOptions {
  username?: string;
  passwordStdin?: boolean;
  newPasswordStdin?: boolean;
}

/**
 * Action of `dss password`: a sign-in with `new_password` (which also completes a pending new-password challenge),
 * then the new session stored as `dss login` stores it.
 * @throws UsageError when no user can be told, or a password cannot be asked for
 */
async function changePassword(options: PasswordOptions, command: Command): Promise<void> {
  const { settings, dss, json } = await invocationOf(command, { refresh: false });
  const stored = await readLogin();
  const username = options.username ?? (stored?.subject.startsWith('client:') ? undefined : stored?.subject);
  if (username === undefined) throw new UsageError('Give --username, or run `dss login` first.');
  const stdin = new StdinLines();
  const password = options.passwordStdin ? await stdin.next('--password-stdin') : await prompt('Current password: ');
  const newPassword = options.newPasswordStdin ? await stdin.next('--new-password-stdin') : await askNewPassword();
  const token = expectOk(await dss.auth.POST('/token', { body: { username, password, new_password: newPassword } })) as UserTokens;
  const subject = claimsOf(token.access_token).username ?? username;
  const { path, expiresAt } = await storeLogin(settings, subject, token);
  if (json) printJson({ subject, changed: true, expiresAt, stored: path });
  else say(`Password changed for ${subject}; logged in until ${expiresAt}, token stored in ${path}`);
}

/**
 * Asks for a new password twice on the terminal (after `detail`, which states the policy, when given).
 * @throws UsageError when the two differ, or there is no terminal
 */
async function askNewPassword(detail?: string): Promise<string> {
  if (detail !== undefined) note(detail);
  const first = await prompt('New password: ');
  const second = await prompt('New password again: ');
  if (first !== second) throw new UsageError('The two new passwords differ; nothing was changed.');
  return first;
}

/** Stdin's lines, read once to its end (piped secrets: the password, then the new one). */
class StdinLines {
  private lines: Promise<string[]> | undefined;
  private taken = 0;

  /** The next line. @throws UsageError naming `option` when stdin has no more */
  async next(option: string): Promise<string> {
    this.lines ??= (async () => {
      const read: string[] = [];
      for await (const line of createInterface({ input: process.stdin })) read.push(line);
      return read;
    })();
    const line = (await this.lines)[this.taken];
    this.taken += 1;
    if (line === undefined) throw new UsageError(`${option}: stdin has no line ${this.taken}.`);
    return line;
  }
}

/** Asks for a secret on the terminal without echoing it. */
async function prompt(question: string): Promise<string> {
  if (!process.stdin.isTTY)
    throw new UsageError('No terminal to ask a password on: give it on stdin (--password-stdin, --new-password-stdin).');
  const terminal = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  const output = terminal as unknown as { _writeToOutput: (text: string) => void };
  let asked = false;
  output._writeToOutput = (text: string) => {
    if (!asked) {
      process.stderr.write(text);
      asked = true;
    }
  };
  const answer = await new Promise<string>((done) => terminal.question(question, done));
  terminal.close();
  process.stderr.write('\n');
  return answer;
}
