import { rolloutResume } from '../contract/routes/rollouts.js';
import { resumeRollout } from '../core/rollouts/transitions.js';
import { rolloutTransitionHandler } from '../platform/rollout-handlers.js';

/**
 * POST {base_url}/companies/{companyId}/resources/rollouts/{rolloutId}/resume: PAUSED → RUNNING: the current wave goes on, or the next one starts. 200 with the rollout; 404
 * when absent; 409 naming the state when it cannot be resumed from it.
 */
export const handler = rolloutTransitionHandler(rolloutResume, resumeRollout);
