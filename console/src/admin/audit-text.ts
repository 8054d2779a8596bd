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
 * One member of a change: its value as created (`after` only), as deleted (`before` only), or before and after. The
 * page shows each value as a text of its own (a right-to-left value must not swap the arrow's sides).
 */
export interface ChangePart {
  member: string;
  before?: string;
  after?: string;
}

/**
 * The members of a change from `before` to `after` (either absent: a creation or a deletion), in the order they first
 * appear, unchanged and bookkeeping members left out.
 */
export function changeParts(before: Record<string, unknown> | undefined, after: Record<string, unknown> | undefined): ChangePart[] {
  const members = [...new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})])].filter((member) => !BOOKKEEPING.has(member));
  if (before === undefined) return members.map((member) => ({ member, after: valueText(after?.[member]) }));
  if (after === undefined) return members.map((member) => ({ member, before: valueText(before[member]) }));
  return members
    .filter((member) => JSON.stringify(before[member]) !== JSON.stringify(after[member]))
    .map((member) => ({ member, before: valueText(before[member]), after: valueText(after[member]) }));
}

/** A member of a change as one line: `member: value`, `member: value (deleted)` or `member: before → after`. */
export function changeLine({ member, before, after }: ChangePart): string {
  if (before === undefined) return `${member}: ${after ?? ''}`;
  if (after === undefined) return `${member}: ${before} (deleted)`;
  return `${member}: ${before} → ${after}`;
}

/** The lines of a change from `before` to `after` (changeParts, each as changeLine). */
export function changeLines(before: Record<string, unknown> | undefined, after: Record<string, unknown> | undefined): string[] {
  return changeParts(before, after).map(changeLine);
}
