import { BadRequestError, ForbiddenError, type ProblemViolation } from '../errors.js';
import type { Principal } from '../principal.js';
import type { ResourceType, SearchDocument } from './documents.js';
import { FILTER_FIELDS, findFilterField, SORT_FIELDS, type SortField } from './registry.js';

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
 * A parsed, validated search (spec "Search resources"): what every search adapter executes.
 * `companies` is always a non-empty subset of the caller's companies and is always applied.
 */
export interface SearchQuery {
  companies: string[];
  /** Field → accepted values. Values of one field are OR-ed, fields are AND-ed. Empty when `global` is set. */
  filters: Map<string, string[]>;
  /** Full-text query; when set, `filters` is empty (spec rule 1). */
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

const PAGING_PARAMETERS = ['page', 'pageSize', 'sort', 'direction', 'global'] as const;

function parsePositiveInteger(name: string, raw: string, max: number | undefined, errors: ProblemViolation[]): number | undefined {
  if (!/^[1-9][0-9]{0,8}$/.test(raw) || (max !== undefined && Number(raw) > max)) {
    errors.push({ path: name, message: `'${name}' must be an integer from 1${max === undefined ? '' : ` to ${max}`}; got '${raw}'.` });
    return undefined;
  }
  return Number(raw);
}

/**
 * Parses the search query string (spec "Search resources", docs/contract.md "Search") into a SearchQuery.
 * Repeated filter parameters are OR-ed; different fields are AND-ed; `global` makes every filter ignored.
 * `company` narrows the caller's companies.
 * @param parameters every (name, value) pair of the query string, repeats included, in order.
 * @throws BadRequestError (400) listing every unknown parameter and bad value with the allowed values.
 * @throws ForbiddenError (403) when `company` names a company outside the caller's token.
 */
export function parseSearchQuery(parameters: [string, string][], principal: Principal): SearchQuery {
  const errors: ProblemViolation[] = [];
  const single = new Map<string, string>();
  const filters = new Map<string, string[]>();
  const requestedCompanies: string[] = [];

  for (const [name, value] of parameters) {
    if ((PAGING_PARAMETERS as readonly string[]).includes(name)) {
      if (single.has(name)) errors.push({ path: name, message: `'${name}' may be given only once.` });
      single.set(name, value);
      continue;
    }
    const field = findFilterField(name);
    if (field === undefined) {
      errors.push({
        path: name,
        message: `Unknown parameter '${name}'. Allowed: ${[...PAGING_PARAMETERS, ...FILTER_FIELDS.map((f) => f.field)].join(', ')}.`,
      });
      continue;
    }
    if (field.values.kind === 'fixed' && !field.values.list.includes(value)) {
      errors.push({ path: name, message: `'${value}' is not a value of '${name}'. Allowed: ${field.values.list.join(', ')}.` });
      continue;
    }
    if (value === '') {
      errors.push({ path: name, message: `'${name}' needs a value.` });
      continue;
    }
    if (field.values.kind === 'companies') {
      requestedCompanies.push(value);
      continue;
    }
    const list = filters.get(name) ?? [];
    if (!list.includes(value)) list.push(value);
    filters.set(name, list);
  }

  const page = single.has('page') ? parsePositiveInteger('page', single.get('page') as string, undefined, errors) : 1;
  const pageSize = single.has('pageSize')
    ? parsePositiveInteger('pageSize', single.get('pageSize') as string, MAX_PAGE_SIZE, errors)
    : DEFAULT_PAGE_SIZE;
  const sortRaw = single.get('sort');
  if (sortRaw !== undefined && !(SORT_FIELDS as readonly string[]).includes(sortRaw)) {
    errors.push({ path: 'sort', message: `'${sortRaw}' is not sortable. Allowed: ${SORT_FIELDS.join(', ')}.` });
  }
  const directionRaw = single.get('direction');
  if (directionRaw !== undefined && directionRaw !== 'ASC' && directionRaw !== 'DESC') {
    errors.push({ path: 'direction', message: `'direction' must be ASC or DESC; got '${directionRaw}'.` });
  }
  if (page !== undefined && pageSize !== undefined && page * pageSize > MAX_RESULT_WINDOW) {
    errors.push({
      path: 'page',
      message: `page × pageSize may not exceed ${MAX_RESULT_WINDOW}; narrow the search with filters instead of paging this deep.`,
    });
  }
  if (errors.length > 0) {
    throw new BadRequestError(`The search request has ${errors.length} invalid parameter(s): ${errors.map((e) => e.path).join(', ')}.`, errors);
  }

  const outside = requestedCompanies.filter((company) => !principal.companies.includes(company));
  if (outside.length > 0) {
    throw new ForbiddenError(`The token does not grant access to company '${outside.join("', '")}'.`);
  }

  const globalRaw = single.get('global')?.trim();
  const global = globalRaw === undefined || globalRaw === '' ? undefined : globalRaw;
  const direction = (directionRaw as 'ASC' | 'DESC' | undefined) ?? (sortRaw === undefined && global !== undefined ? 'DESC' : 'ASC');
  const sort: SearchSort = sortRaw !== undefined
    ? { field: sortRaw as SortField, direction }
    : global !== undefined ? { field: 'relevance', direction: 'DESC' } : { field: 'serial', direction };

  return {
    companies: global === undefined && requestedCompanies.length > 0 ? [...new Set(requestedCompanies)] : [...principal.companies],
    filters: global === undefined ? filters : new Map(),
    ...(global === undefined ? {} : { global }),
    sort,
    page: page as number,
    pageSize: pageSize as number,
  };
}
