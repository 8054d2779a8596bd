/**
 * The embedded search engine's filters and value counts: every filter field of the registry (`type` and `company`
 * included) has one bitset of slots per value, so filtering is word-wise OR (the values of a field) and AND (across
 * fields), and counting the documents that carry a value is a popcount. Fields outside the registry are read from the
 * documents themselves.
 */
import { documentMatches, type SearchDocument, valuesAtPath } from '../../core/search/documents.js';
import type { ValueCounts } from '../../core/search/query.js';
import { FILTER_FIELDS } from '../../core/search/registry.js';
import { forEachSlot, hasSlot, popcount } from './slot-bitsets.js';
import { documentOf, type Entry } from './sort-order.js';

/** Fields with bitset postings: every filter field. */
const INDEXED_FIELDS: readonly string[] = FILTER_FIELDS.map((field) => field.field);
const INDEXED_FIELD_POSITION = new Map(INDEXED_FIELDS.map((field, position) => [field, position]));
const COMPANY_POSITION = INDEXED_FIELD_POSITION.get('company') as number;
/** Label field of each `data` filter field that has one (health.versionCode → health.versionName). */
const LABEL_FIELDS = new Map<string, string>(
  FILTER_FIELDS.flatMap((field) =>
    field.values.kind === 'data' && field.values.labelField !== undefined ? [[field.field, field.values.labelField]] : [],
  ),
);

/** Postings of one filter field: dictionary-encoded values, one bitset of slots per value. */
interface FieldIndex {
  codeOf: Map<string, number>;
  values: string[];
  bits: Uint32Array[];
}

/**
 * Per value: how many matching documents carry it and the slot of the one the label is read from (for a field with a
 * label, the one with the smallest key).
 */
type Counted = Map<string, { count: number; slot: number }>;

/** The bitsets of every filter field, over the slots of the engine's entries. */
export class FilterPostings {
  private readonly fields: FieldIndex[] = INDEXED_FIELDS.map(() => ({ codeOf: new Map(), values: [], bits: [] }));

  /**
   * `slots`: the engine's entries by slot (undefined for free slots), read, never changed; `capacity`: the slots
   * each bitset holds (a multiple of 32), until grow.
   */
  constructor(
    private readonly slots: readonly (Entry | undefined)[],
    private capacity: number,
  ) {}

  /** Sets `slot` in the bitset of each value `document` has in a filter field (the slot must be below the capacity). */
  add(slot: number, document: SearchDocument): void {
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
  }

  /** Clears `slot` from the bitsets of the values of `document` (the document given to `add` for that slot). */
  remove(slot: number, document: SearchDocument): void {
    INDEXED_FIELDS.forEach((field, position) => {
      const index = this.fields[position] as FieldIndex;
      for (const raw of valuesAtPath(document, field)) {
        const bits = index.bits[index.codeOf.get(String(raw)) as number] as Uint32Array;
        bits[slot >>> 5] = (bits[slot >>> 5] as number) & ~(1 << (slot & 31));
      }
    });
  }

  /** Makes every bitset hold `capacity` slots (a multiple of 32, larger than the current one). */
  grow(capacity: number): void {
    this.capacity = capacity;
    for (const index of this.fields) {
      index.bits = index.bits.map((bits) => {
        const larger = new Uint32Array(this.capacity / 32);
        larger.set(bits);
        return larger;
      });
    }
  }

  /**
   * Bitset of the documents in `companies` (and of `type`) that match every filter field (any of its values).
   * Fields outside the registry are checked document by document.
   */
  match(companies: readonly string[], type: string | undefined, filters: ReadonlyMap<string, readonly string[]>): Uint32Array {
    const result = new Uint32Array(Math.ceil(this.slots.length / 32));
    for (const bits of this.union(COMPANY_POSITION, companies)) {
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
      const sets = this.union(position, values);
      for (let word = 0; word < result.length; word += 1) {
        let any = 0;
        for (const bits of sets) any |= bits[word] as number;
        result[word] = (result[word] as number) & any;
      }
    }
    if (unindexed.length > 0) {
      forEachSlot(result, (slot) => {
        const keep = documentMatches(documentOf(this.slots[slot] as Entry), unindexed);
        if (!keep) result[slot >>> 5] = (result[slot >>> 5] as number) & ~(1 << (slot & 31));
      });
    }
    return result;
  }

  /**
   * Per field of `fields`: each distinct value carried by the documents in `matches` and how many carry it (a
   * document counts once per value), with a `label` for data fields that declare a label field, read from the
   * matching document with the smallest key carrying the value: the same document on every engine (OpenSearch's top
   * hit by `_key`), whatever the slot order. `keyOrder` gives every live slot in key order (asked for only when a
   * labelled field is counted). A field without values maps to an empty Map; values are listed in ascending order.
   */
  countValues(matches: Uint32Array, fields: readonly string[], keyOrder: () => readonly number[]): ValueCounts {
    const result: ValueCounts = new Map();
    for (const field of fields) {
      const labelField = LABEL_FIELDS.get(field);
      const position = INDEXED_FIELD_POSITION.get(field);
      const counted =
        position === undefined
          ? this.countUnindexed(matches, field, labelField !== undefined)
          : this.countIndexed(matches, position, labelField === undefined ? undefined : keyOrder);
      const values = new Map<string, { count: number; label?: string }>();
      for (const value of [...counted.keys()].sort()) {
        const { count, slot } = counted.get(value) as { count: number; slot: number };
        const label = labelField === undefined ? undefined : valuesAtPath(documentOf(this.slots[slot] as Entry), labelField)[0];
        values.set(value, label === undefined ? { count } : { count, label: String(label) });
      }
      result.set(field, values);
    }
    return result;
  }

  /**
   * The values of the filter field at `position` in `matches`, by popcount, each with its first matching slot; with
   * `keyOrder`, the first in key order (found by walking it until every value has one: a value carried by many
   * documents is met early, and one walk serves them all).
   */
  private countIndexed(matches: Uint32Array, position: number, keyOrder?: () => readonly number[]): Counted {
    const counted: Counted = new Map();
    const index = this.fields[position] as FieldIndex;
    /** Codes of the values counted, whose first slot in key order is still to be found. */
    const pending: number[] = [];
    index.bits.forEach((bits, code) => {
      let count = 0;
      let first = -1;
      for (let word = 0; word < matches.length; word += 1) {
        const both = (matches[word] as number) & (bits[word] as number);
        if (both === 0) continue;
        count += popcount(both);
        if (first < 0) first = word * 32 + 31 - Math.clz32(both & -both);
      }
      if (count === 0) return;
      counted.set(index.values[code] as string, { count, slot: first });
      pending.push(code);
    });
    if (keyOrder === undefined || pending.length === 0) return counted;
    for (const slot of keyOrder()) {
      if (!hasSlot(matches, slot)) continue;
      for (let at = pending.length - 1; at >= 0; at -= 1) {
        const code = pending[at] as number;
        if (!hasSlot(index.bits[code] as Uint32Array, slot)) continue;
        (counted.get(index.values[code] as string) as { count: number; slot: number }).slot = slot;
        pending.splice(at, 1);
      }
      if (pending.length === 0) break;
    }
    return counted;
  }

  /** The values at `field` (not a filter field) of the documents in `matches`; `labelled`: track the smallest key. */
  private countUnindexed(matches: Uint32Array, field: string, labelled: boolean): Counted {
    const counted: Counted = new Map();
    forEachSlot(matches, (slot) => {
      for (const value of new Set(valuesAtPath(documentOf(this.slots[slot] as Entry), field).map(String))) {
        const current = counted.get(value);
        if (current === undefined) counted.set(value, { count: 1, slot });
        else {
          current.count += 1;
          if (labelled) current.slot = this.smallerKey(slot, current.slot);
        }
      }
    });
    return counted;
  }

  /** Of two slots, the one whose entry has the smaller key. */
  private smallerKey(slot: number, than: number): number {
    return (this.slots[slot] as Entry).key < (this.slots[than] as Entry).key ? slot : than;
  }

  /** The bitsets of the values of the filter field at `position` (values without one are skipped). */
  private union(position: number, values: readonly string[]): Uint32Array[] {
    const index = this.fields[position] as FieldIndex;
    return values.flatMap((value) => {
      const code = index.codeOf.get(value);
      return code === undefined ? [] : [index.bits[code] as Uint32Array];
    });
  }
}
