import { describe, expect, it } from 'vitest';
import { compareSemanticVersions, highestVersion } from '../../../functions/core/scenarios/manifest.js';

describe('semantic version precedence', () => {
  it('orders versions as SemVer 2.0.0 §11 does', () => {
    const ordered = [
      '0.9.0',
      '1.0.0-alpha',
      '1.0.0-alpha.1',
      '1.0.0-alpha.beta',
      '1.0.0-beta',
      '1.0.0-beta.2',
      '1.0.0-beta.11',
      '1.0.0-rc.1',
      '1.0.0',
      '1.2.0',
      '1.10.0',
    ];
    const shuffled = [...ordered].reverse();
    expect(shuffled.sort(compareSemanticVersions)).toEqual(ordered);
  });

  it('ignores build metadata and compares numerically, not as text', () => {
    expect(compareSemanticVersions('1.0.0+build.7', '1.0.0+build.1')).toBe(0);
    expect(compareSemanticVersions('1.10.0', '1.9.9')).toBeGreaterThan(0);
  });

  it('picks the highest version, not the last uploaded', () => {
    expect(highestVersion(['1.0.0', '1.1.0', '0.9.0'])).toBe('1.1.0');
    expect(highestVersion(['2.0.0-rc.1', '1.9.0'])).toBe('2.0.0-rc.1');
    expect(highestVersion([])).toBeUndefined();
  });
});
