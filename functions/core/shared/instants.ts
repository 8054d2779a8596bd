/** Instants the use cases compute (ISO-8601). */

/**
 * An ISO-8601 instant after `previous` (a change's `updated`, so that a compare-and-set conditioned on it always sees
 * it move): `now`, or 1 ms after `previous` when the clock has not passed it.
 */
export function laterThan(previous: string, now: Date): string {
  return new Date(Math.max(now.getTime(), Date.parse(previous) + 1)).toISOString();
}
