/**
 * The full-text index's postings: per term id, which (slot, field) pairs hold the term and how often. A posting is one
 * number, `(slot × FIELDS + field) × COUNTS + min(count, COUNTS − 1)`, below 2^32 for slots under 2^32 / (FIELDS ×
 * COUNTS); a term's postings are kept sorted in a Uint32Array that grows by half, and a term with a single posting
 * (most serials, ids and numbers) keeps it in a plain number instead. Counts of COUNTS − 1 and more are kept exactly
 * in a side Map (a word repeated that often in one field is rare).
 */

import type { ByteReader, ByteWriter } from './snapshot-bytes.js';

/** Field positions a posting can name (FULL_TEXT_FIELDS has fewer). */
const FIELDS = 16;
/** Occurrence counts a posting holds itself; the largest value means "see the overflow Map". */
const COUNTS = 64;
/** The largest slot a posting can name. */
export const MAX_POSTING_SLOT = Math.floor(2 ** 32 / (FIELDS * COUNTS)) - 1;

/** Postings by term id (ids are the TermDictionary's). */
export class PostingLists {
  /** Per term id: its only posting, or 0 when it has none or a list (a real posting has a count of 1 or more). */
  private readonly single: number[] = [];
  private readonly lists: (Uint32Array | undefined)[] = [];
  private readonly sizes: number[] = [];
  /** Exact counts of postings stored with the count COUNTS − 1, by `termId:key`. */
  private readonly overflow = new Map<string, number>();

  /**
   * Adds `count` occurrences of term `id` in `field` of `slot` (a pair the term does not have yet).
   * @throws RangeError when `slot` exceeds MAX_POSTING_SLOT or `field` FIELDS − 1.
   */
  add(id: number, slot: number, field: number, count: number): void {
    if (slot > MAX_POSTING_SLOT || field >= FIELDS) throw new RangeError(`No posting for slot ${slot}, field ${field}.`);
    const key = slot * FIELDS + field;
    const stored = Math.min(count, COUNTS - 1);
    if (stored === COUNTS - 1) this.overflow.set(`${id}:${key}`, count);
    const posting = key * COUNTS + stored;
    let list = this.lists[id];
    if (list === undefined) {
      const only = this.single[id] ?? 0;
      if (only === 0) {
        this.single[id] = posting;
        this.sizes[id] = 1;
        return;
      }
      list = new Uint32Array(4);
      list[0] = only;
      this.single[id] = 0;
      this.lists[id] = list;
    }
    const size = this.sizes[id] as number;
    if (size === list.length) {
      const larger = new Uint32Array(size + (size >>> 1) + 4);
      larger.set(list);
      list = larger;
      this.lists[id] = list;
    }
    // Slots mostly arrive in increasing order (a build, a new document): append without searching then.
    const at = size === 0 || (list[size - 1] as number) < posting ? size : lowerBound(list, size, key * COUNTS);
    list.copyWithin(at + 1, at, size);
    list[at] = posting;
    this.sizes[id] = size + 1;
  }

  /**
   * Removes the posting of term `id` in `field` of `slot`, if any.
   * @returns the number of postings the term has left.
   */
  remove(id: number, slot: number, field: number): number {
    const key = slot * FIELDS + field;
    const list = this.lists[id];
    if (list === undefined) {
      const only = this.single[id] ?? 0;
      if (only === 0 || Math.floor(only / COUNTS) !== key) return this.sizes[id] ?? 0;
      this.single[id] = 0;
      this.sizes[id] = 0;
      this.overflow.delete(`${id}:${key}`);
      return 0;
    }
    const size = this.sizes[id] as number;
    const at = lowerBound(list, size, key * COUNTS);
    if (at === size || Math.floor((list[at] as number) / COUNTS) !== key) return size;
    list.copyWithin(at, at + 1, size);
    this.sizes[id] = size - 1;
    this.overflow.delete(`${id}:${key}`);
    if (size - 1 === 0) this.lists[id] = undefined;
    return size - 1;
  }

  /** Calls `visit` with the postings of term `id`, ordered by slot then field. */
  forEach(id: number, visit: (slot: number, field: number, count: number) => void): void {
    const list = this.lists[id];
    if (list === undefined) {
      const only = this.single[id] ?? 0;
      if (only !== 0) this.visitPosting(id, only, visit);
      return;
    }
    const size = this.sizes[id] as number;
    for (let index = 0; index < size; index += 1) this.visitPosting(id, list[index] as number, visit);
  }

  /** Per field position, how many postings of term `id` name it (the documents whose field holds the term). */
  fieldCounts(id: number, into: Uint32Array): Uint32Array {
    into.fill(0);
    const list = this.lists[id];
    if (list === undefined) {
      const only = this.single[id] ?? 0;
      if (only !== 0) into[Math.floor(only / COUNTS) % FIELDS] = 1;
      return into;
    }
    const size = this.sizes[id] as number;
    for (let index = 0; index < size; index += 1) {
      const field = Math.floor((list[index] as number) / COUNTS) % FIELDS;
      into[field] = (into[field] as number) + 1;
    }
    return into;
  }

  /**
   * Writes the postings of term `id` to `out` with each slot replaced by `positionOf[slot]` (which must increase with
   * the slot): their number, then each posting as its difference from the one before (the first from 0), a varint,
   * followed by its exact count when the posting holds COUNTS − 1.
   * @throws RangeError when `positionOf` gives a slot of the term no position (−1).
   */
  encode(id: number, positionOf: Int32Array, out: ByteWriter): void {
    out.varint(this.sizes[id] ?? 0);
    let previous = 0;
    this.forEach(id, (slot, field, count) => {
      const position = positionOf[slot] ?? -1;
      if (position < 0) throw new RangeError(`Slot ${slot} has postings but no position.`);
      const stored = Math.min(count, COUNTS - 1);
      const posting = (position * FIELDS + field) * COUNTS + stored;
      out.varint(posting - previous);
      if (stored === COUNTS - 1) out.varint(count);
      previous = posting;
    });
  }

  /**
   * Reads postings that `encode` wrote into term `id` (a term without postings), their positions taken as slots.
   * @throws RangeError when they are malformed: cut short, out of order, naming a slot of `slots` or more or a field
   *   of `fields` or more, or a count of 0.
   */
  decode(id: number, input: ByteReader, slots: number, fields: number): void {
    const size = input.varint();
    if (size === 0 || (this.sizes[id] ?? 0) > 0) throw new RangeError(`Term ${id} has no postings, or some already.`);
    const list = new Uint32Array(size);
    let posting = 0;
    for (let index = 0; index < size; index += 1) {
      const delta = input.varint();
      posting += delta;
      const key = Math.floor(posting / COUNTS);
      const stored = posting % COUNTS;
      if ((delta === 0 && index > 0) || stored === 0 || key % FIELDS >= fields || Math.floor(key / FIELDS) >= slots) {
        throw new RangeError(`Term ${id} has a malformed posting.`);
      }
      if (stored === COUNTS - 1) this.overflow.set(`${id}:${key}`, input.varint());
      list[index] = posting;
    }
    this.sizes[id] = size;
    if (size === 1) this.single[id] = list[0] as number;
    else this.lists[id] = list;
  }

  private visitPosting(id: number, posting: number, visit: (slot: number, field: number, count: number) => void): void {
    const key = Math.floor(posting / COUNTS);
    const stored = posting % COUNTS;
    const count = stored === COUNTS - 1 ? (this.overflow.get(`${id}:${key}`) as number) : stored;
    visit(Math.floor(key / FIELDS), key % FIELDS, count);
  }
}

/** The first index below `size` whose posting is at least `value` (`size` when none is). */
function lowerBound(list: Uint32Array, size: number, value: number): number {
  let low = 0;
  let high = size;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((list[middle] as number) < value) low = middle + 1;
    else high = middle;
  }
  return low;
}
