/**
 * The fleet page's paging: the pager under the table (within the search's result window) and the page size.
 */
import { count } from '../format.js';
import { goToPage, setPageSize } from './navigation.js';
import { DEFAULT_PAGE_SIZE, MAX_RESULT_WINDOW, type SearchResponse } from './search-query.js';

/** The page sizes offered (the API accepts 1 to 100). */
const PAGE_SIZES = [20, 50, 100];

/** The page size the URL asks for (else the answer's, else the default); a size that is no positive integer gives the default. */
function pageSizeOf(query: URLSearchParams, data: SearchResponse | undefined): number {
  const asked = Number(query.get('pageSize') ?? data?.page.pageSize ?? DEFAULT_PAGE_SIZE);
  return Number.isSafeInteger(asked) && asked > 0 ? asked : DEFAULT_PAGE_SIZE;
}

/**
 * The pager of a search answer: previous, "Page N of M", next, and a notice at the result window's end. It takes
 * its numbers from the answer only (never from the URL's `page`, which may be no number: the API then refuses it).
 */
export function Pager({ data }: { data: SearchResponse }) {
  const { page, pages, pageSize } = data.page;
  const windowReached = (page + 1) * pageSize > MAX_RESULT_WINDOW && page < pages;
  return (
    <>
      <nav aria-label="Pages of results" class="toolbar fleet-pager">
        <button type="button" disabled={page <= 1} onClick={() => goToPage(page - 1)}>
          Previous page
        </button>
        <span>
          Page {count(page)} of {count(Math.max(pages, 1))}
        </span>
        <button type="button" disabled={page >= pages || windowReached} onClick={() => goToPage(page + 1)}>
          Next page
        </button>
      </nav>
      {windowReached ? (
        <p class="notice">
          The search pages through its first {count(MAX_RESULT_WINDOW)} results only: narrow the search with filters to see the others.
        </p>
      ) : null}
    </>
  );
}

/**
 * The page size select. It shows the URL's `pageSize` (else the answer's, else the default); a size the API refuses
 * is shown in the search's alert, and the select then offers the default.
 */
export function PageSizeSelect({ query, data }: { query: URLSearchParams; data: SearchResponse | undefined }) {
  const pageSize = pageSizeOf(query, data);
  return (
    <label class="fleet-inline">
      Devices per page
      <select value={String(pageSize)} onChange={(event) => setPageSize((event.currentTarget as HTMLSelectElement).value)}>
        {[...new Set([...PAGE_SIZES, pageSize])].map((size) => (
          <option key={size} value={String(size)}>
            {size}
          </option>
        ))}
      </select>
    </label>
  );
}
