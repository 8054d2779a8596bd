/**
 * An audit entry's change as text for people: the members of the target that changed, each as `member: before →
 * after`; a creation lists what was created (`member: value`), a deletion what was deleted. No DOM: a unit test reads it.
 */

/** A member's value as text: strings as they are, lists joined with commas (`acme, globex`), the rest as JSON. */
export function valueText(value: unknown): string {
  if (value === undefined) return '—';
  if (typeof value === 'string') return value === '' ? '""' : value;
  if (Array.isArray(value)) return value.length === 0 ? 'none' : value.map(valueText).join(', ');
  return JSON.stringify(value);
}

/** Members that say when a record was written: they change with every change, so they are left out. */
const BOOKKEEPING = new Set(['createdAt', 'updatedAt']);

/**
 * The lines of a change from `before` to `after` (either absent: a creation or a deletion), members in the order
 * they first appear, unchanged and bookkeeping members left out.
 */
export function changeLines(before: Record<string, unknown> | undefined, after: Record<string, unknown> | undefined): string[] {
  const members = [...new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})])].filter((member) => !BOOKKEEPING.has(member));
  if (before === undefined) return members.map((member) => `${member}: ${valueText(after?.[member])}`);
  if (after === undefined) return members.map((member) => `${member}: ${valueText(before[member])} (deleted)`);
  return members
    .filter((member) => JSON.stringify(before[member]) !== JSON.stringify(after[member]))
    .map((member) => `${member}: ${valueText(before[member])} → ${valueText(after[member])}`);
}
