/** `dss login`, `dss logout`, `dss whoami`. */
import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import { expectOk, requestClientCredentialsToken } from '../../client/index.js';
import { invocationOf } from '../context.js';
import { note, printJson, printRecord, say, UsageError } from '../output.js';
import { claimsOf, removeLogin, writeLogin } from '../settings.js';

/** Adds the session commands. */
export function registerSessionCommands(program: Command): void {
  registerLogin(program);
  registerLogout(program);
  registerWhoami(program);
}

/** `dss login`: gets an access token and stores it for the next commands. */
function registerLogin(program: Command): void {
  program
    .command('login')
    .description('Get an access token and store it (with the addresses) for the next commands, readable by you only (0600)')
    .option('-u, --username <name>', 'user name (a user signs in with a password)')
    .option('-p, --password <password>', 'password (prefer the prompt or --password-stdin: a flag shows in the process list)')
    .option('--password-stdin', 'read the password from the first line of stdin')
    .option('--client-id <id>', "a device's client id (client credentials grant)")
    .option('--client-secret <secret>', "the device's client secret (or DSS_CLIENT_SECRET)")
    .addHelpText(
      'after',
      '\nExamples:\n  dss login --username alice\n  echo "$PASSWORD" | dss login --username alice --password-stdin\n  dss login --client-id dev_… --client-secret …',
    )
    .action(login);
}

/**
 * Action of `dss login`: a user's password grant, or a device's client credentials grant.
 * @throws UsageError when neither --username nor a complete --client-id/--client-secret pair is given
 */
async function login(options: LoginOptions, command: Command): Promise<void> {
  const { settings, dss, json } = await invocationOf(command);
  let token: { access_token: string; expires_in: number };
  let subject: string;
  if (options.clientId !== undefined) {
    const secret = options.clientSecret ?? process.env.DSS_CLIENT_SECRET;
    if (!secret) throw new UsageError('--client-id needs --client-secret (or DSS_CLIENT_SECRET).');
    token = expectOk(await requestClientCredentialsToken(dss.auth, options.clientId, secret));
    subject = `client:${options.clientId}`;
  } else {
    if (options.username === undefined) throw new UsageError('Give --username (a user) or --client-id (a device).');
    const password = options.password ?? (options.passwordStdin ? await firstLineOfStdin() : await prompt('Password: '));
    token = expectOk(await dss.auth.POST('/token', { body: { username: options.username, password } }));
    subject = options.username;
  }
  const expiresAt = new Date(Date.now() + token.expires_in * 1000).toISOString();
  const path = await writeLogin({
    baseUrl: settings.baseUrl,
    uploadUrl: settings.uploadUrl,
    authUrl: settings.authUrl,
    token: token.access_token,
    subject,
    expiresAt,
  });
  const claims = claimsOf(token.access_token);
  if (json) printJson({ subject, companies: claims.companies, scope: claims.scope, expiresAt, stored: path });
  else say(`Logged in as ${subject} (${claims.companies.join(', ') || 'no company'}) until ${expiresAt}; token stored in ${path}`);
}

/** `dss logout`: forgets the stored token. */
function registerLogout(program: Command): void {
  program.command('logout').description('Forget the stored token').action(logout);
}

/** Action of `dss logout`. */
async function logout(): Promise<void> {
  say((await removeLogin()) ? 'Logged out.' : 'Not logged in.');
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
  clientId?: string;
  clientSecret?: string;
}

/** The first line of stdin (a piped password). */
async function firstLineOfStdin(): Promise<string> {
  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) {
    lines.close();
    return line;
  }
  throw new UsageError('--password-stdin: stdin was empty.');
}

/** Asks for a secret on the terminal without echoing it. */
async function prompt(question: string): Promise<string> {
  if (!process.stdin.isTTY) throw new UsageError('No terminal to ask the password on: give --password-stdin or --password.');
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
