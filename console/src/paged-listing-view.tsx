/**
 * What every paged listing page shows around its table (companies, users, audit, rollouts): how the listing stands,
 * why a page could not be read, and "Show more" while the API has a next page.
 */
import { Alert } from './device/focus.js';
import { count } from './format.js';
import type { PagedListing } from './paged-listing.js';

/**
 * "Loading <what>…" while a page is read, else "<n> <what> shown." ("1 <one> shown." for one item; announced
 * politely), then the first page's or the last "Show more"'s failure, else `otherFailure` (what else the page read),
 * in an alert.
 */
export function ListingStatus<T>(props: { listing: PagedListing<T, string>; what: string; one: string; otherFailure?: string | null }) {
  const { listing, what, one } = props;
  const failure = listing.failure.value ?? listing.moreFailure.value ?? props.otherFailure ?? null;
  const shown = listing.items.value?.length ?? 0;
  return (
    <>
      <div aria-live="polite" class="muted">
        {listing.loading.value ? `Loading ${what}…` : `${count(shown)} ${shown === 1 ? one : what} shown.`}
      </div>
      {failure !== null && <Alert message={failure} />}
    </>
  );
}

/** "Show more <what>" while the listing has a next page, disabled while a page is read. */
export function ShowMore<T>({ listing, what }: { listing: PagedListing<T, string>; what: string }) {
  if (listing.nextCursor.value === null) return null;
  return (
    <button type="button" onClick={listing.more} disabled={listing.loading.value}>
      Show more {what}
    </button>
  );
}
