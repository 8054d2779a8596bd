/**
 * The characters of a text from a device or a user that act without showing, and how the console shows them instead.
 *
 * The bidirectional formatting characters of Unicode UAX #9 (https://unicode.org/reports/tr9/) reorder what follows
 * them, so that "\u202Egnp.exe\u202C" reads "exe.png": the "Trojan Source" characters of CVE-2021-42574, U+202A–U+202E
 * and U+2066–U+2069. C0 and C1 control characters (U+0000–U+001F, U+007F–U+009F) do nothing a person can see; the
 * service refuses them in most texts now, but older data may hold them. Each of these characters is shown as a mark
 * naming it (`<U+202E>`, `\x1b`), as code hosts show hidden characters; tab, line feed and carriage return stay the
 * white space they are. No DOM here: the CSV exports and the unit tests use it as it is; user-text.tsx draws it.
 */

import { BIDI_FORMATTING_NAMES, hiddenCharacters } from '../../client/hidden-characters.js';

/** Every character shown as a mark (client/hidden-characters.ts), but tab, line feed and carriage return. */
const HIDDEN = hiddenCharacters('\t\n\r');

/** A piece of a text: text shown as it is, or the mark of a hidden character with that character's name. */
export type Piece = { text: string } | { mark: string; name: string };

/** The mark of a hidden character and its name: `<U+202E>` RIGHT-TO-LEFT OVERRIDE, `\x1b` CONTROL CHARACTER U+001B. */
function markOf(character: string): { mark: string; name: string } {
  const code = character.codePointAt(0) ?? 0;
  const hex = code.toString(16).toUpperCase().padStart(4, '0');
  const bidi = BIDI_FORMATTING_NAMES[character];
  if (bidi !== undefined) return { mark: `<U+${hex}>`, name: bidi };
  return { mark: `\\x${code.toString(16).padStart(2, '0')}`, name: `CONTROL CHARACTER U+${hex}` };
}

/** `text` cut at each hidden character: its runs of plain text and the characters' marks, in order. */
export function piecesOf(text: string): Piece[] {
  const pieces: Piece[] = [];
  let from = 0;
  for (const found of text.matchAll(HIDDEN)) {
    if (found.index > from) pieces.push({ text: text.slice(from, found.index) });
    pieces.push(markOf(found[0]));
    from = found.index + found[0].length;
  }
  if (from < text.length) pieces.push({ text: text.slice(from) });
  return pieces;
}

/**
 * `text` with each hidden character replaced by its mark, where no element can go: an `<option>`, a `title` or
 * `aria-label` attribute, a CSV cell.
 * @example visibleText('\u202Egnp.exe\u202C') // '<U+202E>gnp.exe<U+202C>'
 */
export function visibleText(text: string): string {
  return text.replace(HIDDEN, (character) => markOf(character).mark);
}
