import { describe, expect, it } from 'vitest';
import { lintOpenApiDocument } from '../../../bin/lint-api.js';

describe('npm run lint:api', () => {
  it('finds no error in the generated OpenAPI document (Redocly, recommended ruleset)', () => {
    const { status, stdout, stderr } = lintOpenApiDocument('json');
    expect(stdout, stderr).not.toBe('');
    const report = JSON.parse(stdout) as { totals: { errors: number; warnings: number }; problems: unknown[] };
    expect(report.totals.errors, JSON.stringify(report.problems, null, 2)).toBe(0);
    expect(status).toBe(0);
  }, 60_000);
});
