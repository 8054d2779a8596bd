import { rolloutGet } from '../contract/routes/rollouts.js';
import { getRollout } from '../core/rollouts/reads.js';
import { storage } from '../platform/composition/storage.js';
import { jsonResponse, routeHandler } from '../platform/http.js';

/** GET {base_url}/companies/{companyId}/resources/rollouts/{rolloutId}: the rollout, its waves and their counts; 404 when absent. */
export const handler = routeHandler(rolloutGet, async ({ params }, { principal }) => {
  const { rollouts } = storage();
  return jsonResponse(200, await getRollout({ rollouts }, principal, params.companyId, params.rolloutId));
});
