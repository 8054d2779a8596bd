/**
 * Which reads of a rollout's targets listing the "Why devices failed" section needs, from the wave counts the rollout
 * already carries. A read of the whole listing with a status filter looks at every target (a page looks at up to
 * 2,000 of them): for a rollout of 100,000 devices that is about 50 requests per filter. Reading only the waves whose
 * counts show failures, and nothing when none does, makes the section free for a rollout without failures and cheap
 * for one whose failures are in its first, small waves; re-reading only when those failure figures change keeps the
 * page's polling at one request per refresh while devices install.
 *
 * A wave's FAILED count is its devices' first terminal reports: a device that reported INSTALLED and later FAILED, in a
 * wave where no device's first report was FAILED, is not listed (the targets listing, filtered by wave, still has it).
 */
// The client's types, not api.ts's (whose session import needs a DOM): the module is also tested in Node.
import type { components } from '../../../client/index.js';

/** What the module reads of a rollout: its waves' counts. */
type Waves = Pick<components['schemas']['Rollout'], 'waves'>;

/** The waves (1-based, ascending) to read, per filter of the targets listing. */
export interface FailureReads {
  /** Waves with devices that reported FAILED: read with `deviceStatus=FAILED`. */
  reported: number[];
  /** Waves with deployments that failed (a result other than SUCCESS): read with `state=FAILURE`. */
  results: number[];
}

/** Whether a wave count key is a deployment failure's cause (not SUCCESS, not a device report). */
function isCause(key: string): boolean {
  return key !== 'SUCCESS' && key !== 'INSTALLED' && key !== 'FAILED';
}

/** The waves whose counts show failures, per filter; both empty when nothing failed (nothing to read). */
export function failureReadsOf(rollout: Waves): FailureReads {
  const reported: number[] = [];
  const results: number[] = [];
  rollout.waves.forEach((wave, index) => {
    if ((wave.counts.FAILED ?? 0) > 0) reported.push(index + 1);
    if (Object.entries(wave.counts).some(([key, value]) => isCause(key) && value > 0)) results.push(index + 1);
  });
  return { reported, results };
}

/**
 * The failure figures of the rollout (per wave: FAILED reports and each failure cause's count), as a string that
 * changes exactly when they do: the section reads the listing again then, not on every poll.
 */
export function failureKey(rollout: Waves): string {
  return JSON.stringify(
    rollout.waves.map((wave) =>
      Object.entries(wave.counts)
        .filter(([key, value]) => (key === 'FAILED' || isCause(key)) && value > 0)
        .sort(([a], [b]) => a.localeCompare(b)),
    ),
  );
}
