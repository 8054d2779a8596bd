import { InvalidArgumentError } from 'commander';

/**
 * A commander option parser of whole numbers within [low, high], for the scripts' numeric options.
 * @throws InvalidArgumentError naming the bounds for anything else (commander prints it beside the option)
 */
export function wholeNumber(low: number, high: number): (value: string) => number {
  return (value) => {
    const number = Number(value);
    if (!Number.isInteger(number) || number < low || number > high) throw new InvalidArgumentError(`a whole number from ${low} to ${high}`);
    return number;
  };
}
