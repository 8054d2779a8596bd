import { describeFilters } from '../core/search/service.js';
import { services } from '../platform/composition.js';
import { httpHandler, jsonResponse, queryPairs } from '../platform/http.js';
import { searchIndex } from '../platform/search-composition.js';

/** GET {base_url}/resources/search/filters?type= (spec endpoint 5): filter descriptors with live counts. */
export const handler = httpHandler(async (event, { principal }) => {
  const { companies } = services();
  return jsonResponse(200, await describeFilters({ index: searchIndex(), companies }, principal, queryPairs(event)));
});
