import { describe, expect, it } from 'vitest';
import {
  bulkBody,
  countRequestBody,
  documentId,
  indexTemplate,
  keywordField,
  MAX_COUNT_BUCKETS,
  pageWindow,
  replicasFor,
  SELECT_PAGE_SIZE,
  SORT_KEY_FIELD,
  searchRequestBody,
  selectIdsRequestBody,
  toSearchResult,
  toSelectedIds,
  toValueCounts,
} from '../../../functions/adapters/aws/opensearch-queries.js';
import type { ScenarioDocument } from '../../../functions/core/search/documents.js';
import { type CountQuery, globalQueryTerms, MAX_RESULT_WINDOW, type SearchQuery } from '../../../functions/core/search/query.js';
import { FILTER_FIELDS, FULL_TEXT_FIELDS, SORT_FIELDS } from '../../../functions/core/search/registry.js';

type Body = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const searchBody = (search: SearchQuery): Body => searchRequestBody(search) as Body;
const countBody = (count: CountQuery): Body => countRequestBody(count) as Body;
const companyClause = (...companies: string[]): Body => ({ terms: { company: companies } });

function query(overrides: Partial<SearchQuery> = {}): SearchQuery {
  return {
    companies: ['acme', 'globex'],
    filters: new Map(),
    sort: { field: 'serial', direction: 'ASC' },
    page: 1,
    pageSize: 20,
    ...overrides,
  };
}

/** The mapping of a dotted path in the template. */
function mappingOf(path: string): Body | undefined {
  let node: Body | undefined = { properties: indexTemplate().mappings.properties };
  for (const segment of path.split('.')) node = node?.properties?.[segment] as Body | undefined;
  return node;
}

const scenario: ScenarioDocument = {
  type: 'SCENARIO',
  id: 'welcome',
  company: 'acme',
  name: 'Welcome',
  latestVersion: '1.0.0',
  versions: ['1.0.0'],
  created: '2024-01-01T00:00:00.000Z',
  updated: '2024-01-01T00:00:00.000Z',
};

describe('searchRequestBody', () => {
  it('ORs the values of a field in one terms clause, ANDs fields, sorts DESC with missing last and the key tie-breaker, pages', () => {
    const body = searchBody(
      query({
        filters: new Map([
          ['connection.state', ['CONNECTED', 'UNKNOWN']],
          ['health.mode', ['SERVER']],
        ]),
        sort: { field: 'created', direction: 'DESC' },
        page: 2,
        pageSize: 20,
      }),
    );
    expect(body).toEqual({
      from: 20,
      size: 20,
      track_total_hits: true,
      query: {
        bool: {
          filter: [
            companyClause('acme', 'globex'),
            { terms: { 'connection.state': ['CONNECTED', 'UNKNOWN'] } },
            { terms: { 'health.mode': ['SERVER'] } },
          ],
        },
      },
      sort: [{ created: { order: 'desc', missing: '_last' } }, { [SORT_KEY_FIELD]: { order: 'asc' } }],
    });
  });

  it('filters and sorts full-text fields on their keyword sub-field', () => {
    const body = searchBody(
      query({
        filters: new Map([['health.versionCode', ['100', '101']]]),
        sort: { field: 'serial', direction: 'ASC' },
      }),
    );
    expect(body.query.bool.filter[1]).toEqual({ terms: { 'health.versionCode.keyword': ['100', '101'] } });
    expect(body.sort[0]).toEqual({ 'serial.keyword': { order: 'asc', missing: '_last' } });
  });

  it('global: ignores filters, keeps the company restriction, every word must match, ranks by _score then _key', () => {
    const body = searchBody(
      query({
        companies: ['acme'],
        global: 'Lyon ACM-0001',
        filters: new Map([['connection.state', ['CONNECTED']]]),
        sort: { field: 'relevance', direction: 'DESC' },
      }),
    );
    expect(body.query.bool.filter).toEqual([companyClause('acme')]);
    expect(body.sort).toEqual([{ _score: { order: 'desc' } }, { [SORT_KEY_FIELD]: { order: 'asc' } }]);
    const words = body.query.bool.must[0].bool.must as Body[];
    expect(words).toHaveLength(2);
    const [lyon, serial] = words.map((word) => word.bool.should as Body[]);
    // A word of 4+ letters: exact, fuzzy and prefix alternatives.
    expect(lyon?.[0]).toEqual({ multi_match: { query: 'lyon', fields: [...FULL_TEXT_FIELDS], type: 'best_fields', operator: 'and' } });
    expect(lyon?.[1]).toMatchObject({ multi_match: { query: 'lyon', fuzziness: 'AUTO:4,8', operator: 'and' } });
    expect(lyon?.slice(2)).toEqual(FULL_TEXT_FIELDS.map((field) => ({ prefix: { [field]: { value: 'lyon', boost: 0.375 } } })));
    // A word with digits: no fuzziness, the whole serial as one term.
    expect(serial?.some((clause) => clause.multi_match?.fuzziness !== undefined)).toBe(false);
    expect(serial?.[0]).toMatchObject({ multi_match: { query: 'acm-0001' } });
    expect(words.every((word) => word.bool.minimum_should_match === 1)).toBe(true);
  });

  it('global sorted on a field uses that field, then the key', () => {
    const body = searchBody(query({ global: 'lyon', sort: { field: 'location.name', direction: 'ASC' } }));
    expect(body.sort).toEqual([{ 'location.name.keyword': { order: 'asc', missing: '_last' } }, { [SORT_KEY_FIELD]: { order: 'asc' } }]);
  });

  it('global without words matches nothing; short words are not fuzzy', () => {
    expect(searchBody(query({ global: '--', sort: { field: 'relevance', direction: 'DESC' } })).query.bool.must).toEqual([
      { match_none: {} },
    ]);
    const short = searchBody(query({ global: 'abc' })).query.bool.must[0].bool.must[0].bool.should as Body[];
    expect(short.filter((clause) => clause.multi_match !== undefined)).toHaveLength(1);
  });

  it('relevance without full text orders by key alone', () => {
    expect(searchBody(query({ sort: { field: 'relevance', direction: 'DESC' } })).sort).toEqual([{ [SORT_KEY_FIELD]: { order: 'asc' } }]);
  });

  it('keeps from + size within the result window', () => {
    expect(pageWindow(1, 20)).toEqual({ from: 0, size: 20 });
    expect(pageWindow(100, 100)).toEqual({ from: 9_900, size: 100 });
    expect(pageWindow(1000, 100)).toEqual({ from: MAX_RESULT_WINDOW, size: 0 });
    expect(searchBody(query({ page: 1000, pageSize: 100 }))).toMatchObject({ from: MAX_RESULT_WINDOW, size: 0, track_total_hits: true });
  });

  it('always applies the company restriction first, in every kind of body', () => {
    const bodies = [
      searchBody(query({ companies: ['acme'] })),
      searchBody(query({ companies: ['acme'], global: 'x', filters: new Map([['company', ['globex']]]) })),
      countBody({ companies: ['acme'], filters: new Map(), fields: ['type'] }),
      countBody({ companies: ['acme'], type: 'DEVICE', filters: new Map([['health.mode', ['SERVER']]]), fields: ['health.mode'] }),
    ];
    for (const body of bodies) expect(body.query.bool.filter[0]).toEqual(companyClause('acme'));
  });
});

describe('selectIdsRequestBody', () => {
  const selection = {
    companies: ['acme'],
    filters: new Map([
      ['connection.state', ['CONNECTED', 'UNKNOWN']],
      ['health.mode', ['SERVER']],
    ]),
  };

  it('selects device documents of the companies by the filters, ids only, sorted by id then key, with the exact total', () => {
    expect(selectIdsRequestBody(selection, SELECT_PAGE_SIZE)).toEqual({
      size: 10_000,
      _source: false,
      track_total_hits: true,
      query: {
        bool: {
          filter: [
            companyClause('acme'),
            { terms: { type: ['DEVICE'] } },
            { terms: { 'connection.state': ['CONNECTED', 'UNKNOWN'] } },
            { terms: { 'health.mode': ['SERVER'] } },
          ],
        },
      },
      sort: [{ 'id.keyword': { order: 'asc' } }, { [SORT_KEY_FIELD]: { order: 'asc' } }],
    });
  });

  it('resumes after the sort values of the previous page', () => {
    const body = selectIdsRequestBody(selection, 250, ['dev-9', 'DEVICE#acme#dev-9']) as Body;
    expect(body.search_after).toEqual(['dev-9', 'DEVICE#acme#dev-9']);
    expect(body.size).toBe(250);
    expect(body).not.toHaveProperty('from');
  });

  it('reads the ids from the sort values of the hits, the total and the last sort values', () => {
    const response = {
      hits: {
        total: { value: 3, relation: 'eq' },
        hits: [
          { _id: 'DEVICE#acme#a', sort: ['a', 'DEVICE#acme#a'] },
          { _id: 'DEVICE#acme#b', sort: ['b', 'DEVICE#acme#b'] },
        ],
      },
    };
    expect(toSelectedIds(response)).toEqual({ ids: ['a', 'b'], total: 3, after: ['b', 'DEVICE#acme#b'] });
    expect(toSelectedIds({ hits: { total: { value: 0 }, hits: [] } })).toEqual({ ids: [], total: 0, after: undefined });
  });
});

describe('countRequestBody', () => {
  it('has no hits, the filters and type, one terms aggregation per field and a label top hit for data fields', () => {
    const count: CountQuery = {
      companies: ['acme'],
      type: 'DEVICE',
      filters: new Map([['connection.state', ['CONNECTED']]]),
      fields: ['health.mode', 'health.versionCode'],
    };
    expect(countBody(count)).toEqual({
      size: 0,
      track_total_hits: true,
      query: {
        bool: { filter: [companyClause('acme'), { terms: { type: ['DEVICE'] } }, { terms: { 'connection.state': ['CONNECTED'] } }] },
      },
      aggs: {
        f0: { terms: { field: 'health.mode', size: MAX_COUNT_BUCKETS, order: { _key: 'asc' } } },
        f1: {
          terms: { field: 'health.versionCode.keyword', size: MAX_COUNT_BUCKETS, order: { _key: 'asc' } },
          aggs: {
            label: { top_hits: { size: 1, _source: { includes: ['health.versionName'] }, sort: [{ [SORT_KEY_FIELD]: { order: 'asc' } }] } },
          },
        },
      },
    });
  });
});

describe('indexTemplate', () => {
  const template = indexTemplate();

  it('sets the replicas it is given, 0 unless told (a single-node domain stays green)', () => {
    expect(template.settings).toMatchObject({ number_of_shards: 1, number_of_replicas: 0 });
    expect(indexTemplate(1).settings).toMatchObject({ number_of_shards: 1, number_of_replicas: 1 });
  });

  it('derives the replicas from the data nodes: none on one node, one from two nodes on', () => {
    expect([1, 2, 3, 6].map(replicasFor)).toEqual([0, 1, 1, 1]);
    expect(() => replicasFor(0)).toThrow(/at least one data node/);
  });

  it('refuses unmapped fields from the index (dynamic false) and maps the key as keyword', () => {
    expect(template.mappings.dynamic).toBe(false);
    expect(mappingOf(SORT_KEY_FIELD)).toEqual({ type: 'keyword' });
  });

  it.each(FILTER_FIELDS.map((field) => field.field))('maps filter field %s as keyword (or text with a keyword sub-field)', (field) => {
    const mapping = mappingOf(field);
    if ((FULL_TEXT_FIELDS as readonly string[]).includes(field)) {
      expect(mapping).toMatchObject({ type: 'text', fields: { keyword: { type: 'keyword' } } });
      expect(keywordField(field)).toBe(`${field}.keyword`);
    } else {
      expect(mapping).toEqual({ type: 'keyword' });
      expect(keywordField(field)).toBe(field);
    }
  });

  it('maps full-text fields as text with a keyword sub-field, dates as dates, every sort field', () => {
    for (const field of FULL_TEXT_FIELDS)
      expect(mappingOf(field), field).toMatchObject({ type: 'text', fields: { keyword: { type: 'keyword' } } });
    expect(mappingOf('created')).toMatchObject({ type: 'date' });
    expect(mappingOf('updated')).toMatchObject({ type: 'date' });
    for (const field of SORT_FIELDS) expect(mappingOf(field), field).toBeDefined();
  });

  it('keeps hubs and sub-devices plain objects (multi-valued fields, not nested)', () => {
    expect(mappingOf('health.hubs')?.type).toBe('object');
    expect(mappingOf('health.hubs.devices')?.type).toBe('object');
    expect(JSON.stringify(template.mappings)).not.toContain('"nested"');
  });

  it('analyzes words with inner punctuation as the whole word and its parts, one shard', () => {
    expect(template.settings.number_of_shards).toBe(1);
    expect(template.settings.max_result_window).toBe(MAX_RESULT_WINDOW);
    expect(globalQueryTerms('  ACM-0001  Lyon lyon 1.0.1 ,, ')).toEqual(['acm-0001', 'lyon', '1-0-1']);
  });
});

describe('response mapping', () => {
  it('maps hits to documents without the key field, and the total', () => {
    const result = toSearchResult({
      hits: {
        total: { value: 42, relation: 'eq' },
        hits: [{ _id: documentId(scenario), _source: { ...scenario, [SORT_KEY_FIELD]: 'SCENARIO#acme#welcome' } }],
      },
    });
    expect(result).toEqual({ total: 42, resources: [scenario] });
    expect(toSearchResult({ hits: { total: 0, hits: [] } })).toEqual({ total: 0, resources: [] });
  });

  it('maps aggregations to value counts, ascending, with labels, empty maps for fields without buckets', () => {
    const count: CountQuery = {
      companies: ['acme'],
      filters: new Map(),
      fields: ['health.versionCode', 'connection.state', 'health.mode'],
    };
    const counts = toValueCounts(
      {
        hits: { total: { value: 4 }, hits: [] },
        aggregations: {
          f0: {
            buckets: [
              { key: '101', doc_count: 2, label: { hits: { hits: [{ _source: { health: { versionName: '1.0.1' } } }] } } },
              { key: '100', doc_count: 2, label: { hits: { hits: [{ _source: { health: { versionName: '1.0.0' } } }] } } },
            ],
          },
          f1: {
            buckets: [
              { key: 'UNKNOWN', doc_count: 1 },
              { key: 'CONNECTED', doc_count: 3 },
            ],
          },
          f2: { buckets: [] },
        },
      },
      count,
    );
    expect([...(counts.get('health.versionCode') ?? [])]).toEqual([
      ['100', { count: 2, label: '1.0.0' }],
      ['101', { count: 2, label: '1.0.1' }],
    ]);
    expect([...(counts.get('connection.state') ?? [])]).toEqual([
      ['CONNECTED', { count: 3 }],
      ['UNKNOWN', { count: 1 }],
    ]);
    expect(counts.get('health.mode')).toEqual(new Map());
  });
});

describe('bulkBody', () => {
  it('indexes documents with their key as _id and source field, then deletes', () => {
    const body = bulkBody([scenario], [{ type: 'DEVICE', company: 'acme', id: 'dev-1' }]);
    expect(body.endsWith('\n')).toBe(true);
    expect(
      body
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line)),
    ).toEqual([
      { index: { _id: 'SCENARIO#acme#welcome' } },
      { ...scenario, [SORT_KEY_FIELD]: 'SCENARIO#acme#welcome' },
      { delete: { _id: 'DEVICE#acme#dev-1' } },
    ]);
    expect(bulkBody([], [])).toBe('');
  });
});
