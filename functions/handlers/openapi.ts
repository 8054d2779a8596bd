import { openApiDocument } from '../contract/openapi.js';
import { openApiDocument as route } from '../contract/routes/service.js';
import { jsonResponse, routeHandler } from '../platform/http.js';

/** GET {base_url}/openapi.json: the OpenAPI 3.1 description of the whole service (no bearer token needed). */
export const handler = routeHandler(route, async () => jsonResponse(200, openApiDocument()));
