/**
 * The embedded search engine's orders: the stored entry with its sort values, the comparators (the value in code point
 * order, missing values last in both directions, then the document key ascending), the bounded selection of a page's
 * first items, and the presorted slot arrays the engine walks to read a page of a large result.
 */
import { type SearchDocument, valuesAtPath } from '../../core/search/documents.js';
import { SORT_FIELDS } from '../../core/search/registry.js';
import type { DocumentCodec } from './document-codec.js';

/** One stored document. */
export interface Entry {
  /** Position in the bitsets and the full-text index. */
  slot: number;
  key: string;
  /** The document's `id`. */
  id: string;
  /** The document, encoded by `codec` (documentOf reads it). */
  stored: Uint8Array;
  codec: DocumentCodec;
  /** First value at each SORT_FIELDS path as a string in codePointSortKey form; undefined when missing. */
  sortValues: (string | undefined)[];
}

/** The document of `entry`, decoded (deeply frozen; a new object each call). */
export function documentOf(entry: Entry): SearchDocument {
  return entry.codec.decode(entry.stored);
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

/** The sort value of `document` at `field` (its first value, in codePointSortKey form), or undefined when missing. */
export function sortValueOf(document: SearchDocument, field: string): string | undefined {
  const first = valuesAtPath(document, field)[0];
  return first === undefined ? undefined : codePointSortKey(String(first));
}

/**
 * The entry of `document` stored under `key` in `slot`, with its value at each SORT_FIELDS path: `stored` when the
 * caller has its encoded bytes already (a snapshot), else encoded by `codec`.
 */
export function entryOf(slot: number, key: string, document: SearchDocument, codec: DocumentCodec, stored?: Uint8Array): Entry {
  return {
    slot,
    key,
    id: document.id,
    stored: stored ?? codec.encode(document),
    codec,
    sortValues: SORT_FIELDS.map((field) => sortValueOf(document, field)),
  };
}

/** Orders entries by document key, ascending (code unit order). */
export function compareKeys(a: Entry, b: Entry): number {
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

/** Orders by the sort value at `position` (missing last in both directions), then by key ascending. */
export function sortComparator(position: number, descending: boolean): (a: Entry, b: Entry) => number {
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
export function smallest<T>(items: readonly T[], k: number, compare: (a: T, b: T) => number): T[] {
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

/**
 * The presorted slot arrays, one per (sort field position, direction), built on first use from the live entries,
 * patched by small writes (insert, remove) and dropped by large ones (clear), to be rebuilt on next use.
 */
export class PresortedSlots {
  /** Presorted slots per `position:direction` of a sort field. */
  private readonly sorted = new Map<string, number[]>();

  /** `slots`: the engine's entries by slot (undefined for free slots), read, never changed. */
  constructor(private readonly slots: readonly (Entry | undefined)[]) {}

  /** Drops every array (rebuilt on next use). */
  clear(): void {
    this.sorted.clear();
  }

  /** Inserts the slot of `entry` into every array built, where its order puts it. */
  insert(entry: Entry): void {
    for (const [cacheKey, array] of this.sorted) array.splice(this.sortedIndexOf(cacheKey, array, entry), 0, entry.slot);
  }

  /** Removes the slot of `entry` (still in the engine's slots) from every array built. */
  remove(entry: Entry): void {
    for (const [cacheKey, array] of this.sorted) array.splice(this.sortedIndexOf(cacheKey, array, entry), 1);
  }

  /** Every live slot in the order of the sort field at `position`, built from `live` (every entry held) when missing. */
  slotsInOrder(position: number, descending: boolean, live: Iterable<Entry>): number[] {
    const cacheKey = `${position}:${descending ? 'DESC' : 'ASC'}`;
    let array = this.sorted.get(cacheKey);
    if (array === undefined) {
      array = buildSorted(live, position, descending);
      this.sorted.set(cacheKey, array);
    }
    return array;
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
}

/** The slots of `live` in the order of the sort field at `position`. */
function buildSorted(live: Iterable<Entry>, position: number, descending: boolean): number[] {
  // Compact records sort faster than entries scattered over the heap.
  const records = [...live].map((entry) => ({ v: entry.sortValues[position], k: entry.key, s: entry.slot }));
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
