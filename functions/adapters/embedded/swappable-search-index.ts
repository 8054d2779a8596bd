import { type DocumentKey, documentKeyString, type SearchDocument } from '../../core/search/documents.js';
import type { SearchIndex } from '../../core/search/ports.js';
import type { CountQuery, SearchQuery, SearchResult, ValueCounts } from '../../core/search/query.js';
import type { RebuildableSearchIndex, ReindexResult } from '../../core/search/reindex.js';
import { DocumentCodec } from './document-codec.js';

/**
 * What a snapshot holds of an index: its codec's string table, its encoded documents (never changed), and its full
 * text's snapshot form (FullTextIndex.snapshot) when the index has it complete: chunks made as they are taken, which
 * must be taken before the index changes (the iterator throws Error once it did).
 */
export interface SnapshotContents {
  strings: readonly string[];
  documents: readonly Uint8Array[];
  text?: Iterable<Uint8Array>;
}

/**
 * What snapshots need of an index (EmbeddedSearchIndex has it): its encoded documents, and loading them into an empty
 * index as they are.
 */
export interface SnapshotCapableIndex extends SearchIndex {
  snapshotContents(): SnapshotContents;
  /**
   * Loads encoded documents into this empty index; those whose key `skip` names are left out. `text`: the snapshot's
   * full text, used when it can be read (else the full text is built from the documents).
   * @returns whether `text` was used.
   */
  adoptEncoded(strings: readonly string[], stored: readonly Uint8Array[], skip?: (key: string) => boolean, text?: Uint8Array): boolean;
}

function isSnapshotCapable(index: SearchIndex): index is SnapshotCapableIndex {
  return (
    typeof (index as Partial<SnapshotCapableIndex>).snapshotContents === 'function' &&
    typeof (index as Partial<SnapshotCapableIndex>).adoptEncoded === 'function'
  );
}

/** Where a rebuild's documents go: upserts, or a snapshot's encoded documents (SnapshotCapableIndex.adoptEncoded). */
export interface RebuildSink extends Pick<SearchIndex, 'upsert'> {
  /**
   * Loads a snapshot's documents as they are (an index of another kind gets them decoded and upserted), with the
   * snapshot's full text when it has one (SnapshotContents.text, joined).
   * @returns whether the full text was used (else it is built from the documents).
   * @throws Error when the documents are not the string table's, or the sink took documents already.
   */
  adoptEncoded(strings: readonly string[], stored: readonly Uint8Array[], text?: Uint8Array): Promise<boolean>;
}

/**
 * A SearchIndex that can be rebuilt while it serves: reads go to the live index; `rebuild` fills a fresh one and
 * swaps it in. Writes made during a rebuild go to both indexes, and the rebuild's own (older) copy of a document
 * written meanwhile is skipped, so nothing written during the rebuild is lost or overwritten by stale data.
 */
export class SwappableSearchIndex implements SearchIndex, RebuildableSearchIndex {
  private live: SearchIndex;
  private building: { next: SearchIndex; touched: Set<string> } | undefined;
  private running: Promise<ReindexResult> | undefined;
  private generationNumber = 1;
  private writes = 0;

  /** @param create makes an empty index (the live one at first, then one per rebuild). */
  constructor(private readonly create: () => SearchIndex) {
    this.live = create();
  }

  search(query: SearchQuery): Promise<SearchResult> {
    return this.live.search(query);
  }

  countValues(query: CountQuery): Promise<ValueCounts> {
    return this.live.countValues(query);
  }

  selectIds(query: { companies: string[]; filters: Map<string, string[]> }, max: number): Promise<{ ids: string[]; total: number }> {
    return this.live.selectIds(query, max);
  }

  async upsert(documents: SearchDocument[]): Promise<void> {
    await this.write(documents, (index) => index.upsert(documents));
  }

  async remove(keys: DocumentKey[]): Promise<void> {
    await this.write(keys, (index) => index.remove(keys));
  }

  /**
   * What a snapshot of the live index holds, or undefined when its kind cannot give it (see SnapshotCapableIndex).
   * Changes of count `changes` and swaps of `generation` tell whether it changed.
   */
  snapshotContents(): SnapshotContents | undefined {
    return isSnapshotCapable(this.live) ? this.live.snapshotContents() : undefined;
  }

  /** Number of the live index: 1 at first, +1 at each swap (rebuild). */
  get generation(): number {
    return this.generationNumber;
  }

  /** Writes (upsert and remove calls) received so far. */
  get changes(): number {
    return this.writes;
  }

  /**
   * Builds a fresh index with `load` (which upserts every document into the sink it is given, or hands it a snapshot's
   * encoded documents, and returns how many), then swaps it in. A rebuild asked while one runs joins it.
   * @throws what `load` throws; the live index is then kept.
   */
  rebuild(load: (sink: RebuildSink) => Promise<number>): Promise<ReindexResult> {
    this.running ??= (async () => {
      const started = Date.now();
      const next = this.create();
      const touched = new Set<string>();
      this.building = { next, touched };
      try {
        const documents = await load({
          upsert: async (batch) => {
            await next.upsert(batch.filter((document) => !touched.has(documentKeyString(document))));
          },
          adoptEncoded: async (strings, stored, text) => {
            if (isSnapshotCapable(next)) return next.adoptEncoded(strings, stored, (key) => touched.has(key), text);
            const codec = DocumentCodec.withTable(strings);
            const decoded = stored.map((bytes) => codec.decode(bytes));
            await next.upsert(decoded.filter((document) => !touched.has(documentKeyString(document))));
            return false;
          },
        });
        this.live = next;
        this.generationNumber += 1;
        return { index: `embedded-${this.generationNumber}`, documents, tookMs: Date.now() - started };
      } finally {
        this.building = undefined;
        this.running = undefined;
      }
    })();
    return this.running;
  }

  private async write(keys: readonly DocumentKey[], apply: (index: SearchIndex) => Promise<void>): Promise<void> {
    this.writes += 1;
    const { live, building } = this;
    if (building !== undefined) for (const key of keys) building.touched.add(documentKeyString(key));
    await Promise.all([apply(live), ...(building === undefined ? [] : [apply(building.next)])]);
  }
}
