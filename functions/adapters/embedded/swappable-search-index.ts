import { type DocumentKey, documentKeyString, type SearchDocument } from '../../core/search/documents.js';
import type { SearchIndex } from '../../core/search/ports.js';
import type { CountQuery, SearchQuery, SearchResult, ValueCounts } from '../../core/search/query.js';
import type { RebuildableSearchIndex, ReindexResult } from '../../core/search/reindex.js';

/**
 * What snapshots need of an index (EmbeddedSearchIndex has it): its documents, and taking documents over without a
 * copy.
 */
export interface SnapshotCapableIndex extends SearchIndex {
  /** Every document held (read-only). */
  documents(): SearchDocument[];
  /** Inserts or replaces documents that the caller hands over (no copy is made). */
  adopt(documents: SearchDocument[]): void;
}

function isSnapshotCapable(index: SearchIndex): index is SnapshotCapableIndex {
  return (
    typeof (index as Partial<SnapshotCapableIndex>).documents === 'function' &&
    typeof (index as Partial<SnapshotCapableIndex>).adopt === 'function'
  );
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
   * The live index's documents (read-only; the live index's own objects), or undefined when its kind cannot give
   * them (see SnapshotCapableIndex). Changes of count `changes` and swaps of `generation` tell whether they changed.
   */
  documents(): SearchDocument[] | undefined {
    return isSnapshotCapable(this.live) ? this.live.documents() : undefined;
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
   * Builds a fresh index with `load` (which upserts every document into the sink it is given and returns how many),
   * then swaps it in. A rebuild asked while one runs joins it. With `adopt` (documents just read from a snapshot,
   * referenced nowhere else), the sink hands them over without a copy when the new index can take them
   * (SnapshotCapableIndex.adopt).
   * @throws what `load` throws; the live index is then kept.
   */
  rebuild(load: (sink: Pick<SearchIndex, 'upsert'>) => Promise<number>, options: { adopt?: boolean } = {}): Promise<ReindexResult> {
    this.running ??= (async () => {
      const started = Date.now();
      const next = this.create();
      const touched = new Set<string>();
      this.building = { next, touched };
      try {
        const adopting = options.adopt === true && isSnapshotCapable(next) ? next : undefined;
        const documents = await load({
          upsert: async (batch) => {
            const fresh = batch.filter((document) => !touched.has(documentKeyString(document)));
            if (adopting === undefined) await next.upsert(fresh);
            else adopting.adopt(fresh);
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
