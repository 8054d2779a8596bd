/** Which `Accept-Encoding` values get the console's files gzip-compressed (RFC 9110 §12.5.3). */
import { describe, expect, it } from 'vitest';
import { acceptsGzip } from '../../../functions/platform/console.js';

describe('acceptsGzip', () => {
  it.each([
    ['gzip, deflate, br', true],
    ['br;q=1.0, gzip;q=0.8, *;q=0.1', true],
    ['GZIP', true],
    ['x-gzip', true],
    ['gzip;q=0', false],
    ['gzip; q=0.0', false],
    ['deflate, br', false],
    ['identity', false],
    ['', false],
    [undefined, false],
  ])('%s → %s', (value, expected) => {
    expect(acceptsGzip(value)).toBe(expected);
  });
});
