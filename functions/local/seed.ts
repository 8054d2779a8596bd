import { access, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import JSZip from 'jszip';
import { hashPassword, type LocalUser, USERS_FILE } from '../adapters/embedded/local-identity-provider.js';
import { uploadScenario } from '../core/scenarios/upload.js';
import type { Principal } from '../core/shared/principal.js';
import type { Services } from '../platform/composition/services.js';
import { DEMO_COMPANIES, DEMO_DEVICES_PER_COMPANY, DEMO_SEED, DEMO_USERS, type DemoUser } from './demo-data.js';
import { generateDemoDevices } from './demo-fleet.js';

/** The demo scenario of each company: two versions, so deployments can be tried at once (docs/contract.md). */
export const DEMO_SCENARIOS = [
  { company: 'acme', id: 'acme-welcome', name: 'Acme welcome screen', description: 'Greets shoppers and shows the weekly offers.' },
  { company: 'globex', id: 'globex-timetable', name: 'Globex live timetable', description: 'Shows departures and platform changes.' },
] as const;
/** Versions uploaded for each demo scenario. */
export const DEMO_SCENARIO_VERSIONS = ['1.0.0', '1.1.0'] as const;

/** Builds a small, valid demo scenario archive. */
export async function buildDemoScenarioArchive(scenario: (typeof DEMO_SCENARIOS)[number], version: string): Promise<Uint8Array> {
  const zip = new JSZip();
  zip.file(
    'scenario.json',
    JSON.stringify(
      {
        id: scenario.id,
        name: scenario.name,
        version,
        description: scenario.description,
        thumbnails: ['resources/thumbnails/thumbnail.svg'],
        assets: ['resources/assets/index.html'],
      },
      null,
      2,
    ),
  );
  zip.file(
    'resources/thumbnails/thumbnail.svg',
    `<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"><rect width="64" height="64" fill="#1f6feb"/></svg>`,
  );
  zip.file('resources/assets/index.html', `<!doctype html><title>${scenario.name}</title><h1>${scenario.name} ${version}</h1>`);
  return zip.generateAsync({ type: 'uint8array', compression: 'DEFLATE' });
}

/**
 * Scopes added to the demo users' sets since users.json was first written, oldest addition first: a data folder made
 * before an addition has demo users holding their set without it (and without every later one).
 */
const SCOPES_ADDED_SINCE_FIRST_RELEASE: readonly (readonly string[])[] = [
  ['devices:read'],
  ['webhooks:read', 'webhooks:write', 'alerts:read', 'alerts:write'],
];

/**
 * The users of an existing users.json with the demo users brought up to date: a demo user still holding exactly a
 * scope set an earlier start gave it (its current set less the scopes of one addition of
 * SCOPES_ADDED_SINCE_FIRST_RELEASE and every later one) gets its current set. Users changed by hand, and everyone
 * else, are left as they are. Returns undefined when nothing changes.
 */
export function upgradedDemoUsers(users: readonly LocalUser[]): LocalUser[] | undefined {
  const sameSet = (left: Iterable<string>, right: Iterable<string>) => {
    const a = new Set(left);
    const b = new Set(right);
    return a.size === b.size && [...a].every((scope) => b.has(scope));
  };
  let changed = false;
  const upgraded = users.map((user) => {
    const demo = DEMO_USERS.find((candidate) => candidate.username === user.username);
    if (demo === undefined) return user;
    const current = demo.scope.split(' ');
    const earlierSets = SCOPES_ADDED_SINCE_FIRST_RELEASE.map((_, since) => {
      const added = new Set(SCOPES_ADDED_SINCE_FIRST_RELEASE.slice(since).flat());
      return current.filter((scope) => !added.has(scope));
    });
    const held = user.scope.split(' ').filter((scope) => scope !== '');
    if (sameSet(held, current) || !earlierSets.some((earlier) => sameSet(held, earlier))) return user;
    changed = true;
    return { ...user, scope: demo.scope };
  });
  return changed ? upgraded : undefined;
}

/**
 * Demo users added since users.json was first written: a data folder made before has no such user, and gets it on the
 * next start (a demo user removed from an older folder by hand is not brought back).
 */
const DEMO_USERS_ADDED_SINCE_FIRST_RELEASE = ['root'] as const;

/**
 * Writes users.json (scrypt hashes of the demo users) into `authDirectory` unless it exists; when it exists, gives
 * the demo users that still hold an earlier demo scope set the current one (upgradedDemoUsers), and adds the demo
 * users added since (DEMO_USERS_ADDED_SINCE_FIRST_RELEASE) that it lacks.
 * @throws Error when an existing users.json is not valid JSON.
 */
export async function seedUsers(authDirectory: string): Promise<void> {
  const path = join(authDirectory, USERS_FILE);
  try {
    await access(path);
  } catch {
    await writeUsers(path);
    return;
  }
  const existing = JSON.parse(await readFile(path, 'utf8')) as LocalUser[];
  const upgraded = upgradedDemoUsers(existing);
  const missing = DEMO_USERS.filter(
    (demo) =>
      (DEMO_USERS_ADDED_SINCE_FIRST_RELEASE as readonly string[]).includes(demo.username) &&
      !existing.some((user) => user.username === demo.username),
  );
  if (upgraded === undefined && missing.length === 0) return;
  const users = [...(upgraded ?? existing), ...(await Promise.all(missing.map(localUserOf)))];
  await writeFile(path, `${JSON.stringify(users, null, 2)}\n`, { mode: 0o600 });
}

/** A demo user as users.json holds it (its password's scrypt hash). */
async function localUserOf(user: DemoUser): Promise<LocalUser> {
  return { username: user.username, passwordHash: await hashPassword(user.password), companies: [...user.companies], scope: user.scope };
}

/** Writes a new users.json holding the demo users. */
async function writeUsers(path: string): Promise<void> {
  const users: LocalUser[] = await Promise.all(DEMO_USERS.map(localUserOf));
  await writeFile(path, `${JSON.stringify(users, null, 2)}\n`, { mode: 0o600 });
}

/**
 * Seeds the deterministic demo (docs/contract.md, "Local demo data") when the companies table is empty: companies,
 * 120 devices per company with times relative to `now` (ISO-8601; the seeding's instant by default, so that a
 * connected kiosk reported minutes ago), and two versions of one scenario per company, uploaded through the upload
 * use case.
 * @returns whether anything was seeded.
 */
export async function seedDemoData(services: Services, now: string = new Date().toISOString()): Promise<boolean> {
  if ((await services.companies.getMany(DEMO_COMPANIES.map((company) => company.id))).length > 0) return false;
  await services.companies.put(
    DEMO_COMPANIES.map((company) => ({ id: company.id, name: company.name, quotaBytes: company.quotaBytes, usedBytes: 0 })),
  );
  for (const company of DEMO_COMPANIES) {
    await services.devices.put(generateDemoDevices(company, DEMO_DEVICES_PER_COMPANY, DEMO_SEED, now));
  }
  for (const scenario of DEMO_SCENARIOS) {
    const seeder: Principal = { subject: 'demo-seed', companies: [scenario.company], scopes: new Set(['scenarios:write']) };
    for (const version of DEMO_SCENARIO_VERSIONS) {
      await uploadScenario(services, seeder, scenario.company, await buildDemoScenarioArchive(scenario, version));
    }
  }
  return true;
}
