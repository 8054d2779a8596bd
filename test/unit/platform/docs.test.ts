/**
 * What the documentation must keep true that no other test would notice: the README stays a front door, every link
 * between the README and the pages of docs/ leads to a file and a heading that exist, every section the code and its
 * comments point readers to exists, and the configuration page names every environment variable the service reads,
 * quoting a real error.
 * What the walkthrough's commands answer is checked by test/e2e/docs-walkthrough.test.ts, against the service.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { KNOWN_VARIABLES, readEnvironment } from '../../../functions/contract/environment.js';

const root = resolve(import.meta.dirname, '../../..');
const documents = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];
const read = (path: string) => readFileSync(join(root, path), 'utf8');

/** Markdown outside fenced code blocks, where links and headings are. */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```$/gm, '');
}

/** The anchors GitHub gives a document's headings: lower case, punctuation dropped, spaces as dashes, repeats numbered. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const [, heading] of prose(text).matchAll(/^#{1,6} +(.+?) *$/gm)) {
    const slug = heading!
      .toLowerCase()
      .replace(/[`*_[\]]|\]\([^)]*\)/g, '')
      .replace(/[^\p{L}\p{N} -]/gu, '')
      .replaceAll(' ', '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    result.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return result;
}

/** The headings' texts of a document, as code comments quote them ("Section name"). */
function headings(text: string): Set<string> {
  return new Set([...prose(text).matchAll(/^#{1,6} +(.+?) *$/gm)].map(([, heading]) => heading!));
}

/** Files of the repository, outside node_modules and dot folders, whose names end with one of `extensions`. */
function sources(directory: string, extensions: string[]): string[] {
  return readdirSync(join(root, directory), { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' || entry.name.startsWith('.') ? [] : sources(path, extensions);
    return extensions.some((extension) => entry.name.endsWith(extension)) ? [path] : [];
  });
}

describe('documentation', () => {
  it('keeps the README a front door, at most 250 lines, the rest in docs/', () => {
    expect(read('README.md').split('\n').length).toBeLessThanOrEqual(250);
  });

  it('links only to files and headings that exist', () => {
    const broken: string[] = [];
    for (const document of documents) {
      for (const [, target] of prose(read(document)).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue;
        const [file, anchor] = target!.split('#') as [string, string | undefined];
        const path = file === '' ? document : relative(root, resolve(root, dirname(document), file));
        if (!existsSync(join(root, path))) {
          broken.push(`${document}: ${target} (no file ${path})`);
        } else if (anchor !== undefined && path.endsWith('.md') && !anchors(read(path)).has(anchor)) {
          broken.push(`${document}: ${target} (no heading #${anchor} in ${path})`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it('has every section the code points readers to (docs/<page>.md, "Section")', () => {
    const missing: string[] = [];
    for (const source of ['functions', 'lib', 'cli', 'client', 'bin', 'simulator'].flatMap((directory) =>
      sources(directory, ['.ts', '.mjs']),
    )) {
      for (const [reference, page, section] of read(source).matchAll(/(docs\/[a-z-]+\.md),?\s*\(?"([^"]+)"/g)) {
        if (!existsSync(join(root, page!))) missing.push(`${source}: ${reference} (no file)`);
        else if (!headings(read(page!)).has(section!)) missing.push(`${source}: ${reference} (no heading)`);
      }
      for (const [reference] of read(source).matchAll(/\bREADME\b[^.\n]*"[^"\n]+"/g))
        missing.push(`${source}: ${reference} (the README no longer holds sections)`);
    }
    expect(missing).toEqual([]);
  });

  it('names every environment variable the schema declares on the configuration page, and quotes a real error', () => {
    const page = read('docs/configuration.md');
    expect([...KNOWN_VARIABLES].filter((name) => !page.includes(`\`${name}\``))).toEqual([]);
    let message = '';
    try {
      readEnvironment('uploads', { UPLOAD_SLOT_TTL_SECONDS: '0' });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/UPLOAD_SLOT_TTL_SECONDS/);
    expect(page).toContain(`\`${message}\``);
  });
});
