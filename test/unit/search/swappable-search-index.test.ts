/**
 * The local runtime's reindex: a fresh EmbeddedSearchIndex built beside the live one and swapped in, with writes
 * arriving during the rebuild neither lost nor overwritten by the rebuild's older copies.
 */
import { describe, expect, it } from 'vitest';
import { EmbeddedSearchIndex } from '../../../functions/adapters/embedded/search-engine.js';
import { SwappableSearchIndex } from '../../../functions/adapters/embedded/swappable-search-index.js';
import type { DeviceDocument, ScenarioDocument, SearchDocument } from '../../../functions/core/search/documents.js';
import type { SearchQuery } from '../../../functions/core/search/query.js';

const scenario = (id: string, name = `Scenario ${id}`): ScenarioDocument => ({
  type: 'SCENARIO',
  id,
  company: 'acme',
  name,
  latestVersion: '1.0.0',
  versions: ['1.0.0'],
  created: '2024-01-01T00:00:00.000Z',
  updated: '2024-01-01T00:00:00.000Z',
});
const everything: SearchQuery = {
  companies: ['acme'],
  filters: new Map(),
  sort: { field: 'id', direction: 'ASC' },
  page: 1,
  pageSize: 100,
};

async function names(index: SwappableSearchIndex): Promise<string[]> {
  return (await index.search(everything)).resources.map((document) => `${document.id}:${(document as ScenarioDocument).name}`);
}

/** A promise and its resolver. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open = (): void => undefined;
  const opened = new Promise<void>((done) => {
    open = done;
  });
  return { opened, open };
}

describe('SwappableSearchIndex', () => {
  it('serves the live index during a rebuild, then the rebuilt one; writes made meanwhile survive the swap', async () => {
    const index = new SwappableSearchIndex(() => new EmbeddedSearchIndex());
    await index.upsert([scenario('a'), scenario('b'), scenario('stale')]);
    const halfway = gate();
    const resume = gate();
    // The source of truth, as a scan reads it: a, b (stale was deleted from the table before the rebuild).
    const rebuilt = index.rebuild(async (sink) => {
      await sink.upsert([scenario('a')]);
      halfway.open();
      await resume.opened;
      // Read before the live writes below, applied after them: must not win.
      await sink.upsert([scenario('b'), scenario('c', 'Old name of c'), scenario('d')]);
      return 4;
    });
    await halfway.opened;
    // Live writes from the stream while the rebuild runs: a new scenario, a renamed one, a removal.
    await index.upsert([scenario('c', 'New name of c')]);
    await index.remove([{ type: 'SCENARIO', company: 'acme', id: 'd' }]);
    expect(await names(index)).toEqual(['a:Scenario a', 'b:Scenario b', 'c:New name of c', 'stale:Scenario stale']);
    resume.open();

    expect(await rebuilt).toMatchObject({ index: 'embedded-2', documents: 4 });
    expect(await names(index)).toEqual(['a:Scenario a', 'b:Scenario b', 'c:New name of c']);
    await index.upsert([scenario('e')]);
    expect(await names(index)).toContain('e:Scenario e');
  });

  it('keeps the live index when the rebuild fails, and joins a rebuild already running', async () => {
    const index = new SwappableSearchIndex(() => new EmbeddedSearchIndex());
    await index.upsert([scenario('a')]);
    await expect(
      index.rebuild(async () => {
        throw new Error('DynamoDB is down');
      }),
    ).rejects.toThrow('DynamoDB is down');
    expect(await names(index)).toEqual(['a:Scenario a']);

    let loads = 0;
    const load = async (sink: { upsert(documents: SearchDocument[]): Promise<void> }): Promise<number> => {
      loads += 1;
      await sink.upsert([scenario('b')]);
      return 1;
    };
    const [first, second] = await Promise.all([index.rebuild(load), index.rebuild(load)]);
    expect(loads).toBe(1);
    expect(second).toEqual(first);
    expect(await names(index)).toEqual(['b:Scenario b']);
  });

  it('selects device ids from the live index, then from the rebuilt one', async () => {
    const device = (id: string): DeviceDocument => ({
      type: 'DEVICE',
      id,
      company: 'acme',
      serial: id,
      created: '2024-01-01T00:00:00.000Z',
      updated: '2024-01-01T00:00:00.000Z',
      connection: { state: 'CONNECTED' },
    });
    const index = new SwappableSearchIndex(() => new EmbeddedSearchIndex());
    await index.upsert([device('k-2'), device('k-1'), scenario('a')]);
    const all = { companies: ['acme'], filters: new Map<string, string[]>() };
    expect(await index.selectIds(all, 10)).toEqual({ ids: ['k-1', 'k-2'], total: 2 });
    await index.rebuild(async (sink) => {
      await sink.upsert([device('k-3')]);
      return 1;
    });
    expect(await index.selectIds(all, 10)).toEqual({ ids: ['k-3'], total: 1 });
  });
});

describe('SwappableSearchIndex loading a snapshot’s encoded documents', () => {
  const globalSearch = (index: SwappableSearchIndex, text: string) =>
    index
      .search({ ...everything, global: text, sort: { field: 'relevance', direction: 'DESC' } })
      .then((result) => result.resources.map((document) => document.id));

  it('serves them with filters at once and full text before the background indexing is done, as they were written', async () => {
    const writer = new EmbeddedSearchIndex();
    const handed: SearchDocument[] = [scenario('s1', 'Welcome screen'), scenario('s2', 'Timetable'), scenario('s3', 'Welcome back')];
    await writer.upsert(handed);
    const { strings, documents } = writer.snapshotContents();
    const index = new SwappableSearchIndex(() => new EmbeddedSearchIndex());

    const result = await index.rebuild(async (sink) => {
      await sink.adoptEncoded(strings, documents);
      return documents.length;
    });
    // Removed and replaced while their full-text indexing is still pending.
    await index.remove([{ type: 'SCENARIO', company: 'acme', id: 's3' }]);
    await index.upsert([scenario('s2', 'Welcome timetable')]);

    expect(result).toMatchObject({ index: 'embedded-2', documents: 3 });
    expect(index.generation).toBe(2);
    expect(await names(index)).toEqual(['s1:Welcome screen', 's2:Welcome timetable']);
    expect(await globalSearch(index, 'welcome')).toEqual(['s1', 's2']);
    expect(await globalSearch(index, 'back')).toEqual([]);
    // Its snapshot holds the same bytes for what did not change, under the same table.
    const again = index.snapshotContents();
    expect(again?.strings).toEqual(strings);
    expect(again?.documents).toContain(documents[0]);
  });

  it('refuses a snapshot into an index that holds documents already', async () => {
    const writer = new EmbeddedSearchIndex();
    await writer.upsert([scenario('s1')]);
    const { strings, documents } = writer.snapshotContents();
    expect(() => writer.adoptEncoded(strings, documents)).toThrow(/Only an empty index/);
  });
});
