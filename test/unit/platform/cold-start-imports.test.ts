/**
 * What function bundles evaluate at cold start, read from the sources: the regressions the cold-start benchmark
 * (test/bench/cold-start.ts) would only show as a few milliseconds.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../../..');

function sources(directory: string): string[] {
  return readdirSync(join(root, directory), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)));
}

describe('cold start', () => {
  it('the contract formats no number with Intl (its first use loads ICU, ~12 ms, and the contract formats at load)', () => {
    const offenders = sources('functions/contract').filter((file) => /toLocaleString|Intl\./.test(readFileSync(join(root, file), 'utf8')));
    expect(offenders).toEqual([]);
  });

  it('the search composition (imported by the search function) loads no DynamoDB client: the rebuild is search-rebuild.ts', () => {
    const text = readFileSync(join(root, 'functions/platform/composition/search.ts'), 'utf8');
    expect(text).not.toMatch(/adapters\/aws\/(clients|dynamodb-[\w-]+)\.js'|@aws-sdk\/(client|lib)-dynamodb/);
  });
});
