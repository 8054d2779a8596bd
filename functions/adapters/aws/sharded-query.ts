/**
 * One page of a listing whose items are spread over several partitions (shards) that each keep them in sort key
 * order: an ordered k-way merge that reads each shard lazily. Every shard is read once with a small Limit; after that
 * only a shard whose buffer ran dry is read again, and only when the merge cannot decide the next item without it.
 * Pages and cursors are those of one partition holding every item: the cursor is the last sort key returned, and each
 * shard resumes strictly after it.
 */

/** One shard's answer to a read. */
export interface ShardRead<T> {
  /** Items that passed the read's filter, in the listing's order. */
  items: T[];
  /**
   * Sort key of the last item the read evaluated (DynamoDB's LastEvaluatedKey), or undefined when the shard holds
   * nothing after what was read.
   */
  lastEvaluated: string | undefined;
  /** Items evaluated: returned plus filtered out (DynamoDB's ScannedCount). */
  evaluated: number;
}

/**
 * Reads up to `limit` items (evaluated, before any filter) of `shard` strictly after the sort key `after` in the
 * listing's order (from its start when undefined).
 */
export type ShardReader<T> = (shard: number, after: string | undefined, limit: number) => Promise<ShardRead<T>>;

/** What to merge and how much. */
export interface MergeOptions<T> {
  /** The shards to read (passed to the reader as given). */
  shards: readonly number[];
  /** Sort key order of the listing: ascending (active deployments) or descending (history, newest first). */
  order: 'ascending' | 'descending';
  /** The sort key of an item: unique across all shards. */
  sortKey: (item: T) => string;
  /** Resume strictly after this sort key (a cursor's); undefined for the first page. */
  after: string | undefined;
  /** Items per page (1 or more). */
  limit: number;
  /**
   * Most reads the page may take, at least one per shard. When they run out, the page ends early (possibly empty)
   * with a cursor where every shard has been read up to.
   */
  maxQueries: number;
  /** Most items one read may evaluate. */
  maxItemsPerQuery: number;
}

/** One merged page: up to `limit` items and the sort key to resume after, or undefined when nothing follows. */
export interface MergedPage<T> {
  items: T[];
  next: string | undefined;
}

/** Most Query calls one page may take: 10 on one partition (as before sharding), three per shard on a merge. */
export function queryBudget(shards: number): number {
  return Math.max(10, 3 * shards);
}

interface ShardState<T> {
  shard: number;
  /** Read but not yet merged, in order. */
  buffer: T[];
  /** Sort key everything up to which has been read (the page's `after` before the first read). */
  position: string | undefined;
  exhausted: boolean;
  /** Limit of the shard's previous read (0 before the first). */
  lastLimit: number;
}

/**
 * The page of `limit` items after `options.after`, merged from the shards in `options.order`. A shard is read when its
 * buffer is empty and it could still hold the next item (it has not been read past the best buffered item); shards
 * read in the same step are read concurrently. The first read of each shard asks for about twice its share of the
 * items still wanted (scaled by the selectivity of the filter seen so far), each later read of the same shard for
 * twice its previous Limit, never more than the items still wanted could need. One more item than the page is looked
 * for, so the last page carries no cursor.
 * @throws Error when `maxQueries` is smaller than the number of shards; whatever `read` throws.
 */
export async function mergeShards<T>(read: ShardReader<T>, options: MergeOptions<T>): Promise<MergedPage<T>> {
  const { limit, maxQueries } = options;
  if (maxQueries < options.shards.length) throw new Error(`A merged page needs at least one read per shard (${options.shards.length}).`);
  const merge = new ShardMerge(read, options);
  const wanted = limit + 1;
  const merged: T[] = [];
  let budgetSpent = false;

  while (merged.length < wanted) {
    const best = merge.best();
    const blocking = merge.blocking(best);
    if (blocking.length === 0) {
      if (best === undefined) break;
      merged.push(best.buffer.shift() as T);
      continue;
    }
    const allowed = maxQueries - merge.queries;
    if (allowed <= 0) {
      budgetSpent = true;
      break;
    }
    const remaining = wanted - merged.length;
    const active = merge.states.filter((state) => !state.exhausted).length;
    await Promise.all(blocking.slice(0, allowed).map((state) => merge.readShard(state, remaining, active)));
  }

  if (merged.length > limit) {
    const items = merged.slice(0, limit);
    return { items, next: options.sortKey(items.at(-1) as T) };
  }
  if (!budgetSpent) return { items: merged, next: undefined };
  return { items: merged, next: merge.resumeKey(merged) };
}

/** The shards of one mergeShards call and what their reads have seen so far. */
class ShardMerge<T> {
  readonly states: ShardState<T>[];
  /** Reads made. */
  queries = 0;
  /** Items the reads evaluated, and those of them that passed the filter: the filter's selectivity. */
  private evaluated = 0;
  private found = 0;

  constructor(
    private readonly read: ShardReader<T>,
    private readonly options: MergeOptions<T>,
  ) {
    this.states = options.shards.map((shard) => ({
      shard,
      buffer: [],
      position: options.after,
      exhausted: false,
      lastLimit: 0,
    }));
  }

  /** a comes strictly before b in the listing's order. */
  before(a: string, b: string): boolean {
    return this.options.order === 'ascending' ? a < b : a > b;
  }

  /** The shard whose first buffered item comes first, or undefined when every buffer is empty. */
  best(): ShardState<T> | undefined {
    const { sortKey } = this.options;
    let best: ShardState<T> | undefined;
    for (const state of this.states) {
      const head = state.buffer[0];
      if (head !== undefined && (best === undefined || this.before(sortKey(head), sortKey(best.buffer[0] as T)))) best = state;
    }
    return best;
  }

  /** The shards to read before the best buffered item can be merged. */
  blocking(best: ShardState<T> | undefined): ShardState<T>[] {
    const bestKey = best === undefined ? undefined : this.options.sortKey(best.buffer[0] as T);
    // A shard with nothing buffered may still hold an item ahead of the best one, unless it was read past it.
    return this.states.filter(
      (state) =>
        state.buffer.length === 0 &&
        !state.exhausted &&
        (bestKey === undefined || state.position === undefined || !this.before(bestKey, state.position)),
    );
  }

  /**
   * Reads the shard's next items into its buffer, sized for `remaining` matches shared among `active` shards (see
   * mergeShards), and advances its position.
   */
  async readShard(state: ShardState<T>, remaining: number, active: number): Promise<void> {
    // Items to evaluate for `remaining` matches, at the filter's selectivity seen so far (1 before any read).
    const needed = Math.ceil(remaining * (this.evaluated === 0 ? 1 : this.evaluated / Math.max(this.found, 1)));
    const share = Math.ceil((2 * needed) / active) + 1;
    const readLimit = Math.max(1, Math.min(this.options.maxItemsPerQuery, needed, Math.max(share, 2 * state.lastLimit)));
    state.lastLimit = readLimit;
    const result = await this.read(state.shard, state.position, readLimit);
    this.queries += 1;
    this.evaluated += result.evaluated;
    this.found += result.items.length;
    state.buffer.push(...result.items);
    if (result.lastEvaluated === undefined) state.exhausted = true;
    else state.position = result.lastEvaluated;
  }

  /** The cursor of a page cut short by the read budget, after `merged` (its items). */
  resumeKey(merged: readonly T[]): string | undefined {
    // Out of reads: resume where every shard has been read up to. That is the least advanced of the shards still to
    // be read (every shard was read once, so each has a position), which is past every item merged so far (a shard is
    // read again before any item beyond its position is merged); items buffered beyond it are read again next page.
    let next: string | undefined;
    for (const state of this.states) {
      if (state.buffer.length > 0 || state.exhausted) continue;
      if (state.position !== undefined && (next === undefined || this.before(state.position, next))) next = state.position;
    }
    return next ?? (merged.length === 0 ? this.options.after : this.options.sortKey(merged.at(-1) as T));
  }
}
