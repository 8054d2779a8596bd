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
