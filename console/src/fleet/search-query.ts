/**
 * The fleet page's search as query parameters: the page's URL query (`#/fleet?<query>`) is the search API's own query
 * string (GET /resources/search), except `type`, which the page keeps implicit: the fleet page lists devices only,
 * so every request it sends carries `type=DEVICE` and the URL never needs it (a `type` a pasted link carries is
 * replaced by DEVICE, not offered as a facet). Everything else the URL holds is sent as it is, so the API judges it.
 * Also: the same search as a `dss search` command and as a curl command.
 */
import type { components, operations } from '../../../client/index.js';

/** The search's query (operations['Search']), as the typed client takes it. */
export type SearchQuery = NonNullable<operations['Search']['parameters']['query']>;
/** The filter descriptors' query (operations['SearchFilters']). */
export type FiltersQuery = NonNullable<operations['SearchFilters']['parameters']['query']>;
/** One page of results (the SearchResponse schema). */
export type SearchResponse = components['schemas']['SearchResponse'];
/** One result: a device, or a scenario (full-text search ignores `type`). */
export type SearchResource = components['schemas']['SearchResource'];
/** A device result. */
export type DeviceResource = components['schemas']['DeviceSearchResource'];
/** A filter field with its values and disjunctive counts. */
export type FilterDescriptor = components['schemas']['FilterDescriptor'];

// The search's largest page size, deepest reachable result (`page × pageSize`) and default page size, by the names
// the fleet pages use.
export {
  SEARCH_DEFAULT_PAGE_SIZE as DEFAULT_PAGE_SIZE,
  SEARCH_MAX_PAGE_SIZE as MAX_PAGE_SIZE,
  SEARCH_RESULT_WINDOW as MAX_RESULT_WINDOW,
} from '../../../client/limits.js';
/** Fields the API sorts on (SORT_FIELDS of the search registry), the ones the page's columns can use. */
export const SORTABLE = new Set([
  'serial',
  'id',
  'company',
  'updated',
  'connection.state',
  'health.mode',
  'health.versionCode',
  'location.name',
]);

/** The parameters of the search that are not filters. */
const NOT_FILTERS = new Set(['global', 'sort', 'direction', 'page', 'pageSize', 'type']);

/** The resource type the page searches. */
export const DEVICE_TYPE = 'DEVICE';

/** Whether `name` is a filter parameter of the URL (every parameter but global, sort, direction, paging and type). */
export function isFilter(name: string): boolean {
  return !NOT_FILTERS.has(name);
}

/** Whether full text is searched (`global` with some text): the API then ignores every filter. */
export function fullTextOf(query: URLSearchParams): string | undefined {
  const global = query.get('global')?.trim();
  return global === undefined || global === '' ? undefined : (query.get('global') ?? undefined);
}

/** The URL's query with `type=DEVICE` in place of any `type`: what the page sends to GET /resources/search. */
export function searchParamsOf(query: URLSearchParams): URLSearchParams {
  const params = new URLSearchParams();
  for (const [name, value] of query) if (name !== 'type') params.append(name, value);
  params.append('type', DEVICE_TYPE);
  return params;
}

/** The filter parameters of the URL and `type=DEVICE`: what the page sends to GET /resources/search/filters. */
export function filtersParamsOf(query: URLSearchParams): URLSearchParams {
  const params = new URLSearchParams();
  for (const [name, value] of query) if (isFilter(name)) params.append(name, value);
  params.append('type', DEVICE_TYPE);
  return params;
}

/** Query parameters as the typed client takes them: a repeated name becomes an array (sent repeated). */
export function recordOf(params: URLSearchParams): Record<string, string | string[]> {
  const record: Record<string, string | string[]> = {};
  for (const name of new Set(params.keys())) {
    const values = params.getAll(name);
    record[name] = isFilter(name) || name === 'type' ? values : (values[0] ?? '');
  }
  return record;
}

/** The selection's key (filters, `global`): what a "select every match" selection stands for. */
export function selectionParamsOf(query: URLSearchParams): URLSearchParams {
  const params = searchParamsOf(query);
  for (const name of ['page', 'pageSize', 'sort', 'direction']) params.delete(name);
  return params;
}

/** The sort the API applies (its defaults: serial ascending, or relevance descending with full text). */
export function effectiveSort(query: URLSearchParams): { field: string; direction: 'ASC' | 'DESC' } {
  const sort = query.get('sort') ?? undefined;
  const text = fullTextOf(query);
  const direction = query.get('direction') === 'DESC' ? 'DESC' : query.get('direction') === 'ASC' ? 'ASC' : undefined;
  return {
    field: sort ?? (text === undefined ? 'serial' : 'relevance'),
    direction: direction ?? (sort === undefined && text !== undefined ? 'DESC' : 'ASC'),
  };
}

/** A word for a POSIX shell: as it is when it needs no quoting, else in single quotes. */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * The search as a `dss search` command (cli/commands/search.ts): filters as FIELD=VALUE arguments, `--type DEVICE`,
 * `--global`, `--sort field[:asc|desc]`, `--limit` (pageSize) and `--page`. A parameter the CLI cannot express
 * (a `direction` without a `sort` on a full-text search, whose relevance sort has no name) is named in a trailing
 * shell comment.
 */
export function cliCommand(query: URLSearchParams): string {
  const words = ['dss', 'search'];
  const unsupported: string[] = [];
  for (const [name, value] of query) if (isFilter(name)) words.push(shellWord(`${name}=${value}`));
  words.push('--type', DEVICE_TYPE);
  const global = query.get('global');
  if (global !== null) words.push('--global', shellWord(global));
  const sort = query.get('sort');
  const direction = query.get('direction');
  if (sort !== null) words.push('--sort', shellWord(direction === null ? sort : `${sort}:${direction.toLowerCase()}`));
  else if (direction !== null) {
    // Without full text the default sort is serial, so serial:<direction> is the same search.
    if (fullTextOf(query) === undefined) words.push('--sort', `serial:${direction.toLowerCase()}`);
    else unsupported.push(`direction=${direction} (the relevance sort has no --sort name)`);
  }
  const pageSize = query.get('pageSize');
  if (pageSize !== null) words.push('--limit', shellWord(pageSize));
  const page = query.get('page');
  if (page !== null) words.push('--page', shellWord(page));
  const command = words.join(' ');
  return unsupported.length === 0 ? command : `${command}  # no dss search option for: ${unsupported.join(', ')}`;
}

/** The search as a curl command against `baseUrl` (the main address), the token taken from $TOKEN. */
export function curlCommand(baseUrl: string, query: URLSearchParams): string {
  return `curl -H "Authorization: Bearer $TOKEN" '${baseUrl}/resources/search?${searchParamsOf(query).toString()}'`;
}

/** How many sub-devices (peripherals) of a device are in WARNING and in DOWN health. */
export function peripheralTrouble(device: DeviceResource): { warning: number; down: number } {
  let warning = 0;
  let down = 0;
  for (const hub of device.health?.hubs ?? []) {
    for (const sub of hub.devices) {
      if (sub.health.state === 'WARNING') warning += 1;
      else if (sub.health.state === 'DOWN') down += 1;
    }
  }
  return { warning, down };
}
