/**
 * The embedded search engine: an in-memory implementation of the SearchIndex
 * port for the local runtime and the tests, with the same semantics as the
 * OpenSearch adapter (company scoping, OR within a field and AND across fields,
 * `global` full text, sort with missing values last and the document-key
 * tie-breaker, facet counts).
 *
 * Layout, sized for ~100,000 documents:
 * - documents live in a Map by key string, each in an Entry with a numeric slot;
 * - every filter field has an inverted index (value → Set of slots) with the
 *   values dictionary-encoded, so filtering intersects sets and counting adds
 *   into typed arrays instead of walking documents;
 * - every (sort field, direction) has a lazily built presorted array, kept up
 *   to date on small writes and dropped on large ones, so a page of a big
 *   result is read by walking it instead of sorting;
 * - `global` is delegated to MiniSearch over FULL_TEXT_FIELDS.
 */
import MiniSearch from 'minisearch';
import type { SearchIndex } from '../../core/ports.js';
import { documentKeyString, valuesAtPath, type DocumentKey, type SearchDocument } from '../../core/search/documents.js';
import type { CountQuery, SearchQuery, SearchResult, ValueCounts } from '../../core/search/query.js';
import { FILTER_FIELDS, FULL_TEXT_FIELDS, SORT_FIELDS } from '../../core/search/registry.js';

/** Fields with an inverted index: every filter field (including `type` and `company`). */
const INDEXED_FIELDS: readonly string[] = FILTER_FIELDS.map((field) => field.field);
const INDEXED_FIELD_POSITION = new Map(INDEXED_FIELDS.map((field, position) => [field, position]));
const TYPE_POSITION = INDEXED_FIELD_POSITION.get('type') as number;
const COMPANY_POSITION = INDEXED_FIELD_POSITION.get('company') as number;
const SORT_FIELD_POSITION = new Map<string, number>(SORT_FIELDS.map((field, position) => [field, position]));
/** Label field of each `data` filter field that has one (e.g. health.versionCode → health.versionName). */
const LABEL_FIELDS = new Map<string, string>(
  FILTER_FIELDS.flatMap((field) => (field.values.kind === 'data' && field.values.labelField !== undefined ? [[field.field, field.values.labelField]] : [])),
);

/** Below this many matches a page is sorted directly; above it, read from the presorted array. */
const DIRECT_SORT_LIMIT = 1_000;
/** Writes larger than this drop the presorted arrays (rebuilt on demand) instead of patching them. */
const INCREMENTAL_SORT_LIMIT = 256;
/** Field name under which MiniSearch reads the document key. */
const KEY_FIELD = '\u0000key';

/** One stored document with its precomputed index data. */
interface Entry {
  slot: number;
  key: string;
  document: SearchDocument;
  /** First value (as a string) at each SORT_FIELDS path, undefined when missing. */
  sortValues: (string | undefined)[];
  /** Distinct value codes at each INDEXED_FIELDS path. */
  codes: Int32Array[];
}

/** Inverted index of one field: dictionary-encoded values and the slots carrying each. */
interface FieldIndex {
  codeOf: Map<string, number>;
  values: string[];
  postings: Set<number>[];
}

/** One AND-ed condition: a slot satisfies it when any of the sets holds it. */
type Group = Set<number>[];

function compareKeys(a: Entry, b: Entry): number {
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

/** Orders by the sort value (missing last in both directions), then by key ascending. */
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

/** The first `k` items of `items` in `compare` order, without sorting all of them (bounded max-heap). */
function smallest<T>(items: readonly T[], k: number, compare: (a: T, b: T) => number): T[] {
  if (k <= 0) return [];
  if (items.length <= k * 4) return [...items].sort(compare).slice(0, k);
  const heap: T[] = [];
  const siftDown = (start: number): void => {
    let index = start;
    for (;;) {
      const left = 2 * index + 1;
      const right = left + 1;
      let largest = index;
      if (left < heap.length && compare(heap[left] as T, heap[largest] as T) > 0) largest = left;
      if (right < heap.length && compare(heap[right] as T, heap[largest] as T) > 0) largest = right;
      if (largest === index) return;
      [heap[index], heap[largest]] = [heap[largest] as T, heap[index] as T];
      index = largest;
    }
  };
  for (const item of items) {
    if (heap.length < k) {
      heap.push(item);
      let index = heap.length - 1;
      while (index > 0) {
        const parent = (index - 1) >> 1;
        if (compare(heap[index] as T, heap[parent] as T) <= 0) break;
        [heap[index], heap[parent]] = [heap[parent] as T, heap[index] as T];
        index = parent;
      }
    } else if (compare(item, heap[0] as T) < 0) {
      heap[0] = item;
      siftDown(0);
    }
  }
  return heap.sort(compare);
}

/** Full-text extraction: every value at the path, joined with spaces; the key for KEY_FIELD. */
function extractText(document: SearchDocument, field: string): string | undefined {
  if (field === KEY_FIELD) return documentKeyString(document);
  const values = valuesAtPath(document, field);
  return values.length === 0 ? undefined : values.join(' ');
}

/**
 * In-memory SearchIndex (local runtime and tests). Synchronous underneath; the
 * returned promises never reject except on programming errors. Documents are
 * copied on the way in and on the way out, so callers cannot alter the index.
 */
export class EmbeddedSearchIndex implements SearchIndex {
  private readonly byKey = new Map<string, Entry>();
  /** Entries by slot; undefined for free slots. */
  private readonly slots: (Entry | undefined)[] = [];
  private readonly freeSlots: number[] = [];
  private readonly fields: FieldIndex[] = INDEXED_FIELDS.map(() => ({ codeOf: new Map(), values: [], postings: [] }));
  /** Presorted entries per `position:direction` of a sort field. */
  private readonly sorted = new Map<string, Entry[]>();
  private readonly text = new MiniSearch<SearchDocument>({
    fields: [...FULL_TEXT_FIELDS],
    idField: KEY_FIELD,
    extractField: extractText,
    searchOptions: {
      combineWith: 'AND',
      prefix: true,
      fuzzy: (term) => (term.length >= 4 ? 0.2 : false),
    },
  });

  /**
   * One page of results (`query.page` is 1-based; beyond the end gives no resources) and the total number of
   * matches. Resources are copies.
   */
  async search(query: SearchQuery): Promise<SearchResult> {
    const relevance = query.sort.field === 'relevance';
    let matches: Entry[];
    let scores: Map<Entry, number> | undefined;
    if (query.global !== undefined) {
      const companies = new Set(query.companies);
      scores = new Map();
      for (const hit of this.text.search(query.global)) {
        const entry = this.byKey.get(hit.id as string);
        if (entry !== undefined && companies.has(entry.document.company)) scores.set(entry, hit.score);
      }
      matches = [...scores.keys()];
    } else {
      matches = this.match(query.companies, undefined, query.filters);
    }

    const start = (query.page - 1) * query.pageSize;
    const end = start + query.pageSize;
    let page: Entry[];
    if (start >= matches.length) {
      page = [];
    } else if (relevance) {
      // Without `global` every score is equal, as with OpenSearch's constant-score filters: key order.
      const scoreOf = scores ?? new Map<Entry, number>();
      const byRelevance = (a: Entry, b: Entry): number => (scoreOf.get(b) ?? 0) - (scoreOf.get(a) ?? 0) || compareKeys(a, b);
      page = smallest(matches, end, byRelevance).slice(start);
    } else {
      page = this.sortedPage(matches, query.sort.field, query.sort.direction === 'DESC', start, end);
    }
    return { total: matches.length, resources: page.map((entry) => structuredClone(entry.document)) };
  }

  /**
   * Per field of `query.fields`: each distinct value carried by the matching documents and how many carry it
   * (a document counts once per value), with a `label` for data fields that have a label field.
   * Fields without values map to an empty Map; values are listed in ascending order.
   */
  async countValues(query: CountQuery): Promise<ValueCounts> {
    const matches = this.match(query.companies, query.type, query.filters);
    const result: ValueCounts = new Map();
    for (const field of query.fields) {
      const labelField = LABEL_FIELDS.get(field);
      const position = INDEXED_FIELD_POSITION.get(field);
      /** Value → count and the first matching document carrying it (the label source). */
      const counted = new Map<string, { count: number; first: Entry }>();
      if (position !== undefined) {
        const index = this.fields[position] as FieldIndex;
        const counts = new Int32Array(index.values.length);
        const first: Entry[] = [];
        for (const entry of matches) {
          for (const code of entry.codes[position] as Int32Array) {
            if (counts[code] === 0) first[code] = entry;
            counts[code] = (counts[code] as number) + 1;
          }
        }
        counts.forEach((count, code) => {
          if (count > 0) counted.set(index.values[code] as string, { count, first: first[code] as Entry });
        });
      } else {
        for (const entry of matches) {
          for (const value of new Set(valuesAtPath(entry.document, field).map(String))) {
            const current = counted.get(value);
            if (current === undefined) counted.set(value, { count: 1, first: entry });
            else current.count += 1;
          }
        }
      }
      const values = new Map<string, { count: number; label?: string }>();
      for (const value of [...counted.keys()].sort()) {
        const { count, first } = counted.get(value) as { count: number; first: Entry };
        const label = labelField === undefined ? undefined : valuesAtPath(first.document, labelField)[0];
        values.set(value, label === undefined ? { count } : { count, label: String(label) });
      }
      result.set(field, values);
    }
    return result;
  }

  /** Inserts or replaces documents by (type, company, id); within one call the last duplicate wins. */
  async upsert(documents: SearchDocument[]): Promise<void> {
    const patchSorted = documents.length <= INCREMENTAL_SORT_LIMIT;
    if (!patchSorted) this.sorted.clear();
    const added: SearchDocument[] = [];
    for (const original of documents) {
      const document = structuredClone(original);
      const key = documentKeyString(document);
      const previous = this.byKey.get(key);
      if (previous !== undefined) this.detach(previous, patchSorted);
      const slot = this.freeSlots.pop() ?? this.slots.length;
      const entry: Entry = {
        slot,
        key,
        document,
        sortValues: SORT_FIELDS.map((field) => {
          const first = valuesAtPath(document, field)[0];
          return first === undefined ? undefined : String(first);
        }),
        codes: INDEXED_FIELDS.map((field, position) => this.encode(position, valuesAtPath(document, field), slot)),
      };
      this.slots[slot] = entry;
      this.byKey.set(key, entry);
      if (patchSorted) {
        for (const [cacheKey, array] of this.sorted) array.splice(this.sortedIndexOf(cacheKey, array, entry), 0, entry);
      }
      added.push(document);
    }
    // Replaced documents were discarded from the full-text index by `detach`; a key repeated in the batch is added once.
    const latest = new Map(added.map((document) => [documentKeyString(document), document]));
    this.text.addAll([...latest.values()]);
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

  /** Takes an entry out of every structure (map, slots, inverted indexes, presorted arrays, full text). */
  private detach(entry: Entry, patchSorted: boolean): void {
    if (patchSorted) {
      for (const [cacheKey, array] of this.sorted) {
        const index = this.sortedIndexOf(cacheKey, array, entry);
        if (array[index] === entry) array.splice(index, 1);
        else this.sorted.delete(cacheKey); // cannot happen; never serve a stale order
      }
    }
    entry.codes.forEach((codes, position) => {
      const index = this.fields[position] as FieldIndex;
      for (const code of codes) index.postings[code]?.delete(entry.slot);
    });
    if (this.text.has(entry.key)) this.text.discard(entry.key);
    this.byKey.delete(entry.key);
    this.slots[entry.slot] = undefined;
    this.freeSlots.push(entry.slot);
  }

  /** Dictionary-encodes the distinct values of one field and records `slot` in their postings. */
  private encode(position: number, values: (string | number | boolean)[], slot: number): Int32Array {
    const index = this.fields[position] as FieldIndex;
    const codes = new Set<number>();
    for (const raw of values) {
      const value = String(raw);
      let code = index.codeOf.get(value);
      if (code === undefined) {
        code = index.values.length;
        index.codeOf.set(value, code);
        index.values.push(value);
        index.postings.push(new Set());
      }
      codes.add(code);
      (index.postings[code] as Set<number>).add(slot);
    }
    return Int32Array.from(codes);
  }

  /** Binary search: where `entry` is (or would go) in a presorted array. */
  private sortedIndexOf(cacheKey: string, array: Entry[], entry: Entry): number {
    const [position, direction] = cacheKey.split(':');
    const compare = sortComparator(Number(position), direction === 'DESC');
    let low = 0;
    let high = array.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (compare(array[middle] as Entry, entry) < 0) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  /**
   * Entries in `companies` (and of `type`) matching every filter field (any of its values).
   * Each condition is a group of posting sets; the smallest group drives, the others are probed.
   */
  private match(companies: readonly string[], type: string | undefined, filters: ReadonlyMap<string, readonly string[]>): Entry[] {
    const groups: Group[] = [];
    const predicates: ((entry: Entry) => boolean)[] = [];
    const postingsOf = (position: number, values: readonly string[]): Group => {
      const index = this.fields[position] as FieldIndex;
      return values.flatMap((value) => {
        const code = index.codeOf.get(value);
        const postings = code === undefined ? undefined : index.postings[code];
        return postings === undefined || postings.size === 0 ? [] : [postings];
      });
    };
    groups.push(postingsOf(COMPANY_POSITION, companies));
    if (type !== undefined) groups.push(postingsOf(TYPE_POSITION, [type]));
    for (const [field, values] of filters) {
      const position = INDEXED_FIELD_POSITION.get(field);
      if (position !== undefined) {
        groups.push(postingsOf(position, values));
      } else {
        predicates.push((entry) => valuesAtPath(entry.document, field).some((value) => values.includes(String(value))));
      }
    }
    if (groups.some((group) => group.length === 0)) return [];

    const sizeOf = (group: Group): number => group.reduce((sum, postings) => sum + postings.size, 0);
    groups.sort((a, b) => sizeOf(a) - sizeOf(b));
    const [driver, ...probes] = groups as [Group, ...Group[]];
    const seen = driver.length > 1 ? new Uint8Array(this.slots.length) : undefined;
    const out: Entry[] = [];
    for (const postings of driver) {
      for (const slot of postings) {
        if (seen !== undefined) {
          if (seen[slot] === 1) continue;
          seen[slot] = 1;
        }
        if (!probes.every((group) => group.length === 1 ? (group[0] as Set<number>).has(slot) : group.some((p) => p.has(slot)))) continue;
        const entry = this.slots[slot] as Entry;
        if (predicates.every((predicate) => predicate(entry))) out.push(entry);
      }
    }
    return out;
  }

  /** Entries `start`..`end` of `matches` in the order of one sort field. */
  private sortedPage(matches: Entry[], field: string, descending: boolean, start: number, end: number): Entry[] {
    const position = SORT_FIELD_POSITION.get(field);
    if (position === undefined) {
      // Not a registry sort field (the query parser never produces one): sort on the fly.
      const valueOf = new Map(matches.map((entry) => {
        const first = valuesAtPath(entry.document, field)[0];
        return [entry, first === undefined ? undefined : String(first)] as const;
      }));
      const sign = descending ? -1 : 1;
      return smallest(matches, end, (a, b) => {
        const va = valueOf.get(a);
        const vb = valueOf.get(b);
        if (va !== vb) return va === undefined ? 1 : vb === undefined ? -1 : va < vb ? -sign : sign;
        return compareKeys(a, b);
      }).slice(start);
    }
    if (matches.length <= DIRECT_SORT_LIMIT) return smallest(matches, end, sortComparator(position, descending)).slice(start);

    const cacheKey = `${position}:${descending ? 'DESC' : 'ASC'}`;
    let array = this.sorted.get(cacheKey);
    if (array === undefined) {
      array = [...this.byKey.values()].sort(sortComparator(position, descending));
      this.sorted.set(cacheKey, array);
    }
    const selected = new Uint8Array(this.slots.length);
    for (const entry of matches) selected[entry.slot] = 1;
    const page: Entry[] = [];
    let rank = 0;
    for (const entry of array) {
      if (selected[entry.slot] !== 1) continue;
      if (rank >= start) page.push(entry);
      rank += 1;
      if (rank >= end) break;
    }
    return page;
  }
}
