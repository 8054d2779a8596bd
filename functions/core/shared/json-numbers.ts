/**
 * The numbers of JSON request bodies, checked once they are parsed: every number a body carries may end up in a
 * DynamoDB item (a health report is the device's `health`, a rollout's threshold its item), so a number DynamoDB
 * cannot store is refused at the edge, naming it, instead of failing the write after other writes were made.
 */
import { pointerSegment } from './json-depth.js';

/**
 * Magnitudes DynamoDB stores (AWS DynamoDB developer guide, "Supported data types: Number"): 0, or from 1E-130 up to
 * 9.9999999999999999999999999999999999999E+125, positive or negative. As doubles: at least SMALLEST_STORABLE and
 * below FIRST_UNSTORABLE (the double nearest to the largest storable number is 1e126 itself, which DynamoDB refuses).
 */
export const SMALLEST_STORABLE = 1e-130;
/** The smallest magnitude above the storable ones (see SMALLEST_STORABLE). */
export const FIRST_UNSTORABLE = 1e126;

/** What a number must be, in words, for a 400's message. */
export const STORABLE_NUMBER_RULE = 'A number must be 0, or of magnitude 1e-130 to below 1e126 (the numbers DynamoDB stores).';

/**
 * Checks every number of a parsed JSON value and makes `-0` plain `0` in place (DynamoDB stores both as 0: read
 * back, a report with -0 would otherwise never equal its stored self). Iterative: a loop over an explicit stack.
 * JSON.parse gives a text's too large numbers (`1e400`) as Infinity, which is refused here too.
 * @param value what JSON.parse returned (plain objects, arrays and primitives).
 * @returns the JSON pointer (RFC 6901) of a number that is not finite or whose magnitude DynamoDB cannot
 *   store (SMALLEST_STORABLE, FIRST_UNSTORABLE), with the number; undefined when every number can be stored.
 */
export function unstorableNumber(value: unknown): { pointer: string; value: number } | undefined {
  if (typeof value === 'number') return unstorableNumber([value]) === undefined ? undefined : { pointer: '', value };
  const stack: [unknown, string][] = [[value, '']];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [node, pointer] = next;
    if (node === null || typeof node !== 'object') continue;
    const entries: [string, unknown][] = Array.isArray(node) ? node.map((item, index) => [String(index), item]) : Object.entries(node);
    for (const [key, member] of entries) {
      if (typeof member !== 'number') {
        if (member !== null && typeof member === 'object') stack.push([member, `${pointer}/${pointerSegment(key)}`]);
        continue;
      }
      const magnitude = Math.abs(member);
      if (!Number.isFinite(member) || (magnitude !== 0 && (magnitude < SMALLEST_STORABLE || magnitude >= FIRST_UNSTORABLE))) {
        return { pointer: `${pointer}/${pointerSegment(key)}`, value: member };
      }
      if (Object.is(member, -0)) (node as Record<string, unknown>)[key] = 0;
    }
  }
  return undefined;
}
