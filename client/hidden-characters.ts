/**
 * The characters of a text from a device or a user that a terminal or a browser acts on instead of showing: what the
 * CLI (cli/output.ts) and the console (console/src/visible-text.ts) both show as marks, each in its own notation.
 *
 * - Control characters: C0 (U+0000–U+001F), DEL and C1 (U+007F–U+009F). ESC and CSI start ECMA-48 sequences that
 *   recolour, retitle or clear a terminal; a browser shows none of them.
 * - Bidirectional formatting characters: the embeddings, overrides and isolates of Unicode UAX #9 (U+202A–U+202E,
 *   U+2066–U+2069), the "Trojan Source" characters of CVE-2021-42574, which reorder what follows them so that
 *   "\u202Egnp.exe\u202C" reads "exe.png".
 */

/** Control characters as a regular expression character class's ranges: C0, then DEL and C1. */
export const CONTROL_CHARACTER_RANGES = '\\u0000-\\u001f\\u007f-\\u009f';

/** The bidirectional formatting characters of CVE-2021-42574 as a character class's ranges. */
export const BIDI_FORMATTING_RANGES = '\\u202a-\\u202e\\u2066-\\u2069';

/** The bidirectional formatting characters with their Unicode names (U+202A LEFT-TO-RIGHT EMBEDDING, …). */
export const BIDI_FORMATTING_NAMES: Readonly<Record<string, string>> = {
  '\u202a': 'LEFT-TO-RIGHT EMBEDDING',
  '\u202b': 'RIGHT-TO-LEFT EMBEDDING',
  '\u202c': 'POP DIRECTIONAL FORMATTING',
  '\u202d': 'LEFT-TO-RIGHT OVERRIDE',
  '\u202e': 'RIGHT-TO-LEFT OVERRIDE',
  '\u2066': 'LEFT-TO-RIGHT ISOLATE',
  '\u2067': 'RIGHT-TO-LEFT ISOLATE',
  '\u2068': 'FIRST STRONG ISOLATE',
  '\u2069': 'POP DIRECTIONAL ISOLATE',
};

/**
 * A global regular expression of every hidden character (controls and bidirectional formatting), less `except` (a
 * string of characters a caller leaves as they are, e.g. `'\t\n\r'`).
 * @example hiddenCharacters('\n') // matches ESC, U+202E, … but not a line feed
 */
export function hiddenCharacters(except = ''): RegExp {
  const hidden = new RegExp(`[${CONTROL_CHARACTER_RANGES}${BIDI_FORMATTING_RANGES}]`, 'g');
  if (except === '') return hidden;
  return new RegExp(`(?![${escapeForClass(except)}])${hidden.source}`, 'g');
}

/** `characters` written so that a character class holds them literally (`\`, `]`, `^`, `-` escaped). */
function escapeForClass(characters: string): string {
  return characters.replace(/[\\\]^-]/g, (character) => `\\${character}`);
}
