/** The resource search route of the main address (the filter descriptors' is search-filters.ts). */
import * as z from 'zod';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, MAX_RESULT_WINDOW, type SearchParameters } from '../../core/search/query.js';
import { SORT_FIELDS } from '../../core/search/registry.js';
import { integer, oneOf, single } from '../parameters.js';
import { defineRoute } from '../route.js';
import { AUTHENTICATED_PROBLEMS, problem, serviceUnavailable } from '../schemas/responses.js';
import { SearchResponse } from '../schemas/search.js';
import { filterParameters, selection } from '../search-selection.js';

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
