import { apiReferenceScript } from '../contract/routes/service.js';
import { REDOC_SCRIPT_MAX_AGE_SECONDS, redocScript } from '../platform/api-reference.js';
import { routeHandler } from '../platform/http.js';

/** GET {base_url}/docs/redoc.standalone.js: Redoc's standalone script, which the reference page loads (no bearer token needed). */
export const handler = routeHandler(apiReferenceScript, async () => ({
  statusCode: 200,
  headers: {
    'content-type': 'application/javascript; charset=utf-8',
    'cache-control': `public, max-age=${REDOC_SCRIPT_MAX_AGE_SECONDS}`,
    'x-content-type-options': 'nosniff',
  },
  body: await redocScript(),
}));
