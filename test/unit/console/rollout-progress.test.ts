/**
 * The rollout pages' progress figures without a browser: devices done (deployment results, not device reports) out of
 * the rollout's devices, which for a continuous rollout include those that joined since its creation.
 */
import { describe, expect, it } from 'vitest';
import type { components } from '../../../client/index.js';
import { doneOf, totalOf } from '../../../console/src/rollouts/progress.js';

type Rollout = components['schemas']['Rollout'];

const rollout = (targets: number, counts: Record<string, number>[], joined?: number): Rollout =>
  ({
    targets,
    continuous: joined !== undefined,
    ...(joined === undefined ? {} : { joined }),
    waves: counts.map((wave) => ({ size: 0, state: 'COMPLETED', counts: wave })),
  }) as unknown as Rollout;

describe('rollout progress', () => {
  it('counts deployment results, not device reports, out of the targets', () => {
    const figures = rollout(10, [{ SUCCESS: 4, TARGET_NOT_FOUND: 1, INSTALLED: 4, FAILED: 0 }, {}]);
    expect([doneOf(figures), totalOf(figures)]).toEqual([5, 10]);
  });

  it('counts the devices that joined a continuous rollout among its devices and as done once deployed', () => {
    const figures = rollout(3, [{ SUCCESS: 3 }, { SUCCESS: 2, ALREADY_DEPLOYED: 1, INSTALLED: 2 }], 3);
    expect([doneOf(figures), totalOf(figures)]).toEqual([6, 6]);
  });
});
