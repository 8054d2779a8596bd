/**
 * The embedded search engine: an in-memory implementation of the SearchIndex
 * port for the local runtime and the tests, with the semantics of the
 * OpenSearch adapter (company scoping, OR within a field and AND across fields,
 * `global` full text, sort with missing values last and the document-key
 * tie-breaker, facet counts).
 *
 * Layout, sized for ~100,000 documents:
 * - each document sits in an Entry with a numeric slot;
 * - every filter field (`type` and `company` included) has one bitset of slots
 *   per value, so filtering is word-wise OR/AND and counting is a popcount;
 * - every (sort field, direction) gets a presorted slot array, built on first
 *   use, patched on small writes and dropped on large ones, so a page of a
 *   large result is read by walking it instead of sorting the matches;
 * - `global` runs on FullTextIndex: MiniSearch's radix tree (SearchableMap) as
 *   the term dictionary, for its exact, prefix and fuzzy term matching, with
 *   per-field postings scored with MiniSearch's BM25+ (MiniSearch's own
 *   `search` costs ~2 µs per matching document, too slow for broad terms at 100k).
 */
import SearchableMap from 'minisearch/SearchableMap';
import { type DocumentKey, documentKeyString, documentMatches, type SearchDocument, valuesAtPath } from '../../core/search/documents.js';
import type { SearchIndex } from '../../core/search/ports.js';
import {
  type CountQuery,
  globalQueryTerms,
  type SearchQuery,
  type SearchResult,
  textWords,
  type ValueCounts,
} from '../../core/search/query.js';
import { FILTER_FIELDS, FULL_TEXT_FIELDS, SORT_FIELDS } from '../../core/search/registry.js';

/** Fields with bitset postings: every filter field. */
const INDEXED_FIELDS: readonly string[] = FILTER_FIELDS.map((field) => field.field);
const INDEXED_FIELD_POSITION = new Map(INDEXED_FIELDS.map((field, position) => [field, position]));
const COMPANY_POSITION = INDEXED_FIELD_POSITION.get('company') as number;
const SORT_FIELD_POSITION = new Map<string, number>(SORT_FIELDS.map((field, position) => [field, position]));
/** Label field of each `data` filter field that has one (health.versionCode → health.versionName). */
const LABEL_FIELDS = new Map<string, string>(
  FILTER_FIELDS.flatMap((field) =>
    field.values.kind === 'data' && field.values.labelField !== undefined ? [[field.field, field.values.labelField]] : [],
  ),
);

/** Up to this many matches a page is selected from the matches directly; above, from the presorted array. */
const DIRECT_SORT_LIMIT = 2_000;
/** Writes of more documents than this drop the presorted arrays (rebuilt on next use) instead of patching them. */
const INCREMENTAL_SORT_LIMIT = 128;
/** Adopted documents added to the full-text index per background slice (adopt). */
const TEXT_SLICE = 500;
/** MiniSearch's defaults: BM25+ parameters, weights of prefix and fuzzy matches, largest edit distance. */
const BM25 = { k: 1.2, b: 0.7, d: 0.5 };
const PREFIX_WEIGHT = 0.375;
const FUZZY_WEIGHT = 0.45;
const MAX_FUZZY = 6;

/**
 * Index-time tokenizer: MiniSearch's default split (whitespace and punctuation) and lower case, plus, for a word
 * with inner punctuation such as a serial `ACM-000123` or a version `v1.2`, the whole word with its parts joined
 * by `-`.
 */
function tokenizeText(text: string): string[] {
  const tokens: string[] = [];
  for (const parts of textWords(text)) {
    tokens.push(...parts);
    if (parts.length > 1) tokens.push(parts.join('-'));
  }
  return tokens;
}

/** No fuzziness for terms with digits (serials, versions: a near miss is another device); 0.2 from 4 letters. */
function fuzziness(term: string): number | false {
  return term.length >= 4 && !/\p{N}/u.test(term) ? 0.2 : false;
}

/** One term's postings: per FULL_TEXT_FIELDS position, slot → occurrences of the term in that field. */
type TermPostings = (Map<number, number> | undefined)[];

/**
 * Full-text index over FULL_TEXT_FIELDS (multi-values joined with spaces), documents identified by slot.
 * Matching follows MiniSearch (`combineWith: 'AND'`, `prefix: true`, `fuzzy: fuzziness`): a document matches when
 * each query term matches one of its terms exactly, as a prefix or within the edit distance. Scores are MiniSearch's
 * BM25+ per field, weighted 1 for exact, PREFIX_WEIGHT and FUZZY_WEIGHT (decreasing with distance) otherwise.
 */
class FullTextIndex {
  private readonly terms = new SearchableMap<TermPostings>();
  /** Per field: token count of the field, by slot. */
  private lengths: Uint32Array[];
  /** Per field: total tokens and number of documents having the field, for the average field length. */
  private readonly totalLength: number[] = FULL_TEXT_FIELDS.map(() => 0);
  private readonly documentsWithField: number[] = FULL_TEXT_FIELDS.map(() => 0);
  private documentCount = 0;

  constructor(capacity: number) {
    this.lengths = FULL_TEXT_FIELDS.map(() => new Uint32Array(capacity));
  }

  /** Makes room for `capacity` slots. */
  grow(capacity: number): void {
    this.lengths = this.lengths.map((lengths) => {
      const larger = new Uint32Array(capacity);
      larger.set(lengths);
      return larger;
    });
  }

  /** Indexes `document` under `slot` (the slot must not be indexed). */
  add(slot: number, document: SearchDocument): void {
    this.documentCount += 1;
    this.eachField(document, (field, tokens, counts) => {
      (this.lengths[field] as Uint32Array)[slot] = tokens;
      this.totalLength[field] = (this.totalLength[field] as number) + tokens;
      this.documentsWithField[field] = (this.documentsWithField[field] as number) + 1;
      for (const [term, count] of counts) {
        let postings = this.terms.get(term);
        if (postings === undefined) {
          postings = [];
          this.terms.set(term, postings);
        }
        (postings[field] ??= new Map()).set(slot, count);
      }
    });
  }

  /** Unindexes `document` from `slot` (the document given to `add`). */
  remove(slot: number, document: SearchDocument): void {
    this.documentCount -= 1;
    this.eachField(document, (field, tokens, counts) => {
      (this.lengths[field] as Uint32Array)[slot] = 0;
      this.totalLength[field] = (this.totalLength[field] as number) - tokens;
      this.documentsWithField[field] = (this.documentsWithField[field] as number) - 1;
      for (const term of counts.keys()) {
        const postings = this.terms.get(term);
        if (postings === undefined) continue;
        postings[field]?.delete(slot);
        if (postings[field]?.size === 0) postings[field] = undefined;
        if (postings.every((bySlot) => bySlot === undefined)) this.terms.delete(term);
      }
    });
  }

  /**
   * Slots in `scope` matching every term of `text`, with their scores (indexed by slot).
   * No terms (blank or punctuation only) matches nothing.
   */
  search(text: string, scope: Uint32Array): { slots: number[]; scores: Float64Array } {
    const queryTerms = globalQueryTerms(text);
    const scores = new Float64Array(scope.length * 32);
    /** How many query terms each slot has matched so far. */
    const matched = new Uint16Array(scope.length * 32);
    const candidates: number[] = [];
    queryTerms.forEach((queryTerm, index) => {
      for (const [term, weight] of this.expand(queryTerm)) {
        (this.terms.get(term) as TermPostings).forEach((bySlot, field) => {
          if (bySlot === undefined) return;
          const idf = Math.log(1 + (this.documentCount - bySlot.size + 0.5) / (bySlot.size + 0.5));
          const averageLength = (this.totalLength[field] as number) / Math.max(1, this.documentsWithField[field] as number);
          const lengths = this.lengths[field] as Uint32Array;
          bySlot.forEach((count, slot) => {
            const already = matched[slot] as number;
            if (already < index || (index === 0 && !hasSlot(scope, slot))) return;
            if (already === index) {
              matched[slot] = index + 1;
              if (index === 0) candidates.push(slot);
            }
            const norm = 1 - BM25.b + (BM25.b * (lengths[slot] as number)) / averageLength;
            scores[slot] = (scores[slot] as number) + weight * idf * (BM25.d + (count * (BM25.k + 1)) / (count + BM25.k * norm));
          });
        });
      }
    });
    return { slots: candidates.filter((slot) => matched[slot] === queryTerms.length), scores };
  }

  /** Indexed terms that `queryTerm` matches, with their weights: exact 1, prefix and fuzzy as in MiniSearch. */
  private expand(queryTerm: string): Map<string, number> {
    const weights = new Map<string, number>();
    if (this.terms.has(queryTerm)) weights.set(queryTerm, 1);
    for (const term of this.terms.atPrefix(queryTerm).keys()) {
      const distance = term.length - queryTerm.length;
      if (distance > 0) weights.set(term, (PREFIX_WEIGHT * term.length) / (term.length + 0.3 * distance));
    }
    const fuzzy = fuzziness(queryTerm);
    const maxDistance = fuzzy === false ? 0 : Math.min(MAX_FUZZY, Math.round(queryTerm.length * fuzzy));
    if (maxDistance > 0) {
      for (const [term, [, distance]] of this.terms.fuzzyGet(queryTerm, maxDistance)) {
        if (distance > 0 && !weights.has(term)) weights.set(term, (FUZZY_WEIGHT * term.length) / (term.length + distance));
      }
    }
    return weights;
  }

  /** Calls `visit` for each full-text field the document has: its token count and term → occurrences. */
  private eachField(document: SearchDocument, visit: (field: number, tokens: number, counts: Map<string, number>) => void): void {
    FULL_TEXT_FIELDS.forEach((path, field) => {
      const values = valuesAtPath(document, path);
      if (values.length === 0) return;
      const tokens = tokenizeText(values.join(' '));
      const counts = new Map<string, number>();
      for (const token of tokens) counts.set(token, (counts.get(token) ?? 0) + 1);
      visit(field, tokens.length, counts);
    });
  }
}

/** One stored document. */
interface Entry {
  /** Position in the bitsets and the full-text index. */
  slot: number;
  key: string;
  document: SearchDocument;
  /** First value at each SORT_FIELDS path as a string in codePointSortKey form; undefined when missing. */
  sortValues: (string | undefined)[];
}

/** Postings of one filter field: dictionary-encoded values, one bitset of slots per value. */
interface FieldIndex {
  codeOf: Map<string, number>;
  values: string[];
  bits: Uint32Array[];
}

function popcount(word: number): number {
  let x = word - ((word >>> 1) & 0x55555555);
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
}

/** Calls `visit` with every slot set in `bits`, ascending. */
function forEachSlot(bits: Uint32Array, visit: (slot: number) => void): void {
  for (let index = 0; index < bits.length; index += 1) {
    let word = bits[index] as number;
    while (word !== 0) {
      const lowest = word & -word;
      visit(index * 32 + 31 - Math.clz32(lowest));
      word ^= lowest;
    }
  }
}

function hasSlot(bits: Uint32Array, slot: number): boolean {
  return (((bits[slot >>> 5] as number) >>> (slot & 31)) & 1) === 1;
}

/** Code units that UTF-16 order and code point order place differently: surrogates and U+E000–U+FFFF. */
const ASTRAL_OR_HIGH_BMP = /[\uD800-\uFFFF]/;

/**
 * `text` rewritten so that comparing rewritten strings with `<` (UTF-16 code unit order) orders them as their code
 * points, which is UTF-8 byte order: the order of OpenSearch's keyword fields and of DynamoDB's string keys. Only
 * surrogates and U+E000–U+FFFF move (U+E000–U+FFFF down by 0x800, surrogates up by 0x2000), so that a character beyond
 * the Basic Multilingual Plane (an emoji) sorts after U+FFFD, not before U+E000. Sort keys only: never shown.
 */
export function codePointSortKey(text: string): string {
  if (!ASTRAL_OR_HIGH_BMP.test(text)) return text;
  let out = '';
  for (let index = 0; index < text.length; index += 1) {
    const unit = text.charCodeAt(index);
    out += String.fromCharCode(unit >= 0xe000 ? unit - 0x800 : unit >= 0xd800 ? unit + 0x2000 : unit);
  }
  return out;
}

function compareKeys(a: Entry, b: Entry): number {
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

/** Orders by the sort value at `position` (missing last in both directions), then by key ascending. */
function sortComparator(position: number, descending: boolean): (a: Entry, b: Entry) => number {
  const sign = descending ? -1 : 1;
  return (a, b) => {
    const va = a.sortValues[position];
    const vb = b.sortValues[position];
    if (va !== vb) {
      if (va === undefined) return 1;
      if (vb === undefined) return -1;
      return va < vb ? -sign : sign;
    }
    return compareKeys(a, b);
  };
}

/** The first `k` items of `items` in `compare` order, without sorting them all (bounded max-heap). */
function smallest<T>(items: readonly T[], k: number, compare: (a: T, b: T) => number): T[] {
  if (k <= 0) return [];
  if (items.length <= k * 4) return [...items].sort(compare).slice(0, k);
  const heap: T[] = [];
  const swap = (i: number, j: number): void => {
    const held = heap[i] as T;
    heap[i] = heap[j] as T;
    heap[j] = held;
  };
  for (const item of items) {
    if (heap.length < k) {
      heap.push(item);
      for (let index = heap.length - 1; index > 0; ) {
        const parent = (index - 1) >> 1;
        if (compare(heap[index] as T, heap[parent] as T) <= 0) break;
        swap(index, parent);
        index = parent;
      }
    } else if (compare(item, heap[0] as T) < 0) {
      heap[0] = item;
      for (let index = 0; ; ) {
        const left = 2 * index + 1;
        let largest = index;
        if (left < k && compare(heap[left] as T, heap[largest] as T) > 0) largest = left;
        if (left + 1 < k && compare(heap[left + 1] as T, heap[largest] as T) > 0) largest = left + 1;
        if (largest === index) break;
        swap(index, largest);
        index = largest;
      }
    }
  }
  return heap.sort(compare);
}

/** Freezes `value` and everything it holds (typed arrays, which cannot be frozen, excepted); returns it. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !ArrayBuffer.isView(value) && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/**
 * In-memory SearchIndex for the local runtime and the tests. Documents are copied and deeply frozen on the way
 * in and returned frozen, so callers cannot alter the index through them (a write to a result throws TypeError).
 * Work is synchronous; the promises only reject on bugs.
 *
 * Full text (`global`): every query word must match (AND), exactly, as a prefix or, for words of 4 or more
 * characters without digits, within 0.2 × length edits; relevance is BM25+. A word with inner punctuation (a
 * serial, a version) is matched as that whole compound, not as its separate parts (see `globalQueryTerms`).
 */
export class EmbeddedSearchIndex implements SearchIndex {
  private readonly byKey = new Map<string, Entry>();
  /** Entries by slot; undefined for free slots. */
  private readonly slots: (Entry | undefined)[] = [];
  private readonly freeSlots: number[] = [];
  /** Slots the bitsets can hold (a multiple of 32). */
  private capacity = 1024;
  private readonly fields: FieldIndex[] = INDEXED_FIELDS.map(() => ({ codeOf: new Map(), values: [], bits: [] }));
  /** Presorted slots per `position:direction` of a sort field. */
  private readonly sorted = new Map<string, number[]>();
  private readonly text = new FullTextIndex(this.capacity);
  /**
   * Slots adopted (adopt) but not yet in the full-text index, in adoption order: indexed in slices in the
   * background, and all at once by the first `global` search that finds some left.
   */
  private readonly textBacklog = new Set<number>();
  private textWorker: NodeJS.Immediate | undefined;

  /**
   * One page of results (`query.page` is 1-based; past the end, `resources` is empty) and the total number of
   * matching documents. Resources are the index's own deeply frozen documents: read-only, never copied (a copy of
   * a 20-device page cost ~1 ms, a third of the query).
   */
  async search(query: SearchQuery): Promise<SearchResult> {
    const start = (query.page - 1) * query.pageSize;
    const end = start + query.pageSize;
    let total: number;
    let page: Entry[];
    if (query.global !== undefined) {
      this.indexTextBacklog(Number.POSITIVE_INFINITY);
      const { slots, scores } = this.text.search(query.global, this.match(query.companies, undefined, new Map()));
      total = slots.length;
      if (start >= total) {
        page = [];
      } else if (query.sort.field === 'relevance') {
        const byScore = (a: number, b: number): number =>
          (scores[b] as number) - (scores[a] as number) || compareKeys(this.slots[a] as Entry, this.slots[b] as Entry);
        page = smallest(slots, end, byScore)
          .slice(start)
          .map((slot) => this.slots[slot] as Entry);
      } else {
        const matches = this.emptyBits();
        for (const slot of slots) matches[slot >>> 5] = (matches[slot >>> 5] as number) | (1 << (slot & 31));
        page = this.sortedPage(matches, total, query.sort.field, query.sort.direction === 'DESC', start, end);
      }
    } else {
      const matches = this.match(query.companies, undefined, query.filters);
      total = matches.reduce((sum, word) => sum + popcount(word), 0);
      if (start >= total) page = [];
      else if (query.sort.field === 'relevance') page = this.sortedPage(matches, total, 'id', false, start, end, true);
      else page = this.sortedPage(matches, total, query.sort.field, query.sort.direction === 'DESC', start, end);
    }
    return { total, resources: page.map((entry) => entry.document) };
  }

  /**
   * Per field of `query.fields`: each distinct value carried by the matching documents and how many carry it
   * (a document counts once per value), with a `label` for data fields that declare a label field.
   * A field without values maps to an empty Map; values are listed in ascending order.
   */
  async countValues(query: CountQuery): Promise<ValueCounts> {
    const matches = this.match(query.companies, query.type, query.filters);
    const result: ValueCounts = new Map();
    for (const field of query.fields) {
      const labelField = LABEL_FIELDS.get(field);
      /**
       * Value → count and, for a field with a label, the matching document with the smallest key carrying it: the
       * label's source, the same document on every engine (OpenSearch's top hit by `_key`), whatever the slot order.
       */
      const counted = new Map<string, { count: number; slot: number }>();
      const smallerKey = (slot: number, than: number) => ((this.slots[slot] as Entry).key < (this.slots[than] as Entry).key ? slot : than);
      const position = INDEXED_FIELD_POSITION.get(field);
      if (position !== undefined) {
        const index = this.fields[position] as FieldIndex;
        index.bits.forEach((bits, code) => {
          let count = 0;
          let first = -1;
          for (let word = 0; word < matches.length; word += 1) {
            const both = (matches[word] as number) & (bits[word] as number);
            if (both === 0) continue;
            count += popcount(both);
            if (labelField === undefined) {
              if (first < 0) first = word * 32 + 31 - Math.clz32(both & -both);
              continue;
            }
            for (let rest = both; rest !== 0; rest &= rest - 1) {
              const slot = word * 32 + 31 - Math.clz32(rest & -rest);
              first = first < 0 ? slot : smallerKey(slot, first);
            }
          }
          if (count > 0) counted.set(index.values[code] as string, { count, slot: first });
        });
      } else {
        forEachSlot(matches, (slot) => {
          for (const value of new Set(valuesAtPath((this.slots[slot] as Entry).document, field).map(String))) {
            const current = counted.get(value);
            if (current === undefined) counted.set(value, { count: 1, slot });
            else {
              current.count += 1;
              if (labelField !== undefined) current.slot = smallerKey(slot, current.slot);
            }
          }
        });
      }
      const values = new Map<string, { count: number; label?: string }>();
      for (const value of [...counted.keys()].sort()) {
        const { count, slot } = counted.get(value) as { count: number; slot: number };
        const label = labelField === undefined ? undefined : valuesAtPath((this.slots[slot] as Entry).document, labelField)[0];
        values.set(value, label === undefined ? { count } : { count, label: String(label) });
      }
      result.set(field, values);
    }
    return result;
  }

  /**
   * The ids of the matching device documents, sorted (code unit order, which is OpenSearch's keyword order for the
   * ASCII device ids), at most `max`, and the number of matches. The only allocations are the bitset of matches and
   * the id array. Sorting 100,000 ids takes tens of milliseconds; the presorted `id` array would save little of that
   * and cost half a second to build, again after each large write (which drops it).
   */
  async selectIds(query: { companies: string[]; filters: Map<string, string[]> }, max: number): Promise<{ ids: string[]; total: number }> {
    const matches = this.match(query.companies, 'DEVICE', query.filters);
    const ids: string[] = [];
    forEachSlot(matches, (slot) => {
      ids.push((this.slots[slot] as Entry).document.id);
    });
    const total = ids.length;
    ids.sort();
    if (ids.length > max) ids.length = Math.max(0, max);
    return { ids, total };
  }

  /** Inserts or replaces documents by (type, company, id); within one call the last duplicate wins. */
  async upsert(documents: SearchDocument[]): Promise<void> {
    const patchSorted = documents.length <= INCREMENTAL_SORT_LIMIT;
    if (!patchSorted) this.sorted.clear();
    for (const original of documents) {
      const document = deepFreeze(structuredClone(original));
      const key = documentKeyString(document);
      const previous = this.byKey.get(key);
      if (previous !== undefined) this.detach(previous, patchSorted);
      this.attach(key, document, patchSorted);
    }
  }

  /**
   * Takes `documents` over without copying them (they are frozen in place: the caller must not keep using them) and
   * inserts or replaces them by key, like upsert. Made for loading a snapshot: about 4x faster than upsert, because
   * the copy is skipped and the full-text index of these documents is built afterwards, in slices of
   * TEXT_SLICE documents between other work (each slice ~0.1 s at 100,000 documents), or at once by the first
   * `global` search that comes before it is done. Filters, counts and sorts see the documents at once.
   */
  adopt(documents: SearchDocument[]): void {
    this.sorted.clear();
    for (const document of documents) {
      deepFreeze(document);
      const key = documentKeyString(document);
      const previous = this.byKey.get(key);
      if (previous !== undefined) this.detach(previous, false);
      this.attach(key, document, false, true);
    }
    this.textWorker ??= setImmediate(() => this.indexTextInBackground());
  }

  /** Whether every document is in the full-text index (adopt defers it). */
  get textComplete(): boolean {
    return this.textBacklog.size === 0;
  }

  /** Every document held, in slot order: the index's own frozen objects (read-only, never copied). */
  documents(): SearchDocument[] {
    const documents: SearchDocument[] = [];
    for (const entry of this.slots) if (entry !== undefined) documents.push(entry.document);
    return documents;
  }

  /** One slice of the full-text backlog, then the next one after pending I/O, until none is left. */
  private indexTextInBackground(): void {
    this.indexTextBacklog(TEXT_SLICE);
    this.textWorker = this.textBacklog.size === 0 ? undefined : setImmediate(() => this.indexTextInBackground());
  }

  /** Adds up to `limit` backlog slots to the full-text index. */
  private indexTextBacklog(limit: number): void {
    let done = 0;
    for (const slot of this.textBacklog) {
      if (done >= limit) break;
      this.textBacklog.delete(slot);
      this.text.add(slot, (this.slots[slot] as Entry).document);
      done += 1;
    }
  }

  /** Removes documents by key; unknown keys are ignored. */
  async remove(keys: DocumentKey[]): Promise<void> {
    const patchSorted = keys.length <= INCREMENTAL_SORT_LIMIT;
    if (!patchSorted) this.sorted.clear();
    for (const key of keys) {
      const entry = this.byKey.get(documentKeyString(key));
      if (entry !== undefined) this.detach(entry, patchSorted);
    }
  }

  /**
   * Adds a document to every structure: map, slots, bitsets, presorted arrays (when patching), full text (or the
   * full-text backlog with `deferText`).
   */
  private attach(key: string, document: SearchDocument, patchSorted: boolean, deferText = false): void {
    const slot = this.freeSlots.pop() ?? this.slots.length;
    if (slot >= this.capacity) this.grow();
    const entry: Entry = {
      slot,
      key,
      document,
      sortValues: SORT_FIELDS.map((field) => {
        const first = valuesAtPath(document, field)[0];
        return first === undefined ? undefined : codePointSortKey(String(first));
      }),
    };
    this.slots[slot] = entry;
    this.byKey.set(key, entry);
    INDEXED_FIELDS.forEach((field, position) => {
      const index = this.fields[position] as FieldIndex;
      for (const raw of valuesAtPath(document, field)) {
        const value = String(raw);
        let code = index.codeOf.get(value);
        if (code === undefined) {
          code = index.values.length;
          index.codeOf.set(value, code);
          index.values.push(value);
          index.bits.push(new Uint32Array(this.capacity / 32));
        }
        const bits = index.bits[code] as Uint32Array;
        bits[slot >>> 5] = (bits[slot >>> 5] as number) | (1 << (slot & 31));
      }
    });
    if (patchSorted) {
      for (const [cacheKey, array] of this.sorted) array.splice(this.sortedIndexOf(cacheKey, array, entry), 0, slot);
    }
    if (deferText) this.textBacklog.add(slot);
    else this.text.add(slot, document);
  }

  /** Takes a document out of every structure, the full-text index included, and frees its slot. */
  private detach(entry: Entry, patchSorted: boolean): void {
    if (patchSorted) {
      for (const [cacheKey, array] of this.sorted) array.splice(this.sortedIndexOf(cacheKey, array, entry), 1);
    }
    INDEXED_FIELDS.forEach((field, position) => {
      const index = this.fields[position] as FieldIndex;
      for (const raw of valuesAtPath(entry.document, field)) {
        const bits = index.bits[index.codeOf.get(String(raw)) as number] as Uint32Array;
        bits[entry.slot >>> 5] = (bits[entry.slot >>> 5] as number) & ~(1 << (entry.slot & 31));
      }
    });
    if (!this.textBacklog.delete(entry.slot)) this.text.remove(entry.slot, entry.document);
    this.byKey.delete(entry.key);
    this.slots[entry.slot] = undefined;
    this.freeSlots.push(entry.slot);
  }

  /** Doubles the slot capacity of every bitset and of the full-text index. */
  private grow(): void {
    this.capacity *= 2;
    this.text.grow(this.capacity);
    for (const index of this.fields) {
      index.bits = index.bits.map((bits) => {
        const larger = new Uint32Array(this.capacity / 32);
        larger.set(bits);
        return larger;
      });
    }
  }

  private emptyBits(): Uint32Array {
    return new Uint32Array(Math.ceil(this.slots.length / 32));
  }

  /** Binary search: the index of `entry` (or where it would go) in a presorted array. */
  private sortedIndexOf(cacheKey: string, array: number[], entry: Entry): number {
    const [position, direction] = cacheKey.split(':');
    const compare = sortComparator(Number(position), direction === 'DESC');
    let low = 0;
    let high = array.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (compare(this.slots[array[middle] as number] as Entry, entry) < 0) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  /**
   * Bitset of the documents in `companies` (and of `type`) that match every filter field (any of its values).
   * Fields outside the registry are checked document by document.
   */
  private match(companies: readonly string[], type: string | undefined, filters: ReadonlyMap<string, readonly string[]>): Uint32Array {
    const result = this.emptyBits();
    const union = (position: number, values: readonly string[]): Uint32Array[] => {
      const index = this.fields[position] as FieldIndex;
      return values.flatMap((value) => {
        const code = index.codeOf.get(value);
        return code === undefined ? [] : [index.bits[code] as Uint32Array];
      });
    };
    for (const bits of union(COMPANY_POSITION, companies)) {
      for (let word = 0; word < result.length; word += 1) result[word] = (result[word] as number) | (bits[word] as number);
    }
    const conditions: [string, readonly string[]][] = [...filters];
    if (type !== undefined) conditions.push(['type', [type]]);
    const unindexed: [string, readonly string[]][] = [];
    for (const [field, values] of conditions) {
      const position = INDEXED_FIELD_POSITION.get(field);
      if (position === undefined) {
        unindexed.push([field, values]);
        continue;
      }
      const sets = union(position, values);
      for (let word = 0; word < result.length; word += 1) {
        let any = 0;
        for (const bits of sets) any |= bits[word] as number;
        result[word] = (result[word] as number) & any;
      }
    }
    if (unindexed.length > 0) {
      forEachSlot(result, (slot) => {
        const { document } = this.slots[slot] as Entry;
        const keep = documentMatches(document, unindexed);
        if (!keep) result[slot >>> 5] = (result[slot >>> 5] as number) & ~(1 << (slot & 31));
      });
    }
    return result;
  }

  /**
   * Entries `start`..`end` (0-based, end excluded) of the `total` documents in `matches`, in the order of a sort
   * field. `byKeyOnly` orders by document key alone (relevance without full text: every score is equal).
   */
  private sortedPage(
    matches: Uint32Array,
    total: number,
    field: string,
    descending: boolean,
    start: number,
    end: number,
    byKeyOnly = false,
  ): Entry[] {
    const position = SORT_FIELD_POSITION.get(field);
    const collect = (): Entry[] => {
      const entries: Entry[] = [];
      forEachSlot(matches, (slot) => entries.push(this.slots[slot] as Entry));
      return entries;
    };
    if (byKeyOnly) return smallest(collect(), end, compareKeys).slice(start);
    if (position === undefined) {
      // Not a registry sort field (the query parser never produces one): sort on the fly.
      const entries = collect();
      const sortValues = new Map(
        entries.map((entry) => {
          const first = valuesAtPath(entry.document, field)[0];
          return [entry, first === undefined ? undefined : codePointSortKey(String(first))] as const;
        }),
      );
      const sign = descending ? -1 : 1;
      return smallest(entries, end, (a, b) => {
        const va = sortValues.get(a);
        const vb = sortValues.get(b);
        if (va !== vb) return va === undefined ? 1 : vb === undefined ? -1 : va < vb ? -sign : sign;
        return compareKeys(a, b);
      }).slice(start);
    }
    if (total <= DIRECT_SORT_LIMIT) return smallest(collect(), end, sortComparator(position, descending)).slice(start);

    const cacheKey = `${position}:${descending ? 'DESC' : 'ASC'}`;
    let array = this.sorted.get(cacheKey);
    if (array === undefined) {
      array = this.buildSorted(position, descending);
      this.sorted.set(cacheKey, array);
    }
    const page: Entry[] = [];
    let rank = 0;
    for (const slot of array) {
      if (!hasSlot(matches, slot)) continue;
      if (rank >= start) page.push(this.slots[slot] as Entry);
      rank += 1;
      if (rank >= end) break;
    }
    return page;
  }

  /** Every live slot in the order of the sort field at `position`. */
  private buildSorted(position: number, descending: boolean): number[] {
    // Compact records sort faster than entries scattered over the heap.
    const records = [...this.byKey.values()].map((entry) => ({ v: entry.sortValues[position], k: entry.key, s: entry.slot }));
    const sign = descending ? -1 : 1;
    records.sort((a, b) => {
      if (a.v !== b.v) {
        if (a.v === undefined) return 1;
        if (b.v === undefined) return -1;
        return a.v < b.v ? -sign : sign;
      }
      return a.k < b.k ? -1 : a.k > b.k ? 1 : 0;
    });
    return records.map((record) => record.s);
  }
}
