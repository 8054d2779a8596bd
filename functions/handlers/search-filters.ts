import { searchFilters } from '../contract/routes/search-filters.js';
import { describeFilters } from '../core/search/service.js';
import { searchIndex } from '../platform/composition/search.js';
import { companyNames } from '../platform/composition/storage.js';
import { jsonResponse, routeHandler } from '../platform/http.js';

/**
 * GET {base_url}/resources/search/filters?type=: filter descriptors with live counts. Company display
 * names are cached per process for COMPANY_NAME_TTL_MS (the counts are always live).
 */
export const handler = routeHandler(searchFilters, async ({ query }, { principal }) => {
  const companies = companyNames();
  return jsonResponse(200, await describeFilters({ index: searchIndex(), companies }, principal, query));
});
