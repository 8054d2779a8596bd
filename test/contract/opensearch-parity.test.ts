/**
 * Parity of the two search engines: one generated fleet (20,000 devices in three companies with the demo's
 * distributions, scenarios, and hostile strings: accents, right-to-left marks and overrides, emoji and other
 * characters beyond the Basic Multilingual Plane, 1,000-character names, values that differ only by case) loaded into
 * the embedded engine and into a real OpenSearch (the node of the `opensearch` project), then the same generated
 * questions asked of both: 240 filtered searches (every filter field, repeated values, combinations of fields, company
 * scoping, every sort field in both directions, first, middle, last and beyond-last pages, page sizes 1 to the
 * maximum), value counts with and without filters, id selections as rollouts make them, and full-text searches,
 * whose sets of matches must be equal, in the same order when sorted on a field; ranked by relevance, the engines
 * order them differently (docs/search.md, "Relevance on each engine"), and what both keep is pinned: an exact serial
 * ranks first.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { OpenSearchSearchIndex } from '../../functions/adapters/aws/opensearch-search-index.js';
import { createOpenSearchTransport } from '../../functions/adapters/aws/opensearch-transport.js';
import { EmbeddedSearchIndex } from '../../functions/adapters/embedded/search-engine.js';
import type { Device } from '../../functions/core/devices/model.js';
import {
  type DeviceDocument,
  documentKeyString,
  type ScenarioDocument,
  type SearchDocument,
  valuesAtPath,
} from '../../functions/core/search/documents.js';
import { MAX_PAGE_SIZE, MAX_RESULT_WINDOW, type SearchQuery, type ValueCounts } from '../../functions/core/search/query.js';
import { FILTER_FIELDS, SORT_FIELDS } from '../../functions/core/search/registry.js';
import { DEMO_COMPANIES, DEMO_SEED } from '../../functions/local/demo-data.js';
import { generateDemoDevices } from '../../functions/local/demo-fleet.js';
import { openSearchSettings } from '../opensearch/settings.js';

/** Devices per company: 20,000 in all. */
const FLEET = { acme: 11_000, globex: 6_000, initech: 3_000 } as const;
const COMPANIES = Object.keys(FLEET);
/** Generated filtered searches (each compared on total and on the ids of its page, in order). */
const SEARCHES = 240;
/** Generated full-text searches (compared on total and on the set of matches). */
const FULL_TEXT_SEARCHES = 40;

/** A small deterministic generator (mulberry32): the same questions on every run. */
function generator(seed: number) {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  const int = (low: number, high: number): number => low + Math.floor(next() * (high - low + 1));
  const pick = <T>(list: readonly T[]): T => list[int(0, list.length - 1)] as T;
  const some = <T>(list: readonly T[], count: number): T[] => Array.from({ length: count }, () => pick(list));
  return { next, int, pick, some };
}

/**
 * Strings an attacker or an unusual fleet writes into the fields both engines sort, filter and search: accents
 * (precomposed and combining), RTL marks and overrides, emoji and CJK beyond the Basic Multilingual Plane, private
 * use and full-width forms (which UTF-16 and UTF-8 order differently from astral characters), case twins, spaces.
 */
const HOSTILE = [
  'Café Crème',
  'Cafe\u0301 Cre\u0300me',
  'CAFÉ crème',
  'café crème',
  '\u202Egnp.exe\u202C',
  '\u200Fمتجر القاهرة\u200F',
  'מסוף תל אביב',
  'Store 😀 Smile',
  'Store \u{1F600} smile',
  'Kiosk 𝔘𝔫𝔦𝔠𝔬𝔡𝔢',
  '𠀀 Rare Han',
  'Ｆｕｌｌｗｉｄｔｈ Store',
  '\uE000 private use',
  '\uFFFD replacement',
  'ÅNGSTRÖM Ångström',
  'straße STRASSE',
  'İstanbul istanbul',
  '  spaced   out  ',
  'tab\there',
  'UPPER lower',
  'upper LOWER',
  'Ünïcödé',
];

/** A 1,000-character name: long words and spaces, with a marker that tells the twins apart at the end. */
function longName(marker: string): string {
  const word = 'Lorem-ipsum-dolor-sit-amet ';
  return `${word.repeat(Math.ceil(1_000 / word.length)).slice(0, 1_000 - marker.length - 1)} ${marker}`;
}

/** The generated fleet: demo devices per company, every 13th with hostile location and serial strings. */
function fleet(): SearchDocument[] {
  const random = generator(DEMO_SEED);
  const owners = [DEMO_COMPANIES[0], DEMO_COMPANIES[1], { id: 'initech', prefix: 'INI' }] as const;
  const documents: SearchDocument[] = [];
  for (const owner of owners) {
    if (owner === undefined) throw new Error('the demo companies changed');
    const devices = generateDemoDevices(owner, FLEET[owner.id as keyof typeof FLEET], DEMO_SEED);
    devices.forEach((device: Device, n) => {
      let changed: Device = device;
      if (n % 13 === 5) {
        const hostile = random.pick(HOSTILE);
        changed = { ...device, location: { ...device.location, name: hostile, description: `${hostile} — ${random.pick(HOSTILE)}` } };
      }
      if (n % 17 === 3) changed = { ...changed, serial: `${random.pick(['acm', 'ACM', 'Acm'])}-${random.pick(HOSTILE)}-${n % 50}` };
      if (n % 101 === 7) changed = { ...changed, location: { name: longName(`#${n % 3}`) } };
      if (n % 97 === 11 && changed.health !== undefined) {
        // Data values (the version filter) that differ only by case.
        changed = {
          ...changed,
          health: { ...changed.health, versionCode: random.pick(['rc1', 'RC1', 'Rc1']), versionName: random.pick(HOSTILE) },
        };
      }
      if (n % 89 === 13 && changed.health !== undefined) {
        // Advertised commands (a data filter field) that differ only by case, and hostile ones.
        const names = [random.pick(['print-test-page', 'PRINT-TEST-PAGE', 'Print-Test-Page']), random.pick(HOSTILE)];
        const commands = names.map((command) => ({ command, title: command, description: '', payload: {}, arguments: [] }));
        const hubs = changed.health.hubs.map((hub, position) =>
          position === 0 ? { ...hub, devices: hub.devices.map((sub, index) => (index === 0 ? { ...sub, commands } : sub)) } : hub,
        );
        changed = { ...changed, health: { ...changed.health, hubs } };
      }
      documents.push({ ...changed, type: 'DEVICE' } satisfies DeviceDocument);
    });
    for (let n = 1; n <= 30; n += 1) {
      const name =
        n % 5 === 0
          ? random.pick(HOSTILE)
          : n % 7 === 0
            ? longName(`s${n}`)
            : `Scenario ${n} ${random.pick(['Player', 'player', 'Kiosk'])}`;
      documents.push({
        type: 'SCENARIO',
        id: `scenario-${n}`,
        company: owner.id,
        name,
        ...(n % 3 === 0 ? {} : { description: `${random.pick(HOSTILE)} scenario` }),
        latestVersion: `1.${n % 4}.0`,
        versions: ['1.0.0', `1.${n % 4}.0`],
        created: `2025-0${1 + (n % 9)}-1${n % 10}T08:00:00.000Z`,
        updated: `2025-1${n % 3}-0${1 + (n % 9)}T08:00:00.000Z`,
      } satisfies ScenarioDocument);
    }
  }
  return documents;
}

/** The values of `field` present in the fleet, most frequent first (the questions draw from them). */
function presentValues(documents: readonly SearchDocument[], field: string): string[] {
  const counts = new Map<string, number>();
  for (const document of documents)
    for (const value of new Set(valuesAtPath(document, field).map(String))) counts.set(value, (counts.get(value) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1]).map(([value]) => value);
}

/** Filter fields a search may carry (`company` is the query's companies, not a filter). */
const FILTERS = FILTER_FIELDS.filter((field) => field.field !== 'company');

/** Generated filtered searches, with their page sizes; pages are chosen once the total is known. */
function searches(documents: readonly SearchDocument[]): Omit<SearchQuery, 'page'>[] {
  const random = generator(DEMO_SEED + 1);
  const values = new Map(FILTERS.map((field) => [field.field, presentValues(documents, field.field)]));
  const pageSizes = [1, 2, 3, 7, 10, 20, 50, 99, MAX_PAGE_SIZE];
  return Array.from({ length: SEARCHES }, (_, n) => {
    const fields = n < FILTERS.length ? [FILTERS[n] as (typeof FILTERS)[number]] : random.some(FILTERS, random.int(0, 3));
    const filters = new Map<string, string[]>();
    for (const field of fields) {
      const present = values.get(field.field) ?? [];
      // Repeated values, rare values from the tail, and now and then a value no document has.
      const chosen = random.some(present, random.int(1, 3)).concat(random.next() < 0.3 ? [random.pick(present)] : []);
      if (random.next() < 0.1) chosen.push('NO_SUCH_VALUE');
      if (random.next() < 0.2 && present.length > 3) chosen.push(present[present.length - 1] as string);
      filters.set(field.field, [...(filters.get(field.field) ?? []), ...chosen]);
    }
    const companies = n % 4 === 0 ? [...COMPANIES] : [...new Set(random.some(COMPANIES, random.int(1, 2)))];
    const sortField = SORT_FIELDS[n % SORT_FIELDS.length] as (typeof SORT_FIELDS)[number];
    return {
      companies,
      filters,
      sort: { field: sortField, direction: Math.floor(n / SORT_FIELDS.length) % 2 === 0 ? 'ASC' : 'DESC' },
      pageSize: random.pick(pageSizes),
    };
  });
}

/** The pages asked of a search with `total` matches: first, a middle one, last and beyond the last (within the window). */
function pagesOf(total: number, pageSize: number): number[] {
  const last = Math.max(1, Math.ceil(Math.min(total, MAX_RESULT_WINDOW) / pageSize));
  return [...new Set([1, Math.ceil(last / 2), last, last + 1])].filter((page) => page * pageSize <= MAX_RESULT_WINDOW);
}

/** A ValueCounts as a plain object, for comparison (map order aside). */
function plain(counts: ValueCounts): Record<string, Record<string, { count: number; label?: string }>> {
  return Object.fromEntries(
    [...counts].map(([field, values]) => [field, Object.fromEntries([...values].sort(([a], [b]) => (a < b ? -1 : 1)))]),
  );
}

const documents = fleet();
const embedded = new EmbeddedSearchIndex();
const run = `parity-${Date.now().toString(36)}-${process.pid}`;
const transport = createOpenSearchTransport(openSearchSettings(inject('opensearchUrl')));
const openSearch = new OpenSearchSearchIndex({ transport, alias: `${run}-alias`, index: run });

beforeAll(async () => {
  await openSearch.createIndex();
  await embedded.upsert(documents);
  // Through the indexer's bulk path, in the stream consumer's batch size; one refresh at the end.
  for (let start = 0; start < documents.length; start += 1_000) await openSearch.upsert(documents.slice(start, start + 1_000));
  const refreshed = await transport.request({ method: 'POST', path: `/${run}/_refresh` });
  expect(refreshed.statusCode).toBe(200);
}, 300_000);

afterAll(async () => {
  await openSearch.deleteIndex();
});

/** Each comparison runs hundreds of queries on two engines; CI runs other suites beside it on two cores. */
const COMPARISON_TIMEOUT_MS = 300_000;

describe(`search parity of the embedded engine and OpenSearch (${documents.length} documents)`, { timeout: COMPARISON_TIMEOUT_MS }, () => {
  it('holds every document in both', async () => {
    const everything: SearchQuery = {
      companies: COMPANIES,
      filters: new Map(),
      sort: { field: 'id', direction: 'ASC' },
      page: 1,
      pageSize: 1,
    };
    expect((await openSearch.search(everything)).total).toBe(documents.length);
    expect((await embedded.search(everything)).total).toBe(documents.length);
  });

  it(`answers ${SEARCHES} generated filtered searches with the same totals and the same ids in the same order`, async () => {
    let compared = 0;
    for (const search of searches(documents)) {
      const first = await embedded.search({ ...search, page: 1 });
      for (const page of pagesOf(first.total, search.pageSize)) {
        const query: SearchQuery = { ...search, page };
        const [mine, theirs] = await Promise.all([embedded.search(query), openSearch.search(query)]);
        const label = JSON.stringify({ ...query, filters: [...query.filters] });
        expect(theirs.total, label).toBe(mine.total);
        expect(theirs.resources.map(documentKeyString), label).toEqual(mine.resources.map(documentKeyString));
        compared += 1;
      }
    }
    expect(compared).toBeGreaterThanOrEqual(SEARCHES * 2);
  });

  it('returns whole documents as they were written, hostile strings included', async () => {
    const query: SearchQuery = {
      companies: COMPANIES,
      filters: new Map(),
      sort: { field: 'location.name', direction: 'DESC' },
      page: 1,
      pageSize: MAX_PAGE_SIZE,
    };
    const [mine, theirs] = await Promise.all([embedded.search(query), openSearch.search(query)]);
    expect(theirs.resources).toEqual(mine.resources);
  });

  it('counts every value of every filter field the same, without filters and with them', async () => {
    const fields = FILTER_FIELDS.map((field) => field.field).filter((field) => field !== 'company');
    const random = generator(DEMO_SEED + 2);
    const questions = [
      { companies: COMPANIES, filters: new Map<string, string[]>() },
      { companies: ['acme'], filters: new Map<string, string[]>() },
      ...searches(documents)
        .slice(0, 30)
        .map((search) => ({ companies: search.companies, filters: search.filters })),
    ];
    for (const question of questions) {
      for (const type of [undefined, 'DEVICE', 'SCENARIO'] as const) {
        const query = { ...question, fields: random.next() < 0.5 ? fields : ['type', ...fields], ...(type === undefined ? {} : { type }) };
        const [mine, theirs] = await Promise.all([embedded.countValues(query), openSearch.countValues(query)]);
        expect(plain(theirs), JSON.stringify({ ...query, filters: [...query.filters] })).toEqual(plain(mine));
      }
    }
  });

  it('selects the same device ids for a rollout, and the same total', async () => {
    for (const search of searches(documents).slice(0, 40)) {
      for (const max of [1, 250, 25_000]) {
        const [mine, theirs] = await Promise.all([embedded.selectIds(search, max), openSearch.selectIds(search, max)]);
        expect(theirs).toEqual(mine);
      }
    }
  });

  it(`matches the same documents for ${FULL_TEXT_SEARCHES} full-text searches (serials, words, prefixes, typos, hostile text)`, async () => {
    const random = generator(DEMO_SEED + 3);
    const words = [
      ...new Set(documents.flatMap((document) => valuesAtPath(document, 'location.name').map(String)).flatMap((name) => name.split(/\s+/))),
    ].filter((word) => word.length > 0);
    const texts: string[] = [];
    /** Texts that are one device's own serial (the demo's serials are unique single words): that device ranks first. */
    const serials = new Map<string, string>();
    for (let n = 0; n < FULL_TEXT_SEARCHES; n += 1) {
      const document = random.pick(documents);
      if (n % 5 === 0 && document.type === 'DEVICE' && /^[A-Z]+-K\d-\d+$/.test(document.serial))
        serials.set(document.serial, documentKeyString(document));
      const word = random.pick(words);
      const kind = n % 5;
      texts.push(
        kind === 0
          ? document.type === 'DEVICE'
            ? document.serial
            : document.name
          : kind === 1
            ? word
            : kind === 2
              ? word.slice(0, Math.max(1, Math.ceil(word.length / 2)))
              : kind === 3
                ? `${word.slice(0, -1)}x`
                : `${random.pick(words)} ${random.pick(words)}`,
      );
    }
    for (const global of texts) {
      const query: SearchQuery = {
        companies: COMPANIES,
        filters: new Map(),
        global,
        sort: { field: 'relevance', direction: 'DESC' },
        page: 1,
        pageSize: MAX_PAGE_SIZE,
      };
      const [mine, theirs] = await Promise.all([embedded.search(query), openSearch.search(query)]);
      expect(theirs.total, global).toBe(mine.total);
      // Relevance itself differs (docs/search.md, "Relevance on each engine"); an exact serial ranks first on both.
      const exact = serials.get(global);
      if (exact !== undefined) {
        expect(documentKeyString(mine.resources[0] as SearchDocument), global).toBe(exact);
        expect(documentKeyString(theirs.resources[0] as SearchDocument), global).toBe(exact);
      }
      if (mine.total <= MAX_PAGE_SIZE) {
        expect(new Set(theirs.resources.map(documentKeyString)), global).toEqual(new Set(mine.resources.map(documentKeyString)));
      }
      // Sorted on a field, the matches come in one order in both: every page of them is compared.
      for (const page of pagesOf(mine.total, MAX_PAGE_SIZE).slice(0, 3)) {
        const sorted: SearchQuery = { ...query, sort: { field: 'id', direction: 'ASC' }, page };
        const [mineSorted, theirsSorted] = await Promise.all([embedded.search(sorted), openSearch.search(sorted)]);
        expect(theirsSorted.resources.map(documentKeyString), `${global} page ${page}`).toEqual(
          mineSorted.resources.map(documentKeyString),
        );
      }
    }
    expect(serials.size).toBeGreaterThan(3);
  });
});
