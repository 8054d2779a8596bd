import { rolloutPause } from '../contract/routes/rollouts.js';
import { pauseRollout } from '../core/rollouts/transitions.js';
import { rolloutTransitionHandler } from '../platform/rollout-handlers.js';

/**
 * POST {base_url}/companies/{companyId}/resources/rollouts/{rolloutId}/pause: RUNNING → PAUSED: no further chunk or wave starts until it is resumed. 200 with the rollout; 404
 * when absent; 409 naming the state when it cannot be paused from it.
 */
export const handler = rolloutTransitionHandler(rolloutPause, pauseRollout);
