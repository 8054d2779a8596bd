import { ForbiddenError } from '../shared/errors.js';
import type { Principal } from '../shared/principal.js';
import type { ResourceType, SearchDocument } from './documents.js';
import type { SortField } from './registry.js';

/** Default and maximum page sizes (docs/contract.md, "Search"). */
export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;
/** Deepest result reachable by paging (`page × pageSize`), OpenSearch's default `max_result_window`. */
export const MAX_RESULT_WINDOW = 10_000;

/**
 * The lower-cased words of `text` (split at whitespace and line breaks), each as its non-empty parts between
 * punctuation; words without any part are dropped. E.g. `'ACM-0001 Lyon, …'` → `[['acm', '0001'], ['lyon']]`.
 * The one word splitting of search: the embedded engine indexes text with it and `global` queries are read with it.
 */
export function textWords(text: string): string[][] {
  const words: string[][] = [];
  for (const word of text.toLowerCase().split(/[\n\r\p{Z}]+/u)) {
    const parts = word.split(/\p{P}+/u).filter((part) => part !== '');
    if (parts.length > 0) words.push(parts);
  }
  return words;
}

/**
 * The words of a `global` text as every search adapter matches them: lower case, one term per whitespace-separated
 * word, duplicates dropped; a word with inner punctuation stays whole (parts joined by `-`), so `ACM-000123` looks up
 * the serial itself rather than every document containing `acm`. E.g. `'  ACM-0001 Lyon lyon 1.0.1 '` →
 * `['acm-0001', 'lyon', '1-0-1']`.
 */
export function globalQueryTerms(text: string): string[] {
  return [...new Set(textWords(text).map((parts) => parts.join('-')))];
}

/** Sort order. `relevance` is only used for `global` queries without an explicit `sort`. */
export interface SearchSort {
  field: SortField | 'relevance';
  direction: 'ASC' | 'DESC';
}

/**
 * A parsed, validated search: what every search adapter executes.
 * `companies` is always a non-empty subset of the caller's companies and is always applied.
 */
export interface SearchQuery {
  companies: string[];
  /** Field → accepted values. Values of one field are OR-ed, fields are AND-ed. Empty when `global` is set. */
  filters: Map<string, string[]>;
  /** Full-text query; when set, `filters` is empty: a full-text search ignores filters (docs/contract.md, "Search"). */
  global?: string;
  sort: SearchSort;
  /** 1-based page number. */
  page: number;
  pageSize: number;
}

/** One page of results as the adapters return it. */
export interface SearchResult {
  total: number;
  resources: SearchDocument[];
}

/**
 * A facet-count request: counts of each value of `fields` over the documents
 * of `companies` (and of `type` when given) that match `filters`.
 */
export interface CountQuery {
  companies: string[];
  type?: ResourceType;
  filters: Map<string, string[]>;
  fields: string[];
}

/** Field → value → number of matching documents (a document counts once per distinct value it has). */
export type ValueCounts = Map<string, Map<string, { count: number; label?: string }>>;

/**
 * The search parameters of a request, as the route validated them (each value allowed, page × pageSize within
 * MAX_RESULT_WINDOW): what searchQueryOf turns into a SearchQuery for the caller.
 */
export interface SearchParameters {
  page: number;
  pageSize: number;
  sort?: SortField | undefined;
  direction?: 'ASC' | 'DESC' | undefined;
  /** Full-text query, trimmed; undefined or empty when absent. */
  global?: string | undefined;
  /** Filter field → accepted values (distinct), the `company` field excluded. */
  filters: Map<string, string[]>;
  /** The `company` filter's values: companies to narrow the search to. */
  companies: string[];
}

/**
 * The search to run for `parameters` and the caller (docs/contract.md "Search"): repeated
 * filter values are OR-ed, different fields AND-ed, `global` makes every filter ignored; `company` narrows the
 * caller's companies. Default sort: by relevance for `global`, else by serial ascending.
 * @throws ForbiddenError when `company` names a company outside the caller's token.
 */
export function searchQueryOf(parameters: SearchParameters, principal: Principal): SearchQuery {
  const { page, pageSize, filters, companies: requestedCompanies } = parameters;
  const sortRaw = parameters.sort;
  const directionRaw = parameters.direction;
  const outside = requestedCompanies.filter((company) => !principal.companies.includes(company));
  if (outside.length > 0) {
    throw new ForbiddenError(`The token does not grant access to company '${outside.join("', '")}'.`);
  }

  const globalRaw = parameters.global?.trim();
  const global = globalRaw === undefined || globalRaw === '' ? undefined : globalRaw;
  const direction = (directionRaw as 'ASC' | 'DESC' | undefined) ?? (sortRaw === undefined && global !== undefined ? 'DESC' : 'ASC');
  const sort: SearchSort =
    sortRaw !== undefined
      ? { field: sortRaw as SortField, direction }
      : global !== undefined
        ? { field: 'relevance', direction: 'DESC' }
        : { field: 'serial', direction };

  return {
    companies: global === undefined && requestedCompanies.length > 0 ? [...new Set(requestedCompanies)] : [...principal.companies],
    filters: global === undefined ? filters : new Map(),
    ...(global === undefined ? {} : { global }),
    sort,
    page,
    pageSize,
  };
}
