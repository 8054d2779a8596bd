/** Default and maximum `limit` of every cursor-paged listing (docs/contract.md, "Deployments"). */
export const DEFAULT_LIST_LIMIT = 100;
export const MAX_LIST_LIMIT = 1_000;

/** The paging of a cursor-paged listing, validated by the route: `limit` 1 to MAX_LIST_LIMIT, `cursor` opaque. */
export interface ListParameters {
  limit: number;
  /** The `nextCursor` of the previous page; undefined for the first page. */
  cursor?: string | undefined;
}

/** A page of a listing with an opaque continuation cursor. */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/**
 * Signs and checks continuation cursors for listings that page in the domain (the adapters' cursor codec): `encode`
 * binds a position (a small JSON object) to `listing` (the listing's name, company and filters); `decode` returns it.
 */
export interface ListingCursors {
  /** The cursor continuing `listing` at `key`. */
  encode(listing: string, key: Record<string, unknown>): string;
  /** The key the cursor carries. @throws BadRequestError when `cursor` was not issued for `listing`. */
  decode(listing: string, cursor: string): Record<string, unknown>;
}
