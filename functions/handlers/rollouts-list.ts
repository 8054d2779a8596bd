import { rolloutsList } from '../contract/routes/rollouts.js';
import { listRollouts } from '../core/rollouts/reads.js';
import { storage } from '../platform/composition/storage.js';
import { jsonResponse, routeHandler } from '../platform/http.js';

// At cold start: a function without CURSOR_SIGNING_KEY fails its initialization, naming the variable.
storage().cursors.load();

/** GET {base_url}/companies/{companyId}/resources/rollouts: the company's rollouts, newest first, `{ items, nextCursor }`. */
export const handler = routeHandler(rolloutsList, async ({ params, query }, { principal }) => {
  const { rollouts } = storage();
  return jsonResponse(200, await listRollouts({ rollouts }, principal, params.companyId, query));
});
