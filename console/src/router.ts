/**
 * The console's whole state is its URL: the page and its state live in the hash (`#/fleet?connection.state=DISCONNECTED`),
 * so that one route of the service serves every page, and reload, back/forward and a pasted link give the same page.
 * A page's query string is one to one with the API's query parameters where the page shows an API listing.
 */
import { signal } from '@preact/signals';

/** Where the console is: the path (`/fleet`, `/devices/acme/kiosk-1`) and its query parameters. */
export interface Location {
  path: string;
  query: URLSearchParams;
}

/** Reads the location from the hash; the home page (the dashboard, `/`) when there is none. */
function readLocation(): Location {
  const hash = location.hash.replace(/^#/, '');
  const [path = '', query = ''] = hash.split('?', 2) as [string?, string?];
  return { path: path === '' ? '/' : path, query: new URLSearchParams(query) };
}

export const here = signal<Location>(readLocation());

/** The fleet page's last query string in this tab: links back to the fleet return to the search the user left. */
let lastFleetQuery = here.value.path === '/fleet' ? here.value.query.toString() : '';

here.subscribe((location) => {
  if (location.path === '/fleet') lastFleetQuery = location.query.toString();
});

window.addEventListener('hashchange', () => {
  here.value = readLocation();
});

/** The fleet page as the user left it (its last query), for "Back to the fleet" and the header's Fleet link. */
export function fleetHref(): string {
  return lastFleetQuery === '' ? '#/fleet' : `#/fleet?${lastFleetQuery}`;
}

/** Decodes a path segment (`%C3%A9` → `é`); a malformed one (`%E0%A4%A`) is kept as it is rather than failing. */
export function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** The hash of a path and query (`#/fleet?health.mode=…`). */
export function hrefOf(path: string, query?: URLSearchParams | Record<string, string>): string {
  const search = query === undefined ? '' : new URLSearchParams(query).toString();
  return `#${path}${search === '' ? '' : `?${search}`}`;
}

/**
 * Goes to a path and query: a new history entry (back returns), or with `replace` the same one (typing in a search
 * box should not leave one entry per keystroke).
 */
export function navigate(path: string, query?: URLSearchParams | Record<string, string>, replace = false): void {
  const href = hrefOf(path, query);
  if (replace) history.replaceState(null, '', href);
  else history.pushState(null, '', href);
  here.value = readLocation();
}
