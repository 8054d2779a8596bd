/** Cursor-paged listings (`{ items, nextCursor }`, docs/contract.md "Deployments") read page after page. */

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
