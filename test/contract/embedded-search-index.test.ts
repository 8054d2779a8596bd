import { describe, expect, it } from 'vitest';
import { EmbeddedSearchIndex } from '../../functions/adapters/embedded/search-engine.js';
import { CONNECTION_STATES, HEALTH_MODES, SUB_DEVICE_HEALTH_STATES } from '../../functions/core/devices/model.js';
import { type DeviceDocument, documentKeyString, type SearchDocument, valuesAtPath } from '../../functions/core/search/documents.js';
import type { SearchQuery } from '../../functions/core/search/query.js';
import { describeSearchIndexContract } from './search-index.contract.js';

describeSearchIndexContract('embedded engine', async () => new EmbeddedSearchIndex());

/** Deterministic pseudo-random documents, enough to go past the engine's direct-sort limit (presorted arrays). */
function documents(count: number, seed: number): DeviceDocument[] {
  let state = seed;
  const next = (modulo: number): number => {
    state = (Math.imul(state, 1103515245) + 12345) & 0x7fffffff;
    return state % modulo;
  };
  return Array.from(
    { length: count },
    (_, n): DeviceDocument => ({
      type: 'DEVICE',
      id: `dev-${next(count * 2)}`,
      company: ['acme', 'globex', 'initech'][next(3)] as string,
      serial: `SN-${String(next(500)).padStart(4, '0')}`,
      created: `2024-0${1 + next(9)}-1${next(10)}T00:00:00.000Z`,
      updated: '2024-10-01T00:00:00.000Z',
      ...(next(5) === 0 ? {} : { location: { name: `Site ${next(40)}` } }),
      connection: { state: CONNECTION_STATES[next(3)] as DeviceDocument['connection']['state'] },
      ...(n % 7 === 0
        ? {}
        : {
            health: {
              updated: '2024-10-01T00:00:00.000Z',
              versionCode: String(100 + next(5)),
              versionName: `1.${next(5)}`,
              mode: HEALTH_MODES[next(4)] as NonNullable<DeviceDocument['health']>['mode'],
              hubs: [
                {
                  uid: 'hub',
                  label: 'Hub',
                  version: '1',
                  registeredSince: '2024-01-01T00:00:00.000Z',
                  type: 'STANDARD',
                  devices: Array.from({ length: next(3) }, () => ({
                    uid: 'sub',
                    label: 'Printer',
                    version: '1',
                    commands: [],
                    capability: { type: 'PRINTER' as const, modes: [] },
                    health: { state: SUB_DEVICE_HEALTH_STATES[next(5)] as 'NOMINAL', message: '', messages: [] },
                  })),
                },
              ],
            },
          }),
    }),
  );
}

/** Brute-force reference: scan, filter, full sort. */
function reference(all: Map<string, SearchDocument>, query: SearchQuery): { total: number; keys: string[] } {
  const first = (document: SearchDocument): string | undefined => {
    const value = valuesAtPath(document, query.sort.field)[0];
    return value === undefined ? undefined : String(value);
  };
  const matches = [...all.values()].filter(
    (document) =>
      query.companies.includes(document.company) &&
      [...query.filters].every(([field, values]) => valuesAtPath(document, field).some((value) => values.includes(String(value)))),
  );
  const sign = query.sort.direction === 'DESC' ? -1 : 1;
  matches.sort((a, b) => {
    const [va, vb] = [first(a), first(b)];
    if (va !== vb) return va === undefined ? 1 : vb === undefined ? -1 : va < vb ? -sign : sign;
    return documentKeyString(a) < documentKeyString(b) ? -1 : 1;
  });
  const start = (query.page - 1) * query.pageSize;
  return { total: matches.length, keys: matches.slice(start, start + query.pageSize).map(documentKeyString) };
}

describe('EmbeddedSearchIndex on larger data (presorted arrays)', () => {
  const queries: SearchQuery[] = [
    { companies: ['acme', 'globex', 'initech'], filters: new Map(), sort: { field: 'serial', direction: 'ASC' }, page: 3, pageSize: 50 },
    { companies: ['acme', 'globex'], filters: new Map(), sort: { field: 'location.name', direction: 'DESC' }, page: 40, pageSize: 50 },
    {
      companies: ['acme', 'globex', 'initech'],
      filters: new Map([['connection.state', ['CONNECTED', 'UNKNOWN']]]),
      sort: { field: 'health.versionCode', direction: 'ASC' },
      page: 2,
      pageSize: 20,
    },
    {
      companies: ['acme', 'globex', 'initech'],
      filters: new Map(),
      sort: { field: 'health.mode', direction: 'DESC' },
      page: 59,
      pageSize: 100,
    },
    {
      companies: ['globex'],
      filters: new Map([['health.hubs.devices.health.state', ['DOWN']]]),
      sort: { field: 'created', direction: 'DESC' },
      page: 1,
      pageSize: 100,
    },
  ];

  it('returns what a brute-force scan returns, before and after small and large writes', async () => {
    const index = new EmbeddedSearchIndex();
    const all = new Map<string, SearchDocument>();
    const write = async (batch: DeviceDocument[]): Promise<void> => {
      await index.upsert(batch);
      for (const document of batch) all.set(documentKeyString(document), document);
    };
    const check = async (): Promise<void> => {
      for (const query of queries) {
        const result = await index.search(query);
        expect({ total: result.total, keys: result.resources.map(documentKeyString) }).toEqual(reference(all, query));
      }
    };

    await write(documents(6000, 1));
    await check();
    // Small writes patch the presorted arrays: replacements (same keys, new values), new documents, removals.
    await write(
      documents(6000, 1)
        .slice(0, 40)
        .map((document) => ({ ...document, serial: 'SN-0000', connection: { state: 'UNKNOWN' } })),
    );
    await write(documents(30, 2));
    const removed = [...all.values()].slice(100, 150);
    await index.remove(removed);
    for (const document of removed) all.delete(documentKeyString(document));
    await check();
    // A large write patches them in one pass per array.
    await write(documents(3000, 3));
    await check();
  });
});
