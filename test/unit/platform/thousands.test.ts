import { describe, expect, it } from 'vitest';
import { withThousandsSeparators } from '../../../functions/core/shared/thousands.js';

describe('withThousandsSeparators', () => {
  it("writes whole numbers as toLocaleString('en-US') does", () => {
    const values = [0, -0, 1, 12, 123, 999, 1_000, 4_096, 65_535, 100_000, 999_999, 1_000_000, 4_194_304, -1_234_567];
    values.push(Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 1.5, 1_234.567, Number.NaN, Number.POSITIVE_INFINITY, 1e21);
    for (const value of values) expect(withThousandsSeparators(value)).toBe(value.toLocaleString('en-US'));
  });
});
