import { executeDeployments } from '../core/deployments.js';
import { services } from '../platform/composition.js';
import { httpHandler, jsonBody, jsonResponse, pathParameter, singleQueryParameters } from '../platform/http.js';
import { logger } from '../platform/logger.js';

/**
 * POST {base_url}/companies/{companyId}/resources/deployments (spec endpoint 3): 200 with one result item per
 * request entry, in order; 400 for a structurally invalid body (nothing changed).
 */
export const handler = httpHandler(async (event, { principal }) => {
  const companyId = pathParameter(event, 'companyId');
  singleQueryParameters(event, []);
  const { devices, scenarios, deployments } = services();
  const result = await executeDeployments(
    { devices, scenarios, deployments, onError: (error, context) => logger.error('Deployment write failed', { error: error as Error, ...context }) },
    principal,
    companyId,
    jsonBody(event),
  );
  return jsonResponse(200, result);
});
