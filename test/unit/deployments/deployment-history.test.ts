import { randomBytes } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { decodeTime, encodeTime, monotonicFactory } from 'ulid';
import { afterEach, describe, expect, it } from 'vitest';
import { CursorCodec, cursorListing } from '../../../functions/adapters/aws/cursor-codec.js';
import {
  DynamoDbDeploymentHistory,
  historyKeys,
  MAX_QUERIES_PER_MERGED_PAGE,
  MAX_QUERIES_PER_PAGE,
  ulidBefore,
} from '../../../functions/adapters/aws/dynamodb-deployment-history.js';
import { deploymentsHistory } from '../../../functions/contract/routes/deployments.js';
import { matchRoute, ROUTES } from '../../../functions/contract/routes.js';
import {
  type DeploymentHistory,
  type DeploymentHistoryQuery,
  listDeploymentHistory,
  MAX_ULID_TIME,
  parseInstant,
  ulidBounds,
} from '../../../functions/core/deployments/history.js';
import type { DeploymentHistoryEntry } from '../../../functions/core/deployments/model.js';
import { BadRequestError, ForbiddenError, type ProblemViolation } from '../../../functions/core/shared/errors.js';
import type { Principal } from '../../../functions/core/shared/principal.js';
import { queryOf } from '../../support/route-input.js';

/** The history route's validation of a query string, as the listing receives it. */
function parseHistoryQuery(companyId: string, pairs: [string, string][]): DeploymentHistoryQuery {
  return { companyId, ...queryOf(deploymentsHistory, pairs, { companyId }) };
}

function violations(action: () => unknown): ProblemViolation[] {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(BadRequestError);
    return (error as BadRequestError).violations;
  }
  throw new Error('expected a BadRequestError');
}

describe('ULID bounds of a time range', () => {
  it('selects exactly the ids created in [from, to): from inclusive, to exclusive, to the millisecond', () => {
    const from = Date.parse('2026-11-22T10:00:00.000Z');
    const to = Date.parse('2026-11-22T10:00:01.000Z');
    const bounds = ulidBounds(from, to);
    expect(bounds).toEqual({ lower: `${encodeTime(from, 10)}0000000000000000`, upper: `${encodeTime(to - 1, 10)}ZZZZZZZZZZZZZZZZ` });
    const inside = (id: string) => bounds !== undefined && id >= bounds.lower && id <= bounds.upper;
    const next = monotonicFactory();
    for (const [time, expected] of [
      [from - 1, false],
      [from, true],
      [from + 500, true],
      [to - 1, true],
      [to, false],
    ] as const) {
      // Several ids per millisecond, with random parts anywhere in their range.
      for (let index = 0; index < 20; index += 1) {
        const id = next(time);
        expect(decodeTime(id)).toBe(time);
        expect(inside(id), `${new Date(time).toISOString()} ${id}`).toBe(expected);
      }
    }
  });

  it('leaves a missing bound open and reports an empty range', () => {
    expect(ulidBounds(undefined, undefined)).toEqual({ lower: '0'.repeat(26), upper: `7ZZZZZZZZZ${'Z'.repeat(16)}` });
    expect(ulidBounds(1000, undefined)?.upper).toBe(`7ZZZZZZZZZ${'Z'.repeat(16)}`);
    expect(ulidBounds(undefined, 1000)?.lower).toBe('0'.repeat(26));
    expect(ulidBounds(1000, 1000)).toBeUndefined();
    expect(ulidBounds(undefined, 0)).toBeUndefined();
  });
});

describe('parseInstant', () => {
  it('accepts ISO-8601 instants with a time zone, to the millisecond', () => {
    expect(parseInstant('2026-11-22T10:00:00Z')).toBe(Date.parse('2026-11-22T10:00:00Z'));
    expect(parseInstant('2026-11-22T10:00Z')).toBe(Date.parse('2026-11-22T10:00:00Z'));
    expect(parseInstant('2026-11-22T11:00:00.250+01:00')).toBe(Date.parse('2026-11-22T10:00:00.250Z'));
    expect(parseInstant('2026-11-22T10:00:00.123999Z')).toBe(Date.parse('2026-11-22T10:00:00.123Z'));
    expect(parseInstant('2026-11-22t10:00:00z')).toBe(Date.parse('2026-11-22T10:00:00Z'));
  });

  it('refuses dates without a zone, impossible dates and other formats', () => {
    for (const value of [
      '2026-11-22T10:00:00',
      '2026-11-22',
      '2026-02-30T00:00:00Z',
      '2026-11-22T24:00:00Z',
      '2026-13-01T00:00:00Z',
      'yesterday',
      '1700000000000',
      '',
    ]) {
      expect(parseInstant(value), value).toBeUndefined();
    }
  });
});

describe("the history route's query", () => {
  it('reports a version without scenarioId together with a malformed instant, not only the instant', () => {
    expect(
      violations(() =>
        parseHistoryQuery('acme', [
          ['version', '1.0.0'],
          ['from', 'soon'],
        ]),
      ).map((violation) => violation.path),
    ).toEqual(['version', 'from']);
  });

  it('applies defaults and converts the bounds', () => {
    expect(parseHistoryQuery('acme', [])).toEqual({ companyId: 'acme', limit: 100 });
    expect(
      parseHistoryQuery('acme', [
        ['deviceId', 'd1'],
        ['scenarioId', 's1'],
        ['version', '1.0.0'],
        ['from', '2026-01-01T00:00:00Z'],
        ['to', '2026-01-02T00:00:00Z'],
        ['limit', '1000'],
        ['cursor', 'abc'],
      ]),
    ).toEqual({
      companyId: 'acme',
      deviceId: 'd1',
      scenarioId: 's1',
      version: '1.0.0',
      from: Date.parse('2026-01-01T00:00:00Z'),
      to: Date.parse('2026-01-02T00:00:00Z'),
      limit: 1000,
      cursor: 'abc',
    });
  });

  it('names every unknown, repeated and malformed parameter at once', () => {
    const errors = violations(() =>
      parseHistoryQuery('acme', [
        ['colour', 'red'],
        ['limit', '0'],
        ['deviceId', 'a'],
        ['deviceId', 'b'],
        ['from', 'soon'],
        ['to', '2026-01-01'],
        ['scenarioId', ''],
      ]),
    );
    expect(errors.map((error) => error.path).sort()).toEqual(['colour', 'deviceId', 'from', 'limit', 'scenarioId', 'to']);
    expect(violations(() => parseHistoryQuery('acme', [['limit', '1001']]))[0]?.path).toBe('limit');
    expect(violations(() => parseHistoryQuery('acme', [['limit', '1.5']]))[0]?.path).toBe('limit');
    expect(violations(() => parseHistoryQuery('acme', [['deviceId', 'x'.repeat(257)]]))[0]?.path).toBe('deviceId');
    expect(violations(() => parseHistoryQuery('acme', [['from', '1969-12-31T23:59:59Z']]))[0]?.path).toBe('from');
  });

  it('refuses version without scenarioId, and from not before to', () => {
    expect(violations(() => parseHistoryQuery('acme', [['version', '1.0.0']]))).toEqual([
      { path: 'version', message: expect.stringContaining('scenarioId') },
    ]);
    expect(
      violations(() =>
        parseHistoryQuery('acme', [
          ['deviceId', 'd1'],
          ['version', '1.0.0'],
        ]),
      )[0]?.path,
    ).toBe('version');
    const same = '2026-01-01T00:00:00Z';
    expect(
      violations(() =>
        parseHistoryQuery('acme', [
          ['from', same],
          ['to', same],
        ]),
      )[0]?.path,
    ).toBe('to');
    expect(
      violations(() =>
        parseHistoryQuery('acme', [
          ['from', '2026-01-02T00:00:00Z'],
          ['to', same],
        ]),
      )[0]?.path,
    ).toBe('to');
  });
});

const entry = (overrides: Partial<DeploymentHistoryEntry> = {}): DeploymentHistoryEntry => ({
  id: '01JDEPLOY000000000000000000',
  company: 'acme',
  deviceId: 'acme-kiosk-0001',
  deviceSubId: null,
  targetType: 'DEVICE',
  whatType: 'SCENARIO',
  scenarioId: 'acme-welcome',
  version: '1.0.0',
  action: 'DEPLOY',
  state: 'SUCCESS',
  cause: null,
  at: '2026-11-22T10:00:00.000Z',
  by: 'alice',
  ...overrides,
});

describe('listDeploymentHistory', () => {
  const alice: Principal = { subject: 'alice', companies: ['acme'], scopes: new Set(['deployments:read']) };

  it('authorizes deployments:read on the company before reading', async () => {
    const queries: DeploymentHistoryQuery[] = [];
    const history: DeploymentHistory = {
      list: async (query) => {
        queries.push(query);
        return { items: [], nextCursor: null };
      },
    };
    await expect(listDeploymentHistory({ history }, alice, 'globex', { limit: 100 })).rejects.toBeInstanceOf(ForbiddenError);
    expect(queries).toHaveLength(0);
  });

  it('maps entries to result items with at, by and note (null when absent)', async () => {
    const history: DeploymentHistory = {
      list: async () => ({
        items: [entry({ note: 'rollout' }), entry({ id: '01JDEPLOY000000000000000001', state: 'FAILURE', cause: 'ALREADY_DEPLOYED' })],
        nextCursor: 'next',
      }),
    };
    expect(await listDeploymentHistory({ history }, alice, 'acme', { deviceId: 'acme-kiosk-0001', limit: 100 })).toEqual({
      items: [
        {
          kind: 'ACTION',
          id: '01JDEPLOY000000000000000000',
          target: { type: 'DEVICE', id: 'acme-kiosk-0001', subId: null },
          what: { type: 'SCENARIO', id: 'acme-welcome', subId: '1.0.0' },
          action: 'DEPLOY',
          state: 'SUCCESS',
          cause: null,
          at: '2026-11-22T10:00:00.000Z',
          by: 'alice',
          note: 'rollout',
        },
        {
          kind: 'ACTION',
          id: '01JDEPLOY000000000000000001',
          target: { type: 'DEVICE', id: 'acme-kiosk-0001', subId: null },
          what: { type: 'SCENARIO', id: 'acme-welcome', subId: '1.0.0' },
          action: 'DEPLOY',
          state: 'FAILURE',
          cause: 'ALREADY_DEPLOYED',
          at: '2026-11-22T10:00:00.000Z',
          by: 'alice',
          note: null,
        },
      ],
      nextCursor: 'next',
    });
  });
});

describe('the history route', () => {
  it('is matched before the device listing for /resources/deployments/history', () => {
    const match = matchRoute(ROUTES, 'main', 'GET', '/companies/acme/resources/deployments/history');
    expect(match && 'route' in match ? match.route.id : match).toBe('DeploymentsHistory');
    const device = matchRoute(ROUTES, 'main', 'GET', '/companies/acme/resources/deployments/deployments');
    expect(device && 'route' in device ? device.route.id : device).toBe('DeploymentsListDevice');
  });
});

describe('DynamoDbDeploymentHistory (mocked DynamoDB)', () => {
  const documentClient = DynamoDBDocumentClient.from(
    new DynamoDBClient({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } }),
  );
  const mock = mockClient(documentClient);
  afterEach(() => mock.reset());
  const adapter = new DynamoDbDeploymentHistory(documentClient, { deployments: 'deployments' }, new CursorCodec(() => randomBytes(32)));
  const next = monotonicFactory();
  const item = (overrides: Partial<DeploymentHistoryEntry> = {}) => {
    const value = entry({ id: next(), ...overrides });
    return { ...value, ...historyKeys(value), entity: 'DEPLOYMENT_HISTORY' };
  };

  /** The `:upper` bound of a Query: where the read resumes (before the cursor's ULID) or the range's end. */
  const uppers = () => mock.commandCalls(QueryCommand).map((call) => call.args[0].input.ExpressionAttributeValues?.[':upper']);

  it("queries the device's partition, or the scenario's or company's 16 index shards, newest first, between the ULID bounds", async () => {
    mock.on(QueryCommand).resolves({ Items: [], ScannedCount: 0 });
    const from = Date.parse('2026-11-22T10:00:00Z');
    await adapter.list({ companyId: 'acme', deviceId: 'd1', scenarioId: 's1', version: '1.0.0', from, limit: 10 });
    const [device, ...others] = mock.commandCalls(QueryCommand).map((call) => call.args[0].input);
    expect(others).toEqual([]);
    expect(device).toMatchObject({
      ConsistentRead: true,
      ScanIndexForward: false,
      Limit: 11,
      KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :lower AND :upper',
      FilterExpression: '#f0 = :f0 AND #f1 = :f1',
      ExpressionAttributeNames: { '#pk': 'pk', '#sk': 'sk', '#f0': 'scenarioId', '#f1': 'version' },
      ExpressionAttributeValues: {
        ':pk': 'HISTORY#acme#d1',
        ':lower': `${encodeTime(from, 10)}${'0'.repeat(16)}`,
        ':f0': 's1',
        ':f1': '1.0.0',
      },
    });
    expect(device?.IndexName).toBeUndefined();

    mock.resetHistory();
    await adapter.list({ companyId: 'acme', scenarioId: 's1', version: '1.0.0', limit: 10 });
    const scenario = mock.commandCalls(QueryCommand).map((call) => call.args[0].input);
    expect(scenario.map((input) => input.ExpressionAttributeValues?.[':pk'])).toEqual(
      Array.from({ length: 16 }, (_, shard) => `HISTORY#acme#s1#${shard}`),
    );
    for (const input of scenario) {
      expect(input).toMatchObject({
        IndexName: 'gsi1',
        ScanIndexForward: false,
        ExpressionAttributeNames: { '#pk': 'gsi1pk', '#f0': 'version' },
      });
      // About twice a shard's share of the 11 items wanted.
      expect(input.Limit).toBe(3);
    }

    mock.resetHistory();
    await adapter.list({ companyId: 'acme', limit: 10 });
    const company = mock.commandCalls(QueryCommand).map((call) => call.args[0].input);
    expect(company.map((input) => input.ExpressionAttributeValues?.[':pk'])).toEqual(
      Array.from({ length: 16 }, (_, shard) => `HISTORY#acme#${shard}`),
    );
    for (const input of company) {
      expect(input).toMatchObject({ IndexName: 'gsi2', ExpressionAttributeNames: { '#pk': 'gsi2pk', '#sk': 'gsi2sk' } });
      expect(input.FilterExpression).toBeUndefined();
    }
  });

  it('fills a page by reading on when the filter drops items, and cursors on the last item returned', async () => {
    const items = Array.from({ length: 6 }, () => item()).reverse();
    const lastEvaluated = (index: number) => {
      const { pk, sk } = items[index] as Record<string, string>;
      return { pk, sk };
    };
    mock
      .on(QueryCommand)
      .resolvesOnce({ Items: items.slice(0, 1), ScannedCount: 3, LastEvaluatedKey: lastEvaluated(2) })
      .resolvesOnce({ Items: items.slice(1, 3), ScannedCount: 6, LastEvaluatedKey: lastEvaluated(5) });
    const page = await adapter.list({ companyId: 'acme', deviceId: 'acme-kiosk-0001', scenarioId: 'acme-welcome', limit: 2 });
    expect(page.items.map((found) => found.id)).toEqual([items[0]?.id, items[1]?.id]);
    const calls = mock.commandCalls(QueryCommand).map((call) => call.args[0].input);
    expect(calls).toHaveLength(2);
    // The second read goes on strictly before the last ULID evaluated, reading as much as the selectivity seen suggests.
    expect(calls[1]?.ExpressionAttributeValues?.[':upper']).toBe(ulidBefore(items[2]?.sk as string));
    expect(calls[1]?.Limit).toBe(6);
    expect(page.nextCursor).toEqual(expect.any(String));

    mock.reset();
    mock.on(QueryCommand).resolves({ Items: [], ScannedCount: 0 });
    await adapter.list({
      companyId: 'acme',
      deviceId: 'acme-kiosk-0001',
      scenarioId: 'acme-welcome',
      limit: 2,
      cursor: page.nextCursor ?? '',
    });
    expect(uppers()).toEqual([ulidBefore(items[1]?.sk as string)]);
  });

  it('ends a page early with where the reads got to when the call budget runs out', async () => {
    const start = item();
    mock.on(QueryCommand).resolves({ Items: [], ScannedCount: 1000, LastEvaluatedKey: { pk: start.pk, sk: start.sk } });
    const page = await adapter.list({ companyId: 'acme', deviceId: 'acme-kiosk-0001', scenarioId: 'rare', limit: 5 });
    expect(page.items).toEqual([]);
    expect(mock.commandCalls(QueryCommand)).toHaveLength(MAX_QUERIES_PER_PAGE);
    mock.reset();
    mock.on(QueryCommand).resolves({ Items: [], ScannedCount: 0 });
    await adapter.list({ companyId: 'acme', deviceId: 'acme-kiosk-0001', scenarioId: 'rare', limit: 5, cursor: page.nextCursor ?? '' });
    expect(uppers()).toEqual([ulidBefore(start.sk)]);
  });

  it('ends a merged page early too: at most three Queries per shard', async () => {
    const start = item();
    mock.on(QueryCommand).resolves({ Items: [], ScannedCount: 1000, LastEvaluatedKey: { gsi1pk: 'x', gsi1sk: start.sk } });
    const page = await adapter.list({ companyId: 'acme', scenarioId: 'acme-welcome', version: 'rare', limit: 5 });
    expect(page).toEqual({ items: [], nextCursor: expect.any(String) });
    expect(mock.commandCalls(QueryCommand)).toHaveLength(MAX_QUERIES_PER_MERGED_PAGE);
    expect(MAX_QUERIES_PER_MERGED_PAGE).toBe(48);
  });

  it('takes a cursor only with the company and filters that issued it', async () => {
    const older = item();
    const newer = item();
    mock.on(QueryCommand).resolves({ Items: [newer, older], ScannedCount: 2 });
    const issuedFor: DeploymentHistoryQuery = { companyId: 'acme', deviceId: 'acme-kiosk-0001', limit: 1 };
    const cursor = (await adapter.list(issuedFor)).nextCursor ?? '';
    mock.reset();
    mock.on(QueryCommand).resolves({ Items: [], ScannedCount: 0 });
    const others: Partial<DeploymentHistoryQuery>[] = [
      { companyId: 'globex' },
      { deviceId: 'acme-kiosk-0002' },
      { deviceId: undefined },
      { scenarioId: 'acme-welcome' },
      { from: 0 },
      { to: MAX_ULID_TIME },
      { cursor: `${cursor.slice(0, -1)}${cursor.endsWith('A') ? 'B' : 'A'}` },
      { cursor: 'not a cursor' },
    ];
    for (const other of others) {
      await expect(adapter.list({ ...issuedFor, cursor, ...other }), JSON.stringify(other)).rejects.toBeInstanceOf(BadRequestError);
    }
    expect(mock.commandCalls(QueryCommand)).toHaveLength(0);
    await adapter.list({ ...issuedFor, limit: 50, cursor });
    expect(uppers()).toEqual([ulidBefore(newer.sk)]);
  });

  it('refuses, even correctly signed, a key outside the query (another company, device, kind or time); takes a pre-sharding {pk, sk}', async () => {
    mock.on(QueryCommand).resolves({ Items: [], ScannedCount: 0 });
    // Signs with the adapter's own codec and listing layout, as if the adapter had issued these keys.
    const codec = new CursorCodec(() => Buffer.alloc(32, 7));
    const signedAdapter = new DynamoDbDeploymentHistory(documentClient, { deployments: 'deployments' }, codec);
    const signed = (query: Partial<DeploymentHistoryQuery>, key: Record<string, unknown>) =>
      codec.encode(cursorListing('deployment-history', 'acme', query.deviceId, query.scenarioId, query.version, query.from, query.to), key);
    const own = item();
    const globex = item({ company: 'globex', deviceId: 'globex-kiosk-0001' });
    const refused: { query: Partial<DeploymentHistoryQuery>; key: Record<string, unknown> }[] = [
      { query: { deviceId: 'acme-kiosk-0001' }, key: { pk: globex.pk, sk: globex.sk } },
      { query: {}, key: { pk: globex.pk, sk: globex.sk } },
      { query: { deviceId: 'acme-kiosk-0002' }, key: { pk: own.pk, sk: own.sk } },
      { query: { deviceId: 'acme-kiosk-0001' }, key: { pk: own.pk, sk: own.sk, extra: 'x' } },
      { query: { deviceId: 'acme-kiosk-0001' }, key: { sk: own.sk, extra: 'x' } },
      { query: { deviceId: 'acme-kiosk-0001' }, key: { sk: '' } },
      { query: { deviceId: 'acme-kiosk-0001' }, key: { sk: 'ACTIVE' } },
      { query: {}, key: { gsi2sk: own.sk } },
      { query: { deviceId: 'acme-kiosk-0001', to: decodeTime(own.sk) }, key: { sk: own.sk } },
    ];
    for (const { query, key } of refused) {
      await expect(
        signedAdapter.list({ companyId: 'acme', limit: 5, ...query, cursor: signed(query, key) }),
        JSON.stringify({ query, key }),
      ).rejects.toBeInstanceOf(BadRequestError);
    }
    expect(mock.commandCalls(QueryCommand)).toHaveLength(0);
    await signedAdapter.list({ companyId: 'acme', limit: 5, cursor: signed({}, { sk: own.sk }) });
    await signedAdapter.list({
      companyId: 'acme',
      scenarioId: 'acme-welcome',
      limit: 5,
      cursor: signed({ scenarioId: 'acme-welcome' }, { pk: own.pk, sk: own.sk }),
    });
    // Every shard of both listings resumes before the cursor's ULID.
    expect(uppers()).toEqual(Array.from({ length: 32 }, () => ulidBefore(own.sk)));
  });

  it('ulidBefore gives the greatest ULID before another, none before the smallest', () => {
    expect(ulidBefore('01ARZ3NDEKTSV4RRFFQ69G5FB0')).toBe('01ARZ3NDEKTSV4RRFFQ69G5FAZ');
    expect(ulidBefore('01ARZ3NDEKTSV4RRFFQ69G5FB1')).toBe('01ARZ3NDEKTSV4RRFFQ69G5FB0');
    expect(ulidBefore(`01H${'0'.repeat(23)}`)).toBe(`01G${'Z'.repeat(23)}`);
    expect(ulidBefore('0'.repeat(26))).toBeUndefined();
  });

  it('answers an empty range without reading', async () => {
    expect(await adapter.list({ companyId: 'acme', to: 0, limit: 5 })).toEqual({ items: [], nextCursor: null });
    expect(mock.commandCalls(QueryCommand)).toHaveLength(0);
  });
});
