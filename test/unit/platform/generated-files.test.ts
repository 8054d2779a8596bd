import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { generatedClientTypes } from '../../../client/generate.js';

describe('the typed client types in the repository', () => {
  it('are what `npm run generate` makes from the current route definitions', async () => {
    const committed = await readFile(new URL('../../../client/api-types.ts', import.meta.url), 'utf8');
    const fresh = await generatedClientTypes();
    // toBe on the whole file would print 3,000 lines on failure: the first differing line says what to regenerate.
    const committedLines = committed.split('\n');
    const freshLines = fresh.split('\n');
    const firstDifference = freshLines.findIndex((line, index) => line !== committedLines[index]);
    expect(
      firstDifference === -1 && committedLines.length === freshLines.length
        ? 'current'
        : `stale from line ${firstDifference + 1}: run npm run generate`,
    ).toBe('current');
    expect(fresh).toContain('"/companies/{companyId}/resources/deployments": {');
  });
});
