import { rolloutPause } from '../contract/routes/rollouts.js';
import { pauseRollout } from '../core/rollouts.js';
import { services } from '../platform/composition.js';
import { jsonResponse, routeHandler } from '../platform/http.js';
import { logger } from '../platform/logger.js';

/**
 * POST {base_url}/companies/{companyId}/resources/rollouts/{rolloutId}/pause: RUNNING → PAUSED: no further chunk or wave starts until it is resumed. 200 with the rollout; 404
 * when absent; 409 naming the state when it cannot be paused from it.
 */
export const handler = routeHandler(rolloutPause, async ({ params }, { principal }) => {
  const { rollouts, queue, scenarios } = services();
  const dependencies = {
    rollouts,
    queue,
    scenarios,
    onError: (error: unknown, context: Record<string, unknown>) =>
      logger.warn('Rollout work not sent; the rollout sweeper sends it again', { error: error as Error, ...context }),
  };
  return jsonResponse(200, await pauseRollout(dependencies, principal, params.companyId, params.rolloutId));
});
