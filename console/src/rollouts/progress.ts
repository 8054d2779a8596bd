/** Figures derived from a rollout's wave counts. */
import type { components } from '../../../client/index.js';
import { targetsDone } from './command-rollout.js';

/** A rollout as the API answers it (as rollouts/api.ts names it; read here from the client, which needs no DOM). */
type Rollout = components['schemas']['Rollout'];

/** Wave count keys that are device reports, not deployment results. */
export const REPORT_KEYS = ['INSTALLED', 'FAILED'] as const;

/**
 * The rollout's devices: the targets resolved at creation, and those that joined a continuous rollout since (they
 * count in its last wave).
 */
export function totalOf(rollout: Rollout): number {
  return rollout.targets + (rollout.joined ?? 0);
}

/**
 * Devices done: per wave, the deployment results recorded (SUCCESS plus every failure cause), summed; a device
 * counts once its wave's work has reached it (for a COMMAND rollout: its commands were queued, or it got none). At
 * most the rollout's devices (totalOf).
 */
export function doneOf(rollout: Rollout): number {
  if (rollout.action === 'COMMAND') return Math.min(targetsDone(rollout), totalOf(rollout));
  let done = 0;
  for (const wave of rollout.waves) {
    for (const [key, value] of Object.entries(wave.counts)) {
      if (!(REPORT_KEYS as readonly string[]).includes(key)) done += value;
    }
  }
  return Math.min(done, totalOf(rollout));
}
