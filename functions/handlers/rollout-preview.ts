import { rolloutTargetsOf } from '../contract/rollout-targets.js';
import { rolloutPreview } from '../contract/routes/rollouts.js';
import { previewRollout } from '../core/rollouts/preview.js';
import { resolveRolloutTargets } from '../core/rollouts/targets.js';
import { searchIndex } from '../platform/composition/search.js';
import { storage } from '../platform/composition/storage.js';
import { jsonResponse, routeHandler } from '../platform/http.js';

/**
 * POST {base_url}/companies/{companyId}/resources/rollouts/preview: the body of a create, checked and its targets
 * resolved as a create does; 200 with what the rollout would do (for COMMAND, what the targets advertise, by
 * sub-device type), nothing written.
 */
export const handler = routeHandler(rolloutPreview, async ({ params, body }, { principal }) => {
  const targets = rolloutTargetsOf(body.targets);
  const ids = await resolveRolloutTargets(searchIndex(), params.companyId, targets, { allowNone: body.continuous === true });
  const { scenarios, targetHealth } = storage();
  return jsonResponse(200, await previewRollout({ scenarios, targetHealth }, principal, params.companyId, body, ids));
});
