/** Search routes of the main address: filter descriptors with counts, resource search. */
import { defineRoute } from '../route.js';

/** GET /resources/search/filters */
export const searchFilters = defineRoute({
  id: 'SearchFilters',
  api: 'main',
  method: 'GET',
  path: '/resources/search/filters',
  scope: 'search:read',
  entry: 'functions/handlers/search-filters.ts',
});

/** GET /resources/search */
export const search = defineRoute({
  id: 'Search',
  api: 'main',
  method: 'GET',
  path: '/resources/search',
  scope: 'search:read',
  entry: 'functions/handlers/search.ts',
});
