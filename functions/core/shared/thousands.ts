/**
 * A whole number written as `toLocaleString('en-US')` writes it (`4,194,304`), without Intl: the first
 * `toLocaleString` of a process loads ICU's number formatting (~12 ms measured), and the contract builds such texts at
 * module load, so every function paid for it at cold start.
 * @param value a safe integer; anything else (and -0) is left to `toLocaleString('en-US')`.
 */
export function withThousandsSeparators(value: number): string {
  if (!Number.isSafeInteger(value) || Object.is(value, -0)) return value.toLocaleString('en-US');
  const digits = String(Math.abs(value)).replace(/\B(?=(\d{3})+$)/g, ',');
  return value < 0 ? `-${digits}` : digits;
}
