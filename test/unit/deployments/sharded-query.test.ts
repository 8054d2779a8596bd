/**
 * The ordered k-way merge of sharded listings against in-memory shards that behave like DynamoDB Queries (Limit
 * counts items evaluated before the filter; LastEvaluatedKey whenever the Limit stopped the read): the merged pages
 * are those of one sorted list holding every item, whatever the page size, order, filter or skew between shards.
 */
import { describe, expect, it } from 'vitest';
import { mergeShards, type ShardRead, type ShardReader } from '../../../functions/adapters/aws/sharded-query.js';

interface Item {
  key: string;
  keep: boolean;
}

/** Shards of items, each sorted in `order`, read like a Query with a FilterExpression keeping `keep` items. */
function fakeShards(shards: Item[][], order: 'ascending' | 'descending') {
  const sorted = shards.map((items) =>
    [...items].sort((a, b) => (order === 'ascending' ? a.key.localeCompare(b.key) : b.key.localeCompare(a.key))),
  );
  const reads: { shard: number; after: string | undefined; limit: number }[] = [];
  const read: ShardReader<Item> = async (shard, after, limit): Promise<ShardRead<Item>> => {
    reads.push({ shard, after, limit });
    const rest = (sorted[shard] ?? []).filter(
      (item) => after === undefined || (order === 'ascending' ? item.key > after : item.key < after),
    );
    const evaluated = rest.slice(0, limit);
    return {
      items: evaluated.filter((item) => item.keep),
      // DynamoDB hands back a LastEvaluatedKey whenever the Limit stopped the read, even with nothing after it.
      lastEvaluated: rest.length >= limit ? evaluated.at(-1)?.key : undefined,
      evaluated: evaluated.length,
    };
  };
  return { read, reads };
}

/** A seeded pseudo-random generator (mulberry32), so that a failure reproduces. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `count` items spread over `shardCount` shards (skewed: shard 0 gets about half), a `kept` fraction passing the filter. */
function items(count: number, shardCount: number, kept: number, seed: number): { shards: Item[][]; all: Item[] } {
  const next = random(seed);
  const shards: Item[][] = Array.from({ length: shardCount }, () => []);
  const all: Item[] = [];
  for (let index = 0; index < count; index += 1) {
    const item = { key: `k${String(index).padStart(5, '0')}`, keep: next() < kept };
    const shard = next() < 0.5 ? 0 : Math.floor(next() * shardCount);
    shards[shard]?.push(item);
    all.push(item);
  }
  return { shards, all };
}

/** Every page from the start, following `next`. */
async function allPages(
  read: ShardReader<Item>,
  shardCount: number,
  order: 'ascending' | 'descending',
  limit: number,
  maxQueries = 1000,
): Promise<{ keys: string[][]; nexts: (string | undefined)[] }> {
  const keys: string[][] = [];
  const nexts: (string | undefined)[] = [];
  let after: string | undefined;
  do {
    const page = await mergeShards(read, {
      shards: Array.from({ length: shardCount }, (_, shard) => shard),
      order,
      sortKey: (item) => item.key,
      after,
      limit,
      maxQueries,
      maxItemsPerQuery: 1000,
    });
    keys.push(page.items.map((item) => item.key));
    nexts.push(page.next);
    after = page.next;
    expect(keys.length).toBeLessThan(10_000);
  } while (after !== undefined);
  return { keys, nexts };
}

/** The pages one sorted list gives: `limit` items each, the last one carrying no cursor. */
function expectedPages(all: Item[], order: 'ascending' | 'descending', limit: number): string[][] {
  const kept = all
    .filter((item) => item.keep)
    .map((item) => item.key)
    .sort();
  if (order === 'descending') kept.reverse();
  const pages: string[][] = [];
  for (let start = 0; start < kept.length; start += limit) pages.push(kept.slice(start, start + limit));
  return pages.length === 0 ? [[]] : pages;
}

describe('mergeShards', () => {
  for (const order of ['ascending', 'descending'] as const) {
    for (const limit of [1, 7, 100]) {
      it(`gives the pages of one sorted list (${order}, ${limit} a page, skewed shards, a filter dropping a third)`, async () => {
        const { shards, all } = items(400, 16, 0.67, limit);
        const { read } = fakeShards(shards, order);
        const { keys, nexts } = await allPages(read, 16, order, limit);
        expect(keys).toEqual(expectedPages(all, order, limit));
        // Every page but the last carries its last key as the cursor.
        expect(nexts).toEqual([...keys.slice(0, -1).map((page) => page.at(-1)), undefined]);
      });
    }
  }

  it('reads every shard once, then only shards whose buffer ran dry, with small Limits', async () => {
    const { shards } = items(1600, 16, 1, 3);
    const { read, reads } = fakeShards(shards, 'ascending');
    const page = await mergeShards(read, {
      shards: Array.from({ length: 16 }, (_, shard) => shard),
      order: 'ascending',
      sortKey: (item) => item.key,
      after: undefined,
      limit: 100,
      maxQueries: 48,
      maxItemsPerQuery: 1000,
    });
    expect(page.items).toHaveLength(100);
    expect(reads.slice(0, 16).map((entry) => entry.shard)).toEqual(Array.from({ length: 16 }, (_, shard) => shard));
    // About twice a shard's share of the 101 items wanted, not the whole page from every shard.
    expect(reads[0]?.limit).toBe(Math.ceil((2 * 101) / 16) + 1);
    // The skewed shard 0 (half the items) is read again, with its Limit doubled, then capped by the items still
    // wanted; few other shards are.
    const again = reads.slice(16);
    expect(again.filter((entry) => entry.shard === 0).map((entry) => entry.limit)).toEqual([28, 29]);
    expect(again.length).toBeLessThanOrEqual(4);
    expect(reads.reduce((sum, entry) => sum + entry.limit, 0)).toBeLessThan(2 * 16 * 101);
  });

  it('resumes each shard strictly after the cursor', async () => {
    const { shards } = items(200, 4, 1, 5);
    const { read, reads } = fakeShards(shards, 'descending');
    await mergeShards(read, {
      shards: [0, 1, 2, 3],
      order: 'descending',
      sortKey: (item) => item.key,
      after: 'k00100',
      limit: 10,
      maxQueries: 12,
      maxItemsPerQuery: 1000,
    });
    expect(reads.slice(0, 4).map((entry) => entry.after)).toEqual(['k00100', 'k00100', 'k00100', 'k00100']);
  });

  it('ends a page early, with a cursor every shard has been read up to, when the reads run out; the next pages go on', async () => {
    // Most items are filtered out: 16 shards × 3 reads cannot fill a page of 50.
    const { shards, all } = items(3000, 16, 0.01, 11);
    const { read, reads } = fakeShards(shards, 'ascending');
    const first = await mergeShards(read, {
      shards: Array.from({ length: 16 }, (_, shard) => shard),
      order: 'ascending',
      sortKey: (item) => item.key,
      after: undefined,
      limit: 50,
      maxQueries: 20,
      maxItemsPerQuery: 40,
    });
    expect(reads).toHaveLength(20);
    expect(first.items.length).toBeLessThan(50);
    expect(first.next).toEqual(expect.any(String));
    for (const item of first.items) expect(item.key <= (first.next as string)).toBe(true);
    // Following the cursors with the same small budget yields every kept item once, in order.
    const { keys } = await allPages(read, 16, 'ascending', 50, 20);
    expect(keys[0]).toEqual(first.items.map((item) => item.key));
    expect(keys.flat()).toEqual(expectedPages(all, 'ascending', 1).flat());
  });

  it('merges shards where the filter drops everything, and empty shards, to the one last page without cursor', async () => {
    const shards: Item[][] = [
      [
        { key: 'a', keep: false },
        { key: 'c', keep: false },
      ],
      [],
      [
        { key: 'b', keep: true },
        { key: 'd', keep: false },
      ],
    ];
    const { read } = fakeShards(shards, 'ascending');
    const { keys, nexts } = await allPages(read, 3, 'ascending', 1);
    expect(keys).toEqual([['b']]);
    expect(nexts).toEqual([undefined]);
  });

  it('refuses a budget smaller than one read per shard', async () => {
    const { read } = fakeShards([[], []], 'ascending');
    await expect(
      mergeShards(read, {
        shards: [0, 1],
        order: 'ascending',
        sortKey: (item) => item.key,
        after: undefined,
        limit: 1,
        maxQueries: 1,
        maxItemsPerQuery: 10,
      }),
    ).rejects.toThrow(/one read per shard/);
  });
});
