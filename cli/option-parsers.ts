/** Parsers of option values (commander's `argParser`): a bad value is a commander error, so bad usage (exit 2). */
import { InvalidArgumentError } from 'commander';

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
