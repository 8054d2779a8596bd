/**
 * End-to-end over `npm start` (bin/local.ts), with the `dss` CLI (a child process per command through cli-runner.ts):
 * root creates API clients for acme (the secret printed once, with the words to store it; never listed), lists,
 * reads, rotates (with and without the overlap), disables, enables, renames, changes the role of and deletes them; a company administrator of acme
 * creates one for acme and is refused one for globex; a client logs in with `dss login --client-id …
 * --client-secret-stdin` (the secret read from stdin, never stored), searches acme and is refused the
 * administration; once its stored token has expired, a command says to log in again; a disabled client's login is
 * refused.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { components } from '../../client/api-types.js';
import { expectOk } from '../../client/index.js';
import { type DssUser, dssJson, dssUser, runDss } from './cli-runner.js';
import { clientFor, DEMO_PASSWORDS, useLocalService } from './harness.js';

type ApiClient = components['schemas']['ApiClient'];
type ApiClientWithSecret = ApiClient & { clientSecret: string };

const local = useLocalService({ users: ['alice', 'root'] });
let work: string;
/** Root at the CLI (platform administrator). */
let root: DssUser;
/** Alice at the CLI, made company administrator of acme by root first. */
let alice: DssUser;

/** A CLI user logged in as `username` with the demo password, in a config folder of its own. */
async function loggedIn(username: 'alice' | 'root'): Promise<DssUser> {
  const user = await dssUser(local.service, { configDirectory: join(work, `config-${username}`) });
  const login = await runDss(user, ['login', '--username', username, '--password-stdin'], { stdin: `${DEMO_PASSWORDS[username]}\n` });
  expect(login.code, login.stderr).toBe(0);
  return user;
}

beforeAll(async () => {
  const api = clientFor(local.service, local.tokens.root);
  expectOk(await api.main.PATCH('/admin/users/{username}', { params: { path: { username: 'alice' } }, body: { role: 'company-admin' } }));
  work = await mkdtemp(join(tmpdir(), 'dss-cli-api-clients-'));
  root = await loggedIn('root');
  alice = await loggedIn('alice');
}, 120_000);

afterAll(async () => {
  if (work !== undefined) await rm(work, { recursive: true, force: true });
});

describe('dss admin api-clients', () => {
  let client: ApiClientWithSecret;

  it('create prints the client and its secret once, saying to store it; list and get never show it', async () => {
    const run = await runDss(root, [
      'admin',
      'api-clients',
      'create',
      '--company',
      'acme',
      '--name',
      'Store back office',
      '--role',
      'operator',
    ]);
    expect(run.code, run.stderr).toBe(0);
    const secret = /Client secret: (\S+)/.exec(run.stdout)?.[1];
    const clientId = /API client (api_\S+) created\./.exec(run.stdout)?.[1];
    expect(secret).toBeDefined();
    expect(clientId).toMatch(/^api_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(run.stdout).toContain('Store back office');
    expect(run.stderr).toMatch(/Store the client secret now.*not shown again/);

    client = await dssJson<ApiClientWithSecret>(root, [
      'admin',
      'api-clients',
      'create',
      '--company',
      'acme',
      '--name',
      'CI',
      '--role',
      'viewer',
    ]);
    expect(client).toMatchObject({ name: 'CI', company: 'acme', role: 'viewer', enabled: true, createdBy: 'root' });
    expect(client.clientSecret).not.toBe(secret);

    const listed = await dssJson<{ items: ApiClient[] }>(root, ['admin', 'api-clients', 'list', '--company', 'acme']);
    expect(listed.items.map((item) => item.clientId).sort()).toEqual([clientId, client.clientId].sort());
    const table = await runDss(root, ['admin', 'api-clients', 'list', '--company', 'acme']);
    expect(table.stdout).toContain('CLIENT ID');
    expect(table.stdout).toContain('never');
    const got = await runDss(root, ['admin', 'api-clients', 'get', client.clientId]);
    expect(got.code, got.stderr).toBe(0);
    for (const shown of [JSON.stringify(listed), table.stdout, got.stdout]) {
      expect(shown).not.toContain(client.clientSecret);
      expect(shown).not.toContain(secret);
    }
  });

  it('refuses a role a client cannot hold before anything is sent', async () => {
    const run = await runDss(root, ['admin', 'api-clients', 'create', '--company', 'acme', '--name', 'X', '--role', 'company-admin']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('viewer, operator');
    const overlap = await runDss(root, ['admin', 'api-clients', 'rotate', client.clientId, '--previous-secret-valid-seconds', '86401']);
    expect(overlap.code).toBe(2);
  });

  it('rotate prints the new secret once, with until when the previous one works; 0 ends it at once', async () => {
    const rotated = await dssJson<ApiClientWithSecret>(root, ['admin', 'api-clients', 'rotate', client.clientId]);
    expect(rotated.clientSecret).not.toBe(client.clientSecret);
    const until = Date.parse(rotated.previousSecretExpiresAt ?? '');
    expect(until - Date.now()).toBeGreaterThan(86_000_000);
    expect(until - Date.now()).toBeLessThanOrEqual(86_400_000);

    const run = await runDss(root, ['admin', 'api-clients', 'rotate', client.clientId, '--previous-secret-valid-seconds', '0']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('the previous one no longer works');
    expect(run.stderr).toMatch(/Store the client secret now/);
    const shown = await dssJson<ApiClient>(root, ['admin', 'api-clients', 'get', client.clientId]);
    expect(shown.previousSecretExpiresAt).toBeUndefined();
  });

  it('disable, enable, update and delete change the client as the API then shows it', async () => {
    const disabled = await runDss(root, ['admin', 'api-clients', 'disable', client.clientId]);
    expect(disabled.code, disabled.stderr).toBe(0);
    expect(disabled.stdout).toContain(`Disabled API client ${client.clientId}.`);
    expect((await dssJson<ApiClient>(root, ['admin', 'api-clients', 'get', client.clientId])).enabled).toBe(false);
    expect((await dssJson<ApiClient>(root, ['admin', 'api-clients', 'enable', client.clientId])).enabled).toBe(true);
    const nothing = await runDss(root, ['admin', 'api-clients', 'update', client.clientId]);
    expect(nothing.code).toBe(2);
    const updated = await dssJson<ApiClient>(root, [
      'admin',
      'api-clients',
      'update',
      client.clientId,
      '--name',
      'CI (Lyon)',
      '--role',
      'operator',
    ]);
    expect(updated).toMatchObject({ clientId: client.clientId, name: 'CI (Lyon)', role: 'operator', enabled: true });

    const deleted = await runDss(root, ['admin', 'api-clients', 'delete', client.clientId]);
    expect(deleted.code, deleted.stderr).toBe(0);
    const gone = await runDss(root, ['admin', 'api-clients', 'get', client.clientId]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('404');
  });

  it("lets a company administrator create a client for their company, and refuses one for another's", async () => {
    // Alice's token names acme only: it is the company without --company.
    const made = await dssJson<ApiClientWithSecret>(alice, [
      'admin',
      'api-clients',
      'create',
      '--name',
      'Kiosk reports',
      '--role',
      'viewer',
    ]);
    expect(made).toMatchObject({ company: 'acme', createdBy: 'alice' });
    const refused = await runDss(alice, ['admin', 'api-clients', 'create', '--company', 'globex', '--name', 'Nope', '--role', 'viewer']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('403');
  });
});

describe('dss login --client-id --client-secret-stdin', () => {
  it('logs a client in with its secret from stdin (never stored), acts for its company, and says to log in again once expired', async () => {
    const made = await dssJson<ApiClientWithSecret>(root, [
      'admin',
      'api-clients',
      'create',
      '--company',
      'acme',
      '--name',
      'Pipeline',
      '--role',
      'operator',
    ]);
    const machine = await dssUser(local.service, { configDirectory: join(work, 'config-machine') });
    const login = await runDss(machine, ['login', '--client-id', made.clientId, '--client-secret-stdin'], {
      stdin: `${made.clientSecret}\n`,
    });
    expect(login.code, login.stderr).toBe(0);
    expect(login.stdout).toContain(`Logged in as client:${made.clientId} (acme)`);
    const stored = await readFile(join(machine.configDirectory, 'login.json'), 'utf8');
    expect(stored).not.toContain(made.clientSecret);
    expect(JSON.parse(stored)).not.toHaveProperty('refreshToken');

    const whoami = await dssJson<{ subject: string; companies: string[] }>(machine, ['whoami']);
    expect(whoami.companies).toEqual(['acme']);
    const search = await runDss(machine, ['search', '--type', 'DEVICE', '--json']);
    expect(search.code, search.stderr).toBe(0);
    const administration = await runDss(machine, ['admin', 'api-clients', 'list']);
    expect(administration.code).toBe(1);
    expect(administration.stderr).toMatch(/40[13]/);

    // Its token expired (the login file says so): the command says how to log in again.
    await writeFile(
      join(machine.configDirectory, 'login.json'),
      JSON.stringify({ ...JSON.parse(stored), expiresAt: new Date(Date.now() - 1000).toISOString() }),
    );
    const later = await runDss(machine, ['search', '--type', 'DEVICE']);
    expect(later.stderr).toContain(`dss login --client-id ${made.clientId} --client-secret-stdin`);
  });

  it("refuses a wrong secret and a disabled client's login, storing nothing", async () => {
    const made = await dssJson<ApiClientWithSecret>(root, [
      'admin',
      'api-clients',
      'create',
      '--company',
      'acme',
      '--name',
      'Soon off',
      '--role',
      'viewer',
    ]);
    const machine = await dssUser(local.service, { configDirectory: join(work, 'config-refused') });
    const wrong = await runDss(machine, ['login', '--client-id', made.clientId, '--client-secret-stdin'], { stdin: 'not-the-secret\n' });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('invalid_client');
    expectOk(
      await clientFor(local.service, local.tokens.root).main.PATCH('/admin/api-clients/{clientId}', {
        params: { path: { clientId: made.clientId } },
        body: { enabled: false },
      }),
    );
    const disabled = await runDss(machine, ['login', '--client-id', made.clientId, '--client-secret-stdin'], {
      stdin: `${made.clientSecret}\n`,
    });
    expect(disabled.code).toBe(1);
    expect(disabled.stderr).toContain('invalid_client');
    const missing = await runDss(machine, ['login', '--client-id', made.clientId, '--client-secret-stdin'], { stdin: '' });
    expect(missing.code).toBe(2);
  });
});
