/**
 * The pure parts of the form that runs a command from the device page: the advertised arguments as the form's JSON
 * text, that text read back (or why it cannot be sent), and the expiry choices. No DOM: the unit tests use it as it is.
 */
import { DEFAULT_COMMAND_EXPIRY_SECONDS, MAX_COMMAND_JSON_BYTES } from '../../../client/limits.js';
import { count } from '../format.js';

/** Whether an advertised `arguments` value says nothing: absent, null, an empty text, array or object. */
function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null || value === '') return true;
  if (Array.isArray(value)) return value.length === 0;
  return typeof value === 'object' && Object.keys(value).length === 0;
}

/**
 * The form's first arguments text for an advertised command: its `arguments` pretty-printed (two spaces), `null`
 * when they are absent, null or empty.
 * @example argumentsText([{ name: 'url', type: 'string' }]) // '[\n  {\n    "name": "url", …'
 */
export function argumentsText(advertised: unknown): string {
  return isEmpty(advertised) ? 'null' : JSON.stringify(advertised, null, 2);
}

/**
 * The arguments text read back: the JSON value to send (null for an empty text), or what to fix, in words for the
 * field's message: not JSON (with the parser's reason), or more than MAX_COMMAND_JSON_BYTES bytes once serialized
 * without white space (what the service measures).
 */
export function parseArguments(text: string): { value: unknown } | { error: string } {
  if (text.trim() === '') return { value: null };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { error: `The arguments are not valid JSON (${(error as Error).message}). Write null for none.` };
  }
  const size = new TextEncoder().encode(JSON.stringify(value)).length;
  if (size > MAX_COMMAND_JSON_BYTES) {
    return { error: `The arguments are ${count(size)} bytes of JSON; a command takes at most ${count(MAX_COMMAND_JSON_BYTES)}.` };
  }
  return { value };
}

/** One choice of the form's expiry: seconds until a command not final becomes EXPIRED, and its words. */
export interface ExpiryChoice {
  seconds: number;
  label: string;
}

/** The form's expiry choices, shortest first; the service's default (an hour) among them. */
export const EXPIRY_CHOICES: readonly ExpiryChoice[] = [
  { seconds: 600, label: '10 minutes' },
  { seconds: 3_600, label: '1 hour' },
  { seconds: 86_400, label: '1 day' },
  { seconds: 604_800, label: '7 days' },
];

/** The expiry chosen when the form opens: the service's default. */
export const DEFAULT_EXPIRY_SECONDS = DEFAULT_COMMAND_EXPIRY_SECONDS;
