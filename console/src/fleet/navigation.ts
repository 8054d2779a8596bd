/**
 * The fleet page's changes of the search: each one goes to `#/fleet?<query>` with a copy of the current query
 * changed (a new history entry), so that back/forward and reload give the same page. A change that gives other
 * results starts again at the first page.
 */
import { here, navigate } from '../router.js';
import { isFilter } from './search-query.js';

/** Goes to the fleet page with `change` applied to a copy of the current query (a new history entry). */
export function changeQuery(change: (query: URLSearchParams) => void): void {
  const next = new URLSearchParams(here.value.query);
  change(next);
  navigate('/fleet', next);
}

/** Selects (`on`) or clears one `value` of the filter `field`. */
export function toggleFacet(field: string, value: string, on: boolean): void {
  changeQuery((next) => {
    const values = next.getAll(field).filter((candidate) => candidate !== value);
    next.delete(field);
    for (const kept of on ? [...values, value] : values) next.append(field, kept);
    next.delete('page');
  });
}

/** Searches `text` in full text (an empty text searches none). */
export function searchText(text: string): void {
  changeQuery((next) => {
    if (text.trim() === '') next.delete('global');
    else next.set('global', text);
    next.delete('page');
  });
}

/** Clears every filter of the URL. */
export function clearFilters(): void {
  changeQuery((next) => {
    for (const name of [...new Set(next.keys())]) if (isFilter(name)) next.delete(name);
    next.delete('page');
  });
}

/** Sorts on `field`: ascending, or the other direction when the search is already sorted on it (`current`). */
export function sortBy(field: string, current: { field: string; direction: 'ASC' | 'DESC' }): void {
  changeQuery((next) => {
    next.set('sort', field);
    next.set('direction', current.field === field && current.direction === 'ASC' ? 'DESC' : 'ASC');
    next.delete('page');
  });
}

/** Goes to page `target` (1-based; the first page has no `page` parameter). */
export function goToPage(target: number): void {
  changeQuery((next) => {
    if (target <= 1) next.delete('page');
    else next.set('page', String(target));
  });
}

/** Shows `size` devices per page, from the first page. */
export function setPageSize(size: string): void {
  changeQuery((next) => {
    next.set('pageSize', size);
    next.delete('page');
  });
}
