import { searchFilters } from '../contract/routes/search.js';
import { describeFilters } from '../core/search/service.js';
import { CompanyNameCache } from '../platform/company-name-cache.js';
import { services } from '../platform/composition.js';
import { jsonResponse, routeHandler } from '../platform/http.js';
import { searchIndex } from '../platform/search-composition.js';

let companyNames: CompanyNameCache | undefined;

/**
 * GET {base_url}/resources/search/filters?type=: filter descriptors with live counts. Company display
 * names are cached per process for COMPANY_NAME_TTL_MS (the counts are always live).
 */
export const handler = routeHandler(searchFilters, async ({ query }, { principal }) => {
  companyNames ??= new CompanyNameCache(services().companies);
  return jsonResponse(200, await describeFilters({ index: searchIndex(), companies: companyNames }, principal, query));
});
