/**
 * Display texts: what devices, operators and scenario authors write for people to read (a serial, a location, a
 * health report's labels and messages, a scenario's name and description). They hold no control character: a
 * terminal acts on C0 and C1 controls instead of showing them (ESC starts an ECMA-48 sequence that recolours the
 * screen, sets the window's title or clears it; BEL ends a title), and nothing a person reads needs one. Prose
 * (descriptions, messages) may break lines: line feed, carriage return and tab are allowed there.
 *
 * Bidirectional formatting characters (U+202A–U+202E, U+2066–U+2069) are allowed: right-to-left languages use them
 * legitimately. The console and the CLI isolate such texts and show those characters visibly instead (Unicode
 * UAX #9; CVE-2021-42574, "Trojan Source").
 */

import type * as z from 'zod';

/** Whether a display text is one line (ids, names, labels) or prose that may break lines (descriptions, messages). */
export type DisplayTextKind = 'line' | 'prose';

/**
 * What each kind may not hold, as a character class's ranges: C0 controls (U+0000–U+001F), DEL (U+007F) and C1
 * controls (U+0080–U+009F); prose the same less tab (U+0009), line feed (U+000A) and carriage return (U+000D).
 */
const CONTROL_RANGES: Readonly<Record<DisplayTextKind, string>> = {
  line: '\\u0000-\\u001f\\u007f-\\u009f',
  prose: '\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f',
};

/** The first character a text of each kind may not hold. */
const FIRST_CONTROL: Readonly<Record<DisplayTextKind, RegExp>> = {
  line: new RegExp(`[${CONTROL_RANGES.line}]`, 'u'),
  prose: new RegExp(`[${CONTROL_RANGES.prose}]`, 'u'),
};

/**
 * The rule as a 400 states it.
 * @example controlCharacterRule('line') // 'must not hold control characters (U+0000–U+001F, U+007F–U+009F)'
 */
export function controlCharacterRule(kind: DisplayTextKind): string {
  return kind === 'line'
    ? 'must not hold control characters (U+0000–U+001F, U+007F–U+009F)'
    : 'must not hold control characters other than tab, line feed and carriage return (U+0000–U+001F, U+007F–U+009F)';
}

/**
 * Why `text` is not a display text of `kind`, naming the first control character and its position (1-based, in
 * UTF-16 code units as JSON counts a string's characters), or undefined when it is one.
 * @example displayTextViolation('\u001b[31mRED', 'line') // 'must not hold control characters (…): U+001B at character 1'
 */
export function displayTextViolation(text: string, kind: DisplayTextKind): string | undefined {
  const found = FIRST_CONTROL[kind].exec(text);
  if (found === null) return undefined;
  const codePoint = (found[0].codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0');
  return `${controlCharacterRule(kind)}: U+${codePoint} at character ${found.index + 1}`;
}

/** What a display text of each kind matches: no control character (a `pattern` in the OpenAPI document). */
export const DISPLAY_TEXT_PATTERNS: Readonly<Record<DisplayTextKind, RegExp>> = {
  line: new RegExp(`^[^${CONTROL_RANGES.line}]*$`, 'u'),
  prose: new RegExp(`^[^${CONTROL_RANGES.prose}]*$`, 'u'),
};

/**
 * `schema` refusing control characters (displayTextViolation): a 400 names the member, the character and where it is.
 * @example displayText(z.string().max(256), 'line')
 */
export function displayText(schema: z.ZodString, kind: DisplayTextKind): z.ZodString {
  return schema.regex(DISPLAY_TEXT_PATTERNS[kind], {
    error: (issue) => displayTextViolation(String(issue.input), kind) ?? controlCharacterRule(kind),
  });
}
