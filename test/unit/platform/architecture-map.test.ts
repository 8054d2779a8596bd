/**
 * The maintainer's map stays true: docs/architecture.md names every core area, every module of the composition root
 * and every test folder, and nothing that is gone. Adding an area, a composition module or a test folder without a
 * line in the map fails here, naming what is missing or stale.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const MAP = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8');

/** The map's table row about `path` (the line that starts with "| `path` |"). */
function rowOf(path: string): string {
  const row = MAP.split('\n').find((line) => line.startsWith(`| \`${path}\` |`));
  if (row === undefined) throw new Error(`docs/architecture.md has no table row for \`${path}\``);
  return row;
}

/** The text of `row` from `from` to `to` (or its end). */
function between(row: string, from: string, to?: string): string {
  const start = row.indexOf(from);
  if (start < 0) throw new Error(`the row has no "${from}"`);
  const end = to === undefined ? row.length : row.indexOf(to, start);
  return row.slice(start, end < 0 ? row.length : end);
}

/** Names written as `` `name` ( `` in `text`: the entries of a list that describes each one in parentheses. */
const describedNames = (text: string, suffix = '') =>
  [...text.matchAll(new RegExp(`\`([\\w-]+${suffix.replace('.', '\\.')})\` \\(`, 'g'))].map((match) => match[1] as string).sort();

const folders = (path: string) =>
  readdirSync(join(ROOT, path), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();

const modules = (path: string) =>
  readdirSync(join(ROOT, path))
    .filter((name) => name.endsWith('.ts'))
    .sort();

describe('docs/architecture.md, the map of the code', () => {
  it('names every area of functions/core, and no other', () => {
    const areas = describedNames(between(rowOf('functions/core/<area>/'), 'by area:', 'Each area holds'));
    expect(areas).toEqual(folders('functions/core'));
  });

  it('names every module of the composition root (functions/platform/composition), and no other', () => {
    const named = describedNames(between(rowOf('functions/platform/'), 'Its modules are split'), '.ts');
    expect(named).toEqual(modules('functions/platform/composition'));
  });

  it('names every test folder and every area of test/unit, and no other', () => {
    const row = rowOf('test/');
    const unitAreas = [...(between(row, '`unit/<area>/` (', ')').matchAll(/`([\w-]+)`/g) ?? [])].map((match) => match[1]).sort();
    expect(unitAreas).toEqual(folders('test/unit'));
    const topLevel = [...row.slice('| `test/` |'.length).matchAll(/`([\w-]+)\/(?:<area>\/)?`/g)].map((match) => match[1]).sort();
    expect(topLevel).toEqual(folders('test'));
  });
});
