/**
 * The embedded search engine's orders: the stored entry with its sort values, the comparators (the value in code point
 * order, missing values last in both directions, then the document key ascending), the bounded selection of a page's
 * first items, and the presorted slot arrays the engine walks to read a page of a large result, kept in order by every
 * write (a splice per entry for the smallest, one merge pass per array for the others) rather than rebuilt.
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

/**
 * The document of `entry`, decoded (a new object each call), not frozen: for the engine's own reads (indexing, counts,
 * removals), never handed out; a result's document is frozenDocumentOf's.
 */
export function documentOf(entry: Entry): SearchDocument {
  return entry.codec.decode(entry.stored, false);
}

/** The document of `entry`, decoded and deeply frozen (a new object each call): what a search hands out. */
export function frozenDocumentOf(entry: Entry): SearchDocument {
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

/** One presorted array, the order it keeps and the writes it has still to take in. */
interface Presorted {
  compare: (a: Entry, b: Entry) => number;
  /** Every live slot in `compare` order of its entry, but for the changes below. */
  slots: number[];
  /** Slots whose entries were taken out since `slots` was last patched (a slot may hold another entry now). */
  removed: number[];
  /** Entries put in since `slots` was last patched and still there. */
  added: Set<Entry>;
}

/**
 * The presorted slot arrays, one per (sort field position, direction), built on first use from the live entries and
 * kept as a fresh build would give them, never rebuilt: the smallest writes splice each entry in or out at once
 * (`insert`, `remove`: a binary search and a splice per array), larger ones note their entries (`noteRemoved`,
 * `noteAdded`) and then patch each array in one pass (`patchOne`, or the next read of that array), O(n + k log n)
 * for k changes instead of k splices (O(k·n)) or a rebuild (O(n log n), ~0.2 s at 100,000 entries). `clear` drops
 * them (rebuilt on next use).
 */
export class PresortedSlots {
  /** Presorted arrays per `position:direction` of a sort field, and `key` for document key order. */
  private readonly sorted = new Map<string, Presorted>();

  /** `slots`: the engine's entries by slot (undefined for free slots), read, never changed. */
  constructor(private readonly slots: readonly (Entry | undefined)[]) {}

  /** Drops every array (rebuilt on next use). */
  clear(): void {
    this.sorted.clear();
  }

  /** Inserts the slot of `entry` (in the engine's slots already) into every array built, where its order puts it. */
  insert(entry: Entry): void {
    for (const presorted of this.sorted.values()) {
      this.patch(presorted);
      presorted.slots.splice(this.lowerBound(presorted.slots, entry, presorted.compare), 0, entry.slot);
    }
  }

  /** Removes the slot of `entry` (still in the engine's slots) from every array built. */
  remove(entry: Entry): void {
    for (const presorted of this.sorted.values()) {
      this.patch(presorted);
      presorted.slots.splice(this.lowerBound(presorted.slots, entry, presorted.compare), 1);
    }
  }

  /** Notes that `entry` was taken out of the engine (its slot freed) for the next patch of every array built. */
  noteRemoved(entry: Entry): void {
    for (const { removed, added } of this.sorted.values()) if (!added.delete(entry)) removed.push(entry.slot);
  }

  /** Notes that `entry` was put in the engine (in its slots already) for the next patch of every array built. */
  noteAdded(entry: Entry): void {
    for (const { added } of this.sorted.values()) added.add(entry);
  }

  /** Whether an array has noted changes still to take in. */
  get stale(): boolean {
    for (const { removed, added } of this.sorted.values()) if (removed.length > 0 || added.size > 0) return true;
    return false;
  }

  /** Takes the noted changes into one array that has some (see `patch`). */
  patchOne(): void {
    for (const presorted of this.sorted.values()) {
      if (presorted.removed.length > 0 || presorted.added.size > 0) {
        this.patch(presorted);
        return;
      }
    }
  }

  /**
   * Every live slot in the order of the sort field at `position`: built from `live` (every entry held) when missing,
   * patched first when changes are noted.
   */
  slotsInOrder(position: number, descending: boolean, live: Iterable<Entry>): number[] {
    const cacheKey = `${position}:${descending ? 'DESC' : 'ASC'}`;
    let presorted = this.sorted.get(cacheKey);
    if (presorted === undefined) {
      const slots = buildSorted(live, position, descending);
      presorted = { compare: sortComparator(position, descending), slots, removed: [], added: new Set() };
      this.sorted.set(cacheKey, presorted);
    }
    this.patch(presorted);
    return presorted.slots;
  }

  /**
   * Every live slot in document key order (the order a count's label is picked in): built from `live` when missing,
   * kept in order by writes as the sort fields' arrays are.
   */
  slotsInKeyOrder(live: Iterable<Entry>): number[] {
    let presorted = this.sorted.get('key');
    if (presorted === undefined) {
      const records = [...live].map((entry) => ({ k: entry.key, s: entry.slot }));
      records.sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0));
      presorted = { compare: compareKeys, slots: records.map((record) => record.s), removed: [], added: new Set() };
      this.sorted.set('key', presorted);
    }
    this.patch(presorted);
    return presorted.slots;
  }

  /**
   * Takes the noted changes into `presorted` in one pass: drops the slots noted removed, then merges in the entries
   * noted added where their order puts them. The array is then what a fresh build from the live entries gives.
   */
  private patch(presorted: Presorted): void {
    const { compare, slots, removed, added } = presorted;
    if (removed.length === 0 && added.size === 0) return;
    let kept = slots.length;
    if (removed.length > 0) {
      const gone = new Uint8Array(removed.reduce((top, slot) => Math.max(top, slot + 1), 0));
      for (const slot of removed) gone[slot] = 1;
      kept = compact(slots, gone);
    }
    this.merge(slots, kept, [...added].sort(compare), compare);
    presorted.removed = [];
    added.clear();
  }

  /**
   * Makes `array` its first `kept` slots with the slots of `incoming` (sorted by `compare`, none among them) inserted
   * where their order puts them, moving each slot once.
   */
  private merge(array: number[], kept: number, incoming: readonly Entry[], compare: (a: Entry, b: Entry) => number): void {
    const at: number[] = [];
    let from = 0;
    for (const entry of incoming) {
      from = this.lowerBound(array, entry, compare, from, kept);
      at.push(from);
    }
    const length = kept + incoming.length;
    // Length changes only at the end, so the array keeps its backing store when as many slots leave as come.
    while (array.length < length) array.push(0);
    // From the back: every kept slot moves right by the number of incoming slots placed before it.
    let read = kept - 1;
    let write = length - 1;
    for (let index = incoming.length - 1; index >= 0; index -= 1) {
      const position = at[index] as number;
      while (read >= position) array[write--] = array[read--] as number;
      array[write--] = (incoming[index] as Entry).slot;
    }
    if (array.length > length) array.length = length;
  }

  /** Binary search of `array` between `low` and `high`: the index of `entry` (or where it would go) in `compare` order. */
  private lowerBound(
    array: readonly number[],
    entry: Entry,
    compare: (a: Entry, b: Entry) => number,
    low = 0,
    high = array.length,
  ): number {
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (compare(this.slots[array[middle] as number] as Entry, entry) < 0) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}

/** Moves the slots of `array` that `gone` does not mark to its front, in order; returns how many (the rest is stale). */
function compact(array: number[], gone: Uint8Array): number {
  let kept = 0;
  for (let read = 0; read < array.length; read += 1) {
    const slot = array[read] as number;
    if (slot >= gone.length || gone[slot] === 0) array[kept++] = slot;
  }
  return kept;
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
