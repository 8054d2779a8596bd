/**
 * A listing the API pages with `nextCursor` (scenarios, rollouts, the deployment history): its first page read afresh
 * whenever what it lists changes, "Show more" reading the next one, and an answer that comes back after a newer read
 * started (another company, other filters) dropped instead of shown.
 */
import { type Signal, useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';

/** One page as a listing's loader answers it, or why it could not be read. */
export type PageAnswer<T, F> = { items: T[]; nextCursor: string | null } | { failure: F };

/** A listing's state, as signals, and its actions. */
export interface PagedListing<T, F> {
  /** The items read so far, in the API's order; undefined until the first page is read. */
  items: Signal<T[] | undefined>;
  nextCursor: Signal<string | null>;
  /** Why the first page could not be read (cleared by a page that could). */
  failure: Signal<F | null>;
  /** Why the last "Show more" could not be read (cleared by a page that could). */
  moreFailure: Signal<F | null>;
  loading: Signal<boolean>;
  /** Reads the next page (after `nextCursor`). */
  more: () => void;
}

/**
 * The listing `load` reads, a page at a time: the first page whenever `key` changes (not while `enabled` is false),
 * the next one on `more()`.
 * @param load reads one page (the first with `cursor` undefined); `isCurrent()` turns false once a newer read has
 *   started, so that a loader making several requests can stop early.
 * @param thrown what to show when `load` throws (the network is down).
 */
export function usePagedListing<T, F>(
  key: readonly unknown[],
  enabled: boolean,
  load: (cursor: string | undefined, isCurrent: () => boolean) => Promise<PageAnswer<T, F>>,
  thrown: () => F,
): PagedListing<T, F> {
  const generation = useSignal(0);
  const items = useSignal<T[] | undefined>(undefined);
  const nextCursor = useSignal<string | null>(null);
  const failure = useSignal<F | null>(null);
  const moreFailure = useSignal<F | null>(null);
  const loading = useSignal(false);
  const loadPage = async (cursor: string | undefined, current: number) => {
    const isCurrent = () => current === generation.peek();
    const failed = (value: F) => {
      if (cursor === undefined) failure.value = value;
      else moreFailure.value = value;
    };
    loading.value = true;
    try {
      const answer = await load(cursor, isCurrent);
      if (!isCurrent()) return;
      if ('failure' in answer) {
        failed(answer.failure);
        return;
      }
      items.value = cursor === undefined ? answer.items : [...(items.value ?? []), ...answer.items];
      nextCursor.value = answer.nextCursor;
      failure.value = null;
      moreFailure.value = null;
    } catch {
      if (isCurrent()) failed(thrown());
    } finally {
      if (isCurrent()) loading.value = false;
    }
  };
  useEffect(() => {
    if (!enabled) return;
    const current = generation.peek() + 1;
    generation.value = current;
    items.value = undefined;
    nextCursor.value = null;
    failure.value = null;
    moreFailure.value = null;
    void loadPage(undefined, current);
  }, key);
  const more = () => void loadPage(nextCursor.value ?? undefined, generation.peek());
  return { items, nextCursor, failure, moreFailure, loading, more };
}
