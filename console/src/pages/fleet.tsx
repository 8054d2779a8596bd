/**
 * The fleet page (`#/fleet?<query>`): faceted search over the devices. Its URL query is the search API's own query
 * string (see fleet/search-query.ts: `type=DEVICE` is implicit, added to every request), so a reload, back/forward or
 * a pasted link gives the same page, and the same search can be copied as a `dss search` or curl command.
 *
 * Each change of the URL sends one search request and, when the filters changed, one filters request, in parallel;
 * a newer change aborts the requests of the older one, so the last click wins (fleet/requests.ts). When a search
 * fails, the rows of the previous one stay shown, marked as such, and nothing acts on them as if they matched.
 */
import { RuleComposer } from '../alerts/rule-composer.js';
import { CommandRolloutComposer } from '../compose/command-rollout-form.js';
import { RolloutComposer } from '../compose/rollout-form.js';
import { BulkDeploy } from '../deploy/bulk-deploy.js';
import { type Column, columnsOf } from '../fleet/columns.js';
import { FiltersPanel } from '../fleet/facets.js';
import { Pager } from '../fleet/paging.js';
import { type FleetRequests, useFleetRequests } from '../fleet/requests.js';
import { ResultsTable } from '../fleet/results-table.js';
import {
  type DeviceResource,
  effectiveSort,
  filtersParamsOf,
  fullTextOf,
  searchParamsOf,
  selectionParamsOf,
} from '../fleet/search-query.js';
import { type DeployFlow, SelectionBar, useDeployFlow, useSelection } from '../fleet/selection.js';
import { ResultsToolbar, SearchBar } from '../fleet/toolbar.js';
import { count } from '../format.js';
import { here } from '../router.js';
import { can, claims } from '../session.js';
import { UserText } from '../user-text.js';

/** "N devices match", with thousands separators. */
function matchText(total: number, fullText: boolean): string {
  if (fullText) return `${count(total)} ${total === 1 ? 'result matches' : 'results match'}`;
  return `${count(total)} ${total === 1 ? 'device matches' : 'devices match'}`;
}

/** The search's failure, with "Try again" when that may help (503, or the service not reached). */
function SearchAlert({ requests }: { requests: FleetRequests }) {
  const failure = requests.search.failure;
  if (failure === null) return null;
  return (
    <div role="alert" class="error">
      <p>
        <UserText text={failure.text} />
        {failure.retry ? ' The search may answer again in a moment.' : ''}
      </p>
      {failure.retry ? (
        <button type="button" onClick={requests.retry}>
          Try again
        </button>
      ) : null}
    </div>
  );
}

/** What the results section shows and acts on. */
interface ResultsProps {
  query: URLSearchParams;
  selectionKey: string;
  requests: FleetRequests;
  columns: readonly Column[];
  deploy: DeployFlow;
}

/**
 * The results: count, alert, toolbar, selection and deploy flow (for users who may deploy), the rollout composers (a
 * version, for users who may deploy; a command, for those who may also write devices), the alert rule composer (for
 * those who may write alert rules), table, pager.
 */
function Results({ query, selectionKey, requests, columns, deploy }: ResultsProps) {
  const fullText = fullTextOf(query);
  const { value: data, valueKey, busy, failure } = requests.search;
  // After a failed search the rows shown are those of an earlier one: nothing treats them as this search's.
  const stale = failure !== null && data !== undefined && valueKey !== searchParamsOf(query).toString();
  const current = stale ? undefined : data;
  const selection = useSelection(selectionKey);
  const locked = deploy.open !== null;
  const shown = (current?.resources ?? []).filter((resource): resource is DeviceResource => resource.type === 'DEVICE');
  const status = stale ? 'The rows below are those of the previous search.' : busy && data === undefined ? 'Searching…' : '';
  return (
    <section aria-labelledby="fleet-results-title" class="fleet-results">
      <h2 id="fleet-results-title">Devices</h2>
      <p role="status" class="fleet-count">
        {current === undefined ? status : matchText(current.total, fullText !== undefined)}
      </p>
      <SearchAlert requests={requests} />
      <ResultsToolbar query={query} columns={columns} data={data} stale={stale} />
      {can('deployments:write') ? (
        <SelectionBar
          selection={selection}
          shown={shown}
          total={current?.total}
          fullText={fullText !== undefined}
          locked={locked}
          onDeploy={() => deploy.start(selection.toDeploy())}
        />
      ) : null}
      {can('deployments:write') && fullText === undefined && current !== undefined ? (
        <RolloutComposer key={selectionKey} query={query} total={current.total} />
      ) : null}
      {can('deployments:write') && can('devices:write') && fullText === undefined && current !== undefined ? (
        <CommandRolloutComposer key={selectionKey} query={query} total={current.total} />
      ) : null}
      {can('alerts:write') && current !== undefined ? (
        <RuleComposer key={selectionKey} query={query} total={current.total} fullText={fullText !== undefined} />
      ) : null}
      {deploy.open === null ? null : (
        <BulkDeploy key={deploy.open.opening} selection={deploy.open.selection} opener={deploy.open.opener} onClose={deploy.close} />
      )}
      <ResultsTable
        data={data}
        columns={columns}
        sort={effectiveSort(query)}
        fullText={fullText}
        busy={busy}
        stale={stale}
        {...(can('deployments:write') ? { rows: { selection, fixed: locked || stale } } : {})}
      />
      {current === undefined ? null : <Pager data={current} />}
    </section>
  );
}

/** The fleet page. */
export function FleetPage() {
  const query = here.value.query;
  const fullText = fullTextOf(query);
  const showCompany = (claims.value?.companies ?? []).length > 1;
  const requests = useFleetRequests(searchParamsOf(query).toString(), filtersParamsOf(query).toString());
  const deploy = useDeployFlow();
  const locked = deploy.open !== null;
  return (
    <main id="main">
      <h1>Fleet</h1>
      <SearchBar query={query} locked={locked} />
      {fullText !== undefined ? (
        <p class="notice">
          Full-text search ignores the filters; clear the search text to apply them again. It also finds scenarios, which are listed with
          the devices.
        </p>
      ) : null}
      <div class="layout-sidebar">
        <FiltersPanel
          query={query}
          filters={requests.filters}
          fullText={fullText !== undefined}
          showCompany={showCompany}
          locked={locked}
          onRetry={requests.retry}
        />
        <Results
          query={query}
          selectionKey={selectionParamsOf(query).toString()}
          requests={requests}
          columns={columnsOf(showCompany)}
          deploy={deploy}
        />
      </div>
    </main>
  );
}
