/**
 * Storage quotas as administrators write them: an amount and a unit (MB, GB, TB, powers of 1,024 as format.ts's
 * `bytes` shows sizes), turned into the whole bytes the API takes (`quotaBytes`, 0 to 1 TiB).
 */

/** The units a quota is written in, with their size in bytes. */
export const QUOTA_UNITS = [
  { unit: 'MB', bytes: 1024 ** 2 },
  { unit: 'GB', bytes: 1024 ** 3 },
  { unit: 'TB', bytes: 1024 ** 4 },
] as const;

/** A quota unit's name. */
export type QuotaUnit = (typeof QUOTA_UNITS)[number]['unit'];

/** The size of `unit` in bytes (MB when the name is unknown). */
function unitBytes(unit: string): number {
  return (QUOTA_UNITS.find((candidate) => candidate.unit === unit) ?? QUOTA_UNITS[0]).bytes;
}

/**
 * An amount of `unit` as whole bytes (rounded to the nearest byte), or undefined when `amount` is no finite number
 * (an empty field): the service checks the bounds and says them.
 */
export function quotaBytesOf(amount: string, unit: string): number | undefined {
  const value = Number(amount);
  if (amount.trim() === '' || !Number.isFinite(value)) return undefined;
  return Math.round(value * unitBytes(unit));
}

/**
 * How to prefill a quota field for `quotaBytes`: the largest unit it is at least one of (MB for less), the amount in
 * that unit with up to 3 decimals.
 */
export function quotaFieldsOf(quotaBytes: number): { amount: string; unit: QuotaUnit } {
  const chosen = [...QUOTA_UNITS].reverse().find((candidate) => quotaBytes >= candidate.bytes) ?? QUOTA_UNITS[0];
  return { amount: String(Math.round((quotaBytes / chosen.bytes) * 1000) / 1000), unit: chosen.unit };
}
