/**
 * The composition root's boundaries, read from the sources: handlers import no adapter, the contract imports nothing
 * of the platform, and adapters are constructed only in functions/platform/composition/.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../../..');

/** Every `.ts` file under `directory` (relative to the repository root), recursively. */
function sources(directory: string): string[] {
  return readdirSync(join(root, directory), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)));
}

/** The module specifiers a file imports or re-exports (static and dynamic). */
function importsOf(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  return [...text.matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)].map((match) => match[1] as string);
}

describe('composition boundaries', () => {
  it('handlers import no adapter', () => {
    const offenders = sources('functions/handlers').flatMap((file) =>
      importsOf(file)
        .filter((specifier) => specifier.includes('/adapters/'))
        .map((specifier) => `${file} -> ${specifier}`),
    );
    expect(offenders).toEqual([]);
  });

  it('the contract imports nothing of the platform', () => {
    const offenders = sources('functions/contract').flatMap((file) =>
      importsOf(file)
        .filter((specifier) => specifier.includes('/platform/'))
        .map((specifier) => `${file} -> ${specifier}`),
    );
    expect(offenders).toEqual([]);
  });

  it('adapters are constructed only in functions/platform/composition/', () => {
    const adapterClasses = sources('functions/adapters').flatMap((file) =>
      [...readFileSync(join(root, file), 'utf8').matchAll(/export class (\w+)/g)].map((match) => match[1] as string),
    );
    expect(adapterClasses.length).toBeGreaterThan(10);
    const constructing = new RegExp(`new (${adapterClasses.join('|')})\\b`);
    const offenders = [...sources('functions/handlers'), ...sources('functions/platform')]
      .filter((file) => !file.startsWith('functions/platform/composition/'))
      .filter((file) => constructing.test(readFileSync(join(root, file), 'utf8')));
    expect(offenders).toEqual([]);
  });
});
