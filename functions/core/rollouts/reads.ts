/**
 * Reading rollouts: one, or a page of a company's, each as every rollout route answers it (rolloutView), with its
 * waves' counts from their tallies.
 */
import pLimit from 'p-limit';
import { NotFoundError } from '../shared/errors.js';
import { ULID_PATTERN } from '../shared/identifiers.js';
import type { ListParameters, Page } from '../shared/paging.js';
import { authorizeCompany, type Principal } from '../shared/principal.js';
import type { RolloutView, RolloutWaveTally, RolloutWaveView, StoredRollout, StoredRolloutWave } from './model.js';
import type { RolloutDependencies } from './ports.js';

/** Rollouts whose tallies a listing reads at once. */
const LIST_TALLY_CONCURRENCY = 8;

/**
 * A stored rollout as every rollout route answers it, with each wave's counts from its tally. A CANCELLED rollout
 * stored before cancelling also cancelled its waves shows them CANCELLED all the same (without `completedAt`, which
 * it did not record).
 */
export function rolloutView(rollout: StoredRollout, tallies: ReadonlyMap<number, RolloutWaveTally>): RolloutView {
  const ended = (state: StoredRolloutWave['state']) => (rollout.state === 'CANCELLED' && state !== 'COMPLETED' ? 'CANCELLED' : state);
  const joined = [...tallies.values()].reduce((sum, tally) => sum + (tally.joined ?? 0), 0);
  return {
    id: rollout.id,
    state: rollout.state,
    action: rollout.action,
    ...(rollout.what === undefined ? {} : { what: rollout.what }),
    ...(rollout.command === undefined ? {} : { command: structuredClone(rollout.command) }),
    targets: rollout.targets,
    waves: rollout.waves.map(
      (wave, index): RolloutWaveView => ({
        // Devices that joined a continuous rollout count in its last wave, which grows by them.
        size: wave.size + (tallies.get(index)?.joined ?? 0),
        state: ended(wave.state),
        counts: { ...(tallies.get(index)?.counts ?? {}) },
        ...(wave.startedAt === undefined ? {} : { startedAt: wave.startedAt }),
        ...(wave.completedAt === undefined ? {} : { completedAt: wave.completedAt }),
      }),
    ),
    failureThreshold: rollout.failureThreshold,
    waveTimeoutSeconds: rollout.waveTimeoutSeconds,
    note: rollout.note ?? null,
    createdBy: rollout.createdBy,
    created: rollout.created,
    updated: rollout.updated,
    ...(rollout.pausedReason === undefined ? {} : { pausedReason: rollout.pausedReason }),
    ...(rollout.startAt === undefined ? {} : { startAt: rollout.startAt }),
    continuous: rollout.continuous !== undefined,
    ...(rollout.continuous === undefined ? {} : { joined }),
    events: (rollout.events ?? []).map((event) => ({ ...event, ...(event.counts === undefined ? {} : { counts: { ...event.counts } }) })),
    eventsDropped: rollout.eventsDropped ?? 0,
  };
}

/** The stored rollout. @throws NotFoundError when the company has no such rollout (or `rolloutId` is not a ULID). */
export async function storedRollout(
  deps: Pick<RolloutDependencies, 'rollouts'>,
  companyId: string,
  rolloutId: string,
): Promise<StoredRollout> {
  const rollout = ULID_PATTERN.test(rolloutId) ? await deps.rollouts.get(companyId, rolloutId) : undefined;
  if (rollout === undefined) throw new NotFoundError(`Rollout '${rolloutId}' does not exist in company '${companyId}'.`);
  return rollout;
}

/** The view of a stored rollout, with its tallies read now. @throws Error on a backend failure. */
export async function viewOf(deps: Pick<RolloutDependencies, 'rollouts'>, rollout: StoredRollout): Promise<RolloutView> {
  return rolloutView(rollout, await deps.rollouts.tallies(rollout.company, rollout.id));
}

/**
 * One rollout with its waves' counts (deploy results by cause, first INSTALLED / FAILED reports).
 * @throws ForbiddenError for a company outside the token.
 * @throws NotFoundError when the company has no such rollout.
 */
export async function getRollout(
  deps: Pick<RolloutDependencies, 'rollouts'>,
  principal: Principal,
  companyId: string,
  rolloutId: string,
): Promise<RolloutView> {
  authorizeCompany(principal, companyId);
  return viewOf(deps, await storedRollout(deps, companyId, rolloutId));
}

/**
 * A page of the company's rollouts, newest first, each with its counts.
 * @param paging `limit` (1–1000) and `cursor`, validated by the route.
 * @throws ForbiddenError for a company outside the token.
 * @throws BadRequestError on a cursor not issued for this listing.
 */
export async function listRollouts(
  deps: Pick<RolloutDependencies, 'rollouts'>,
  principal: Principal,
  companyId: string,
  { limit, cursor }: ListParameters,
): Promise<Page<RolloutView>> {
  authorizeCompany(principal, companyId);
  const page = await deps.rollouts.list(companyId, limit, cursor);
  const tallies = pLimit(LIST_TALLY_CONCURRENCY);
  const items = await Promise.all(page.items.map((rollout) => tallies(() => viewOf(deps, rollout))));
  return { items, nextCursor: page.nextCursor };
}
