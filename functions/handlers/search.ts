import { searchResources } from '../core/search/service.js';
import { httpHandler, jsonResponse, queryPairs } from '../platform/http.js';
import { searchIndex } from '../platform/search-composition.js';

/** GET {base_url}/resources/search (spec endpoint 6): filters, `global`, `sort`/`direction`, `page`/`pageSize`. */
export const handler = httpHandler(async (event, { principal }) =>
  jsonResponse(200, await searchResources(searchIndex(), principal, queryPairs(event))),
);
