/**
 * End-to-end cursors of the three paged listings (active deployments, scenarios, deployment history) over real HTTP
 * against one local service (`bin/local.ts`): a cursor a client made up, altered by one character, issued by another
 * listing, company or filter, or empty, answers 400 naming `cursor`; the `nextCursor` of page 1 still reads page 2.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDemoScenarioArchive } from '../../functions/local/seed.js';
import {
  call,
  type JsonResult,
  type LocalService,
  newServiceSettings,
  removeDataDirectory,
  type ServiceSettings,
  startService,
  tokenFor,
  uploadArchive,
  eventually,
} from './harness.js';

let settings: ServiceSettings;
let service: LocalService;
let bob: string;
let olivia: string;

interface Page {
  items: Record<string, unknown>[];
  nextCursor: string | null;
}

/** The three listings of globex, by name: path and the query selecting one page. */
const LISTINGS = {
  deployments: '/companies/globex/resources/DEVICE/deployments',
  scenarios: '/companies/globex/resources/scenarios',
  history: '/companies/globex/resources/deployments/history',
} as const;
type Listing = keyof typeof LISTINGS;

const list = (listing: Listing, query: string, token = bob): Promise<JsonResult<Page>> =>
  call<Page>(`${service.api}${LISTINGS[listing]}?${query}`, { token });

const forged = (key: unknown) => Buffer.from(JSON.stringify(key)).toString('base64url');

/** Expects the 400 problem naming `cursor` whose detail tells the client what to do. */
function expectCursorRefused(result: JsonResult, what: string): void {
  expect(result.status, `${what}: ${JSON.stringify(result.body)}`).toBe(400);
  expect(result.headers.get('content-type') ?? '', what).toMatch(/^application\/problem\+json\b/);
  expect(
    result.body.errors.map((error: { path: string }) => error.path),
    what,
  ).toEqual(['cursor']);
  expect(result.body.detail, what).toMatch(/nextCursor/);
}

/** Changes the character at `index` into another base64url character. */
const alter = (cursor: string, index: number): string => {
  const replacement = cursor[index] === 'A' ? 'B' : 'A';
  return `${cursor.slice(0, index)}${replacement}${cursor.slice(index + 1)}`;
};

beforeAll(async () => {
  settings = await newServiceSettings();
  service = await startService(settings);
  [bob, olivia] = await Promise.all([tokenFor(service, 'bob'), tokenFor(service, 'olivia')]);
  // Three active deployments (and three history entries), two scenarios: every listing has a page 2 with limit=1.
  const deployed = await call(`${service.api}/companies/globex/resources/deployments`, {
    token: bob,
    json: {
      requests: ['globex-kiosk-0001', 'globex-kiosk-0002', 'globex-kiosk-0003'].map((device) => ({
        target: { type: 'DEVICE', id: device, subId: null },
        what: { type: 'SCENARIO', id: 'globex-timetable', subId: '1.0.0' },
        action: 'DEPLOY',
      })),
    },
  });
  expect(deployed.status, JSON.stringify(deployed.body)).toBe(200);
  // History entries are derived from the deployments table's stream, a moment after the answer.
  await eventually(async () => (await list('history', 'limit=10')).body.items?.length === 3, 'the history of the three deployments');
  const archive = await buildDemoScenarioArchive(
    { company: 'globex', id: 'globex-wayfinding', name: 'Globex wayfinding', description: 'Platform maps.' } as unknown as Parameters<
      typeof buildDemoScenarioArchive
    >[0],
    '1.0.0',
  );
  const uploaded = await uploadArchive(service, bob, 'globex', archive);
  expect(uploaded.status, JSON.stringify(uploaded.body)).toBe(201);
}, 120_000);

afterAll(async () => {
  await service?.stop();
  if (settings !== undefined) await removeDataDirectory(settings);
}, 120_000);

describe('listing cursors', () => {
  it('answers 400, not 500, to a made-up cursor holding an empty DynamoDB key', async () => {
    expectCursorRefused(await list('deployments', `cursor=${forged({ pk: 'ACTIVE#globex', sk: '' })}`), 'active deployments');
    expectCursorRefused(await list('scenarios', `cursor=${forged({ company: 'globex', sk: '' })}`), 'scenarios');
    expectCursorRefused(await list('history', `cursor=${forged({ pk: '', sk: '', gsi2pk: 'HISTORY#globex', gsi2sk: '' })}`), 'history');
  });

  it('refuses a made-up cursor even when it names a real item of the caller', async () => {
    expectCursorRefused(
      await list('deployments', `cursor=${forged({ pk: 'ACTIVE#globex', sk: 'globex-kiosk-0001#globex-timetable#1.0.0' })}`),
      'active deployments',
    );
    expectCursorRefused(await list('scenarios', `cursor=${forged({ company: 'globex', sk: 'SCENARIO#globex-timetable' })}`), 'scenarios');
  });

  for (const listing of Object.keys(LISTINGS) as Listing[]) {
    it(`${listing}: the nextCursor of page 1 reads page 2; one character changed anywhere answers 400`, async () => {
      const first = await list(listing, 'limit=1');
      expect(first.status, JSON.stringify(first.body)).toBe(200);
      const cursor = first.body.nextCursor;
      expect(cursor).toEqual(expect.any(String));
      const second = await list(listing, `limit=1&cursor=${encodeURIComponent(cursor as string)}`);
      expect(second.status, JSON.stringify(second.body)).toBe(200);
      expect(second.body.items).toHaveLength(1);
      expect(second.body.items[0]).not.toEqual(first.body.items[0]);
      for (const index of [0, Math.floor((cursor as string).length / 2), (cursor as string).length - 1]) {
        expectCursorRefused(
          await list(listing, `limit=1&cursor=${encodeURIComponent(alter(cursor as string, index))}`),
          `${listing}, character ${index}`,
        );
      }
    });

    it(`${listing}: an empty cursor answers 400`, async () => {
      const result: JsonResult = await list(listing, 'cursor=');
      expect(result.status, JSON.stringify(result.body)).toBe(400);
      expect(result.body.errors.map((error: { path: string }) => error.path)).toEqual(['cursor']);
    });
  }

  it("refuses a cursor on another listing, another filter, or another caller's company", async () => {
    const cursors = Object.fromEntries(
      await Promise.all(
        (Object.keys(LISTINGS) as Listing[]).map(async (listing) => [listing, (await list(listing, 'limit=1')).body.nextCursor as string]),
      ),
    ) as Record<Listing, string>;
    for (const from of Object.keys(LISTINGS) as Listing[]) {
      for (const to of Object.keys(LISTINGS) as Listing[]) {
        if (from !== to) expectCursorRefused(await list(to, `cursor=${encodeURIComponent(cursors[from])}`), `${from} cursor on ${to}`);
      }
    }
    // The history filtered by a scenario, and one device's active deployments, do not take the unfiltered cursors.
    expectCursorRefused(
      await list('history', `scenarioId=globex-timetable&cursor=${encodeURIComponent(cursors.history)}`),
      'history filter',
    );
    const device = await call(
      `${service.api}/companies/globex/resources/globex-kiosk-0001/deployments?cursor=${encodeURIComponent(cursors.deployments)}`,
      { token: bob },
    );
    expectCursorRefused(device, 'device listing');
    // olivia reads both companies: globex's cursor does not page acme's listing.
    const acme = await call(`${service.api}/companies/acme/resources/scenarios?cursor=${encodeURIComponent(cursors.scenarios)}`, {
      token: olivia,
    });
    expectCursorRefused(acme, 'other company');
  });
});
