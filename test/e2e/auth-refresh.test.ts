/**
 * Sign-in, refresh and the new-password challenge end to end over `npm start` (bin/local.ts), every answer checked
 * against the OpenAPI document: a sign-in answers a 15-minute access token and a refresh token, which renews it (form
 * and JSON) until its user is disabled; a user who must set a new password gets the challenge and sets one; a new
 * password outside the policy is 400; and the CLI stores the refresh token, renews an expired or refused stored token
 * by itself, completes the challenge and changes a password. An invited user (POST /admin/users) signs in with the
 * temporary password, gets the challenge, sets a password, and their refresh is refused at once when root disables
 * them or resets their password. A refresh token is revoked (sign-out), and a password change ends the user's other
 * sessions. Users are also flagged or disabled in users.json while the service is stopped, then
 * the service starts again on the same data (refresh tokens outlive a restart).
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectOk, requestRefreshToken, revokeRefreshToken } from '../../client/index.js';
import type { LocalUser } from '../../functions/adapters/embedded/local-user-store.js';
import { type DssUser, dssJson, dssUser, runDss } from './cli-runner.js';
import { answerOf, call, clientFor, DEMO_PASSWORDS, expectError, useLocalService } from './harness.js';

const local = useLocalService({ users: ['root'] });
let cli: DssUser;

beforeAll(async () => {
  cli = await dssUser(local.service);
});

afterAll(async () => {
  if (cli) await rm(cli.configDirectory, { recursive: true, force: true });
});

const auth = () => clientFor(local.service).auth;

/** A demo user's sign-in, through the typed client (answer checked against the document). */
const signIn = (username: string, password: string, newPassword?: string) =>
  auth().POST('/token', { body: { username, password, ...(newPassword === undefined ? {} : { new_password: newPassword }) } });

/** A refresh, form-encoded (RFC 6749 §6), through the typed client. */
const refresh = (refreshToken: string) => requestRefreshToken(auth(), refreshToken);

/** Whether `token` opens a company route on the main address. */
async function opens(token: string, company: string): Promise<number> {
  const answer = await clientFor(local.service, token).main.GET('/companies/{companyId}/resources/scenarios/usage', {
    params: { path: { companyId: company } },
  });
  return answer.response.status;
}

/** Changes users.json of the stopped service, then starts it again on the same data. */
async function withUsersChanged(change: (users: LocalUser[]) => void): Promise<void> {
  await local.service.stop();
  const path = join(local.settings.dataDirectory, 'auth', 'users.json');
  const users = JSON.parse(await readFile(path, 'utf8')) as LocalUser[];
  change(users);
  await writeFile(path, JSON.stringify(users, null, 2));
  await local.restart();
  cli = await dssUser(local.service, { configDirectory: cli.configDirectory });
}

/** The CLI's stored login. */
async function storedLogin(): Promise<Record<string, string>> {
  return JSON.parse(await readFile(join(cli.configDirectory, 'login.json'), 'utf8')) as Record<string, string>;
}

describe('sign-in and refresh', () => {
  it('answers a 900-second access token and a refresh token, which renews it as form or JSON', async () => {
    const tokens = expectOk(await signIn('alice', DEMO_PASSWORDS.alice));
    expect(tokens).toMatchObject({ token_type: 'Bearer', expires_in: 900 });
    expect(tokens.refresh_token).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const renewed = expectOk(await refresh(tokens.refresh_token as string));
    expect(renewed).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 900 });
    expect(await opens(renewed.access_token, 'acme')).toBe(200);

    const asJson = await call(`${local.service.auth}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token }),
    });
    expect(asJson.status).toBe(200);
    expect(asJson.body).toMatchObject({ token_type: 'Bearer', expires_in: 900 });
  });

  it('refuses an unknown refresh token with 400 invalid_grant', async () => {
    const refused = answerOf(await refresh('A'.repeat(43)));
    expect(refused.status).toBe(400);
    expect(refused.headers.get('cache-control')).toBe('no-store');
    expect(refused.body).toMatchObject({ error: 'invalid_grant', error_description: expect.stringMatching(/sign in again/) });
    // Beyond its bound, the form's refresh token is said to be out of bounds rather than missing.
    const oversized = answerOf(await refresh('A'.repeat(8193)));
    expect(oversized).toMatchObject({
      status: 400,
      body: { error: 'invalid_request', error_description: expect.stringContaining('1 to 8,192 characters') },
    });
  });

  it('refuses a new password outside the policy with 400 stating it, and keeps the password', async () => {
    const problem = expectError(await signIn('alice', DEMO_PASSWORDS.alice, 'short'), 400);
    expect(problem.detail).toMatch(/password policy: at least 12 and at most 256 characters, with a lowercase letter/);
    expect(problem.errors).toEqual([{ path: '/new_password', message: expect.stringContaining('an uppercase letter') }]);
    expect((await signIn('alice', DEMO_PASSWORDS.alice)).response.status).toBe(200);
  });

  it('changes the password of a signed-in user who sends new_password', async () => {
    expect((await signIn('olivia', DEMO_PASSWORDS.olivia, 'Olivia-new-pass-1')).response.status).toBe(200);
    expectError(await signIn('olivia', DEMO_PASSWORDS.olivia), 401);
    expect((await signIn('olivia', 'Olivia-new-pass-1')).response.status).toBe(200);
  });
});

describe('revocation (sign-out)', () => {
  /** A revocation as JSON, through the typed client (answer checked against the document). */
  const revokeAsJson = (token: string) => auth().POST('/revoke', { body: { token } });

  it("revokes one session's refresh token (form or JSON), leaves the others alone, and answers 200 again and for unknown tokens", async () => {
    const first = expectOk(await signIn('alice', DEMO_PASSWORDS.alice)).refresh_token as string;
    const second = expectOk(await signIn('alice', DEMO_PASSWORDS.alice)).refresh_token as string;

    const revoked = answerOf(await revokeRefreshToken(auth(), first));
    expect(revoked.status).toBe(200);
    expect(revoked.headers.get('cache-control')).toBe('no-store');
    expect(answerOf(await refresh(first))).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(await opens(expectOk(await refresh(second)).access_token, 'acme')).toBe(200);

    // RFC 7009 §2.2: a token already revoked, or never issued, is answered alike.
    expect((await revokeRefreshToken(auth(), first)).response.status).toBe(200);
    expect((await revokeAsJson('A'.repeat(43))).response.status).toBe(200);
    expect((await revokeAsJson(second)).response.status).toBe(200);
    expect(answerOf(await refresh(second))).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });

  it('refuses an access token with 400 unsupported_token_type, and a request without a token', async () => {
    const tokens = expectOk(await signIn('alice', DEMO_PASSWORDS.alice));
    const access = answerOf(await revokeRefreshToken(auth(), tokens.access_token));
    expect(access).toMatchObject({
      status: 400,
      body: { error: 'unsupported_token_type', error_description: expect.stringMatching(/expires/) },
    });
    expect(await opens(tokens.access_token, 'acme')).toBe(200);

    const emptyForm = await call(`${local.service.auth}/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'token=',
    });
    expect(emptyForm).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
    const noToken = await call(`${local.service.auth}/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token_type_hint: 'refresh_token' }),
    });
    expect(noToken.status).toBe(400);
    expect(noToken.headers.get('content-type')).toBe('application/problem+json');
    expect(await opens(expectOk(await refresh(tokens.refresh_token as string)).access_token, 'acme')).toBe(200);
  });

  it("ends a user's other sessions when they change their password, and keeps the changing one", async () => {
    const admin = clientFor(local.service, local.tokens.root).main;
    const invited = expectOk(
      await admin.POST('/admin/users', { body: { username: 'pam', email: 'pam@example.com', role: 'viewer', companies: ['acme'] } }),
    );
    const before = expectOk(await signIn('pam', invited.temporaryPassword as string, 'Pam-chosen-pass-1')).refresh_token as string;
    const other = expectOk(await signIn('pam', 'Pam-chosen-pass-1')).refresh_token as string;
    const changing = expectOk(await signIn('pam', 'Pam-chosen-pass-1', 'Pam-second-pass-2')).refresh_token as string;
    for (const ended of [before, other]) {
      expect(answerOf(await refresh(ended))).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    }
    expect(await opens(expectOk(await refresh(changing)).access_token, 'acme')).toBe(200);
  });
});

describe('the CLI session', () => {
  it('stores the refresh token at login and renews an expired stored token by itself', async () => {
    const login = await runDss(cli, ['login', '--username', 'alice', '--password-stdin'], { stdin: `${DEMO_PASSWORDS.alice}\n` });
    expect(login.code, login.stderr).toBe(0);
    const stored = await storedLogin();
    expect(stored.refreshToken).toMatch(/^[A-Za-z0-9_-]{43}$/);

    await writeFile(join(cli.configDirectory, 'login.json'), JSON.stringify({ ...stored, expiresAt: '2000-01-01T00:00:00.000Z' }));
    const whoami = await dssJson<{ subject: string; expired: boolean }>(cli, ['whoami']);
    expect(whoami).toMatchObject({ subject: 'alice', expired: false });
    const renewed = await storedLogin();
    expect(renewed.token).not.toBe(stored.token);
    expect(renewed.refreshToken).toBe(stored.refreshToken);
    expect(Date.parse(renewed.expiresAt as string)).toBeGreaterThan(Date.now());
  });

  it('renews a stored token the service refuses (401) and sends the call again', async () => {
    const stored = await storedLogin();
    // Still a JWT, but its signature no longer verifies: the gateway answers 401 although it has not expired.
    const forged = `${(stored.token as string).slice(0, -6)}AAAAAA`;
    await writeFile(join(cli.configDirectory, 'login.json'), JSON.stringify({ ...stored, token: forged }));
    const usage = await dssJson<{ quotaBytes: number }>(cli, ['usage']);
    expect(usage.quotaBytes).toBeGreaterThan(0);
    expect((await storedLogin()).token).not.toBe(forged);
  });

  it('revokes the stored refresh token at dss logout and at a new login, and forgets the login even when the service cannot be reached', async () => {
    const loginAlice = (as = 'alice') =>
      runDss(cli, ['login', '--username', as, '--password-stdin'], { stdin: `${DEMO_PASSWORDS.alice}\n` });
    // Usernames are case-insensitive: the login is stored under the name the service gives the user.
    expect(await loginAlice('ALICE')).toMatchObject({ code: 0, stdout: expect.stringMatching(/^Logged in as alice /) });
    expect((await storedLogin()).subject).toBe('alice');
    const replaced = await storedLogin();
    expect((await loginAlice()).code).toBe(0);
    expect(answerOf(await refresh(replaced.refreshToken as string))).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });

    const stored = await storedLogin();
    const out = await runDss(cli, ['logout']);
    expect(out, out.stderr).toMatchObject({ code: 0, stdout: 'Logged out.\n' });
    await expect(readFile(join(cli.configDirectory, 'login.json'))).rejects.toThrow(/ENOENT/);
    expect(answerOf(await refresh(stored.refreshToken as string))).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });

    // A login whose service is gone (nothing listens on port 1): forgotten, with exit 1 saying the token still works.
    const login = await loginAlice();
    expect(login.code, login.stderr).toBe(0);
    const live = await storedLogin();
    await writeFile(join(cli.configDirectory, 'login.json'), JSON.stringify({ ...live, authUrl: 'http://127.0.0.1:1' }));
    const unreachable = await runDss(cli, ['logout']);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(
      /did not revoke the refresh token .* it works until it expires\. To end it now, change your password \(dss password --username alice\)/,
    );
    await expect(readFile(join(cli.configDirectory, 'login.json'))).rejects.toThrow(/ENOENT/);
    expect((await refresh(live.refreshToken as string)).response.status).toBe(200);
  });
});

describe('an invited user', () => {
  const admin = () => clientFor(local.service, local.tokens.root).main;

  it('signs in with the temporary password only to set one, refreshes, and is refused at once once disabled', async () => {
    const invited = expectOk(
      await admin().POST('/admin/users', { body: { username: 'ivy', email: 'ivy@example.com', role: 'viewer', companies: ['acme'] } }),
    );
    const temporary = invited.temporaryPassword as string;

    const challenged = expectError(await signIn('ivy', temporary), 401) as ReturnType<typeof expectError> & {
      challenge?: string;
      passwordPolicy?: string;
    };
    expect(challenged.challenge).toBe('new_password_required');
    // The policy alone, for a form to show before the new password is typed.
    expect(challenged.passwordPolicy).toMatch(/^at least 12 and at most 256 characters, with a lowercase letter/);
    const tokens = expectOk(await signIn('ivy', temporary, 'Ivy-chosen-pass-1'));
    expect(await opens(tokens.access_token, 'acme')).toBe(200);
    const renewed = expectOk(await refresh(tokens.refresh_token as string));
    expect(await opens(renewed.access_token, 'acme')).toBe(200);

    // A change of companies reaches the next refresh's token.
    expectOk(await admin().PATCH('/admin/users/{username}', { params: { path: { username: 'ivy' } }, body: { companies: ['globex'] } }));
    const moved = expectOk(await refresh(tokens.refresh_token as string));
    expect([await opens(moved.access_token, 'globex'), await opens(moved.access_token, 'acme')]).toEqual([200, 403]);

    expectOk(await admin().PATCH('/admin/users/{username}', { params: { path: { username: 'ivy' } }, body: { enabled: false } }));
    expect(answerOf(await refresh(tokens.refresh_token as string))).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expectError(await signIn('ivy', 'Ivy-chosen-pass-1'), 401);
  });

  it('gets the challenge again after root resets the password, whose refresh tokens stop at once', async () => {
    expectOk(
      await admin().POST('/admin/users', { body: { username: 'rex', email: 'rex@example.com', role: 'viewer', companies: ['acme'] } }),
    );
    const first = (await admin().POST('/admin/users/{username}/reset-password', { params: { path: { username: 'rex' } } })).data;
    const tokens = expectOk(await signIn('rex', first?.temporaryPassword as string, 'Rex-chosen-pass-1'));

    const reset = expectOk(await admin().POST('/admin/users/{username}/reset-password', { params: { path: { username: 'rex' } } }));
    expect(answerOf(await refresh(tokens.refresh_token as string))).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expectError(await signIn('rex', 'Rex-chosen-pass-1'), 401);
    const again = expectError(await signIn('rex', reset.temporaryPassword as string), 401) as ReturnType<typeof expectError> & {
      challenge?: string;
    };
    expect(again.challenge).toBe('new_password_required');
  });
});

describe('the new-password challenge, and disabled users', () => {
  let aliceRefreshToken: string;
  let rootRefreshToken: string;

  beforeAll(async () => {
    aliceRefreshToken = expectOk(await signIn('alice', DEMO_PASSWORDS.alice)).refresh_token as string;
    rootRefreshToken = expectOk(await signIn('root', DEMO_PASSWORDS.root)).refresh_token as string;
    await withUsersChanged((users) => {
      for (const user of users) {
        if (user.username === 'bob' || user.username === 'olivia') user.mustChangePassword = true;
        if (user.username === 'alice') user.enabled = false;
      }
    });
  }, 120_000);

  it('gives a user who must set a new password 401 with the challenge, then signs them in with the one they set', async () => {
    const challenged = await signIn('olivia', 'Olivia-new-pass-1');
    const problem = expectError(challenged, 401) as ReturnType<typeof expectError> & { challenge?: string };
    expect(problem).toMatchObject({
      type: 'https://device-scenario-service.dev/problems/new-password-required',
      title: 'New Password Required',
      challenge: 'new_password_required',
    });
    expect(problem.detail).toMatch(/send the same JSON with `new_password` added.*at least 12/);
    expect(challenged.response.headers.get('www-authenticate')).toBe('Bearer');

    expectError(await signIn('olivia', 'Olivia-new-pass-1', 'weak'), 400);
    const tokens = expectOk(await signIn('olivia', 'Olivia-new-pass-1', 'Olivia-new-pass-2'));
    expect(await opens(expectOk(await refresh(tokens.refresh_token as string)).access_token, 'acme')).toBe(200);
    expect((await signIn('olivia', 'Olivia-new-pass-2')).response.status).toBe(200);
  });

  it('refuses a disabled user: sign-in 401, refresh 400 invalid_grant; other refresh tokens survive the restart', async () => {
    expectError(await signIn('alice', DEMO_PASSWORDS.alice), 401);
    expect(answerOf(await refresh(aliceRefreshToken))).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect((await refresh(rootRefreshToken)).response.status).toBe(200);
  });

  it('lets dss login complete the challenge, and dss password change the password', async () => {
    const login = await runDss(cli, ['login', '--username', 'bob', '--password-stdin', '--new-password-stdin'], {
      stdin: `${DEMO_PASSWORDS.bob}\nBob-new-pass-1!\n`,
    });
    expect(login.code, login.stderr).toBe(0);
    expect((await signIn('bob', 'Bob-new-pass-1!')).response.status).toBe(200);

    const withoutTerminal = await runDss(cli, ['password', '--password-stdin'], { stdin: 'Bob-new-pass-1!\n' });
    expect(withoutTerminal.code).toBe(2);

    const changed = await runDss(cli, ['password', '--password-stdin', '--new-password-stdin'], {
      stdin: 'Bob-new-pass-1!\nBob-new-pass-2!\n',
    });
    expect(changed.code, changed.stderr).toBe(0);
    expect(changed.stdout).toContain('Password changed for bob');
    expectError(await signIn('bob', 'Bob-new-pass-1!'), 401);
    expect((await signIn('bob', 'Bob-new-pass-2!')).response.status).toBe(200);
  });
});
