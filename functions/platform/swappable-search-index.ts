import type { SearchIndex } from '../core/ports.js';
import { documentKeyString, type DocumentKey, type SearchDocument } from '../core/search/documents.js';
import type { CountQuery, SearchQuery, SearchResult, ValueCounts } from '../core/search/query.js';
import type { ReindexResult } from './reindex.js';

/**
 * A SearchIndex that can be rebuilt while it serves: reads go to the live index; `rebuild` fills a fresh one and
 * swaps it in. Writes made during a rebuild go to both indexes, and the rebuild's own (older) copy of a document
 * written meanwhile is skipped, so nothing written during the rebuild is lost or overwritten by stale data.
 */
export class SwappableSearchIndex implements SearchIndex {
  private live: SearchIndex;
  private building: { next: SearchIndex; touched: Set<string> } | undefined;
  private running: Promise<ReindexResult> | undefined;
  private generation = 1;

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
   * Builds a fresh index with `load` (which upserts every document into the sink it is given and returns how many),
   * then swaps it in. A rebuild asked while one runs joins it.
   * @throws what `load` throws; the live index is then kept.
   */
  rebuild(load: (sink: Pick<SearchIndex, 'upsert'>) => Promise<number>): Promise<ReindexResult> {
    this.running ??= (async () => {
      const started = Date.now();
      const next = this.create();
      const touched = new Set<string>();
      this.building = { next, touched };
      try {
        const documents = await load({
          upsert: (batch) => next.upsert(batch.filter((document) => !touched.has(documentKeyString(document)))),
        });
        this.live = next;
        this.generation += 1;
        return { index: `embedded-${this.generation}`, documents, tookMs: Date.now() - started };
      } finally {
        this.building = undefined;
        this.running = undefined;
      }
    })();
    return this.running;
  }

  private async write(keys: readonly DocumentKey[], apply: (index: SearchIndex) => Promise<void>): Promise<void> {
    const { live, building } = this;
    if (building !== undefined) for (const key of keys) building.touched.add(documentKeyString(key));
    await Promise.all([apply(live), ...(building === undefined ? [] : [apply(building.next)])]);
  }
}
