import { rolloutResume } from '../contract/routes/rollouts.js';
import { resumeRollout } from '../core/rollouts.js';
import { services } from '../platform/composition.js';
import { jsonResponse, routeHandler } from '../platform/http.js';
import { logger } from '../platform/logger.js';

/**
 * POST {base_url}/companies/{companyId}/resources/rollouts/{rolloutId}/resume: PAUSED → RUNNING: the current wave goes on, or the next one starts. 200 with the rollout; 404
 * when absent; 409 naming the state when it cannot be resumed from it.
 */
export const handler = routeHandler(rolloutResume, async ({ params }, { principal }) => {
  const { rollouts, queue, scenarios } = services();
  const dependencies = {
    rollouts,
    queue,
    scenarios,
    onError: (error: unknown, context: Record<string, unknown>) =>
      logger.warn('Rollout work not sent; the rollout sweeper sends it again', { error: error as Error, ...context }),
  };
  return jsonResponse(200, await resumeRollout(dependencies, principal, params.companyId, params.rolloutId));
});
