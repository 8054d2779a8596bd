import { search } from '../contract/routes/search.js';
import { searchResources } from '../core/search/service.js';
import { searchIndex } from '../platform/composition/search.js';
import { jsonResponse, routeHandler } from '../platform/http.js';

/** GET {base_url}/resources/search: filters, `global`, `sort`/`direction`, `page`/`pageSize`. */
export const handler = routeHandler(search, async ({ query }, { principal }) =>
  jsonResponse(200, await searchResources(searchIndex(), principal, query)),
);
