/**
 * End-to-end: GET /companies/{companyId}/resources/deployments/history over real HTTP against one local service
 * (`bin/local.ts`). The data folder is first given a deployments table of the previous key design (only `gsi1`, keyed
 * by version) holding one old history entry, so the start also proves that missing indexes are added and old entries
 * backfilled. Then deployments and undeployments (successes and failures, with and without notes) across two devices
 * and two versions, and the history read back through every filter, bound, page and error.
 */

import { join } from 'node:path';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { ulid } from 'ulid';
import { beforeAll, describe, expect, it } from 'vitest';
import { type components, expectOk, type operations } from '../../client/index.js';
import { startDynamoDbLocal } from '../../functions/local/dynamodb-local.js';
import { freePort } from '../../functions/local/free-port.js';
import { answerOf, call, clientFor, eventually, useLocalService } from './harness.js';

type HistoryItem = components['schemas']['ActionHistoryEntry'];
type HistoryQuery = NonNullable<operations['DeploymentsHistory']['parameters']['query']>;

/** A page of the history whose entries are all actions: no device reports a status in this file. */
interface HistoryPage {
  items: HistoryItem[];
  nextCursor: string | null;
}

const D10 = 'acme-kiosk-0010';
const D11 = 'acme-kiosk-0011';
const OLD_DEVICE = 'acme-kiosk-0050';
const SCENARIO = 'acme-welcome';

const local = useLocalService({
  users: ['alice', 'bob', 'olivia'],
  // A deployments table of the previous key design, which the service migrates when it starts.
  beforeStart: async (settings) => {
    oldEntry = await createPreviousDeploymentsTable(settings.dataDirectory);
    recorded.push(oldEntry);
  },
});
/** Every acme action made by this file (plus the pre-migration entry), as the history should report it. */
const recorded: HistoryItem[] = [];
/** Instants between the requests: before R1 < t1 < R2 < t2 < R3. */
let t1: string;
let t2: string;
let oldEntry: HistoryItem;

/** Writes a deployments table of the previous key design with one history entry into the data folder. */
async function createPreviousDeploymentsTable(dataDirectory: string): Promise<HistoryItem> {
  const dynamo = await startDynamoDbLocal({ dataDirectory: join(dataDirectory, 'dynamodb'), port: await freePort() });
  const client = new DynamoDBClient({
    endpoint: dynamo.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  try {
    await client.send(
      new CreateTableCommand({
        TableName: 'deployments',
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: ['pk', 'sk', 'gsi1pk', 'gsi1sk'].map((name) => ({ AttributeName: name, AttributeType: 'S' })),
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
        GlobalSecondaryIndexes: [
          {
            IndexName: 'gsi1',
            KeySchema: [
              { AttributeName: 'gsi1pk', KeyType: 'HASH' },
              { AttributeName: 'gsi1sk', KeyType: 'RANGE' },
            ],
            Projection: { ProjectionType: 'ALL' },
          },
        ],
      }),
    );
    const at = new Date(Date.now() - 60_000);
    const id = ulid(at.getTime());
    await DynamoDBDocumentClient.from(client).send(
      new PutCommand({
        TableName: 'deployments',
        Item: {
          id,
          company: 'acme',
          deviceId: OLD_DEVICE,
          deviceSubId: null,
          targetType: 'DEVICE',
          whatType: 'SCENARIO',
          scenarioId: SCENARIO,
          version: '1.0.0',
          action: 'DEPLOY',
          state: 'SUCCESS',
          cause: null,
          at: at.toISOString(),
          by: 'alice',
          note: 'before the upgrade',
          pk: `HISTORY#acme#${OLD_DEVICE}`,
          sk: id,
          gsi1pk: `HISTORY#acme#${SCENARIO}#1.0.0`,
          gsi1sk: id,
          entity: 'DEPLOYMENT_HISTORY',
        },
      }),
    );
    return {
      kind: 'ACTION',
      id,
      target: { type: 'DEVICE', id: OLD_DEVICE, subId: null },
      what: { type: 'SCENARIO', id: SCENARIO, subId: '1.0.0' },
      action: 'DEPLOY',
      state: 'SUCCESS',
      cause: null,
      at: at.toISOString(),
      by: 'alice',
      note: 'before the upgrade',
    };
  } finally {
    client.destroy();
    await dynamo.stop();
  }
}

const entry = (
  device: string,
  scenario: string,
  version: string,
  action: 'DEPLOY' | 'UNDEPLOY',
): components['schemas']['DeploymentRequest'] => ({
  target: { type: 'DEVICE', id: device, subId: null },
  what: { type: 'SCENARIO', id: scenario, subId: version },
  action,
});

/** POSTs one deployment request as `token` in `company` and records what the history should show for it. */
async function deploy(token: string, by: string, company: string, requests: ReturnType<typeof entry>[], note?: string): Promise<void> {
  const response = expectOk(
    await clientFor(local.service, token).main.POST('/companies/{companyId}/resources/deployments', {
      params: { path: { companyId: company } },
      body: { requests, ...(note === undefined ? {} : { note }) },
    }),
  );
  // `at` (the request's instant) is not in the response; listings are compared without it and it is checked apart.
  if (company === 'acme')
    recorded.push(...response.items.map((item) => ({ kind: 'ACTION' as const, ...item, at: '', by, note: note ?? null })));
}

/**
 * A real wait between requests: the time-range tests need instants t1 and t2 strictly between two requests' `at`
 * (millisecond ISO times set by the service, in another process, on the real clock), so a few milliseconds must pass.
 */
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** GET the history of `company` through the typed client: the whole answer, for its status. */
function historyAnswer(token: string, query: HistoryQuery = {}, company = 'acme') {
  return clientFor(local.service, token).main.GET('/companies/{companyId}/resources/deployments/history', {
    params: { path: { companyId: company }, query },
  });
}

/** One page of the history of `company` (a 2xx answer), every entry of which must be an action. */
async function history(token: string, query: HistoryQuery = {}, company = 'acme'): Promise<HistoryPage> {
  const page = expectOk(await historyAnswer(token, query, company));
  const items = page.items.flatMap((item) => (item.kind === 'ACTION' ? [item] : []));
  expect(items, 'only actions').toHaveLength(page.items.length);
  return { items, nextCursor: page.nextCursor };
}

/** Reads every page of a listing with `limit`, checking that only the last page has no cursor. */
async function allPages(query: HistoryQuery, limit: number): Promise<HistoryItem[]> {
  const items: HistoryItem[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 100; page += 1) {
    const response: HistoryPage = await history(local.tokens.alice, { ...query, limit, ...(cursor === null ? {} : { cursor }) });
    expect(response.items.length).toBeLessThanOrEqual(limit);
    items.push(...response.items);
    cursor = response.nextCursor;
    if (cursor === null) return items;
    expect(response.items.length, 'a page before the last is full').toBe(limit);
  }
  throw new Error('more than 100 pages');
}

/** What the history should list for a predicate: newest (highest ULID) first. */
function expected(predicate: (item: HistoryItem) => boolean): HistoryItem[] {
  return recorded.filter(predicate).sort((a, b) => (a.id < b.id ? 1 : -1));
}

/** Compares listings ignoring `at` (checked separately against the request times). */
const withoutAt = (items: HistoryItem[]) => items.map(({ at: _at, ...rest }) => rest);

beforeAll(async () => {
  // R1: two successful DEPLOYs of 1.0.0, with a note.
  await deploy(
    local.tokens.alice,
    'alice',
    'acme',
    [entry(D10, SCENARIO, '1.0.0', 'DEPLOY'), entry(D11, SCENARIO, '1.0.0', 'DEPLOY')],
    'first rollout',
  );
  await sleep(15);
  t1 = new Date().toISOString();
  await sleep(15);
  // R2: an upgrade and two refused actions.
  await deploy(
    local.tokens.alice,
    'alice',
    'acme',
    [entry(D10, SCENARIO, '1.1.0', 'DEPLOY'), entry(D10, SCENARIO, '1.0.0', 'DEPLOY'), entry(D11, SCENARIO, '1.1.0', 'UNDEPLOY')],
    'upgrade',
  );
  await sleep(15);
  t2 = new Date().toISOString();
  await sleep(15);
  // R3, without a note: an undeploy, a deploy, and failures on an unknown version, scenario and device.
  await deploy(local.tokens.alice, 'alice', 'acme', [
    entry(D10, SCENARIO, '1.0.0', 'UNDEPLOY'),
    entry(D11, SCENARIO, '1.1.0', 'DEPLOY'),
    entry(D10, SCENARIO, '9.9.9', 'DEPLOY'),
    entry(D11, 'acme-missing', '1.0.0', 'DEPLOY'),
    entry('acme-kiosk-9999', SCENARIO, '1.0.0', 'DEPLOY'),
  ]);
  // Another company's history, which acme must never see.
  await deploy(local.tokens.bob, 'bob', 'globex', [entry('globex-kiosk-0001', 'globex-timetable', '1.0.0', 'DEPLOY')], 'globex rollout');
  // SUCCESS entries are derived from the deployments table's stream, a moment after the answer.
  await eventually(async () => (await history(local.tokens.alice, { limit: 1000 })).items.length === recorded.length, 'the acme history');
  await eventually(async () => (await history(local.tokens.bob, {}, 'globex')).items.length === 1, 'the globex history');
}, 180_000);

describe('deployment history', () => {
  it('recorded what the requests reported', () => {
    expect(recorded).toHaveLength(11);
    expect(recorded.map((item) => `${item.state}/${item.cause}`)).toEqual([
      'SUCCESS/null',
      'SUCCESS/null',
      'SUCCESS/null',
      'SUCCESS/null',
      'FAILURE/ALREADY_DEPLOYED',
      'FAILURE/ALREADY_UNDEPLOYED',
      'SUCCESS/null',
      'SUCCESS/null',
      'FAILURE/WHAT_NOT_FOUND',
      'FAILURE/WHAT_NOT_FOUND',
      'FAILURE/TARGET_NOT_FOUND',
    ]);
  });

  it("lists one device's history newest first, with who, when, note, outcome and cause", async () => {
    const response = await history(local.tokens.alice, { deviceId: D10 });
    expect(response.nextCursor).toBeNull();
    expect(withoutAt(response.items)).toEqual(withoutAt(expected((item) => item.target.id === D10)));
    expect(response.items.map((item) => `${item.action} ${item.what.subId} ${item.state} ${item.cause} ${item.note}`)).toEqual([
      'DEPLOY 9.9.9 FAILURE WHAT_NOT_FOUND null',
      'UNDEPLOY 1.0.0 SUCCESS null null',
      'DEPLOY 1.0.0 FAILURE ALREADY_DEPLOYED upgrade',
      'DEPLOY 1.1.0 SUCCESS null upgrade',
      'DEPLOY 1.0.0 SUCCESS null first rollout',
    ]);
    for (const item of response.items) {
      expect(item).toMatchObject({
        target: { type: 'DEVICE', id: D10, subId: null },
        what: { type: 'SCENARIO', id: SCENARIO },
        by: 'alice',
      });
      expect(new Date(item.at).toISOString()).toBe(item.at);
    }
    // `at` is the request's instant: one per request, in the order of the requests, between t1 and t2 for R2.
    const [r3, , r2] = response.items;
    expect((r3?.at ?? '') > t2, `${r3?.at} after ${t2}`).toBe(true);
    expect((r2?.at ?? '') > t1 && (r2?.at ?? '') < t2, `${r2?.at} between ${t1} and ${t2}`).toBe(true);
    expect(response.items[2]?.at).toBe(response.items[3]?.at);
  });

  it('filters by scenario, by scenario version, and by device and version together', async () => {
    const scenario = await history(local.tokens.alice, { scenarioId: SCENARIO });
    expect(withoutAt(scenario.items)).toEqual(withoutAt(expected((item) => item.what.id === SCENARIO)));
    expect(scenario.items).toHaveLength(10);

    for (const version of ['1.0.0', '1.1.0']) {
      const page = await history(local.tokens.alice, { scenarioId: SCENARIO, version });
      expect(withoutAt(page.items), version).toEqual(
        withoutAt(expected((item) => item.what.id === SCENARIO && item.what.subId === version)),
      );
    }
    expect((await history(local.tokens.alice, { scenarioId: SCENARIO, version: '1.0.0' })).items).toHaveLength(6);

    const missing = await history(local.tokens.alice, { scenarioId: 'acme-missing' });
    expect(missing.items.map((item) => `${item.target.id} ${item.cause}`)).toEqual([`${D11} WHAT_NOT_FOUND`]);

    const both = await history(local.tokens.alice, { deviceId: D10, scenarioId: SCENARIO, version: '1.0.0' });
    expect(withoutAt(both.items)).toEqual(withoutAt(expected((item) => item.target.id === D10 && item.what.subId === '1.0.0')));
    expect(both.items.map((item) => `${item.action} ${item.state}`)).toEqual(['UNDEPLOY SUCCESS', 'DEPLOY FAILURE', 'DEPLOY SUCCESS']);
    expect((await history(local.tokens.alice, { deviceId: D11, scenarioId: 'acme-missing' })).items).toHaveLength(1);
    expect((await history(local.tokens.alice, { deviceId: D10, scenarioId: 'acme-missing' })).items).toEqual([]);
  });

  it("lists the company's whole history, including an entry written before the key design changed", async () => {
    const response = await history(local.tokens.olivia);
    expect(withoutAt(response.items)).toEqual(withoutAt(expected(() => true)));
    expect(response.items.at(-1)).toEqual(oldEntry);
    // The backfilled entry is found by device and by scenario version too.
    expect((await history(local.tokens.alice, { deviceId: OLD_DEVICE })).items).toEqual([oldEntry]);
    expect((await history(local.tokens.alice, { scenarioId: SCENARIO, version: '1.0.0' })).items.at(-1)).toEqual(oldEntry);
  });

  it('bounds by time: from inclusive, to exclusive', async () => {
    const requestsOf = (items: HistoryItem[]) => withoutAt(items);
    const [first, second, third] = [recorded.slice(1, 3), recorded.slice(3, 6), recorded.slice(6, 11)];
    const byIdDesc = (items: HistoryItem[]) => [...items].sort((a, b) => (a.id < b.id ? 1 : -1));
    expect(requestsOf((await history(local.tokens.alice, { from: t1, to: t2 })).items)).toEqual(requestsOf(byIdDesc(second)));
    expect(requestsOf((await history(local.tokens.alice, { from: t2 })).items)).toEqual(requestsOf(byIdDesc(third)));
    expect(requestsOf((await history(local.tokens.alice, { to: t1 })).items)).toEqual(requestsOf(byIdDesc([oldEntry, ...first])));
    expect(requestsOf((await history(local.tokens.alice, { deviceId: D10, from: t1, to: t2 })).items)).toEqual(
      requestsOf(byIdDesc(second.filter((item) => item.target.id === D10))),
    );
    expect(
      requestsOf((await history(local.tokens.alice, { scenarioId: SCENARIO, version: '1.1.0', from: t1 })).items).map(
        (item) => item.action,
      ),
    ).toEqual(['DEPLOY', 'UNDEPLOY', 'DEPLOY']);
    // An instant with an offset is the same instant: t1 written in UTC+01:00.
    const t1PlusOne = new Date(Date.parse(t1) + 3_600_000).toISOString().replace('Z', '+01:00');
    expect(requestsOf((await history(local.tokens.alice, { from: t1PlusOne, to: t2 })).items)).toEqual(requestsOf(byIdDesc(second)));
    expect(await history(local.tokens.alice, { from: '2000-01-01T00:00:00Z', to: '2000-01-02T00:00:00Z' })).toEqual({
      items: [],
      nextCursor: null,
    });
  });

  it('pages with limit=2 through nextCursor over every entry exactly once, for every query shape', async () => {
    const shapes: [HistoryQuery, (item: HistoryItem) => boolean][] = [
      [{}, () => true],
      [{ deviceId: D10 }, (item) => item.target.id === D10],
      [{ scenarioId: SCENARIO }, (item) => item.what.id === SCENARIO],
      [{ scenarioId: SCENARIO, version: '1.0.0' }, (item) => item.what.id === SCENARIO && item.what.subId === '1.0.0'],
      [{ deviceId: D11, scenarioId: SCENARIO }, (item) => item.target.id === D11 && item.what.id === SCENARIO],
      [{ from: t1 }, (item) => item.id > (recorded[2]?.id ?? '')],
    ];
    for (const [query, predicate] of shapes) {
      const items = await allPages(query, 2);
      expect(new Set(items.map((item) => item.id)).size, JSON.stringify(query)).toBe(items.length);
      expect(withoutAt(items), JSON.stringify(query)).toEqual(withoutAt(expected(predicate)));
    }
    expect(await allPages({}, 1)).toHaveLength(11);
    expect(await allPages({ deviceId: D10, scenarioId: SCENARIO, version: '1.0.0' }, 1)).toHaveLength(3);
    const exact = await history(local.tokens.alice, { deviceId: D11, limit: expected((item) => item.target.id === D11).length });
    expect(exact.nextCursor).toBeNull();
  });

  it('answers 400 naming each bad, unknown or repeated parameter', async () => {
    /** The `errors[].path` of the 400 answer to a query: typed, or a hand-built query string for what the document does not allow. */
    const paths = async (query: HistoryQuery | string): Promise<string[]> => {
      const response =
        typeof query === 'string'
          ? await call(`${local.service.api}/companies/acme/resources/deployments/history?${query}`, { token: local.tokens.alice })
          : answerOf(await historyAnswer(local.tokens.alice, query));
      expect(response.status, JSON.stringify(query)).toBe(400);
      expect(response.headers.get('content-type') ?? '').toMatch(/^application\/problem\+json/);
      return ((response.body as { errors: { path: string }[] }).errors ?? []).map((error) => error.path).sort();
    };
    expect(await paths('colour=red')).toEqual(['colour']);
    expect(await paths('deviceId=a&deviceId=b')).toEqual(['deviceId']);
    expect(await paths({ version: '1.0.0' })).toEqual(['version']);
    expect(await paths({ from: t2, to: t1 })).toEqual(['to']);
    expect(await paths({ from: t1, to: t1 })).toEqual(['to']);
    expect(await paths({ from: 'yesterday', to: '2026-01-01' })).toEqual(['from', 'to']);
    expect(await paths({ limit: 0 })).toEqual(['limit']);
    expect(await paths({ limit: 1001 })).toEqual(['limit']);
    expect(await paths('deviceId=&scenarioId=&limit=x&sort=id')).toEqual(['deviceId', 'limit', 'scenarioId', 'sort']);
    expect(await paths({ cursor: 'not-a-cursor' })).toEqual(['cursor']);
    // A cursor is valid only for the listing that issued it.
    const companyCursor = (await history(local.tokens.alice, { limit: 2 })).nextCursor ?? '';
    const deviceCursor = (await history(local.tokens.alice, { deviceId: D10, limit: 2 })).nextCursor ?? '';
    expect(await paths({ deviceId: D10, cursor: companyCursor })).toEqual(['cursor']);
    expect(await paths({ deviceId: D11, cursor: deviceCursor })).toEqual(['cursor']);
    expect(await paths({ scenarioId: SCENARIO, cursor: deviceCursor })).toEqual(['cursor']);
    const olderThanEverything = (await history(local.tokens.alice, { deviceId: D10, limit: 4 })).nextCursor ?? '';
    expect(await paths({ deviceId: D10, from: t2, cursor: olderThanEverything })).toEqual(['cursor']);
  });

  it('answers 403 to bob on acme and 401 without a token', async () => {
    const forbidden = await historyAnswer(local.tokens.bob);
    expect(forbidden.response.status).toBe(403);
    expect(forbidden.response.headers.get('content-type') ?? '').toMatch(/^application\/problem\+json/);
    expect(forbidden.error).toMatchObject({ status: 403 });
    expect((await historyAnswer(local.tokens.bob, { deviceId: 'globex-kiosk-0001' })).response.status).toBe(403);
    // Hand-built: no Authorization header.
    expect((await call(`${local.service.api}/companies/acme/resources/deployments/history`)).status).toBe(401);
  });

  it("never shows another company's history", async () => {
    expect(await history(local.tokens.alice, { deviceId: 'globex-kiosk-0001' })).toEqual({ items: [], nextCursor: null });
    expect(await history(local.tokens.olivia, { deviceId: 'globex-kiosk-0001' })).toEqual({ items: [], nextCursor: null });
    expect(await history(local.tokens.olivia, { scenarioId: 'globex-timetable' })).toEqual({ items: [], nextCursor: null });
    expect((await history(local.tokens.olivia)).items.some((item) => item.by === 'bob')).toBe(false);
    // The same device read under its own company.
    const globex = await history(local.tokens.olivia, { deviceId: 'globex-kiosk-0001' }, 'globex');
    expect(globex.items.map((item) => `${item.by} ${item.what.id} ${item.state} ${item.note}`)).toEqual([
      'bob globex-timetable SUCCESS globex rollout',
    ]);
    expect((await history(local.tokens.bob, {}, 'globex')).items).toHaveLength(1);
  });
});
