/**
 * The fleet page (`#/fleet?<query>`): faceted search over the devices. Its URL query is the search API's own query
 * string (see fleet/search-query.ts: `type=DEVICE` is implicit, added to every request), so a reload, back/forward or
 * a pasted link gives the same page, and the same search can be copied as a `dss search` or curl command.
 *
 * Each change of the URL sends one search request and, when the filters changed, one filters request, in parallel;
 * a newer change aborts the requests of the older one, so the last click wins.
 */
import { useSignal } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';
import { BulkDeploy, type DeploySelection, type DeviceRef } from '../deploy/bulk-deploy.js';
import { columnsOf } from '../fleet/columns.js';
import { download, ExportError, exportSummary, fetchCsv } from '../fleet/export.js';
import { Facets } from '../fleet/facets.js';
import {
  cliCommand,
  curlCommand,
  DEFAULT_PAGE_SIZE,
  type DeviceResource,
  effectiveSort,
  type FilterDescriptor,
  type FiltersQuery,
  filtersParamsOf,
  fullTextOf,
  isFilter,
  MAX_RESULT_WINDOW,
  recordOf,
  type SearchQuery,
  type SearchResponse,
  searchParamsOf,
  selectionParamsOf,
} from '../fleet/search-query.js';
import { count } from '../format.js';
import { here, navigate } from '../router.js';
import { addresses, api, can, claims, problemText } from '../session.js';

/** A failed request: what to say, and whether trying again may help (503, or the service not reached). */
interface Failure {
  text: string;
  retry: boolean;
}

/** The failure of an answer (or of a request that threw). */
function failureOf(error: unknown, status: number | undefined): Failure {
  return { text: problemText(error, status), retry: status === undefined || status === 503 };
}

/** The page sizes offered (the API accepts 1 to 100). */
const PAGE_SIZES = [20, 50, 100];

/** Goes to the fleet page with `change` applied to a copy of the current query (a new history entry). */
function changeQuery(change: (query: URLSearchParams) => void): void {
  const next = new URLSearchParams(here.value.query);
  change(next);
  navigate('/fleet', next);
}

/** "N devices match", with thousands separators. */
function matchText(total: number, fullText: boolean): string {
  if (fullText) return `${count(total)} ${total === 1 ? 'result matches' : 'results match'}`;
  return `${count(total)} ${total === 1 ? 'device matches' : 'devices match'}`;
}

/** The fleet page. */
export function FleetPage() {
  const query = here.value.query;
  const searchKey = searchParamsOf(query).toString();
  const filtersKey = filtersParamsOf(query).toString();
  const selectionKey = selectionParamsOf(query).toString();
  const fullText = fullTextOf(query);
  const companies = claims.value?.companies ?? [];
  const mayDeploy = can('deployments:write');
  const columns = columnsOf(companies.length > 1);

  const results = useSignal<SearchResponse | undefined>(undefined);
  const searching = useSignal(true);
  const searchFailure = useSignal<Failure | null>(null);
  const descriptors = useSignal<FilterDescriptor[] | undefined>(undefined);
  const countingFilters = useSignal(true);
  const filtersFailure = useSignal<Failure | null>(null);
  const attempt = useSignal(0);

  const copied = useSignal<{ key: string; what: string; text: string; status: string } | null>(null);
  const exportStatus = useSignal('');
  const exporting = useSignal(false);

  const selected = useSignal<ReadonlyMap<string, DeviceRef>>(new Map());
  const matching = useSignal<{ key: string; total: number } | null>(null);
  const deploying = useSignal<DeploySelection | null>(null);
  const exportAbort = useRef<AbortController | null>(null);

  // One search request per change of the search (or "Try again"); the next change aborts it.
  useEffect(() => {
    const controller = new AbortController();
    searching.value = true;
    api.main
      .GET('/resources/search', { params: { query: recordOf(new URLSearchParams(searchKey)) as SearchQuery }, signal: controller.signal })
      .then(({ data, error, response }) => {
        if (controller.signal.aborted) return;
        if (data === undefined) searchFailure.value = failureOf(error, response.status);
        else {
          results.value = data;
          searchFailure.value = null;
        }
        searching.value = false;
      })
      .catch((error: unknown) => {
        if (controller.signal.aborted) return;
        searchFailure.value = failureOf(error, undefined);
        searching.value = false;
      });
    return () => controller.abort();
  }, [searchKey, attempt.value]);

  // One filters request per change of the filters (their counts do not depend on full text, sort or paging).
  useEffect(() => {
    const controller = new AbortController();
    countingFilters.value = true;
    api.main
      .GET('/resources/search/filters', {
        params: { query: recordOf(new URLSearchParams(filtersKey)) as FiltersQuery },
        signal: controller.signal,
      })
      .then(({ data, error, response }) => {
        if (controller.signal.aborted) return;
        if (data === undefined) filtersFailure.value = failureOf(error, response.status);
        else {
          descriptors.value = data.items;
          filtersFailure.value = null;
        }
        countingFilters.value = false;
      })
      .catch((error: unknown) => {
        if (controller.signal.aborted) return;
        filtersFailure.value = failureOf(error, undefined);
        countingFilters.value = false;
      });
    return () => controller.abort();
  }, [filtersKey, attempt.value]);

  // An export in progress stops with the page.
  useEffect(() => () => exportAbort.current?.abort(), []);

  const data = results.value;
  const sort = effectiveSort(query);
  // A pageSize the API refuses is shown in the alert; the select then offers the default.
  const asked = Number(query.get('pageSize') ?? data?.page.pageSize ?? DEFAULT_PAGE_SIZE);
  const pageSize = Number.isSafeInteger(asked) && asked > 0 ? asked : DEFAULT_PAGE_SIZE;
  const page = data?.page.page ?? Number(query.get('page') ?? 1);
  const pages = data?.page.pages ?? 0;
  const windowReached = (page + 1) * pageSize > MAX_RESULT_WINDOW && page < pages;
  const anyFilter = [...query.keys()].some(isFilter);
  const devicesShown = (data?.resources ?? []).filter((resource): resource is DeviceResource => resource.type === 'DEVICE');
  const matchingNow = matching.value !== null && matching.value.key === selectionKey ? matching.value : null;

  const toggleFacet = (field: string, value: string, on: boolean) =>
    changeQuery((next) => {
      const values = next.getAll(field).filter((candidate) => candidate !== value);
      next.delete(field);
      for (const kept of on ? [...values, value] : values) next.append(field, kept);
      next.delete('page');
    });

  const submitSearch = (event: Event) => {
    event.preventDefault();
    const text = String(new FormData(event.currentTarget as HTMLFormElement).get('global') ?? '');
    changeQuery((next) => {
      if (text.trim() === '') next.delete('global');
      else next.set('global', text);
      next.delete('page');
    });
  };

  const sortBy = (field: string) =>
    changeQuery((next) => {
      next.set('sort', field);
      next.set('direction', sort.field === field && sort.direction === 'ASC' ? 'DESC' : 'ASC');
      next.delete('page');
    });

  const goToPage = (target: number) =>
    changeQuery((next) => {
      if (target <= 1) next.delete('page');
      else next.set('page', String(target));
    });

  const copy = async (what: string, text: string) => {
    let status = 'Copied';
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      status = 'The clipboard is not available here: copy the command from the box.';
    }
    copied.value = { key: query.toString(), what, text, status };
  };

  const exportCsv = async () => {
    exportAbort.current?.abort();
    const controller = new AbortController();
    exportAbort.current = controller;
    exporting.value = true;
    exportStatus.value = 'Exporting…';
    try {
      const { csv, result } = await fetchCsv(
        query,
        columns,
        (fetched, total) => {
          exportStatus.value = `Exporting… ${count(fetched)} of ${count(Math.min(total, MAX_RESULT_WINDOW))} rows fetched.`;
        },
        controller.signal,
      );
      download(csv, 'fleet.csv');
      exportStatus.value = exportSummary(result);
    } catch (error) {
      if (controller.signal.aborted) return;
      exportStatus.value = `The export failed: ${error instanceof ExportError ? error.message : problemText(undefined)}`;
    } finally {
      if (exportAbort.current === controller) exporting.value = false;
    }
  };

  const refOf = (device: DeviceResource): DeviceRef => ({ company: device.company, id: device.id });
  const keyOf = (ref: DeviceRef) => `${ref.company}/${ref.id}`;
  const selectDevices = (devices: readonly DeviceResource[], on: boolean) => {
    const next = new Map(matchingNow === null ? selected.value : []);
    for (const device of devices) {
      if (on) next.set(keyOf(device), refOf(device));
      else next.delete(keyOf(device));
    }
    matching.value = null;
    selected.value = next;
  };
  const clearSelection = () => {
    matching.value = null;
    selected.value = new Map();
  };
  const selectionSize = matchingNow !== null ? matchingNow.total : selected.value.size;
  const openDeploy = () => {
    deploying.value =
      matchingNow !== null
        ? { kind: 'matching', query: new URLSearchParams(selectionKey), total: matchingNow.total }
        : { kind: 'devices', devices: [...selected.value.values()] };
  };

  const copiedNow = copied.value !== null && copied.value.key === query.toString() ? copied.value : null;
  const failure = searchFailure.value;

  return (
    <main id="main">
      <h1>Fleet</h1>
      <form class="toolbar" onSubmit={submitSearch}>
        <label>
          Search
          {/* Keyed by the URL's text: back/forward and reload show the text of the URL. */}
          <input key={query.get('global') ?? ''} type="search" name="global" defaultValue={query.get('global') ?? ''} maxLength={1000} />
        </label>
        <button type="submit" class="primary">
          Search
        </button>
        {query.has('global') ? (
          <button
            type="button"
            onClick={() =>
              changeQuery((next) => {
                next.delete('global');
                next.delete('page');
              })
            }
          >
            Clear search text
          </button>
        ) : null}
      </form>
      {fullText !== undefined ? (
        <p class="notice">
          Full-text search ignores the filters; clear the search text to apply them again. It also finds scenarios, which are listed with
          the devices.
        </p>
      ) : null}

      <div class="layout-sidebar">
        <section aria-labelledby="fleet-filters-title">
          <h2 id="fleet-filters-title">Filters</h2>
          {fullText !== undefined ? <p class="muted">Set aside while searching full text.</p> : null}
          {filtersFailure.value === null ? null : (
            <div role="alert" class="error">
              <p>The filters could not be loaded: {filtersFailure.value.text}</p>
              {filtersFailure.value.retry ? (
                <button type="button" onClick={() => attempt.value++}>
                  Try the filters again
                </button>
              ) : null}
            </div>
          )}
          <Facets
            busy={countingFilters.value}
            descriptors={descriptors.value}
            query={query}
            setAside={fullText !== undefined}
            showCompany={companies.length > 1}
            onToggle={toggleFacet}
          />
          {anyFilter && fullText === undefined ? (
            <button
              type="button"
              onClick={() =>
                changeQuery((next) => {
                  for (const name of [...new Set(next.keys())]) if (isFilter(name)) next.delete(name);
                  next.delete('page');
                })
              }
            >
              Clear filters
            </button>
          ) : null}
        </section>

        <section aria-labelledby="fleet-results-title" class="fleet-results">
          <h2 id="fleet-results-title">Devices</h2>
          <p role="status" class="fleet-count">
            {data === undefined ? (searching.value ? 'Searching…' : '') : matchText(data.total, fullText !== undefined)}
          </p>
          {failure === null ? null : (
            <div role="alert" class="error">
              <p>
                {failure.text}
                {failure.retry ? ' The search may answer again in a moment.' : ''}
              </p>
              {failure.retry ? (
                <button type="button" onClick={() => attempt.value++}>
                  Try again
                </button>
              ) : null}
            </div>
          )}

          <div class="toolbar">
            <button type="button" onClick={() => copy('CLI', cliCommand(query))}>
              Copy as CLI
            </button>
            <button type="button" onClick={() => copy('curl', curlCommand(addresses.main, query))}>
              Copy as curl
            </button>
            <button type="button" onClick={exportCsv} disabled={exporting.value}>
              Export CSV
            </button>
            <label class="fleet-inline">
              Devices per page
              <select
                value={String(pageSize)}
                onChange={(event) => {
                  const value = (event.currentTarget as HTMLSelectElement).value;
                  changeQuery((next) => {
                    next.set('pageSize', value);
                    next.delete('page');
                  });
                }}
              >
                {[...new Set([...PAGE_SIZES, pageSize])].map((size) => (
                  <option key={size} value={String(size)}>
                    {size}
                  </option>
                ))}
              </select>
            </label>
          </div>
          {copiedNow === null ? null : (
            <div class="fleet-copied">
              <label>
                Copied command ({copiedNow.what})
                <textarea readOnly rows={3} value={copiedNow.text} class="mono" />
              </label>
            </div>
          )}
          <p role="status" class="fleet-copy-status">
            {copiedNow?.status ?? ''}
          </p>
          <p role="status" class="fleet-export-status">
            {exportStatus.value}
          </p>

          {mayDeploy ? (
            <div class="toolbar fleet-selection">
              <button type="button" onClick={() => selectDevices(devicesShown, true)} disabled={devicesShown.length === 0}>
                Select this page
              </button>
              {fullText === undefined ? (
                <button
                  type="button"
                  disabled={data === undefined || data.total === 0}
                  onClick={() => {
                    if (data === undefined) return;
                    selected.value = new Map();
                    matching.value = { key: selectionKey, total: data.total };
                  }}
                >
                  Select all {count(data?.total ?? 0)} matching
                </button>
              ) : null}
              <p role="status" class="fleet-selection-status">
                {selectionSize === 0
                  ? 'No device selected.'
                  : matchingNow !== null
                    ? `All ${count(matchingNow.total)} matching devices are selected.`
                    : `${count(selectionSize)} ${selectionSize === 1 ? 'device' : 'devices'} selected.`}
              </p>
              {selectionSize > 0 ? (
                <>
                  <button type="button" onClick={clearSelection}>
                    Clear selection
                  </button>
                  <button type="button" class="primary" onClick={openDeploy}>
                    Deploy to selection…
                  </button>
                </>
              ) : null}
            </div>
          ) : null}
          {deploying.value === null ? null : <BulkDeploy selection={deploying.value} onClose={() => (deploying.value = null)} />}

          <div class="fleet-table" aria-busy={searching.value ? 'true' : 'false'}>
            <table>
              <caption>
                {fullText === undefined ? 'Devices' : `Devices and scenarios matching “${fullText}”`}
                {pages > 0 ? `, page ${count(page)} of ${count(pages)}` : ''}
                {sort.field === 'relevance' ? ', by relevance' : ''}
              </caption>
              <thead>
                <tr>
                  {mayDeploy ? (
                    <th scope="col">
                      <span class="visually-hidden">Selected</span>
                    </th>
                  ) : null}
                  {columns.map((column) => {
                    const sorted = column.sort !== undefined && sort.field === column.sort;
                    return (
                      <th
                        key={column.head}
                        scope="col"
                        aria-sort={sorted ? (sort.direction === 'ASC' ? 'ascending' : 'descending') : undefined}
                      >
                        {column.sort === undefined ? (
                          column.head
                        ) : (
                          <button type="button" onClick={() => sortBy(column.sort as string)}>
                            {column.head}
                            <span aria-hidden="true" class="fleet-sort-mark">
                              {sorted ? (sort.direction === 'ASC' ? ' ▲' : ' ▼') : ' ↕'}
                            </span>
                          </button>
                        )}
                      </th>
                    );
                  })}
                </tr>
              </thead>
              <tbody>
                {(data?.resources ?? []).map((resource) => {
                  const key = `${resource.type}/${resource.company}/${resource.id}`;
                  const isDevice = resource.type === 'DEVICE';
                  const checked = isDevice && (matchingNow !== null || selected.value.has(keyOf(resource)));
                  return (
                    <tr key={key} aria-selected={mayDeploy && isDevice ? (checked ? 'true' : 'false') : undefined}>
                      {mayDeploy ? (
                        <td>
                          {isDevice ? (
                            <label class="fleet-row-select">
                              <input
                                type="checkbox"
                                checked={checked}
                                disabled={matchingNow !== null}
                                onChange={(event) => selectDevices([resource], (event.currentTarget as HTMLInputElement).checked)}
                              />
                              <span class="visually-hidden">Select {resource.id}</span>
                            </label>
                          ) : null}
                        </td>
                      ) : null}
                      {columns.map((column) => (
                        <td key={column.head} class={column.nowrap ? 'fleet-nowrap' : undefined}>
                          {column.cell(resource, Date.now())}
                        </td>
                      ))}
                    </tr>
                  );
                })}
              </tbody>
            </table>
            {data !== undefined && data.resources.length === 0 ? (
              <p class="muted">{data.total === 0 ? 'No device matches this search.' : 'No result on this page.'}</p>
            ) : null}
          </div>

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
        </section>
      </div>
    </main>
  );
}
