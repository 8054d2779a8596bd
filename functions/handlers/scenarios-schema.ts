import { scenarioSchema } from '../contract/routes/scenarios.js';
import { scenarioManifestJsonSchema } from '../core/scenarios/manifest.js';
import { jsonResponse, routeHandler } from '../platform/http.js';

/** GET {base_url}/companies/{companyId}/resources/scenarios/schema.json: the JSON Schema of scenario.json. */
export const handler = routeHandler(scenarioSchema, async () =>
  jsonResponse(200, scenarioManifestJsonSchema(), { 'content-type': 'application/schema+json' }),
);
