import { describe, expect, it } from 'vitest';
import { formatBytes } from '../../../cli/output.js';

describe('formatBytes', () => {
  it('shows bytes in the largest unit that keeps the value below 1024, as the quota table prints them', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(3_400)).toBe('3.3 KiB');
    expect(formatBytes(12 * 1024 * 1024)).toBe('12.0 MiB');
    // 1,073,738,454 bytes is 1023.997 MiB: "1024.0 MiB" would read as a bug.
    expect(formatBytes(1_073_738_454)).toBe('1.00 GiB');
    expect(formatBytes(5 * 1024 ** 3)).toBe('5.00 GiB');
  });
});
