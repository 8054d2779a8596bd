import { rolloutCancel } from '../contract/routes/rollouts.js';
import { cancelRollout } from '../core/rollouts/transitions.js';
import { rolloutTransitionHandler } from '../platform/rollout-handlers.js';

/**
 * POST {base_url}/companies/{companyId}/resources/rollouts/{rolloutId}/cancel: RUNNING or PAUSED → CANCELLED, for good; the deployments already made stay. 200 with the rollout; 404
 * when absent; 409 naming the state when it cannot be cancelled from it.
 */
export const handler = rolloutTransitionHandler(rolloutCancel, cancelRollout);
