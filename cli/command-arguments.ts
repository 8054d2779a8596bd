/**
 * Parsers of the values a command run takes on the command line (commander's `argParser`: a bad value is a commander
 * error, so bad usage, exit 2): how long until it expires (`--expires-in 10m`) and its JSON arguments.
 */
import { InvalidArgumentError } from 'commander';
import { MAX_COMMAND_EXPIRY_SECONDS, MIN_COMMAND_EXPIRY_SECONDS } from '../client/limits.js';

/** Seconds in one unit of a duration: `s`, `m`, `h`, `d`. */
const UNIT_SECONDS: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3_600, d: 86_400 };

/**
 * A duration as seconds: a whole number of seconds (`600`) or of one unit (`90s`, `10m`, `2h`, `7d`).
 * @returns seconds, or undefined when `text` is not such a duration
 */
export function durationSeconds(text: string): number | undefined {
  const match = /^\s*(\d{1,9})\s*([smhd]?)\s*$/i.exec(text);
  if (match === null) return undefined;
  return Number(match[1]) * (UNIT_SECONDS[(match[2] ?? '').toLowerCase()] ?? 1);
}

/**
 * `--expires-in`: a duration (durationSeconds) from MIN_COMMAND_EXPIRY_SECONDS (10 s) to MAX_COMMAND_EXPIRY_SECONDS
 * (7 days), as seconds.
 * @throws InvalidArgumentError naming the accepted forms and the bounds (commander reports it as bad usage, exit 2)
 */
export function expiresInArgument(text: string): number {
  const seconds = durationSeconds(text);
  if (seconds === undefined || seconds < MIN_COMMAND_EXPIRY_SECONDS || seconds > MAX_COMMAND_EXPIRY_SECONDS) {
    throw new InvalidArgumentError(
      `give a duration from ${MIN_COMMAND_EXPIRY_SECONDS} s to ${MAX_COMMAND_EXPIRY_SECONDS / 86_400} days (${MAX_COMMAND_EXPIRY_SECONDS} s): seconds, or a whole number with s, m, h or d (90s, 10m, 2h, 7d).`,
    );
  }
  return seconds;
}

/**
 * `--arguments`: a JSON text, parsed (any JSON value: an object, an array, a string, a number…).
 * @throws InvalidArgumentError when it is not valid JSON, with the parser's reason and an example
 */
export function jsonArgument(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new InvalidArgumentError(`not valid JSON (${(error as Error).message}); e.g. '{"level": 80}' (quote it for the shell).`);
  }
}
