import { jsonResponse, publicHttpHandler } from '../platform/http.js';
import { openApiDocument } from '../contract/openapi.js';

/** GET {base_url}/openapi.json: the OpenAPI 3.1 description of the whole service (no bearer token needed). */
export const handler = publicHttpHandler(async () => jsonResponse(200, openApiDocument()));
