/**
 * The embedded engine's writes: large writes keep the presorted arrays in the order a fresh build gives (so sorted
 * pages are right without a rebuild), writes apply in call order, and a large write lets searches through between
 * its slices.
 */
import { describe, expect, it } from 'vitest';
import { EmbeddedSearchIndex } from '../../../functions/adapters/embedded/search-engine.js';
import { CONNECTION_STATES } from '../../../functions/core/devices/model.js';
import { type DeviceDocument, documentKeyString, type SearchDocument } from '../../../functions/core/search/documents.js';
import type { SearchQuery } from '../../../functions/core/search/query.js';

/** Deterministic pseudo-random numbers below `modulo`. */
function numbers(seed: number): (modulo: number) => number {
  let state = seed;
  return (modulo) => {
    state = (Math.imul(state, 1103515245) + 12345) & 0x7fffffff;
    return state % modulo;
  };
}

/**
 * `count` devices `dev-<from>`… of acme and globex, with few distinct serials and update times (ties, broken by key)
 * and no location for one in four (missing values, last in both directions).
 */
function devices(from: number, count: number, seed: number): DeviceDocument[] {
  const next = numbers(seed);
  return Array.from(
    { length: count },
    (_, n): DeviceDocument => ({
      type: 'DEVICE',
      id: `dev-${String(from + n).padStart(5, '0')}`,
      company: next(2) === 0 ? 'acme' : 'globex',
      serial: `SN-${String(next(50)).padStart(3, '0')}`,
      created: '2024-01-01T00:00:00.000Z',
      updated: `2024-10-${String(1 + next(20)).padStart(2, '0')}T00:00:00.000Z`,
      connection: { state: CONNECTION_STATES[next(3)] as DeviceDocument['connection']['state'] },
      ...(next(4) === 0 ? {} : { location: { name: `Site ${next(30)}` } }),
    }),
  );
}

const SORTS: SearchQuery['sort'][] = (['serial', 'updated', 'location.name'] as const).flatMap((field) => [
  { field, direction: 'ASC' as const },
  { field, direction: 'DESC' as const },
]);

/** Every document of acme and globex in `sort` order, read a page of 1,000 at a time (past the direct-sort limit). */
async function allInOrder(index: EmbeddedSearchIndex, sort: SearchQuery['sort']): Promise<string[]> {
  const keys: string[] = [];
  for (let page = 1; ; page += 1) {
    const result = await index.search({ companies: ['acme', 'globex'], filters: new Map(), sort, page, pageSize: 1000 });
    keys.push(...result.resources.map(documentKeyString));
    if (keys.length >= result.total || result.resources.length === 0) return keys;
  }
}

/** Expects every sorted order of `index` to be that of a new index given `documents` (the live ones) alone. */
async function expectSameOrdersAsFresh(index: EmbeddedSearchIndex, documents: Iterable<SearchDocument>): Promise<void> {
  const fresh = new EmbeddedSearchIndex();
  await fresh.upsert([...documents]);
  for (const sort of SORTS) expect(await allInOrder(index, sort), `${sort.field} ${sort.direction}`).toEqual(await allInOrder(fresh, sort));
}

const byId = (id: string): SearchQuery => ({
  companies: ['acme', 'globex'],
  filters: new Map([['id', [id]]]),
  sort: { field: 'id', direction: 'ASC' },
  page: 1,
  pageSize: 10,
});

describe('EmbeddedSearchIndex writes', () => {
  it('leaves every sorted order as a fresh index gives it after large and small upserts and removes', async () => {
    const index = new EmbeddedSearchIndex();
    const live = new Map<string, SearchDocument>();
    const upsert = async (batch: DeviceDocument[]): Promise<void> => {
      await index.upsert(batch);
      for (const document of batch) live.set(documentKeyString(document), document);
    };
    await upsert(devices(0, 3000, 1));
    // Builds every presorted array the checks below read.
    await expectSameOrdersAsFresh(index, live.values());

    // 600 replacements (new serials, times and locations, some now missing), 400 new devices, and two devices twice
    // (the last copy wins), once within a slice and once across slices: sixteen slices of the one-pass patch.
    const replaced = devices(1000, 600, 2);
    const { location: _, ...moved } = replaced[3] as DeviceDocument;
    await upsert([
      ...replaced.slice(0, 10),
      { ...moved, serial: 'SN-998' },
      ...replaced.slice(10),
      ...devices(5000, 400, 3),
      { ...(replaced[0] as DeviceDocument), serial: 'SN-999' },
    ]);
    await expectSameOrdersAsFresh(index, live.values());

    // 700 removals, unknown keys among them, then a medium write (one slice, one pass) and a small one (splices).
    const removed = [...devices(0, 500, 4), ...devices(4800, 200, 5)];
    await index.remove(removed);
    for (const key of removed) live.delete(documentKeyString(key));
    await upsert(devices(2990, 50, 6));
    await upsert(devices(100, 3, 7));
    await expectSameOrdersAsFresh(index, live.values());
  });

  it('applies concurrent writes in call order, so the last write of a key wins', async () => {
    const index = new EmbeddedSearchIndex();
    const first = devices(0, 1, 1)[0] as DeviceDocument;
    const large = [{ ...first, serial: 'early' }, ...devices(1, 1000, 3), { ...first, serial: 'first' }];
    // Not awaited one by one: the small write is asked while the large one is still at its first slices.
    const writes = [index.upsert(large), index.upsert([{ ...first, serial: 'second' }])];
    await Promise.all(writes);
    expect((await index.search(byId(first.id))).resources.map((document) => (document as DeviceDocument).serial)).toEqual(['second']);

    await Promise.all([index.upsert([...devices(1, 1000, 4), { ...first, serial: 'third' }]), index.remove([first])]);
    expect((await index.search(byId(first.id))).total).toBe(0);
  });

  it('answers a search asked during a large upsert before the upsert resolves, and sees all of it once it has', async () => {
    const index = new EmbeddedSearchIndex();
    let written = false;
    const writing = index.upsert(devices(0, 3000, 1)).then(() => {
      written = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    const during = await index.search(byId('dev-02999'));
    expect(written).toBe(false);
    expect(during.total).toBe(0);
    await writing;
    expect((await index.search(byId('dev-02999'))).total).toBe(1);
  });

  it('gives sorted pages in order during a large upsert, with the documents written so far', async () => {
    const index = new EmbeddedSearchIndex();
    const initial = devices(0, 3000, 1);
    await index.upsert(initial);
    await expectSameOrdersAsFresh(index, initial);
    const added = devices(3000, 2000, 2);
    let written = false;
    const writing = index.upsert(added).then(() => {
      written = true;
    });
    for (let turn = 0; turn < 3; turn += 1) await new Promise((resolve) => setImmediate(resolve));
    // Read without letting the event loop turn, so the upsert does not move on meanwhile.
    const orders = await Promise.all(SORTS.map((sort) => allInOrder(index, sort)));
    expect(written).toBe(false);
    const writtenSoFar = (orders[0] as string[]).length - initial.length;
    expect(writtenSoFar).toBeGreaterThan(0);
    expect(writtenSoFar).toBeLessThan(added.length);
    const fresh = new EmbeddedSearchIndex();
    await fresh.upsert([...initial, ...added.slice(0, writtenSoFar)]);
    for (const [at, sort] of SORTS.entries()) expect(orders[at], `${sort.field} ${sort.direction}`).toEqual(await allInOrder(fresh, sort));
    await writing;
  });

  it('goes on with the next writes after one rejects', async () => {
    const index = new EmbeddedSearchIndex();
    const [kept, broken, later] = devices(0, 3, 1) as [DeviceDocument, DeviceDocument, DeviceDocument];
    await index.upsert([kept]);
    const failing = index.upsert([{ ...broken, serial: 10n as unknown as string }]);
    const next = index.upsert([later]);
    await expect(failing).rejects.toThrow(TypeError);
    await next;
    const found = await index.search({ ...byId(''), filters: new Map([['id', [kept.id, broken.id, later.id]]]) });
    expect(found.resources.map((document) => document.id)).toEqual([kept.id, later.id]);
  });
});
