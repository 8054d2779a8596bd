import { authorize } from '../core/principal.js';
import { scenarioManifestJsonSchema } from '../core/scenarios/manifest.js';
import { httpHandler, jsonResponse, pathParameter, singleQueryParameters } from '../platform/http.js';

/** GET {base_url}/companies/{companyId}/resources/scenarios/schema.json: the JSON Schema of scenario.json. */
export const handler = httpHandler(async (event, { principal }) => {
  authorize(principal, 'scenarios:read', pathParameter(event, 'companyId'));
  singleQueryParameters(event, []);
  return jsonResponse(200, scenarioManifestJsonSchema(), { 'content-type': 'application/schema+json' });
});
