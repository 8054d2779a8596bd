/**
 * The full-text index's term dictionary: each indexed term has a numeric id; terms are found exactly (a Map), by
 * prefix (binary search in a sorted array of the terms) and within an edit distance (MiniSearch's radix tree, holding
 * only the terms some fuzzy query term can reach).
 *
 * Why not one radix tree of every term, as MiniSearch keeps: at 100,000 devices the index holds ~320,000 terms, most of
 * them serials, ids and numbers that occur once, and the tree costs ~77 MiB of nodes for them; the sorted array costs
 * a pointer per term. Fuzzy matching is only tried for query terms without digits (see `fuzziness`), and a term with
 * k digits is at least k edits from such a term, so terms like `acm-800001` can never be a fuzzy match: the tree
 * holds the ~200 that can.
 */
import SearchableMap from 'minisearch/SearchableMap';

/** Fuzzy matching as MiniSearch's `fuzzy` option does it for the index: the edit distance allowed for a query term. */
export interface FuzzyRule {
  /** Query terms of at least this length (UTF-16 code units) are matched fuzzily, if they have no digit. */
  minLength: number;
  /** The allowed distance is round(length × fraction), at most `maxDistance`. */
  fraction: number;
  maxDistance: number;
}

/** Digits (Unicode `N`): a query term with one is never matched fuzzily. */
const DIGIT = /\p{N}/gu;

/**
 * Whether some query term that `rule` matches fuzzily (no digit, at least `minLength` long) can be within its allowed
 * distance of `term`: the distance is at least the length difference and at least the number of `term`'s digits
 * (each must be deleted or replaced).
 */
export function fuzzyReachable(term: string, rule: FuzzyRule): boolean {
  const digits = digitCount(term);
  for (let length = rule.minLength; length <= term.length + rule.maxDistance; length += 1) {
    const allowed = Math.min(rule.maxDistance, Math.round(length * rule.fraction));
    if (allowed > 0 && digits <= allowed && Math.abs(term.length - length) <= allowed) return true;
  }
  return false;
}

/** How many of `term`'s characters are digits (Unicode `N`); ASCII terms, nearly all of them, without a RegExp. */
function digitCount(term: string): number {
  let digits = 0;
  for (let index = 0; index < term.length; index += 1) {
    const code = term.charCodeAt(index);
    if (code >= 0x80) return term.match(DIGIT)?.length ?? 0;
    if (code >= 0x30 && code <= 0x39) digits += 1;
  }
  return digits;
}

/** Terms added since the sorted array was last merged, scanned by prefix lookups until there are more than this. */
const RECENT_LIMIT = 256;

/**
 * Term → id, with prefix and fuzzy lookups. Ids of deleted terms are given to new terms. Lookups see every term added
 * and none deleted.
 */
export class TermDictionary {
  private readonly ids = new Map<string, number>();
  private readonly freeIds: number[] = [];
  private nextId = 0;
  /** Terms in code unit order; may still hold deleted terms (skipped by lookups, dropped at the next merge). */
  private sorted: string[] = [];
  /** Terms added since the last merge, unsorted. */
  private recent: string[] = [];
  private deletedSinceMerge = 0;
  /** The terms fuzzyReachable admits, with their ids. */
  private readonly fuzzyTerms = new SearchableMap<number>();

  /** `rule`: the fuzzy matching the index's queries use (decides which terms the radix tree holds). */
  constructor(private readonly rule: FuzzyRule) {}

  /**
   * A dictionary of `terms` (each once, in code unit order), term n with id n.
   * @throws RangeError when the terms are not in strictly increasing code unit order.
   */
  static ofSorted(terms: string[], rule: FuzzyRule): TermDictionary {
    const dictionary = new TermDictionary(rule);
    terms.forEach((term, id) => {
      if (id > 0 && !((terms[id - 1] as string) < term)) throw new RangeError('The terms are not in order.');
      dictionary.ids.set(term, id);
      if (fuzzyReachable(term, rule)) dictionary.fuzzyTerms.set(term, id);
    });
    dictionary.sorted = terms;
    dictionary.nextId = terms.length;
    return dictionary;
  }

  /** Every term in code unit order, with its id. */
  *entries(): Generator<[term: string, id: number]> {
    if (this.recent.length > 0 || this.deletedSinceMerge > 0) this.merge();
    for (const term of this.sorted) yield [term, this.ids.get(term) as number];
  }

  /** Number of terms. */
  get size(): number {
    return this.ids.size;
  }

  /** The id of `term`, or undefined when it is not in the dictionary. */
  idOf(term: string): number | undefined {
    return this.ids.get(term);
  }

  /** Adds `term` (not in the dictionary) and returns its new id. */
  add(term: string): number {
    const id = this.freeIds.pop() ?? this.nextId++;
    this.ids.set(term, id);
    this.recent.push(term);
    if (fuzzyReachable(term, this.rule)) this.fuzzyTerms.set(term, id);
    return id;
  }

  /** Deletes `term` (in the dictionary); its id may be given to a later term. */
  delete(term: string): void {
    const id = this.ids.get(term);
    if (id === undefined) return;
    this.ids.delete(term);
    this.freeIds.push(id);
    this.fuzzyTerms.delete(term);
    this.deletedSinceMerge += 1;
  }

  /** Every term that starts with `prefix` (`prefix` itself included when it is a term), each once. */
  withPrefix(prefix: string): string[] {
    if (this.recent.length > RECENT_LIMIT || this.deletedSinceMerge > this.sorted.length / 4) this.merge();
    const found = new Set<string>();
    let low = 0;
    let high = this.sorted.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((this.sorted[middle] as string) < prefix) low = middle + 1;
      else high = middle;
    }
    for (let index = low; index < this.sorted.length; index += 1) {
      const term = this.sorted[index] as string;
      if (!term.startsWith(prefix)) break;
      if (this.ids.has(term)) found.add(term);
    }
    for (const term of this.recent) if (term.startsWith(prefix) && this.ids.has(term)) found.add(term);
    return [...found];
  }

  /** Terms within `maxDistance` edits of `term` (MiniSearch's fuzzyGet), with their distances. */
  fuzzy(term: string, maxDistance: number): Map<string, number> {
    const found = new Map<string, number>();
    for (const [match, [, distance]] of this.fuzzyTerms.fuzzyGet(term, maxDistance)) found.set(match, distance);
    return found;
  }

  /** Sorts the recent terms into the sorted array and drops the deleted ones (and the duplicates of re-added ones). */
  private merge(): void {
    const recent = this.recent.sort();
    const merged: string[] = [];
    let left = 0;
    let right = 0;
    const keep = (term: string) => {
      if (this.ids.has(term) && merged[merged.length - 1] !== term) merged.push(term);
    };
    while (left < this.sorted.length || right < recent.length) {
      const a = this.sorted[left];
      const b = recent[right];
      if (b === undefined || (a !== undefined && a <= b)) {
        keep(a as string);
        left += 1;
      } else {
        keep(b);
        right += 1;
      }
    }
    this.sorted = merged;
    this.recent = [];
    this.deletedSinceMerge = 0;
  }
}
