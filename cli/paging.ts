/** Cursor-paged listings (`{ items, nextCursor }`, docs/contract.md "Deployments") read page after page. */
import { type Column, note, printJson, printTable } from './output.js';

/** A listing's first page and, with `all`, every page's items. */
export interface Listing<T> {
  first: { items: T[]; nextCursor: string | null };
  /** The first page's items, or with `all` every page's. */
  items: T[];
  /** The cursor after the last page read (null when it was the last). */
  nextCursor: string | null;
}

/**
 * Reads the first page of a cursor-paged listing (from `start`, a cursor a previous page printed) and, with `all`,
 * the following ones.
 * @throws what `page` throws (ApiError)
 */
export async function readPages<T>(
  page: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor: string | null }>,
  all: boolean,
  start?: string,
): Promise<Listing<T>> {
  const first = await page(start);
  const items = [...first.items];
  let nextCursor = first.nextCursor;
  while (all && nextCursor !== null) {
    const next = await page(nextCursor);
    items.push(...next.items);
    nextCursor = next.nextCursor;
  }
  return { first, items, nextCursor };
}

/** The paging parameters of one page's request: `limit` (page size) and `cursor`, each only when given. */
export function pageQuery(limit: number | undefined, cursor: string | undefined): { limit?: number; cursor?: string } {
  return { ...(limit === undefined ? {} : { limit }), ...(cursor === undefined ? {} : { cursor }) };
}

/**
 * Prints a listing read by readPages: with `json`, `{ items, nextCursor }` on stdout; else a table of `columns` on
 * stdout (`words.empty` when there is no item) and, when pages remain, how to read them on stderr
 * (`More <words.more>: add --all, or --cursor <nextCursor>`). A filtered page may be short, even empty, with more after it.
 */
export function printListing<T>(
  listing: { items: readonly T[]; nextCursor: string | null },
  json: boolean,
  columns: readonly Column<T>[],
  words: { empty: string; more: string },
): void {
  const { items, nextCursor } = listing;
  if (json) {
    printJson({ items, nextCursor });
    return;
  }
  printTable(items, columns, words.empty);
  if (nextCursor !== null) note(`More ${words.more}: add --all, or --cursor ${nextCursor}`);
}
