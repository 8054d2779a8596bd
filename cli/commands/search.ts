/** `dss search` and `dss filters`: the search routes, filters given as `FIELD=VALUE` arguments. */
import type { Command } from 'commander';
import { type components, expectOk, type operations } from '../../client/index.js';
import { SEARCH_MAX_PAGE_SIZE, SEARCH_RESULT_WINDOW } from '../../client/limits.js';
import { collect, filterArguments, integerArgument } from '../arguments.js';
import { invocationOf } from '../context.js';
import { note, printJson, printTable, UsageError } from '../output.js';

/** Largest page of the search (the API's `pageSize` limit). */
const MAX_PAGE_SIZE = SEARCH_MAX_PAGE_SIZE;
/** Deepest result the search pages to: `page × pageSize` may not exceed it. */
export const MAX_RESULT_WINDOW = SEARCH_RESULT_WINDOW;

type SearchResource = components['schemas']['SearchResource'];
type SearchResponse = components['schemas']['SearchResponse'];
type FilterDescriptor = components['schemas']['FilterDescriptor'];
/** The search's query. FIELD=VALUE arguments are cast to it unchecked: the service refuses unknown names, listing the allowed ones. */
type SearchQuery = operations['Search']['parameters']['query'];
/** The filter descriptors' query, cast to likewise. */
type FiltersQuery = operations['SearchFilters']['parameters']['query'];

/**
 * Parses `--sort field[:asc|desc]` into the search's `sort` and `direction`.
 * @throws UsageError when the direction is neither asc nor desc
 */
export function parseSort(text: string): { sort: string; direction?: 'ASC' | 'DESC' } {
  const colon = text.lastIndexOf(':');
  if (colon < 0) return { sort: text };
  const direction = text.slice(colon + 1).toUpperCase();
  const sort = text.slice(0, colon);
  if (sort === '' || (direction !== 'ASC' && direction !== 'DESC')) {
    throw new UsageError(`--sort '${text}': give a field, optionally followed by :asc or :desc, e.g. --sort updated:desc.`);
  }
  return { sort, direction };
}

/** Adds the search commands. */
export function registerSearchCommands(program: Command): void {
  registerSearch(program);
  registerFilters(program);
}

/** `dss search`: searches devices and scenarios across the token's companies. */
function registerSearch(program: Command): void {
  program
    .command('search')
    .description("Search devices and scenarios across the token's companies: filters as FIELD=VALUE (`dss filters` lists them)")
    .argument('[filters...]', 'FIELD=VALUE filters, e.g. connection.state=CONNECTED; a field repeated accepts any of its values')
    .option('--type <type>', 'only this resource type, DEVICE or SCENARIO (repeatable: the type=… filter)', collect)
    .option('--global <text>', 'full-text search over serials, locations, names and versions; filters are then ignored')
    .option('--sort <field[:asc|desc]>', 'sort field and direction, e.g. updated:desc; default serial, or relevance with --global')
    .option(
      '--limit <n>',
      `results per page (the API's pageSize), 1 to ${MAX_PAGE_SIZE}; default 20, or 100 with --all`,
      integerArgument(1, MAX_PAGE_SIZE),
    )
    .option('--page <n>', 'page to show, from 1', integerArgument(1, MAX_RESULT_WINDOW))
    .option('--all', `follow the pages and list every result (at most ${MAX_RESULT_WINDOW.toLocaleString('en-US')})`)
    .addHelpText(
      'after',
      `
Filters: one FIELD=VALUE argument per value; values of one field are OR-ed, different fields AND-ed. --json prints
the API's response (with --all, the array of every resource).

Examples:
  dss search connection.state=DISCONNECTED health.mode=EMBEDDED_PLATFORM_ANDROID
  dss search --type DEVICE company=acme --sort updated:desc --limit 50
  dss search --global "lyon printer"
  dss search connection.state=CONNECTED --all --json > connected.json`,
    )
    .action(searchResources);
}

/**
 * Action of `dss search`: one page, or every page up to MAX_RESULT_WINDOW with --all.
 * @throws UsageError on bad filters, --sort, or --all with --page
 */
async function searchResources(pairs: string[], options: SearchOptions, command: Command): Promise<void> {
  const filters = filterArguments(pairs);
  const types = [...(filters.type ?? []), ...(options.type ?? [])];
  const sort = options.sort === undefined ? {} : parseSort(options.sort);
  if (options.all && options.page !== undefined) throw new UsageError('--all lists every page: leave --page out.');
  const { dss, json } = await invocationOf(command);
  const all = options.all === true;
  const pageSize = options.limit ?? (all ? MAX_PAGE_SIZE : undefined);
  const base = {
    ...filters,
    ...(types.length === 0 ? {} : { type: types }),
    ...(options.global === undefined ? {} : { global: options.global }),
    ...sort,
    ...(pageSize === undefined ? {} : { pageSize }),
  };
  const fetchPage = async (page: number | undefined): Promise<SearchResponse> =>
    expectOk(
      await dss.main.GET('/resources/search', {
        params: { query: { ...base, ...(page === undefined ? {} : { page }) } as SearchQuery },
      }),
    );
  const first = await fetchPage(options.page);
  const resources = [...first.resources];
  if (all) {
    const size = first.page.pageSize;
    const lastPage = Math.min(first.page.pages, Math.floor(MAX_RESULT_WINDOW / size));
    for (let page = 2; page <= lastPage; page += 1) resources.push(...(await fetchPage(page)).resources);
    if (first.total > lastPage * size) {
      note(
        `Only the first ${(lastPage * size).toLocaleString('en-US')} of ${first.total.toLocaleString('en-US')} matches can be listed: narrow the search with filters.`,
      );
    }
  }
  if (json) {
    printJson(all ? resources : first);
    return;
  }
  printTable<SearchResource>(
    resources,
    [
      { head: 'ID', value: (resource) => resource.id },
      { head: 'Type', value: (resource) => resource.type },
      { head: 'Company', value: (resource) => resource.company },
      { head: 'Serial / name', value: (resource) => (resource.type === 'DEVICE' ? resource.serial : resource.name) },
      { head: 'Location', value: (resource) => (resource.type === 'DEVICE' ? resource.location?.name : undefined) },
      { head: 'Connection', value: (resource) => (resource.type === 'DEVICE' ? resource.connection.state : undefined) },
      {
        head: 'Version',
        value: (resource) => (resource.type === 'DEVICE' ? resource.health?.versionName : resource.latestVersion),
      },
    ],
    'No match.',
  );
  const shown = all ? `${resources.length.toLocaleString('en-US')} shown` : `page ${first.page.page} of ${first.page.pages}`;
  const more = !all && first.page.page < first.page.pages ? ' (--all for every page)' : '';
  const matches = `${first.total.toLocaleString('en-US')} ${first.total === 1 ? 'match' : 'matches'}`;
  note(`${matches}, ${shown}, sorted by ${first.sort.field} ${first.sort.direction}${more}.`);
}

/** `dss filters`: lists the search filters with their values and counts. */
function registerFilters(program: Command): void {
  program
    .command('filters')
    .description('List the search filters: each field, its values and how many resources match each')
    .argument('[filters...]', 'FIELD=VALUE filters already chosen: each field is counted as if its own selection were removed')
    .option('--type <type>', 'only the fields of this resource type, DEVICE or SCENARIO')
    .addHelpText(
      'after',
      '\nExamples:\n  dss filters\n  dss filters --type DEVICE connection.state=DISCONNECTED\n  dss search connection.state=DISCONNECTED  # then search with a value listed',
    )
    .action(listFilters);
}

/** Action of `dss filters`. @throws UsageError on bad filters */
async function listFilters(pairs: string[], options: { type?: string }, command: Command): Promise<void> {
  const filters = filterArguments(pairs);
  const { dss, json } = await invocationOf(command);
  const body = expectOk(
    await dss.main.GET('/resources/search/filters', {
      params: { query: { ...filters, ...(options.type === undefined ? {} : { type: options.type }) } as FiltersQuery },
    }),
  );
  if (json) {
    printJson(body);
    return;
  }
  const rows = body.items.flatMap((descriptor: FilterDescriptor) =>
    descriptor.definition.parameters.map((parameter) => ({ descriptor, parameter })),
  );
  printTable(
    rows,
    [
      { head: 'Field', value: (row) => filterLabel(row.descriptor) },
      { head: 'Scope', value: (row) => row.descriptor.scope },
      { head: 'Value', value: (row) => row.parameter.value },
      { head: 'Name', value: (row) => row.parameter.name },
      { head: 'Count', value: (row) => row.parameter.count.toLocaleString('en-US') },
    ],
    'No filter.',
  );
}

/**
 * How `dss filters` names a filter: its display name, the one every client shows, then the field to give as
 * FIELD=VALUE in parentheses: `Connection state (connection.state)`.
 */
export function filterLabel(descriptor: Pick<FilterDescriptor, 'name' | 'field'>): string {
  return `${descriptor.name} (${descriptor.field})`;
}

interface SearchOptions {
  type?: string[];
  global?: string;
  sort?: string;
  limit?: number;
  page?: number;
  all?: boolean;
}
