/**
 * The embedded engine's full-text structures: the term dictionary leaves out of its radix tree only terms no fuzzy
 * query can reach (checked against a brute-force edit distance), its prefix lookups see every term added and none
 * deleted, and the packed postings keep exact occurrence counts, however large, through writes.
 */
import { describe, expect, it } from 'vitest';
import { FullTextIndex } from '../../../functions/adapters/embedded/full-text-index.js';
import { PostingLists } from '../../../functions/adapters/embedded/posting-lists.js';
import { fuzzyReachable, TermDictionary } from '../../../functions/adapters/embedded/term-dictionary.js';
import type { SearchDocument } from '../../../functions/core/search/documents.js';

const RULE = { minLength: 4, fraction: 0.2, maxDistance: 6 };

/** Levenshtein distance over UTF-16 code units, as MiniSearch's fuzzy matching counts it. */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      current[j] = Math.min(
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
        (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[b.length] as number;
}

const allowed = (query: string) =>
  query.length < RULE.minLength || /\p{N}/u.test(query) ? 0 : Math.min(RULE.maxDistance, Math.round(query.length * RULE.fraction));

describe('the full-text term dictionary', () => {
  it('keeps every term some fuzzy query term can reach, and leaves out serials and ids', () => {
    const queries = [
      'lyon',
      'paris',
      'amsterdam',
      'printer',
      'scanners',
      'receiptprinter',
      'internationalization',
      'abcdefghijklmnopqrstuvwxyzabcdef',
    ];
    const terms = [
      'lyo1',
      'paris2',
      'amsterdam9',
      'printer12',
      'v1',
      '2',
      'acm-800001',
      '846784',
      'acme-bench-000001',
      'international',
      'abcdefghijklmnopqrstuvwxyz123456',
      'p1nter',
    ];
    for (const term of terms) {
      const reached = queries.some((query) => allowed(query) > 0 && distance(query, term) <= allowed(query));
      // Reachable by one of these queries implies kept; kept but not reached here is allowed (another query may).
      if (reached) expect(fuzzyReachable(term, RULE), term).toBe(true);
    }
    expect(fuzzyReachable('acm-800001', RULE)).toBe(false);
    expect(fuzzyReachable('846784', RULE)).toBe(false);
    expect(fuzzyReachable('acme-bench-000001', RULE)).toBe(false);
    expect(fuzzyReachable('lyon', RULE)).toBe(true);
  });

  it('never leaves out a term within the allowed distance of a query term (exhaustive over short words)', () => {
    const letters = ['a', 'b', '1'];
    const words: string[] = [''];
    for (let length = 1; length <= 6; length += 1)
      for (const word of words.filter((w) => w.length === length - 1)) for (const letter of letters) words.push(word + letter);
    const queries = words.filter((word) => allowed(word) > 0);
    for (const term of words.filter((word) => word !== '')) {
      const reached = queries.some((query) => distance(query, term) <= allowed(query));
      if (reached) expect(fuzzyReachable(term, RULE), term).toBe(true);
    }
  });

  it('finds terms by prefix and fuzzily as they are added and deleted', () => {
    const dictionary = new TermDictionary(RULE);
    for (let index = 0; index < 1_000; index += 1) dictionary.add(`acm-${String(index).padStart(6, '0')}`);
    dictionary.add('printer');
    dictionary.add('printers');
    expect(dictionary.withPrefix('acm-00000').sort()).toEqual(Array.from({ length: 10 }, (_, index) => `acm-00000${index}`));
    dictionary.delete('acm-000003');
    dictionary.add('acm-0000999');
    expect(dictionary.withPrefix('acm-00000').sort()).toEqual(
      ['acm-000000', 'acm-000001', 'acm-000002', 'acm-000004', 'acm-000005', 'acm-000006', 'acm-000007', 'acm-000008', 'acm-000009'].sort(),
    );
    expect(dictionary.withPrefix('acm-000099').sort()).toEqual(['acm-000099', 'acm-0000999']);
    expect([...dictionary.fuzzy('printr', 1).keys()].sort()).toEqual(['printer']);
    dictionary.delete('printer');
    expect([...dictionary.fuzzy('printr', 1).keys()]).toEqual([]);
    expect(dictionary.withPrefix('print')).toEqual(['printers']);
  });
});

describe('the packed postings', () => {
  it('keep exact counts above what a posting holds itself, and drop them with the posting', () => {
    const postings = new PostingLists();
    postings.add(0, 5, 2, 200);
    postings.add(0, 3, 1, 1);
    postings.add(0, 5, 0, 63);
    const seen: [number, number, number][] = [];
    postings.forEach(0, (slot, field, count) => seen.push([slot, field, count]));
    expect(seen).toEqual([
      [3, 1, 1],
      [5, 0, 63],
      [5, 2, 200],
    ]);
    expect(postings.remove(0, 5, 2)).toBe(2);
    expect(postings.remove(0, 5, 2)).toBe(2);
    postings.add(0, 5, 2, 1);
    const after: number[] = [];
    postings.forEach(0, (_slot, _field, count) => after.push(count));
    expect(after).toEqual([1, 63, 1]);
  });

  it('score a word repeated more often than a posting holds above a document that has it less', () => {
    const index = new FullTextIndex(64);
    const document = (id: string, description: string) =>
      ({ type: 'DEVICE', company: 'acme', id, description }) as unknown as SearchDocument;
    index.add(0, document('d-0', `${'beacon '.repeat(100)}filler`));
    index.add(1, document('d-1', `${'beacon '.repeat(70)}filler`));
    const { slots, scores } = index.search('beacon', new Uint32Array(2).fill(0xffffffff));
    expect(slots.sort()).toEqual([0, 1]);
    expect(scores[0]).toBeGreaterThan(scores[1] as number);
  });
});
