import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type LocalUser, USERS_FILE, verifyPassword } from '../../../functions/adapters/embedded/local-identity-provider.js';
import { seedUsers } from '../../../functions/local/seed.js';

/** users.json as a start before `devices:read` existed wrote it (hashes shortened: they are kept as they are). */
const EARLIER_USERS: LocalUser[] = [
  {
    username: 'alice',
    passwordHash: 'scrypt$alice',
    companies: ['acme'],
    scope: 'scenarios:read scenarios:write deployments:read deployments:write search:read devices:write',
  },
  { username: 'bob', passwordHash: 'scrypt$bob', companies: ['globex'], scope: 'search:read' },
  {
    username: 'olivia',
    passwordHash: 'scrypt$olivia',
    companies: ['acme', 'globex'],
    scope: 'scenarios:read deployments:read search:read',
  },
  { username: 'carol', passwordHash: 'scrypt$carol', companies: ['acme'], scope: 'scenarios:read deployments:read search:read' },
];

describe('seedUsers', () => {
  let directory: string;
  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), 'dss-seed-users-'));
  });
  afterEach(() => rm(directory, { recursive: true, force: true }));

  const users = async () => JSON.parse(await readFile(join(directory, USERS_FILE), 'utf8')) as LocalUser[];

  it('writes the demo users on a fresh folder', async () => {
    await seedUsers(directory);
    const written = await users();
    expect(written.map((user) => user.username)).toEqual(['alice', 'bob', 'olivia', 'root']);
    expect(written.find((user) => user.username === 'root')).toMatchObject({
      companies: [],
      scope:
        'scenarios:read scenarios:write deployments:read deployments:write search:read devices:read devices:write users:read users:write companies:read companies:write webhooks:read webhooks:write alerts:read alerts:write',
    });
    expect(written.find((user) => user.username === 'olivia')?.scope).toBe(
      'scenarios:read deployments:read search:read devices:read alerts:read',
    );
    expect(await verifyPassword('alice-demo-password', written[0]?.passwordHash as string)).toBe(true);
  });

  it('gives demo users still holding their earlier demo scope set the new scopes, and leaves everyone else alone', async () => {
    await writeFile(join(directory, USERS_FILE), JSON.stringify(EARLIER_USERS));
    await seedUsers(directory);
    const upgraded = await users();
    expect(upgraded.map((user) => [user.username, user.scope])).toEqual([
      [
        'alice',
        'scenarios:read scenarios:write deployments:read deployments:write search:read devices:read devices:write webhooks:read alerts:read alerts:write',
      ],
      // Changed by hand: kept.
      ['bob', 'search:read'],
      ['olivia', 'scenarios:read deployments:read search:read devices:read alerts:read'],
      // Not a demo user, though holding olivia's earlier set: kept.
      ['carol', 'scenarios:read deployments:read search:read'],
      // Added since that folder was made: added, with its password.
      [
        'root',
        'scenarios:read scenarios:write deployments:read deployments:write search:read devices:read devices:write users:read users:write companies:read companies:write webhooks:read webhooks:write alerts:read alerts:write',
      ],
    ]);
    expect(upgraded.slice(0, -1).map((user) => user.passwordHash)).toEqual(EARLIER_USERS.map((user) => user.passwordHash));
    expect(await verifyPassword('root-demo-password', upgraded.at(-1)?.passwordHash as string)).toBe(true);
  });

  it('gives a demo user of a folder made after devices:read but before webhooks and alerts the scopes added since', async () => {
    const olivia = { ...(EARLIER_USERS[2] as LocalUser), scope: 'scenarios:read deployments:read search:read devices:read' };
    await writeFile(join(directory, USERS_FILE), JSON.stringify([olivia]));
    await seedUsers(directory);
    expect((await users()).find((user) => user.username === 'olivia')?.scope).toBe(
      'scenarios:read deployments:read search:read devices:read alerts:read',
    );
  });

  it('does not add root again, nor rewrite a folder that is up to date', async () => {
    await seedUsers(directory);
    const before = await readFile(join(directory, USERS_FILE), 'utf8');
    await seedUsers(directory);
    expect(await readFile(join(directory, USERS_FILE), 'utf8')).toBe(before);
  });
});
