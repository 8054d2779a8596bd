/** The filter descriptors route of the main address: every filter field with its values and live counts. */
import * as z from 'zod';
import { RESOURCE_TYPES } from '../../core/search/documents.js';
import { oneOf } from '../parameters.js';
import { defineRoute } from '../route.js';
import { AUTHENTICATED_PROBLEMS, problem } from '../schemas/responses.js';
import { FilterDescriptorList } from '../schemas/search-filters.js';
import { filterParameters, selection } from '../search-selection.js';

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
