/** Search routes of the main address: filter descriptors with counts, resource search. */
import * as z from 'zod';
import { RESOURCE_TYPES } from '../../core/search/documents.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, MAX_RESULT_WINDOW, type SearchParameters } from '../../core/search/query.js';
import { FILTER_FIELDS, type FilterField, SORT_FIELDS } from '../../core/search/registry.js';
import { integer, MAX_PARAMETER_LENGTH, oneOf, single } from '../parameters.js';
import { defineRoute } from '../route.js';
import { AUTHENTICATED_PROBLEMS, problem, serviceUnavailable } from '../schemas/responses.js';
import { FilterDescriptorList, SearchResponse } from '../schemas/search.js';

/** Most values one filter parameter may be given, repeats counted. */
export const MAX_FILTER_VALUES = 100;

/** One filter parameter: given once or repeated (values OR-ed), each value one of the field's when they are fixed. */
function filterValues(field: FilterField) {
  const name = field.field;
  const value =
    field.values.kind === 'fixed'
      ? z
          .string()
          .refine((candidate) => (field.values as { list: readonly string[] }).list.includes(candidate), {
            error: (issue) =>
              `'${String(issue.input)}' is not a value of '${name}'. Allowed: ${(field.values as { list: readonly string[] }).list.join(', ')}.`,
          })
          .meta({ enum: [...field.values.list] })
      : z
          .string()
          .min(1, { error: `'${name}' needs a value.` })
          .max(MAX_PARAMETER_LENGTH, { error: `A '${name}' value has at most ${MAX_PARAMETER_LENGTH} characters.` });
  return z
    .preprocess(
      (raw) => (typeof raw === 'string' ? [raw] : raw),
      z.array(value).max(MAX_FILTER_VALUES, { error: `'${name}' may be given at most ${MAX_FILTER_VALUES} times.` }),
    )
    .optional()
    .meta({
      description: `Filter on \`${name}\`${field.scope === null ? '' : ` (${field.scope} resources)`}; repeat it to accept several values (OR).`,
      ...(field.values.kind === 'fixed' ? { example: [field.values.list[0]] } : {}),
    });
}

const filterParameters = Object.fromEntries(FILTER_FIELDS.map((field) => [field.field, filterValues(field)]));

/** The selection of filter values of a query: each field's distinct values, and the `company` values apart. */
function selection(query: Record<string, unknown>): Pick<SearchParameters, 'filters' | 'companies'> {
  const filters = new Map<string, string[]>();
  let companies: string[] = [];
  for (const field of FILTER_FIELDS) {
    const values = query[field.field] as string[] | undefined;
    if (values === undefined) continue;
    if (field.values.kind === 'companies') companies = [...new Set(values)];
    else filters.set(field.field, [...new Set(values)]);
  }
  return { filters, companies };
}

/**
 * The filter parameters of the search alone (no `global`, sort or paging), as the selection they make: what a
 * rollout's `targets.query` holds (functions/contract/rollout-targets.ts).
 */
export const SearchSelectionQuery = z.strictObject(filterParameters).transform((query) => selection(query));

/** The search's query string: filters, `global`, `sort`/`direction`, `page`/`pageSize`. */
export const SearchQuery = z
  .strictObject({
    global: single('global').max(1_000, { error: "'global' has at most 1000 characters." }).optional().meta({
      description: 'Full-text search over serial, location, names and versions; when given, every filter is ignored.',
      example: 'lyon printer',
    }),
    sort: oneOf('sort', SORT_FIELDS).optional().meta({ description: 'Sort field; default `serial`, or relevance with `global`.' }),
    direction: oneOf('direction', ['ASC', 'DESC'] as const, (value) => `'direction' must be ASC or DESC; got '${value}'.`)
      .optional()
      .meta({ description: 'Sort direction; default ASC, or DESC for a relevance sort.' }),
    page: integer('page', 1, MAX_RESULT_WINDOW)
      .optional()
      .transform((value) => value ?? 1)
      .meta({ description: '1-based page number; default 1.' }),
    pageSize: integer('pageSize', 1, MAX_PAGE_SIZE)
      .optional()
      .transform((value) => value ?? DEFAULT_PAGE_SIZE)
      .meta({ description: `Results per page, 1 to ${MAX_PAGE_SIZE}; default ${DEFAULT_PAGE_SIZE}.` }),
    ...filterParameters,
  })
  .superRefine((query, context) => {
    // Only when both are valid numbers: a bad page or pageSize is reported once, for itself.
    if (Number.isInteger(query.page) && Number.isInteger(query.pageSize) && query.page * query.pageSize > MAX_RESULT_WINDOW) {
      context.addIssue({
        code: 'custom',
        path: ['page'],
        message: `page × pageSize may not exceed ${MAX_RESULT_WINDOW}; narrow the search with filters instead of paging this deep.`,
      });
    }
  })
  .transform(
    (query): SearchParameters => ({
      page: query.page,
      pageSize: query.pageSize,
      sort: query.sort,
      direction: query.direction,
      global: query.global,
      ...selection(query),
    }),
  );

/** The filter descriptors' query string: `type` and the same filter parameters as the search (disjunctive counts). */
export const FiltersQuery = z
  .strictObject({
    ...filterParameters,
    // Here `type` restricts the descriptors to one resource type, instead of filtering on it.
    type: oneOf('type', RESOURCE_TYPES).optional().meta({ description: 'Only the fields (and counts) of this resource type.' }),
  })
  .transform((query) => ({ type: query.type, ...selection({ ...query, type: undefined }) }));

/** GET /resources/search/filters */
export const searchFilters = defineRoute({
  id: 'SearchFilters',
  api: 'main',
  method: 'GET',
  path: '/resources/search/filters',
  summary: 'Get the search filters',
  description:
    "Every filter field with its selectable values and live counts, computed within the caller's companies. The search's filter parameters may also be given: each field's counts are then computed as if that field's own selection were removed. Needs `search:read`.",
  tags: ['Search'],
  scope: 'search:read',
  request: { query: FiltersQuery },
  // The index, plus company names for the `company` filter.
  access: { storage: true, tables: { companies: 'R' }, search: 'search' },
  entry: 'functions/handlers/search-filters.ts',
  responses: {
    200: { description: 'The filter descriptors.', schema: FilterDescriptorList },
    ...AUTHENTICATED_PROBLEMS,
    403: problem('Forbidden', 'Forbidden: the token lacks `search:read`, or a `company` filter names a company outside the token.'),
  },
});

/** GET /resources/search */
export const search = defineRoute({
  id: 'Search',
  api: 'main',
  method: 'GET',
  path: '/resources/search',
  summary: 'Search resources',
  description:
    'Filter mode: one parameter per filter field, repeated for several values; values of one field are OR-ed, different fields AND-ed. Full-text mode: `global` ignores every filter parameter and, without `sort`, orders by relevance. Covers every company of the caller unless `company` narrows it. Needs `search:read`.',
  tags: ['Search'],
  scope: 'search:read',
  request: { query: SearchQuery },
  // Only the index.
  access: { storage: false, search: 'search' },
  entry: 'functions/handlers/search.ts',
  responses: {
    200: { description: 'One page of matching resources with the effective sort and page.', schema: SearchResponse },
    ...AUTHENTICATED_PROBLEMS,
    403: problem('Forbidden', 'Forbidden: the token lacks `search:read`, or a `company` filter names a company outside the token.'),
    503: serviceUnavailable(
      "Service Unavailable: the search backend (or the token issuer's JWKS) cannot be reached or is throttling requests. Retry after `Retry-After` seconds.",
    ),
  },
});
