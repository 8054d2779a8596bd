/**
 * OpenSearch request bodies and response mapping for the SearchIndex port: pure functions, no I/O.
 * The embedded engine (functions/adapters/embedded/search-engine.ts) is the reference for the semantics:
 * company restriction always applied, OR within a field and AND across fields, multi-valued hub and sub-device
 * fields matched per field (plain objects, not `nested`), `global` full text where every word must match
 * (exactly, as a prefix, or for words of 4+ characters without digits within a small edit distance),
 * sorts with missing values last in both directions and the `TYPE#company#id` tie-breaker, counts per value.
 */
import { type DocumentKey, documentKeyString, type SearchDocument, valuesAtPath } from '../../core/search/documents.js';
import {
  type CountQuery,
  globalQueryTerms,
  MAX_RESULT_WINDOW,
  type SearchQuery,
  type SearchResult,
  type ValueCounts,
} from '../../core/search/query.js';
import { FILTER_FIELDS, FULL_TEXT_FIELDS, SORT_FIELDS } from '../../core/search/registry.js';

/** Keyword field holding `TYPE#company#id` (documentKeyString): the final sort tie-breaker. */
export const SORT_KEY_FIELD = '_key';
/** Buckets per terms aggregation: every fixed enumeration and realistic data-derived value lists fit. */
export const MAX_COUNT_BUCKETS = 10_000;
/** Date-valued fields among the mapped ones (ISO-8601 strings in the documents). */
export const DATE_FIELDS: readonly string[] = ['created', 'updated'];
/** Analyzer names of the template. */
const INDEX_ANALYZER = 'resource_text';
const SEARCH_ANALYZER = 'resource_text_query';
/** Boost of a prefix match relative to an exact one (the embedded engine's prefix weight). */
const PREFIX_BOOST = 0.375;
/** Boost of a fuzzy-only match (the embedded engine's fuzzy weight); exact matches score 1 through multi_match. */
const FUZZY_BOOST = 0.45;

const FULL_TEXT: ReadonlySet<string> = new Set(FULL_TEXT_FIELDS);
const LABEL_FIELDS = new Map<string, string>(
  FILTER_FIELDS.flatMap((field) =>
    field.values.kind === 'data' && field.values.labelField !== undefined ? [[field.field, field.values.labelField]] : [],
  ),
);

/** A JSON object as sent to or received from OpenSearch. */
export type Json = Record<string, unknown>;

/**
 * The keyword (exact, sortable, aggregatable) form of a document path: `path.keyword` for full-text fields
 * (mapped as text with a keyword sub-field), the path itself for keyword and date fields.
 */
export function keywordField(path: string): string {
  return FULL_TEXT.has(path) ? `${path}.keyword` : path;
}

/** Mapping of one leaf path. */
function leafMapping(path: string): Json {
  if (FULL_TEXT.has(path)) {
    return { type: 'text', analyzer: INDEX_ANALYZER, search_analyzer: SEARCH_ANALYZER, fields: { keyword: { type: 'keyword' } } };
  }
  if (DATE_FIELDS.includes(path)) return { type: 'date', format: 'strict_date_optional_time' };
  return { type: 'keyword' };
}

/**
 * Replicas per shard for a domain of `dataNodes` data nodes: 0 on one node (OpenSearch never puts a replica on the
 * node holding its primary, so a replica there stays unassigned and the cluster yellow), 1 from two nodes on (a
 * copy of the index survives the loss of a node). The CDK passes it to the index administration functions as
 * OPENSEARCH_REPLICAS.
 * @throws Error when `dataNodes` is not a positive whole number.
 */
export function replicasFor(dataNodes: number): number {
  if (!Number.isInteger(dataNodes) || dataNodes < 1) throw new Error(`A domain has at least one data node; got ${dataNodes}.`);
  return dataNodes === 1 ? 0 : 1;
}

/** Replicas when nothing says otherwise: a single-node OpenSearch (local, or the default domain size). */
export const DEFAULT_REPLICAS = 0;

/**
 * The index settings and mappings (body of `PUT /{index}`; wrap in `template` for `_index_template`).
 * Every filter, sort, full-text and label path is mapped explicitly; everything else is kept in `_source` only
 * (`dynamic: false`). Hubs and sub-devices stay plain objects, so their fields are multi-valued keywords.
 * One shard keeps BM25 statistics global, so relevance (and its ties) is the same on every run.
 * @param replicas `number_of_replicas` (replicasFor the domain's data nodes).
 */
export function indexTemplate(replicas: number = DEFAULT_REPLICAS): { settings: Json; mappings: Json } {
  const paths = new Set<string>([
    ...FILTER_FIELDS.map((field) => field.field),
    ...SORT_FIELDS,
    ...FULL_TEXT_FIELDS,
    ...LABEL_FIELDS.values(),
  ]);
  const properties: Json = { [SORT_KEY_FIELD]: { type: 'keyword' } };
  for (const path of [...paths].sort()) {
    const segments = path.split('.');
    let node = properties;
    segments.forEach((segment, index) => {
      if (index === segments.length - 1) {
        node[segment] = leafMapping(path);
        return;
      }
      const object = (node[segment] ??= { type: 'object', properties: {} }) as { properties: Json };
      node = object.properties;
    });
  }
  const punctuationFilters = ['lowercase', 'trim_punctuation', 'join_punctuation', 'drop_empty'];
  return {
    settings: {
      number_of_shards: 1,
      number_of_replicas: replicas,
      max_result_window: MAX_RESULT_WINDOW,
      analysis: {
        filter: {
          // Keeps the parts of a word with inner punctuation (`acm`, `0001`) besides the whole word.
          word_parts: {
            type: 'word_delimiter_graph',
            preserve_original: true,
            generate_word_parts: true,
            generate_number_parts: true,
            split_on_case_change: false,
            split_on_numerics: false,
            stem_english_possessive: false,
          },
          trim_punctuation: { type: 'pattern_replace', pattern: '^\\p{P}+|\\p{P}+$', replacement: '' },
          // `ACM-0001`, `acm.0001`, `1.0.1` → `acm-0001`, `1-0-1`: the whole word as the embedded engine indexes it.
          join_punctuation: { type: 'pattern_replace', pattern: '\\p{P}+', replacement: '-' },
          drop_empty: { type: 'length', min: 1 },
        },
        analyzer: {
          [INDEX_ANALYZER]: {
            type: 'custom',
            tokenizer: 'whitespace',
            filter: ['lowercase', 'word_parts', ...punctuationFilters.slice(1)],
          },
          [SEARCH_ANALYZER]: { type: 'custom', tokenizer: 'whitespace', filter: punctuationFilters },
        },
      },
    },
    mappings: { dynamic: false, properties },
  };
}

/** Typo tolerance of one term: none with digits (serials, versions) or under 4 characters; else AUTO:4,8 (1 edit, 2 from 8). */
function fuzzinessOf(term: string): string | undefined {
  return term.length >= 4 && !/\p{N}/u.test(term) ? 'AUTO:4,8' : undefined;
}

/**
 * The full-text clause of `global`: one `must` per word (every word must match, in any text field), each word
 * matching exactly or fuzzily (`multi_match`, `operator: 'and'`) or as a prefix (`prefix` per field, unbounded
 * expansion, lower boost). A text without words matches nothing.
 */
export function fullTextQuery(text: string): Json {
  const terms = globalQueryTerms(text);
  if (terms.length === 0) return { match_none: {} };
  const fields = [...FULL_TEXT_FIELDS];
  return {
    bool: {
      must: terms.map((term) => {
        const fuzziness = fuzzinessOf(term);
        const should: Json[] = [
          { multi_match: { query: term, fields, type: 'best_fields', operator: 'and' } },
          ...(fuzziness === undefined
            ? []
            : [
                {
                  multi_match: {
                    query: term,
                    fields,
                    type: 'best_fields',
                    operator: 'and',
                    fuzziness,
                    prefix_length: 0,
                    boost: FUZZY_BOOST,
                  },
                },
              ]),
          ...fields.map((field) => ({ prefix: { [field]: { value: term, boost: PREFIX_BOOST } } })),
        ];
        return { bool: { should, minimum_should_match: 1 } };
      }),
    },
  };
}

/** Filter clauses: the company restriction (always), an optional type, one `terms` per filter field. */
export function filterClauses(companies: readonly string[], filters: ReadonlyMap<string, readonly string[]>, type?: string): Json[] {
  const clauses: Json[] = [{ terms: { company: [...companies] } }];
  if (type !== undefined) clauses.push({ terms: { type: [type] } });
  for (const [field, values] of filters) clauses.push({ terms: { [keywordField(field)]: [...values] } });
  return clauses;
}

/** `from`/`size` of a page, kept within the result window (past it: `size` 0, only the total is read). */
export function pageWindow(page: number, pageSize: number): { from: number; size: number } {
  const from = Math.min((page - 1) * pageSize, MAX_RESULT_WINDOW);
  return { from, size: Math.max(0, Math.min(pageSize, MAX_RESULT_WINDOW - from)) };
}

/**
 * The `_search` body of a query: company restriction always; filters (ignored with `global`) or the full-text
 * clause; sort on the field's keyword form, missing values last, then `_key` ascending (relevance: `_score`
 * descending then `_key`; relevance without full text: `_key` alone, every score being equal).
 */
export function searchRequestBody(query: SearchQuery): Json {
  const global = query.global;
  const bool: Json = { filter: filterClauses(query.companies, global === undefined ? query.filters : new Map()) };
  if (global !== undefined) bool.must = [fullTextQuery(global)];
  const tieBreaker = { [SORT_KEY_FIELD]: { order: 'asc' } };
  let sort: Json[];
  if (query.sort.field === 'relevance') {
    sort = global === undefined ? [tieBreaker] : [{ _score: { order: 'desc' } }, tieBreaker];
  } else {
    sort = [
      { [keywordField(query.sort.field)]: { order: query.sort.direction === 'DESC' ? 'desc' : 'asc', missing: '_last' } },
      tieBreaker,
    ];
  }
  return { ...pageWindow(query.page, query.pageSize), track_total_hits: true, query: { bool }, sort };
}

/** Hits per `_search` request of selectIds: OpenSearch's default `max_result_window`, the most one request may return. */
export const SELECT_PAGE_SIZE = 10_000;

/** The sort of selectIds: the device id's keyword, then `_key` (two companies may hold the same device id). */
const SELECT_SORT: readonly Json[] = [{ [keywordField('id')]: { order: 'asc' } }, { [SORT_KEY_FIELD]: { order: 'asc' } }];

/**
 * The `_search` body of one page of selectIds: device documents of the companies matching the filters, no `_source`
 * (the ids are read from the sort values), sorted by id then `_key`, `size` hits after `after` (the sort values of the
 * previous page's last hit, `search_after`), the exact total.
 */
export function selectIdsRequestBody(
  query: { companies: readonly string[]; filters: ReadonlyMap<string, readonly string[]> },
  size: number,
  after?: readonly unknown[],
): Json {
  return {
    size,
    _source: false,
    track_total_hits: true,
    query: { bool: { filter: filterClauses(query.companies, query.filters, 'DEVICE') } },
    sort: SELECT_SORT,
    ...(after === undefined ? {} : { search_after: [...after] }),
  };
}

/**
 * Maps a selectIds page: the ids (first sort value of each hit, in hit order), the total, and the sort values of
 * the last hit (the next page's `search_after`; undefined on an empty page).
 */
export function toSelectedIds(response: unknown): { ids: string[]; total: number; after: unknown[] | undefined } {
  const hits = asArray(asObject(asObject(response).hits).hits).map(asObject);
  const ids = hits.map((hit) => String(asArray(hit.sort)[0]));
  const last = hits.at(-1);
  return { ids, total: totalHits(response), after: last === undefined ? undefined : asArray(last.sort) };
}

/** Name of the aggregation of `query.fields[position]` (field paths hold dots; names stay simple). */
function aggregationName(position: number): string {
  return `f${position}`;
}

/**
 * The `_search` body of a count query: no hits, the same filters (company restriction always, `type` when given),
 * one `terms` aggregation per field (a document counts once per distinct value), with a `top_hits` of the
 * label field for data fields that declare one.
 */
export function countRequestBody(query: CountQuery): Json {
  const aggs: Json = {};
  query.fields.forEach((field, position) => {
    const labelField = LABEL_FIELDS.get(field);
    aggs[aggregationName(position)] = {
      terms: { field: keywordField(field), size: MAX_COUNT_BUCKETS, order: { _key: 'asc' } },
      ...(labelField === undefined
        ? {}
        : {
            aggs: { label: { top_hits: { size: 1, _source: { includes: [labelField] }, sort: [{ [SORT_KEY_FIELD]: { order: 'asc' } }] } } },
          }),
    };
  });
  return { size: 0, track_total_hits: true, query: { bool: { filter: filterClauses(query.companies, query.filters, query.type) } }, aggs };
}

/** The `_id` of a document: its key string `TYPE#company#id`. */
export function documentId(key: DocumentKey): string {
  return documentKeyString(key);
}

/** The stored source of a document: the document plus the `_key` tie-breaker. */
export function toSource(document: SearchDocument): Json {
  return { ...document, [SORT_KEY_FIELD]: documentKeyString(document) };
}

/**
 * The NDJSON body of a `_bulk` request: `index` actions for `documents` (in order, so the last duplicate wins),
 * then `delete` actions for `removals`. Empty string when there is nothing to do.
 */
export function bulkBody(documents: readonly SearchDocument[], removals: readonly DocumentKey[]): string {
  const lines: string[] = [];
  for (const document of documents) {
    lines.push(JSON.stringify({ index: { _id: documentId(document) } }), JSON.stringify(toSource(document)));
  }
  for (const key of removals) lines.push(JSON.stringify({ delete: { _id: documentId(key) } }));
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

function asObject(value: unknown): Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : {};
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** Total hits of a response (`hits.total` as `{ value }` or, with `rest_total_hits_as_int`, a number). */
function totalHits(response: unknown): number {
  const total = asObject(response).hits === undefined ? undefined : asObject(asObject(response).hits).total;
  if (typeof total === 'number') return total;
  const value = asObject(total).value;
  return typeof value === 'number' ? value : 0;
}

/** The document of a hit: its `_source` without the `_key` field. */
function documentOf(hit: unknown): SearchDocument {
  const { [SORT_KEY_FIELD]: _key, ...document } = asObject(asObject(hit)._source);
  return document as unknown as SearchDocument;
}

/** Maps a `_search` response to a SearchResult (total and documents in hit order). */
export function toSearchResult(response: unknown): SearchResult {
  const hits = asArray(asObject(asObject(response).hits).hits);
  return { total: totalHits(response), resources: hits.map(documentOf) };
}

/**
 * Maps a count response to ValueCounts: for each field of `query.fields`, value → count (ascending by value),
 * with `label` from the top hit's label field for data fields that declare one; a field without buckets maps
 * to an empty Map.
 */
export function toValueCounts(response: unknown, query: CountQuery): ValueCounts {
  const aggregations = asObject(asObject(response).aggregations);
  const result: ValueCounts = new Map();
  query.fields.forEach((field, position) => {
    const labelField = LABEL_FIELDS.get(field);
    const buckets = asArray(asObject(aggregations[aggregationName(position)]).buckets).map(asObject);
    const values = new Map<string, { count: number; label?: string }>();
    const entries = buckets
      .map((bucket) => {
        const count = typeof bucket.doc_count === 'number' ? bucket.doc_count : 0;
        let label: string | undefined;
        if (labelField !== undefined) {
          const [hit] = asArray(asObject(asObject(asObject(bucket.label).hits)).hits);
          const first = hit === undefined ? undefined : valuesAtPath(asObject(hit)._source, labelField)[0];
          label = first === undefined ? undefined : String(first);
        }
        return { value: String(bucket.key), count, label };
      })
      .filter((entry) => entry.count > 0);
    entries.sort((a, b) => (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
    for (const { value, count, label } of entries) values.set(value, label === undefined ? { count } : { count, label });
    result.set(field, values);
  });
  return result;
}
