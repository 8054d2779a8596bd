import { beforeAll, describe, expect, it } from 'vitest';
import { EmbeddedSearchIndex } from '../../../functions/adapters/embedded/search-engine.js';
import { parameterObject } from '../../../functions/contract/parameters.js';
import { parseTargetQuery, rolloutTargetsOf } from '../../../functions/contract/rollout-targets.js';
import { SearchQuery } from '../../../functions/contract/routes/search.js';
import { CAPABILITY_TYPES, CONNECTION_STATES, HEALTH_MODES } from '../../../functions/core/devices/model.js';
import { MAX_ROLLOUT_TARGETS } from '../../../functions/core/rollouts/model.js';
import { resolveRolloutTargets } from '../../../functions/core/rollouts/targets.js';
import type { DeviceDocument, ScenarioDocument } from '../../../functions/core/search/documents.js';
import { searchQueryOf } from '../../../functions/core/search/query.js';
import { BadRequestError, UnprocessableRequestError } from '../../../functions/core/shared/errors.js';
import type { Principal } from '../../../functions/core/shared/principal.js';

/** A device of `company` whose state, mode and sub-device type follow from `n`, so every combination occurs. */
function device(company: string, n: number): DeviceDocument {
  const id = `${company}-${String(n).padStart(4, '0')}`;
  return {
    type: 'DEVICE',
    id,
    company,
    serial: `SN-${n}`,
    created: '2025-01-01T00:00:00.000Z',
    updated: '2025-01-01T00:00:00.000Z',
    location: { name: n % 2 === 0 ? 'Lyon' : 'Paris' },
    connection: { state: CONNECTION_STATES[n % 3] as DeviceDocument['connection']['state'] },
    ...(n % 5 === 0
      ? {}
      : {
          health: {
            updated: '2025-01-01T00:00:00.000Z',
            versionCode: String(100 + (n % 4)),
            versionName: `1.${n % 4}`,
            mode: HEALTH_MODES[n % 4] as NonNullable<DeviceDocument['health']>['mode'],
            hubs: [
              {
                uid: 'hub',
                label: 'Hub',
                version: '1',
                registeredSince: '2025-01-01T00:00:00.000Z',
                type: 'STANDARD',
                devices: [
                  {
                    uid: 'sub',
                    label: 'Peripheral',
                    version: '1',
                    health: { state: n % 7 === 0 ? 'DOWN' : 'NOMINAL', message: '', messages: [] },
                    capability: { type: CAPABILITY_TYPES[n % CAPABILITY_TYPES.length] as 'PRINTER', modes: [] },
                    commands: [],
                  },
                ],
              },
            ],
          },
        }),
  };
}

const scenario: ScenarioDocument = {
  type: 'SCENARIO',
  id: 'acme-0001-scenario',
  company: 'acme',
  name: 'Welcome',
  latestVersion: '1.0.0',
  versions: ['1.0.0'],
  created: '2025-01-01T00:00:00.000Z',
  updated: '2025-01-01T00:00:00.000Z',
};

const operator: Principal = { subject: 'operator', companies: ['acme', 'globex'], scopes: new Set(['search:read']) };

describe('resolveRolloutTargets', () => {
  const index = new EmbeddedSearchIndex();
  const resolve = (query: string, companyId = 'acme') => resolveRolloutTargets(index, companyId, rolloutTargetsOf({ query }));

  /** What `GET /resources/search?{query}&company={companyId}` lists, every page, sorted by id. */
  async function searched(query: string, companyId = 'acme'): Promise<string[]> {
    const parameters = SearchQuery.parse(parameterObject(new URLSearchParams(`${query}&company=${companyId}&pageSize=100`)));
    const ids: string[] = [];
    for (let page = 1; ; page += 1) {
      const result = await index.search({ ...searchQueryOf({ ...parameters, page }, operator), sort: { field: 'id', direction: 'ASC' } });
      ids.push(...result.resources.filter((resource) => resource.type === 'DEVICE').map((resource) => resource.id));
      if (page * 100 >= result.total) return ids;
    }
  }

  beforeAll(async () => {
    await index.upsert([
      ...Array.from({ length: 300 }, (_, n) => device('acme', n)),
      ...Array.from({ length: 50 }, (_, n) => device('globex', n)),
      scenario,
    ]);
  });

  it('selects the devices the search lists for the same query: values of a parameter OR-ed, parameters AND-ed, the company only', async () => {
    const queries = [
      '',
      'connection.state=CONNECTED',
      'connection.state=CONNECTED&connection.state=UNKNOWN',
      'connection.state=CONNECTED&health.mode=SERVER',
      'health.hubs.devices.capability.type=PRINTER&health.hubs.devices.capability.type=PAYMENT&health.hubs.devices.health.state=DOWN',
      'health.versionCode=101&connection.state=DISCONNECTED',
      'type=DEVICE&health.mode=EMBEDDED_PLATFORM_ANDROID',
      'company=acme&connection.state=UNKNOWN',
    ];
    for (const query of queries) {
      const ids = await resolve(query);
      expect(ids, query).toEqual(await searched(query));
      expect(ids.length, query).toBeGreaterThan(0);
      expect(
        ids.every((id) => id.startsWith('acme-')),
        query,
      ).toBe(true);
    }
    // Every acme device, never the scenario, never globex's devices.
    expect(await resolve('')).toHaveLength(300);
    expect(await resolve('connection.state=CONNECTED', 'globex')).toEqual(await searched('connection.state=CONNECTED', 'globex'));
  });

  it('takes ids as given, sorted and each once, without a search', async () => {
    const search = {
      selectIds: async () => {
        throw new Error('ids need no search');
      },
    };
    expect(await resolveRolloutTargets(search, 'acme', rolloutTargetsOf({ ids: ['kiosk-b', 'kiosk-a', 'kiosk-b', 'ghost'] }))).toEqual([
      'ghost',
      'kiosk-a',
      'kiosk-b',
    ]);
  });

  it('refuses a company filter naming another company, and keeps one naming its own', async () => {
    const error = await resolve('company=globex&connection.state=CONNECTED').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as BadRequestError).violations).toEqual([
      { path: '/targets/query/company', message: expect.stringContaining("'globex' is not the company of this rollout") },
    ]);
    const both = await resolve('company=acme&company=globex').catch((caught: unknown) => caught);
    expect((both as BadRequestError).violations).toHaveLength(1);
    expect(await resolve('company=acme')).toHaveLength(300);
  });

  it('refuses a query matching no device (422)', async () => {
    const error = await resolve('health.versionCode=999').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UnprocessableRequestError);
    expect((error as UnprocessableRequestError).message).toMatch(/matches no device of company 'acme'/);
  });

  it('refuses more than MAX_ROLLOUT_TARGETS matches, naming the count and how to narrow (422)', async () => {
    // An index reporting the fleet size (100,000 real documents take seconds to index).
    const fleet = (total: number) => ({
      asked: [] as number[],
      async selectIds(_query: unknown, max: number) {
        this.asked.push(max);
        return { ids: Array.from({ length: Math.min(total, max) }, (_, n) => `d-${String(n).padStart(6, '0')}`), total };
      },
    });
    const tooLarge = fleet(MAX_ROLLOUT_TARGETS + 1);
    const error = await resolveRolloutTargets(tooLarge, 'acme', rolloutTargetsOf({ query: '' })).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UnprocessableRequestError);
    expect((error as UnprocessableRequestError).message).toMatch(
      /^The query matches 100,001 devices; a rollout targets at most 100,000\. Narrow the query with more filters, or split/,
    );
    expect(tooLarge.asked).toEqual([MAX_ROLLOUT_TARGETS]);
    const largest = await resolveRolloutTargets(fleet(MAX_ROLLOUT_TARGETS), 'acme', rolloutTargetsOf({ query: '' }));
    expect(largest).toHaveLength(MAX_ROLLOUT_TARGETS);
  });
});

describe('parseTargetQuery', () => {
  const violations = (query: string) => {
    const parsed = parseTargetQuery(query);
    return 'violations' in parsed ? parsed.violations : [];
  };

  it('parses the filters as the search does: repeats kept, company values apart, type dropped', () => {
    expect(parseTargetQuery('?connection.state=CONNECTED&health.mode=SERVER&connection.state=UNKNOWN&type=DEVICE&company=acme')).toEqual({
      selection: {
        filters: new Map([
          ['connection.state', ['CONNECTED', 'UNKNOWN']],
          ['health.mode', ['SERVER']],
        ]),
        companies: ['acme'],
      },
    });
    expect(parseTargetQuery('')).toEqual({ selection: { filters: new Map(), companies: [] } });
  });

  it('refuses paging, sort, full text, types other than DEVICE, unknown parameters and bad values, each by name in query order', () => {
    expect(violations('page=2&connection.state=ONLINE&global=lyon&type=SCENARIO&colour=red&sort=serial&direction=ASC&pageSize=5')).toEqual([
      { path: 'page', message: expect.stringContaining('a rollout targets every device the query matches') },
      { path: 'connection.state', message: "'ONLINE' is not a value of 'connection.state'. Allowed: UNKNOWN, CONNECTED, DISCONNECTED." },
      { path: 'global', message: expect.stringContaining('full-text search') },
      { path: 'type', message: "A rollout targets devices: 'type' may only be DEVICE; got 'SCENARIO'." },
      { path: 'colour', message: expect.stringMatching(/^Unknown parameter 'colour'\. Allowed: type, company, connection\.state/) },
      { path: 'sort', message: expect.stringContaining('in id order') },
      { path: 'direction', message: expect.stringContaining('in id order') },
      { path: 'pageSize', message: expect.stringContaining('Remove it') },
    ]);
    expect(violations('type=DEVICE&type=SCENARIO')).toHaveLength(1);
    expect(violations('health.versionCode=')).toEqual([{ path: 'health.versionCode', message: "'health.versionCode' needs a value." }]);
  });

  it('gives the violations the body path /targets/query/<parameter> through rolloutTargetsOf', () => {
    const error = (() => {
      try {
        rolloutTargetsOf({ query: 'sort=serial' });
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as BadRequestError).violations).toEqual([{ path: '/targets/query/sort', message: expect.any(String) }]);
  });
});
