/**
 * The CLI's session (cli/refresh.ts, cli/commands/session.ts): the stored token renewed with the refresh token when it
 * has expired or a call answers 401, once per command, written back to the login file; a refused refresh leaves the
 * 401; `dss login`'s sign-in answering the new-password challenge. Against a fake service (an injected fetch).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { isNewPasswordChallenge, signInUser } from '../../../cli/commands/session.js';
import { dssProgram } from '../../../cli/main.js';
import { StoredSession } from '../../../cli/refresh.js';
import { readLogin, type StoredLogin } from '../../../cli/settings.js';
import { createDssClient } from '../../../client/index.js';

const T0 = Date.parse('2026-03-01T10:00:00.000Z');
const ADDRESSES = { baseUrl: 'http://main.test', uploadUrl: 'http://upload.test', authUrl: 'http://auth.test' };

let directory: string;
let environment: NodeJS.ProcessEnv;

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'dss-cli-session-'));
  environment = { DSS_CONFIG_DIR: directory };
  vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
});

afterEach(async () => {
  vi.restoreAllMocks();
  await rm(directory, { recursive: true, force: true });
});

const json = (status: number, body: unknown, type = 'application/json') =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': type } });

/**
 * A service whose main address accepts only `valid` as the bearer token, and whose token endpoint renews `refresh-1`
 * with `renewed-<n>` (or refuses every refresh with `refuse`). Records what it was sent.
 */
function fakeService(options: { refuse?: boolean; valid?: () => string } = {}) {
  const seen: { url: string; authorization: string | null; body: string }[] = [];
  let renewals = 0;
  const fetch = async (input: Request | string | URL, init?: RequestInit): Promise<Response> => {
    const request = input instanceof Request ? input : new Request(input, init);
    const body = await request.text();
    seen.push({ url: request.url, authorization: request.headers.get('authorization'), body });
    if (request.url === 'http://auth.test/token') {
      const form = new URLSearchParams(body);
      if (options.refuse || form.get('refresh_token') !== 'refresh-1')
        return json(400, { error: 'invalid_grant', error_description: 'The refresh token is unknown.' });
      renewals += 1;
      return json(200, { access_token: `renewed-${renewals}`, token_type: 'Bearer', expires_in: 900 });
    }
    const valid = options.valid?.() ?? `renewed-${renewals}`;
    if (request.headers.get('authorization') !== `Bearer ${valid}`)
      return json(401, { type: 'about:blank', title: 'Unauthorized', status: 401, detail: 'expired' }, 'application/problem+json');
    return json(200, { quotaBytes: 1, usedBytes: 0, availableBytes: 1, echo: body });
  };
  return { fetch: fetch as typeof globalThis.fetch, seen, renewals: () => renewals };
}

const login = (overrides: Partial<StoredLogin> = {}): StoredLogin => ({
  ...ADDRESSES,
  token: 'old',
  subject: 'alice',
  expiresAt: new Date(T0 + 600_000).toISOString(),
  refreshToken: 'refresh-1',
  ...overrides,
});

/** The typed client of a command run with `session`, on the fake service. */
function clientOf(session: StoredSession, fetch: typeof globalThis.fetch) {
  return createDssClient({ ...ADDRESSES, token: () => session.token, fetch, middleware: [session.retryOnUnauthorized()] });
}

const usage = (dss: ReturnType<typeof clientOf>) =>
  dss.main.GET('/companies/{companyId}/resources/scenarios/usage', { params: { path: { companyId: 'acme' } } });

describe('the stored session', () => {
  it('renews an expired token before the first call and writes it to the login file', async () => {
    const service = fakeService();
    const session = new StoredSession(login({ expiresAt: new Date(T0 - 1).toISOString() }), {
      environment,
      fetch: service.fetch,
      now: () => T0,
    });
    await session.refreshIfExpired();
    expect(session.token).toBe('renewed-1');
    expect(service.seen[0]?.body).toBe('grant_type=refresh_token&refresh_token=refresh-1');
    expect(await readLogin(environment)).toMatchObject({
      token: 'renewed-1',
      refreshToken: 'refresh-1',
      expiresAt: new Date(T0 + 900_000).toISOString(),
    });
    expect((await usage(clientOf(session, service.fetch))).response.status).toBe(200);
    expect(service.renewals()).toBe(1);
  });

  it('leaves a token that has not expired alone', async () => {
    const service = fakeService();
    const session = new StoredSession(login(), { environment, fetch: service.fetch, now: () => T0 });
    await session.refreshIfExpired();
    expect(session.token).toBe('old');
    expect(service.seen).toEqual([]);
  });

  it('answers a 401 by renewing once and sending the call again, body and all', async () => {
    const service = fakeService();
    const session = new StoredSession(login(), { environment, fetch: service.fetch, now: () => T0 });
    const dss = clientOf(session, service.fetch);
    const answer = await dss.main.POST('/companies/{companyId}/resources/deployments', {
      params: { path: { companyId: 'acme' } },
      body: { items: [] } as never,
    });
    expect(answer.response.status).toBe(200);
    expect(service.seen.map((call) => [call.url.replace(/\?.*/, ''), call.authorization])).toEqual([
      ['http://main.test/companies/acme/resources/deployments', 'Bearer old'],
      ['http://auth.test/token', null],
      ['http://main.test/companies/acme/resources/deployments', 'Bearer renewed-1'],
    ]);
    expect(service.seen[2]?.body).toBe(service.seen[0]?.body);
  });

  it('renews at most once per command: a 401 with the renewed token stands', async () => {
    const service = fakeService({ valid: () => 'never' });
    const session = new StoredSession(login(), { environment, fetch: service.fetch, now: () => T0 });
    const dss = clientOf(session, service.fetch);
    expect((await usage(dss)).response.status).toBe(401);
    expect((await usage(dss)).response.status).toBe(401);
    expect(service.renewals()).toBe(1);
    expect(service.seen.filter((call) => call.url === 'http://auth.test/token')).toHaveLength(1);
  });

  it('keeps the 401 and says to log in again when the refresh is refused', async () => {
    const service = fakeService({ refuse: true });
    const session = new StoredSession(login(), { environment, fetch: service.fetch, now: () => T0 });
    expect((await usage(clientOf(session, service.fetch))).response.status).toBe(401);
    expect(process.stderr.write).toHaveBeenCalledWith(expect.stringContaining('run `dss login` again'));
    expect(await readLogin(environment)).toBeUndefined();
  });
});

describe('dss login and dss password', () => {
  it('answers the new-password challenge with the new password the user chose, after showing the policy', async () => {
    const bodies: unknown[] = [];
    const fetch = (async (input: Request) => {
      const body = JSON.parse(await input.text()) as Record<string, string>;
      bodies.push(body);
      if (body.new_password === undefined)
        return json(
          401,
          {
            type: 'https://device-scenario-service.dev/problems/new-password-required',
            title: 'New Password Required',
            status: 401,
            detail: 'Set a new password: … at least 12 …',
            challenge: 'new_password_required',
          },
          'application/problem+json',
        );
      return json(200, { access_token: 'a.b.c', token_type: 'Bearer', expires_in: 900, refresh_token: 'refresh-9' });
    }) as typeof globalThis.fetch;
    const asked: string[] = [];
    const tokens = await signInUser(
      createDssClient({ ...ADDRESSES, fetch }).auth,
      { username: 'dave', password: 'Temporary-1!' },
      async (detail) => {
        asked.push(detail);
        return 'Chosen-pass-2';
      },
    );
    expect(tokens).toMatchObject({ access_token: 'a.b.c', refresh_token: 'refresh-9' });
    expect(asked).toEqual(['Set a new password: … at least 12 …']);
    expect(bodies).toEqual([
      { username: 'dave', password: 'Temporary-1!' },
      { username: 'dave', password: 'Temporary-1!', new_password: 'Chosen-pass-2' },
    ]);
    expect(isNewPasswordChallenge({ challenge: 'new_password_required' })).toBe(true);
    expect(isNewPasswordChallenge({ title: 'Unauthorized' })).toBe(false);
  });

  it('registers dss password, and the new-password options of dss login', () => {
    const program = dssProgram();
    expect(program.commands.map((command) => command.name())).toContain('password');
    const loginOptions = program.commands.find((command) => command.name() === 'login')?.options.map((option) => option.long);
    expect(loginOptions).toEqual(expect.arrayContaining(['--new-password', '--new-password-stdin']));
  });
});
