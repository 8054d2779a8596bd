/**
 * Parsers of command-line values shared by several commands (commander's `argParser`: a bad value is a commander
 * error, so bad usage, exit 2): bounded integers, numbers, repeatable options, `name=value` filters.
 */
import { InvalidArgumentError } from 'commander';
import { UsageError } from './output.js';

/**
 * A commander option parser accepting an integer from `min` to `max`; anything else is a commander error (exit 2)
 * naming the option and the range.
 */
export function integerArgument(min: number, max: number): (value: string) => number {
  return (value: string) => {
    if (!/^[0-9]+$/.test(value) || Number(value) < min || Number(value) > max) {
      throw new InvalidArgumentError(`expected an integer from ${min} to ${max}.`);
    }
    return Number(value);
  };
}

/** A commander option parser that collects every occurrence of a repeatable option. */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/**
 * Turns `name=value` arguments into query parameters: a name given several times gets every value, in order
 * (`connection.state=CONNECTED connection.state=UNKNOWN` → `{ 'connection.state': ['CONNECTED', 'UNKNOWN'] }`).
 * Names are not checked here: the service refuses unknown ones, naming the allowed ones.
 * @throws UsageError when an argument has no `=` or an empty name or value
 */
export function filterArguments(pairs: readonly string[]): Record<string, string[]> {
  const filters: Record<string, string[]> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    const name = at < 0 ? '' : pair.slice(0, at).trim();
    const value = at < 0 ? '' : pair.slice(at + 1).trim();
    if (name === '' || value === '') {
      throw new UsageError(`'${pair}': give filters as FIELD=VALUE, e.g. connection.state=CONNECTED (see \`dss filters\`).`);
    }
    filters[name] = [...(filters[name] ?? []), value];
  }
  return filters;
}

/** A number above 0 (`--wait-timeout 1.5`). */
export function positiveNumber(value: string): number {
  const number = Number(value);
  if (value.trim() === '' || !Number.isFinite(number) || number <= 0) throw new InvalidArgumentError('must be a number above 0.');
  return number;
}

/** An integer of 1 or more (`--limit 50`). */
export function positiveInteger(value: string): number {
  const number = Number(value);
  if (value.trim() === '' || !Number.isSafeInteger(number) || number <= 0)
    throw new InvalidArgumentError('must be an integer of 1 or more.');
  return number;
}

/** Any finite number (`--latitude -33.9`). */
export function finiteNumber(value: string): number {
  const number = Number(value);
  if (value.trim() === '' || !Number.isFinite(number)) throw new InvalidArgumentError('must be a number.');
  return number;
}
