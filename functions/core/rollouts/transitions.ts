/**
 * An operator's transitions of a rollout: pause, resume, cancel. Each is one write conditioned on the version read,
 * retried on a fresh read when the sweeper wrote in between, and records its event in that same write.
 */
import { ConflictError } from '../shared/errors.js';
import { authorizeCompany, type Principal } from '../shared/principal.js';
import { cancelMessages, resendUnfinished } from './dispatch.js';
import type { RolloutView, StoredRollout } from './model.js';
import type { RolloutDependencies } from './ports.js';
import { storedRollout, viewOf } from './reads.js';
import { hasWaveLeft, withEvents } from './state.js';

/** Attempts of a read-modify-write of the rollout item (pause, resume, cancel) racing the sweeper. */
const STATE_WRITE_ATTEMPTS = 5;

/**
 * Applies `change` to the rollout if `allowed` accepts its state, as one write conditioned on the version read;
 * read again and retried when the sweeper wrote in between.
 * @throws NotFoundError; ConflictError naming the state when `allowed` refuses it, or when the rollout kept changing
 *   for STATE_WRITE_ATTEMPTS attempts.
 */
async function transition(
  deps: RolloutDependencies,
  principal: Principal,
  companyId: string,
  rolloutId: string,
  verb: string,
  allowed: readonly StoredRollout['state'][],
  change: (rollout: StoredRollout, now: string) => StoredRollout,
): Promise<StoredRollout> {
  authorizeCompany(principal, companyId);
  for (let attempt = 1; ; attempt += 1) {
    const before = await storedRollout(deps, companyId, rolloutId);
    if (!allowed.includes(before.state)) {
      const states = allowed.length > 1 ? `${allowed.slice(0, -1).join(', ')} or ${allowed.at(-1)}` : allowed.join('');
      throw new ConflictError(`Rollout '${rolloutId}' is ${before.state}; only a ${states} rollout can be ${verb}.`);
    }
    const now = (deps.now?.() ?? new Date()).toISOString();
    const after = { ...change(structuredClone(before), now), updated: now, version: before.version + 1 };
    if (await deps.rollouts.update(after)) return after;
    if (attempt >= STATE_WRITE_ATTEMPTS) {
      throw new ConflictError(`Rollout '${rolloutId}' kept changing while it was being ${verb}; try again.`);
    }
  }
}

/**
 * Pauses a RUNNING rollout (`pausedReason` "Paused by {sub}."): no further chunk runs (the worker checks the state
 * before each one); chunks already running finish.
 * @throws ForbiddenError, NotFoundError, ConflictError when it is not RUNNING.
 */
export async function pauseRollout(
  deps: RolloutDependencies,
  principal: Principal,
  companyId: string,
  rolloutId: string,
): Promise<RolloutView> {
  const after = await transition(deps, principal, companyId, rolloutId, 'paused', ['RUNNING'], (rollout, now) =>
    withEvents(
      { ...rollout, state: 'PAUSED', pausedReason: `Paused by ${principal.subject}.` },
      { at: now, type: 'PAUSED', by: principal.subject },
    ),
  );
  return viewOf(deps, after);
}

/**
 * Resumes a PAUSED rollout where it stopped: its current wave starts now if it had not started (a pause on failures
 * stops before the next wave), and the chunks of the current wave not run yet are sent again at once.
 * @throws ForbiddenError, NotFoundError, ConflictError when it is not PAUSED.
 */
export async function resumeRollout(
  deps: RolloutDependencies,
  principal: Principal,
  companyId: string,
  rolloutId: string,
): Promise<RolloutView> {
  const after = await transition(deps, principal, companyId, rolloutId, 'resumed', ['PAUSED'], (rollout, now) => {
    const { pausedReason: _reason, ...rest } = rollout;
    const waves = rollout.waves.map((wave, index) =>
      index === rollout.currentWave && wave.state === 'PENDING' ? { ...wave, state: 'RUNNING' as const, startedAt: now } : wave,
    );
    // A continuous rollout paused after its last wave has no wave left to sweep: it runs on for the devices that join.
    const left = hasWaveLeft(waves);
    const startsWave = rollout.waves[rollout.currentWave]?.state === 'PENDING';
    return withEvents(
      { ...rest, waves, state: 'RUNNING' },
      { at: now, type: 'RESUMED', by: principal.subject },
      ...(startsWave ? [{ at: now, type: 'WAVE_STARTED' as const, wave: rollout.currentWave + 1 }] : []),
      ...(!left && rollout.continuous !== undefined ? [{ at: now, type: 'FOLLOWING' as const }] : []),
    );
  });
  try {
    await resendUnfinished(deps, after, after.updated, () => true);
  } catch (error) {
    deps.onError?.(error, { operation: 'resumeRollout', rolloutId, company: companyId });
  }
  return viewOf(deps, after);
}

/**
 * Cancels a SCHEDULED, RUNNING or PAUSED rollout: nothing more runs (a SCHEDULED one never starts: it leaves the sweep
 * index, and deployed nothing); the deployments it made stay. Every wave not COMPLETED becomes CANCELLED, the one that
 * was RUNNING with `completedAt` = now, so that no wave shows RUNNING for ever. A COMMAND rollout's commands still
 * QUEUED are cancelled in the background (cancelCommands): those a device has fetched (DELIVERED) or answered stay.
 * @throws ForbiddenError, NotFoundError, ConflictError when it has ended already.
 */
export async function cancelRollout(
  deps: RolloutDependencies,
  principal: Principal,
  companyId: string,
  rolloutId: string,
): Promise<RolloutView> {
  const cancellable: StoredRollout['state'][] = ['SCHEDULED', 'RUNNING', 'PAUSED'];
  const after = await transition(deps, principal, companyId, rolloutId, 'cancelled', cancellable, (rollout, now) => {
    const { pausedReason: _reason, ...rest } = rollout;
    const waves = rollout.waves.map((wave) => {
      if (wave.state === 'COMPLETED') return wave;
      return { ...wave, state: 'CANCELLED' as const, ...(wave.state === 'RUNNING' ? { completedAt: now } : {}) };
    });
    const commands = rollout.action === 'COMMAND' && cancelMessages(rollout).length > 0 ? { cancelCommands: true } : {};
    return withEvents({ ...rest, waves, state: 'CANCELLED', ...commands }, { at: now, type: 'CANCELLED', by: principal.subject });
  });
  if (after.cancelCommands === true) await cancelCommands(deps, after);
  return viewOf(deps, after);
}

/**
 * Sends the work that cancels a cancelled COMMAND rollout's QUEUED commands, then takes the rollout out of the sweep
 * index (one more write on its version). Best effort: when sending fails (reported through `onError`) or another write
 * came first, the rollout stays marked and the sweeper sends the work again (cancelling twice changes nothing).
 */
async function cancelCommands(deps: RolloutDependencies, rollout: StoredRollout): Promise<void> {
  try {
    await deps.queue.send(cancelMessages(rollout));
    const { cancelCommands: _sent, ...rest } = rollout;
    await deps.rollouts.update({ ...rest, version: rollout.version + 1 });
  } catch (error) {
    deps.onError?.(error, { operation: 'cancelRolloutCommands', rolloutId: rollout.id, company: rollout.company });
  }
}
