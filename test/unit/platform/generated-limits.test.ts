import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { generatedClientLimits } from '../../../client/generate-limits.js';
import * as limits from '../../../client/limits.js';
import { MAX_IDEMPOTENCY_KEY_LENGTH } from '../../../functions/contract/protocol.js';
import { MAX_DEPLOYMENT_ENTRIES } from '../../../functions/core/deployments/deployments.js';
import { MAX_RESULT_WINDOW } from '../../../functions/core/search/query.js';
import { USERNAME_PATTERN } from '../../../functions/core/users/admin.js';

describe('the client limits in the repository', () => {
  it('are what `npm run generate` makes from the constants the service enforces', async () => {
    const committed = await readFile(new URL('../../../client/limits.ts', import.meta.url), 'utf8');
    expect(committed === generatedClientLimits() ? 'current' : 'stale: run npm run generate').toBe('current');
  });

  it('hold the values the service enforces, and patterns an input accepts and refuses as the service does', () => {
    expect(limits.MAX_DEPLOYMENT_ENTRIES).toBe(MAX_DEPLOYMENT_ENTRIES);
    expect(limits.MAX_IDEMPOTENCY_KEY_LENGTH).toBe(MAX_IDEMPOTENCY_KEY_LENGTH);
    expect(limits.SEARCH_RESULT_WINDOW).toBe(MAX_RESULT_WINDOW);
    expect(limits.MAX_DEPLOYMENT_NOTE_LENGTH).toBe(2_000);
    expect(limits.IDEMPOTENCY_KEY_RETENTION_SECONDS).toBe(24 * 60 * 60);
    // An input's pattern is compiled with the v flag and anchored whole, as a browser does.
    const username = new RegExp(`^(?:${limits.USERNAME_HTML_PATTERN})$`, 'v');
    for (const candidate of ['alice', 'a.b_c@d-e', '-alice', 'ali ce', 'x'.repeat(129)]) {
      expect(username.test(candidate)).toBe(USERNAME_PATTERN.test(candidate));
    }
    const companyId = new RegExp(`^(?:${limits.NEW_COMPANY_ID_HTML_PATTERN})$`, 'v');
    expect(['acme', 'acme-2.eu', 'ACME', '-acme'].map((candidate) => companyId.test(candidate))).toEqual([true, true, false, false]);
  });
});
