/**
 * End-to-end cursors of the three paged listings (active deployments, scenarios, deployment history) over real HTTP
 * against one local service (`bin/local.ts`): a cursor a client made up, altered by one character, issued by another
 * listing, company or filter, or empty, answers 400 naming `cursor`; the `nextCursor` of page 1 still reads page 2.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { expectOk, type FetchResult } from '../../client/index.js';
import { buildDemoScenarioArchive } from '../../functions/local/seed.js';
import { answerOf, clientFor, eventually, type TypedResult, uploadArchive, useLocalService } from './harness.js';

const local = useLocalService({ users: ['bob', 'olivia'] });

/** The three paged listings of a company, by name. */
const LISTINGS = ['deployments', 'scenarios', 'history'] as const;
type Listing = (typeof LISTINGS)[number];

/** What the three listings have in common. */
interface Page {
  items: unknown[];
  nextCursor: string | null;
}

/** One page of a listing of `company` (default globex), through the typed client. */
async function list(
  listing: Listing,
  query: { limit?: number; cursor?: string } = {},
  token = local.tokens.bob,
  company = 'globex',
): Promise<FetchResult<Page, unknown>> {
  const dss = clientFor(local.service, token);
  const path = { companyId: company };
  if (listing === 'deployments') return dss.main.GET('/companies/{companyId}/resources/DEVICE/deployments', { params: { path, query } });
  if (listing === 'scenarios') return dss.main.GET('/companies/{companyId}/resources/scenarios', { params: { path, query } });
  return dss.main.GET('/companies/{companyId}/resources/deployments/history', { params: { path, query } });
}

const forged = (key: unknown) => Buffer.from(JSON.stringify(key)).toString('base64url');

/** Expects the 400 problem naming `cursor` whose detail tells the client what to do. */
function expectCursorRefused(typed: TypedResult, what: string): void {
  const result = answerOf(typed);
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
  // Three active deployments (and three history entries), two scenarios: every listing has a page 2 with limit=1.
  const deployed = await clientFor(local.service, local.tokens.bob).main.POST('/companies/{companyId}/resources/deployments', {
    params: { path: { companyId: 'globex' } },
    body: {
      requests: ['globex-kiosk-0001', 'globex-kiosk-0002', 'globex-kiosk-0003'].map((device) => ({
        target: { type: 'DEVICE', id: device, subId: null },
        what: { type: 'SCENARIO', id: 'globex-timetable', subId: '1.0.0' },
        action: 'DEPLOY' as const,
      })),
    },
  });
  expect(deployed.response.status, JSON.stringify(deployed.error)).toBe(200);
  // History entries are derived from the deployments table's stream, a moment after the answer.
  await eventually(async () => expectOk(await list('history', { limit: 10 })).items.length === 3, 'the history of the three deployments');
  const archive = await buildDemoScenarioArchive(
    { company: 'globex', id: 'globex-wayfinding', name: 'Globex wayfinding', description: 'Platform maps.' } as unknown as Parameters<
      typeof buildDemoScenarioArchive
    >[0],
    '1.0.0',
  );
  const uploaded = await uploadArchive(local.service, local.tokens.bob, 'globex', archive);
  expect(uploaded.response.status, JSON.stringify(uploaded.error)).toBe(201);
}, 120_000);

describe('listing cursors', () => {
  it('answers 400, not 500, to a made-up cursor holding an empty DynamoDB key', async () => {
    expectCursorRefused(await list('deployments', { cursor: forged({ pk: 'ACTIVE#globex', sk: '' }) }), 'active deployments');
    expectCursorRefused(await list('scenarios', { cursor: forged({ company: 'globex', sk: '' }) }), 'scenarios');
    expectCursorRefused(await list('history', { cursor: forged({ pk: '', sk: '', gsi2pk: 'HISTORY#globex', gsi2sk: '' }) }), 'history');
  });

  it('refuses a made-up cursor even when it names a real item of the caller', async () => {
    expectCursorRefused(
      await list('deployments', { cursor: forged({ pk: 'ACTIVE#globex', sk: 'globex-kiosk-0001#globex-timetable#1.0.0' }) }),
      'active deployments',
    );
    expectCursorRefused(await list('scenarios', { cursor: forged({ company: 'globex', sk: 'SCENARIO#globex-timetable' }) }), 'scenarios');
  });

  for (const listing of LISTINGS) {
    it(`${listing}: the nextCursor of page 1 reads page 2; one character changed anywhere answers 400`, async () => {
      const first = expectOk(await list(listing, { limit: 1 }));
      const cursor = first.nextCursor;
      expect(cursor).toEqual(expect.any(String));
      const second = expectOk(await list(listing, { limit: 1, cursor: cursor as string }));
      expect(second.items).toHaveLength(1);
      expect(second.items[0]).not.toEqual(first.items[0]);
      for (const index of [0, Math.floor((cursor as string).length / 2), (cursor as string).length - 1]) {
        expectCursorRefused(await list(listing, { limit: 1, cursor: alter(cursor as string, index) }), `${listing}, character ${index}`);
      }
    });

    it(`${listing}: an empty cursor answers 400`, async () => {
      const typed = await list(listing, { cursor: '' });
      expect(new URL(typed.response.url).search).toBe('?cursor=');
      const result = answerOf(typed);
      expect(result.status, JSON.stringify(result.body)).toBe(400);
      expect(result.body.errors.map((error: { path: string }) => error.path)).toEqual(['cursor']);
    });
  }

  it("refuses a cursor on another listing, another filter, or another caller's company", async () => {
    const cursors = Object.fromEntries(
      await Promise.all(LISTINGS.map(async (listing) => [listing, expectOk(await list(listing, { limit: 1 })).nextCursor as string])),
    ) as Record<Listing, string>;
    for (const from of LISTINGS) {
      for (const to of LISTINGS) {
        if (from !== to) expectCursorRefused(await list(to, { cursor: cursors[from] }), `${from} cursor on ${to}`);
      }
    }
    // The history filtered by a scenario, and one device's active deployments, do not take the unfiltered cursors.
    const dss = clientFor(local.service, local.tokens.bob);
    const filtered = await dss.main.GET('/companies/{companyId}/resources/deployments/history', {
      params: { path: { companyId: 'globex' }, query: { scenarioId: 'globex-timetable', cursor: cursors.history } },
    });
    expectCursorRefused(filtered, 'history filter');
    const device = await dss.main.GET('/companies/{companyId}/resources/{deviceId}/deployments', {
      params: { path: { companyId: 'globex', deviceId: 'globex-kiosk-0001' }, query: { cursor: cursors.deployments } },
    });
    expectCursorRefused(device, 'device listing');
    // olivia reads both companies: globex's cursor does not page acme's listing.
    expectCursorRefused(await list('scenarios', { cursor: cursors.scenarios }, local.tokens.olivia, 'acme'), 'other company');
  });
});
