/**
 * The embedded search engine: an in-memory implementation of the SearchIndex
 * port for the local runtime and the tests, with the semantics of the
 * OpenSearch adapter (company scoping, OR within a field and AND across fields,
 * `global` full text, sort with missing values last and the document-key
 * tie-breaker, facet counts).
 *
 * Layout, sized for ~100,000 documents:
 * - each document sits in an Entry with a numeric slot, kept encoded (document-codec.ts: a few hundred bytes
 *   rather than kilobytes of objects), decoded only for a page of results, a count's label or its removal;
 * - every filter field (`type` and `company` included) has one bitset of slots
 *   per value, so filtering is word-wise OR/AND and counting is a popcount
 *   (filter-postings.ts, over slot-bitsets.ts);
 * - every (sort field, direction) gets a presorted slot array, built on first
 *   use and kept in order by the writes (a splice per document for a few, one
 *   merge pass per array for more), never rebuilt, so a page of a large
 *   result is read by walking it instead of sorting the matches (sort-order.ts);
 * - writes run one at a time in call order, in slices with a turn of the event
 *   loop between two, so a search waits for one slice, not a whole batch;
 * - `global` runs on FullTextIndex (full-text-index.ts): MiniSearch's radix tree
 *   as the term dictionary, with per-field postings scored with BM25+.
 * This module holds the documents, their slots and the writes, and answers the
 * port's queries with those structures.
 */
import { type DocumentKey, documentKeyString, type SearchDocument } from '../../core/search/documents.js';
import type { SearchIndex } from '../../core/search/ports.js';
import type { CountQuery, SearchQuery, SearchResult, ValueCounts } from '../../core/search/query.js';
import { SORT_FIELDS } from '../../core/search/registry.js';
import { DocumentCodec } from './document-codec.js';
import { FilterPostings } from './filter-postings.js';
import { FullTextIndex } from './full-text-index.js';
import { forEachSlot, hasSlot, popcount } from './slot-bitsets.js';
import {
  compareKeys,
  documentOf,
  type Entry,
  entryOf,
  frozenDocumentOf,
  PresortedSlots,
  smallest,
  sortComparator,
  sortValueOf,
} from './sort-order.js';
import type { SnapshotContents } from './swappable-search-index.js';

export { codePointSortKey } from './sort-order.js';

const SORT_FIELD_POSITION = new Map<string, number>(SORT_FIELDS.map((field, position) => [field, position]));

/** Up to this many matches a page is selected from the matches directly; above, from the presorted array. */
const DIRECT_SORT_LIMIT = 2_000;
/**
 * Documents (or keys) a write applies per slice before it lets the event loop turn (a search, an HTTP request): at
 * 100,000 documents one costs 0.2 to 0.7 ms (most of it in the full-text index), so a slice takes 3 to 11 ms.
 */
const WRITE_SLICE = 16;
/**
 * Writes of up to this many documents splice each into the presorted arrays (and out) at once; larger ones patch each
 * array in one pass once all their documents are in (PresortedSlots), which costs ~0.7 ms at 100,000 documents however
 * few change: the two cost the same at ~32 replaced documents, the pass is 5 times cheaper at 500.
 */
const SPLICE_SORT_LIMIT = 32;
/** Adopted documents added to the full-text index per background slice (adoptEncoded). */
const TEXT_SLICE = 500;

/** How a write keeps the presorted arrays in order: a splice per document, or notes and then a pass per array. */
type SortUpdate = 'splice' | 'note';

/** Resolves after the event loop has turned once (pending I/O and timers run first). */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * In-memory SearchIndex for the local runtime and the tests. Documents are kept encoded (DocumentCodec), so callers
 * cannot alter the index through what they gave or got; results are decoded and deeply frozen (a write to one
 * throws TypeError). Reads are synchronous; the promises only reject on bugs.
 *
 * Writes (`upsert`, `remove`) run one after the other in call order, each in slices of WRITE_SLICE documents with a
 * turn of the event loop between two slices, so a search is not kept waiting behind a large batch. A read made
 * meanwhile may see a batch partly applied (as OpenSearch, which is eventually consistent, may); it sees every
 * write whose promise has resolved. A write that rejects does not stop the ones after it.
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
  private readonly filters = new FilterPostings(this.slots, this.capacity);
  private readonly sorted = new PresortedSlots(this.slots);
  private text = new FullTextIndex(this.capacity);
  /**
   * Slots adopted (adoptEncoded) but not yet in the full-text index, in adoption order: indexed in slices in the
   * background, and all at once by the first `global` search that finds some left.
   */
  private readonly textBacklog = new Set<number>();
  private textWorker: NodeJS.Immediate | undefined;
  /** How the documents are kept (its string table is made of the first documents written, or a snapshot's). */
  private codec = new DocumentCodec();
  /** The last write (upsert or remove) asked for, settled when it ends; each new one starts after it. */
  private lastWrite: Promise<void> = Promise.resolve();

  /**
   * One page of results (`query.page` is 1-based; past the end, `resources` is empty) and the total number of
   * matching documents. Resources are decoded for the page only (about 50 µs each) and deeply frozen.
   */
  async search(query: SearchQuery): Promise<SearchResult> {
    const start = (query.page - 1) * query.pageSize;
    const end = start + query.pageSize;
    let total: number;
    let page: Entry[];
    if (query.global !== undefined) {
      this.indexTextBacklog(Number.POSITIVE_INFINITY);
      const { slots, scores } = this.text.search(query.global, this.filters.match(query.companies, undefined, new Map()));
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
      const matches = this.filters.match(query.companies, undefined, query.filters);
      total = matches.reduce((sum, word) => sum + popcount(word), 0);
      if (start >= total) page = [];
      else if (query.sort.field === 'relevance') page = this.sortedPage(matches, total, 'id', false, start, end, true);
      else page = this.sortedPage(matches, total, query.sort.field, query.sort.direction === 'DESC', start, end);
    }
    return { total, resources: page.map(frozenDocumentOf) };
  }

  /**
   * Per field of `query.fields`: each distinct value carried by the matching documents and how many carry it
   * (a document counts once per value), with a `label` for data fields that declare a label field.
   * A field without values maps to an empty Map; values are listed in ascending order.
   */
  async countValues(query: CountQuery): Promise<ValueCounts> {
    return this.filters.countValues(this.filters.match(query.companies, query.type, query.filters), query.fields, () =>
      this.sorted.slotsInKeyOrder(this.byKey.values()),
    );
  }

  /**
   * The ids of the matching device documents, sorted (code unit order, which is OpenSearch's keyword order for the
   * ASCII device ids), at most `max`, and the number of matches. The only allocations are the bitset of matches and
   * the id array. Sorting 100,000 ids takes tens of milliseconds; the presorted `id` array would save little of that,
   * cost a fraction of a second to build and a pass over it per large write to keep.
   */
  async selectIds(query: { companies: string[]; filters: Map<string, string[]> }, max: number): Promise<{ ids: string[]; total: number }> {
    const matches = this.filters.match(query.companies, 'DEVICE', query.filters);
    const ids: string[] = [];
    forEachSlot(matches, (slot) => {
      ids.push((this.slots[slot] as Entry).id);
    });
    const total = ids.length;
    ids.sort();
    if (ids.length > max) ids.length = Math.max(0, max);
    return { ids, total };
  }

  /**
   * Inserts or replaces documents by (type, company, id); within one call the last duplicate wins, and across calls
   * the last call. Starts when the writes asked before have ended; the documents must not change until it resolves.
   * @throws TypeError when a document holds a BigInt (JSON has none); the documents before it may stay written.
   */
  async upsert(documents: SearchDocument[]): Promise<void> {
    const batch = [...documents];
    await this.serialized(async () => {
      this.codec.prime(batch);
      await this.inSlices(batch, (document, sortUpdate) => {
        const key = documentKeyString(document);
        const previous = this.byKey.get(key);
        // A replaced document keeps its slot (the slot freed last is taken first), so its full text is only updated.
        const before = previous === undefined ? undefined : { slot: previous.slot, document: this.detach(previous, sortUpdate, true) };
        this.attach(key, document, { sortUpdate, before });
      });
    });
  }

  /** Removes documents by key, after the writes asked before have ended; unknown keys are ignored. */
  async remove(keys: DocumentKey[]): Promise<void> {
    const strings = keys.map(documentKeyString);
    await this.serialized(() =>
      this.inSlices(strings, (key, sortUpdate) => {
        const entry = this.byKey.get(key);
        if (entry !== undefined) this.detach(entry, sortUpdate);
      }),
    );
  }

  /** Runs `write` once every write asked before has ended (whether it resolved or rejected); settles as it does. */
  private serialized(write: () => Promise<void>): Promise<void> {
    const done = this.lastWrite.then(write);
    this.lastWrite = done.catch(() => undefined);
    return done;
  }

  /**
   * Applies `apply` to each of `items` in order, WRITE_SLICE at a time with a turn of the event loop between two
   * slices, then (a write of more than SPLICE_SORT_LIMIT) patches the presorted arrays one per turn; a read between
   * two turns patches the array it reads first, so it sees every slice applied so far in order.
   */
  private async inSlices<T>(items: readonly T[], apply: (item: T, sortUpdate: SortUpdate) => void): Promise<void> {
    const sortUpdate: SortUpdate = items.length <= SPLICE_SORT_LIMIT ? 'splice' : 'note';
    for (let start = 0; start < items.length; start += WRITE_SLICE) {
      if (start > 0) await nextTurn();
      for (const item of items.slice(start, start + WRITE_SLICE)) apply(item, sortUpdate);
    }
    while (this.sorted.stale) {
      await nextTurn();
      this.sorted.patchOne();
    }
  }

  /**
   * Loads a snapshot's documents into this empty index: `stored[n]` is a document as a codec with the string table
   * `strings` encoded it (SnapshotContents of the index that wrote it), kept as it is. Filters, counts and sorts see
   * them at once. Their full text is `text` (the snapshot's, FullTextIndex.snapshot) when given and readable; else it
   * is built afterwards, in slices of TEXT_SLICE documents between other work (each slice ~0.1 s at 100,000
   * documents), or at once by the first `global` search that comes before it is done. A document whose key `skip`
   * names (written since, and newer) is left out.
   * @returns whether `text` was used.
   * @throws Error when the index holds documents already, or a document is not the codec's.
   */
  adoptEncoded(
    strings: readonly string[],
    stored: readonly Uint8Array[],
    skip: (key: string) => boolean = () => false,
    text?: Uint8Array,
  ): boolean {
    if (this.byKey.size > 0 || this.codec.strings.length > 0) throw new Error('Only an empty index adopts a snapshot.');
    this.codec = DocumentCodec.withTable(strings);
    this.sorted.clear();
    const adopted = text !== undefined && this.adoptText(text, stored.length);
    const skipped: number[] = [];
    stored.forEach((bytes, position) => {
      const document = this.codec.decode(bytes, false);
      const key = documentKeyString(document);
      if (skip(key)) {
        if (!adopted) return;
        // The snapshot's full text has this document at its position: take it out, and free the slot.
        this.text.remove(position, document);
        skipped.push(position);
        return;
      }
      const previous = this.byKey.get(key);
      if (previous !== undefined) this.detach(previous);
      this.attach(key, document, { text: adopted ? 'present' : 'defer', stored: bytes, slot: adopted ? position : undefined });
    });
    // In reverse, so the lowest is taken first; one push each (a spread of 100,000 would exceed the call stack).
    for (let index = skipped.length - 1; index >= 0; index -= 1) this.freeSlots.push(skipped[index] as number);
    if (!adopted) this.textWorker ??= setImmediate(() => this.indexTextInBackground());
    return adopted;
  }

  /** Takes a snapshot's full text of `documents` documents as the index's, when it can be read. */
  private adoptText(text: Uint8Array, documents: number): boolean {
    while (this.capacity < documents) this.grow();
    try {
      this.text = FullTextIndex.fromSnapshot(text, documents, this.capacity);
      return true;
    } catch {
      // Another version or damaged: the documents are still good, and the text is built from them.
      return false;
    }
  }

  /** Whether every document is in the full-text index (adoptEncoded defers it). */
  get textComplete(): boolean {
    return this.textBacklog.size === 0;
  }

  /**
   * What a snapshot holds: the codec's string table, every document as it is kept, in slot order (never changed), and,
   * unless part of it is still to be built, the full text in its snapshot form with each slot replaced by its
   * document's position, to be taken (`text`) before the index changes: taking it throws once the full text changed.
   */
  snapshotContents(): SnapshotContents {
    const documents: Uint8Array[] = [];
    // Positions only matter to a full text that is offered: one still being built is not.
    const positionOf = this.textBacklog.size === 0 ? new Int32Array(this.slots.length).fill(-1) : undefined;
    for (const entry of this.slots) {
      if (entry === undefined) continue;
      if (positionOf !== undefined) positionOf[entry.slot] = documents.length;
      documents.push(entry.stored);
    }
    const text = positionOf === undefined ? undefined : textSnapshot(this.text, positionOf, documents.length);
    return { strings: this.codec.strings, documents, text };
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
      this.text.add(slot, documentOf(this.slots[slot] as Entry));
      done += 1;
    }
  }

  /**
   * Adds a document to every structure: map, slots, bitsets, presorted arrays (as `sortUpdate` says; left out when
   * they are cleared), full text as `text` says: `add` it (the default), `defer` it to the full-text backlog, or it is
   * `present` already (a snapshot's) — or where the slot is in the backlog already. `before`: the document this one
   * replaces, whose full text detach kept in `before.slot`. `slot`: the slot to take (free) instead of the next one.
   */
  private attach(
    key: string,
    document: SearchDocument,
    options: {
      sortUpdate?: SortUpdate;
      text?: 'add' | 'defer' | 'present';
      stored?: Uint8Array;
      before?: { slot: number; document: SearchDocument };
      slot?: number;
    } = {},
  ): void {
    const { sortUpdate, text = 'add', stored } = options;
    let { before } = options;
    const slot = options.slot ?? this.freeSlots.pop() ?? this.slots.length;
    while (slot >= this.capacity) this.grow();
    const entry = entryOf(slot, key, document, this.codec, stored);
    this.slots[slot] = entry;
    this.byKey.set(key, entry);
    this.filters.add(slot, document);
    if (sortUpdate === 'splice') this.sorted.insert(entry);
    else if (sortUpdate === 'note') this.sorted.noteAdded(entry);
    if (before !== undefined && (before.slot !== slot || this.textBacklog.has(before.slot))) {
      // Not where the replaced document's full text is (or that is still to be indexed): take it out as usual.
      if (!this.textBacklog.delete(before.slot)) this.text.remove(before.slot, before.document);
      before = undefined;
    }
    if (text === 'defer') this.textBacklog.add(slot);
    else if (text === 'present') return;
    else if (before !== undefined) this.text.update(slot, before.document, document);
    else this.text.add(slot, document);
  }

  /**
   * Takes a document out of every structure, the full-text index included unless `keepText` (the caller replaces it
   * at once: attach's `before`), and frees its slot; out of the presorted arrays as `sortUpdate` says (left out when
   * they are cleared).
   * @returns the document taken out.
   */
  private detach(entry: Entry, sortUpdate?: SortUpdate, keepText = false): SearchDocument {
    if (sortUpdate === 'splice') this.sorted.remove(entry);
    else if (sortUpdate === 'note') this.sorted.noteRemoved(entry);
    const document = documentOf(entry);
    this.filters.remove(entry.slot, document);
    if (!keepText && !this.textBacklog.delete(entry.slot)) this.text.remove(entry.slot, document);
    this.byKey.delete(entry.key);
    this.slots[entry.slot] = undefined;
    this.freeSlots.push(entry.slot);
    return document;
  }

  /** Doubles the slot capacity of every bitset and of the full-text index. */
  private grow(): void {
    this.capacity *= 2;
    this.text.grow(this.capacity);
    this.filters.grow(this.capacity);
  }

  /** A bitset with room for every slot in use, none set. */
  private emptyBits(): Uint32Array {
    return new Uint32Array(Math.ceil(this.slots.length / 32));
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
      const sortValues = new Map(entries.map((entry) => [entry, sortValueOf(documentOf(entry), field)] as const));
      const sign = descending ? -1 : 1;
      return smallest(entries, end, (a, b) => {
        const va = sortValues.get(a);
        const vb = sortValues.get(b);
        if (va !== vb) return va === undefined ? 1 : vb === undefined ? -1 : va < vb ? -sign : sign;
        return compareKeys(a, b);
      }).slice(start);
    }
    if (total <= DIRECT_SORT_LIMIT) return smallest(collect(), end, sortComparator(position, descending)).slice(start);

    const array = this.sorted.slotsInOrder(position, descending, this.byKey.values());
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
}

/**
 * The chunks of `text.snapshot(positionOf, positions)`, made as they are taken, each checked before it is handed: the
 * full text must not have changed since this was called (a chunk made after a change could mix the index's states).
 * The iterator throws Error when it did.
 */
function textSnapshot(text: FullTextIndex, positionOf: Int32Array, positions: number): Iterable<Uint8Array> {
  const changes = text.changes;
  return (function* () {
    for (const chunk of text.snapshot(positionOf, positions)) {
      if (text.changes !== changes) throw new Error('The full text changed while its snapshot was taken.');
      yield chunk;
    }
  })();
}
