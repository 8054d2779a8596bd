import { rolloutCancel } from '../contract/routes/rollouts.js';
import { cancelRollout } from '../core/rollouts.js';
import { services } from '../platform/composition.js';
import { jsonResponse, routeHandler } from '../platform/http.js';
import { logger } from '../platform/logger.js';

/**
 * POST {base_url}/companies/{companyId}/resources/rollouts/{rolloutId}/cancel: RUNNING or PAUSED → CANCELLED, for good; the deployments already made stay. 200 with the rollout; 404
 * when absent; 409 naming the state when it cannot be cancelled from it.
 */
export const handler = routeHandler(rolloutCancel, async ({ params }, { principal }) => {
  const { rollouts, queue, scenarios } = services();
  const dependencies = {
    rollouts,
    queue,
    scenarios,
    onError: (error: unknown, context: Record<string, unknown>) =>
      logger.warn('Rollout work not sent; the rollout sweeper sends it again', { error: error as Error, ...context }),
  };
  return jsonResponse(200, await cancelRollout(dependencies, principal, params.companyId, params.rolloutId));
});
