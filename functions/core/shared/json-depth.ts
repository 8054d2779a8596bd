/**
 * The nesting bound of JSON request bodies, checked on the body's text before anything parses it: nothing recursive
 * (JSON.stringify, zod, isDeepStrictEqual, the DynamoDB marshaller, which overflow the stack somewhere between 2,000
 * and 5,000 levels) ever sees a body nested deeper, and a deep body costs one pass over its text, no allocation.
 */

/**
 * Most levels of nested objects and arrays a JSON request body may have, its root counting as 1 (`{"a": [1]}` has
 * 2). 31 so that any body, were it stored whole as one attribute of a DynamoDB item (a health report is the device's
 * `health`), stays within DynamoDB's quota of 32 levels of nested attributes, which counts the item itself (AWS
 * DynamoDB quotas, "Nested attribute depth"; DynamoDB Local stores an attribute of 31 nested lists and refuses 32).
 * Every route's schema nests far less: the deepest member, a health report command's free-form `payload`, starts at
 * level 8.
 */
export const MAX_JSON_DEPTH = 31;

/** Longest JSON pointer tooDeepMember returns, characters: a longer one (long member names) is cut and ends in `…`. */
export const MAX_POINTER_CHARACTERS = 1_024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/**
 * The JSON pointer (RFC 6901) of the first object or array of `text` that opens at level `maxDepth + 1`, or
 * undefined when the text nests at most `maxDepth` levels. One pass over the text with a loop and a stack of at most
 * `maxDepth` frames (no recursion, whatever the text holds); brackets inside strings do not count. The text need not
 * be valid JSON: only the brackets, commas and strings outside strings are read, and whatever else is wrong is left
 * to the parser.
 * @param text a JSON text (UTF-16, as JSON.parse takes it).
 * @param maxDepth levels allowed, at least 1. @default MAX_JSON_DEPTH
 * @returns e.g. `/hubs/0/devices/0/commands/0/payload/0/0` (array elements by index, object members by name, `~`
 *   and `/` in names escaped as `~0` and `~1`), at most MAX_POINTER_CHARACTERS long.
 */
export function tooDeepMember(text: string, maxDepth: number = MAX_JSON_DEPTH): string | undefined {
  // Frame f is the container opened at level f + 1: an array (with the index of its current element) or an object
  // (with where the name of its current member starts and ends in `text`, and whether a name comes next).
  const isArray: boolean[] = new Array(maxDepth);
  const index: number[] = new Array(maxDepth);
  const nameStart: number[] = new Array(maxDepth);
  const nameEnd: number[] = new Array(maxDepth);
  const nameNext: boolean[] = new Array(maxDepth);
  let depth = 0;
  const length = text.length;
  for (let at = 0; at < length; at += 1) {
    const code = text.charCodeAt(at);
    if (code === QUOTE) {
      const start = at;
      at = closingQuote(text, at + 1);
      const frame = depth - 1;
      if (frame >= 0 && !isArray[frame] && nameNext[frame]) {
        nameStart[frame] = start;
        nameEnd[frame] = at + 1;
        nameNext[frame] = false;
      }
    } else if (code === OPEN_OBJECT || code === OPEN_ARRAY) {
      if (depth >= maxDepth) return pointerOf(text, depth, isArray, index, nameStart, nameEnd);
      isArray[depth] = code === OPEN_ARRAY;
      index[depth] = 0;
      nameStart[depth] = -1;
      nameEnd[depth] = -1;
      nameNext[depth] = code === OPEN_OBJECT;
      depth += 1;
    } else if (code === CLOSE_OBJECT || code === CLOSE_ARRAY) {
      if (depth > 0) depth -= 1;
    } else if (code === COMMA && depth > 0) {
      if (isArray[depth - 1]) index[depth - 1] = (index[depth - 1] as number) + 1;
      else nameNext[depth - 1] = true;
    }
  }
  return undefined;
}

/**
 * Where the string whose content starts at `from` ends: its closing quote, the first one not escaped (preceded by an
 * even number of backslashes), or the text's length when there is none. Each backslash is read at most once.
 */
function closingQuote(text: string, from: number): number {
  let quote = from;
  for (;;) {
    quote = text.indexOf('"', quote);
    if (quote === -1) return text.length;
    let backslashes = 0;
    while (quote - backslashes - 1 >= from && text.charCodeAt(quote - backslashes - 1) === BACKSLASH) backslashes += 1;
    if (backslashes % 2 === 0) return quote;
    quote += 1;
  }
}

/** A reference token of a JSON pointer: a member name or index, `~` and `/` escaped as `~0` and `~1` (RFC 6901). */
export function pointerSegment(name: string): string {
  return name.replaceAll('~', '~0').replaceAll('/', '~1');
}

/** The pointer of the member the `depth` open frames lead to. */
function pointerOf(
  text: string,
  depth: number,
  isArray: readonly boolean[],
  index: readonly number[],
  nameStart: readonly number[],
  nameEnd: readonly number[],
): string {
  let pointer = '';
  for (let frame = 0; frame < depth && pointer.length <= MAX_POINTER_CHARACTERS; frame += 1) {
    const segment = isArray[frame] ? String(index[frame]) : memberName(text, nameStart[frame] as number, nameEnd[frame] as number);
    pointer += `/${pointerSegment(segment)}`;
  }
  return pointer.length <= MAX_POINTER_CHARACTERS ? pointer : `${pointer.slice(0, MAX_POINTER_CHARACTERS - 1)}…`;
}

/** The unescaped member name between `start` and `end` (its quotes included); as written when it is not valid JSON. */
function memberName(text: string, start: number, end: number): string {
  if (start < 0) return '';
  // Only the first characters can appear in the pointer: a longer name is not decoded whole.
  const quoted = text.slice(start, Math.min(end, start + MAX_POINTER_CHARACTERS + 2));
  try {
    return JSON.parse(quoted.endsWith('"') && quoted.length > 1 ? quoted : `${quoted}"`) as string;
  } catch {
    return quoted.slice(1);
  }
}
