import { rolloutTargets } from '../contract/routes/rollouts.js';
import { listRolloutTargets } from '../core/rollouts/target-results.js';
import { storage } from '../platform/composition/storage.js';
import { jsonResponse, routeHandler } from '../platform/http.js';

// At cold start: a function without CURSOR_SIGNING_KEY fails its initialization, naming the variable.
storage().cursors.load();

/**
 * GET {base_url}/companies/{companyId}/resources/rollouts/{rolloutId}/targets: the rollout's targets in wave order,
 * each with its wave, result and reported status (a COMMAND rollout's: its commands' states), filtered by `wave`,
 * `state`, `cause`, `deviceStatus` and `commandState`,
 * `{ items, nextCursor }`; 404 when the rollout is absent.
 */
export const handler = routeHandler(rolloutTargets, async ({ params, query }, { principal }) => {
  const { rollouts, targetStatuses, commands, cursors } = storage();
  return jsonResponse(
    200,
    await listRolloutTargets(
      { rollouts, statuses: targetStatuses, commands, cursors },
      principal,
      params.companyId,
      params.rolloutId,
      query,
    ),
  );
});
