import { rolloutTargetsOf } from '../contract/rollout-targets.js';
import { rolloutCreate } from '../contract/routes/rollouts.js';
import { createRollout } from '../core/rollouts/create.js';
import { resolveRolloutTargets } from '../core/rollouts/targets.js';
import { searchIndex } from '../platform/composition/search.js';
import { jsonResponse, routeHandler } from '../platform/http.js';
import { rolloutDependencies } from '../platform/rollout-handlers.js';

/**
 * POST {base_url}/companies/{companyId}/resources/rollouts: resolves the targets once (a device search's query string
 * within the company, or ids), stores the rollout and its target chunks and starts its first wave; 202 with the
 * rollout and its address in `Location`. 422 when the scenario version does not exist or the targets resolve to no
 * device or to more than 100,000.
 */
export const handler = routeHandler(rolloutCreate, async ({ params, body }, { principal }) => {
  // The selection is checked before the search runs: a query naming another company is refused, not resolved.
  const targets = rolloutTargetsOf(body.targets);
  // A continuous rollout may start with no device: the devices that match later join it.
  const ids = await resolveRolloutTargets(searchIndex(), params.companyId, targets, { allowNone: body.continuous === true });
  const selection = 'selection' in targets ? targets.selection.filters : undefined;
  const rollout = await createRollout(rolloutDependencies(), principal, params.companyId, body, ids, selection);
  return jsonResponse(202, rollout, {
    location: `/companies/${encodeURIComponent(params.companyId)}/resources/rollouts/${rollout.id}`,
  });
});
