/**
 * What the rollout route handlers share: the use cases' dependencies from the composition root, with the work queue's
 * failures logged (the rollout is stored; the rollout sweeper sends its work again), and the one handler shape of the
 * pause, resume and cancel routes.
 */
import type { z } from 'zod';
import type { RouteDefinition } from '../contract/route.js';
import type { RolloutView } from '../core/rollouts/model.js';
import type { RolloutDependencies } from '../core/rollouts/ports.js';
import type { Principal } from '../core/shared/principal.js';
import { workQueue } from './composition/queue.js';
import { storage } from './composition/storage.js';
import { jsonResponse, routeHandler } from './http.js';
import { logger } from './logger.js';

/** The rollout use cases' dependencies: repositories of storage() and workQueue(), a send failure logged as a warning. */
export function rolloutDependencies(): RolloutDependencies {
  const { rollouts, scenarios } = storage();
  return {
    rollouts,
    queue: workQueue(),
    scenarios,
    onError: (error, context) =>
      logger.warn('Rollout work not sent; the rollout sweeper sends it again', { error: error as Error, ...context }),
  };
}

/** A route of one rollout (`{companyId}` and `{rolloutId}` path parameters), as pause, resume and cancel are. */
type RolloutRoute = RouteDefinition & { request: { params: z.ZodType<{ companyId: string; rolloutId: string }> } };

/**
 * The handler of a state transition route: 200 with the rollout `transition` answers. Its errors (404 absent, 409 from
 * a state the transition does not apply to) become problem+json in the handler stack.
 */
export function rolloutTransitionHandler(
  route: RolloutRoute,
  transition: (dependencies: RolloutDependencies, principal: Principal, companyId: string, rolloutId: string) => Promise<RolloutView>,
) {
  return routeHandler(route, async ({ params }, { principal }) => {
    const { companyId, rolloutId } = params as { companyId: string; rolloutId: string };
    return jsonResponse(200, await transition(rolloutDependencies(), principal, companyId, rolloutId));
  });
}
