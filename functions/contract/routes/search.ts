/** Search routes of the main address: filter descriptors with counts, resource search. */
import { defineRoute } from '../route.js';
import { AUTHENTICATED_PROBLEMS, problem } from '../schemas/responses.js';
import { FilterDescriptorList, SearchResponse } from '../schemas/search.js';

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
  entry: 'functions/handlers/search.ts',
  responses: {
    200: { description: 'One page of matching resources with the effective sort and page.', schema: SearchResponse },
    ...AUTHENTICATED_PROBLEMS,
    403: problem('Forbidden', 'Forbidden: the token lacks `search:read`, or a `company` filter names a company outside the token.'),
    503: problem(
      'ServiceUnavailable',
      "Service Unavailable: the search backend (or the token issuer's JWKS) cannot be reached or is throttling requests. Retry after `Retry-After` seconds.",
    ),
  },
});
