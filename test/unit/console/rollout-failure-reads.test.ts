/**
 * The rollout page's failures section without a browser: which waves of the targets listing it reads (only those
 * whose counts show failures, none when nothing failed) and when it reads them again (only when the failure figures
 * change, not when devices install or deployments succeed).
 */
import { describe, expect, it } from 'vitest';
import { failureKey, failureReadsOf } from '../../../console/src/rollouts/failure-reads.js';

/** A rollout's waves as the API answers them, from their counts. */
const waves = (...counts: Record<string, number>[]) => ({
  waves: counts.map((wave) => ({ size: 100, state: 'RUNNING' as const, counts: wave })),
});

describe('failureReadsOf', () => {
  it('reads nothing for a rollout without failures, however large', () => {
    expect(failureReadsOf(waves({ SUCCESS: 100, INSTALLED: 100 }, { SUCCESS: 1000, INSTALLED: 3, FAILED: 0 }, {}))).toEqual({
      reported: [],
      results: [],
    });
  });

  it('reads the waves (1-based) with FAILED reports, and those with failure causes', () => {
    expect(
      failureReadsOf(
        waves(
          { SUCCESS: 98, TARGET_NOT_FOUND: 2, INSTALLED: 90, FAILED: 8 },
          { SUCCESS: 1000, INSTALLED: 1000 },
          { SUCCESS: 10, ALREADY_DEPLOYED: 3 },
          { SUCCESS: 5, FAILED: 1 },
        ),
      ),
    ).toEqual({ reported: [1, 4], results: [1, 3] });
  });
});

describe('failureKey', () => {
  const before = waves({ SUCCESS: 98, TARGET_NOT_FOUND: 2, INSTALLED: 40, FAILED: 3 }, { SUCCESS: 200 });

  it('stays the same while devices install and deployments succeed', () => {
    const after = waves({ SUCCESS: 98, TARGET_NOT_FOUND: 2, INSTALLED: 90, FAILED: 3 }, { SUCCESS: 1000, INSTALLED: 12 });
    expect(failureKey(after)).toBe(failureKey(before));
    // A count of 0 is no failure: the same as an absent key.
    expect(failureKey(waves({ SUCCESS: 1, FAILED: 0 }))).toBe(failureKey(waves({ SUCCESS: 1 })));
  });

  it('changes with a FAILED report or a failure cause in any wave', () => {
    expect(failureKey(waves({ SUCCESS: 98, TARGET_NOT_FOUND: 2, INSTALLED: 40, FAILED: 4 }, { SUCCESS: 200 }))).not.toBe(
      failureKey(before),
    );
    expect(
      failureKey(waves({ SUCCESS: 98, TARGET_NOT_FOUND: 2, INSTALLED: 40, FAILED: 3 }, { SUCCESS: 199, TARGET_NOT_FOUND: 1 })),
    ).not.toBe(failureKey(before));
  });
});
