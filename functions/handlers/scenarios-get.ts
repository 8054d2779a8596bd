import { authorize } from '../core/principal.js';
import { getScenario } from '../core/scenarios/catalog.js';
import { services } from '../platform/composition.js';
import { httpHandler, jsonResponse, pathParameter, singleQueryParameters } from '../platform/http.js';

/**
 * GET {base_url}/companies/{companyId}/resources/scenarios/{scenarioId}: one scenario and every stored version, each
 * with a presigned download URL valid 5 minutes.
 */
export const handler = httpHandler(async (event, { principal }) => {
  const companyId = pathParameter(event, 'companyId');
  const scenarioId = pathParameter(event, 'scenarioId');
  // Company and scope first, so that a stranger learns nothing from parameter errors (the use case checks again).
  authorize(principal, 'scenarios:read', companyId);
  singleQueryParameters(event, []);
  const { catalog, archives, companies } = services();
  return jsonResponse(200, await getScenario({ catalog, archives, companies }, principal, companyId, scenarioId));
});
