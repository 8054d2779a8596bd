/**
 * The history page (`#/history?company=<id>&deviceId=…&scenarioId=…&version=…&from=…&to=…[&limit=<n>]`): a company's
 * deployment history (GET …/deployments/history), newest first, filtered as the URL says (history/query.ts), a page
 * at a time ("Show more" follows the API's cursor), with a filter form that writes the URL and a CSV export of every
 * matching entry. A refused query (a 400 naming its parameters) shows the service's words.
 */
import { MAX_HISTORY_ID_LENGTH } from '../../../client/limits.js';
import { useDefaultCompany } from '../company-listing.js';
import { formField } from '../form-field.js';
import { count, dateTime, humanize } from '../format.js';
import { useHistoryExport } from '../history/export.js';
import { FILTERS, type HistoryEntry, historyQueryOf, instantOf, localInputOf } from '../history/query.js';
import { usePagedListing } from '../paged-listing.js';
import { here, hrefOf, navigate } from '../router.js';
import { api, claims, problemText } from '../session.js';
import { UserText, visibleText } from '../user-text.js';

/** A refused or failed request: the problem's detail and, for a 400, what is wrong with each parameter. */
interface Refusal {
  text: string;
  violations: string[];
}

/** The refusal of an answer (`status` undefined: the service was not reached). */
function refusalOf(error: unknown, status?: number): Refusal {
  const problem = error as { errors?: { path?: string; message?: string }[] } | undefined;
  const violations = (problem?.errors ?? []).map((violation) =>
    violation.path === undefined || violation.path === '' ? String(violation.message) : `${violation.path}: ${String(violation.message)}`,
  );
  return { text: problemText(error, status), violations };
}

/** The refusal in an alert region. */
function RefusalAlert({ refusal, what }: { refusal: Refusal; what: string }) {
  return (
    <div role="alert" class="error">
      <p>
        {what}: <UserText text={refusal.text} />
      </p>
      {refusal.violations.length === 0 ? null : (
        <ul>
          {refusal.violations.map((violation) => (
            <li key={violation}>
              <UserText text={violation} />
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** The listing of `company` for the URL's filters (`key`: their query string): the first page, then "Show more". */
function useHistory(company: string, key: string) {
  const listing = usePagedListing<HistoryEntry, Refusal>(
    [company, key],
    company !== '',
    async (cursor) => {
      const { data, error, response } = await api.main.GET('/companies/{companyId}/resources/deployments/history', {
        params: {
          path: { companyId: company },
          query: { ...historyQueryOf(new URLSearchParams(key)), ...(cursor === undefined ? {} : { cursor }) },
        },
      });
      return data === undefined ? { failure: refusalOf(error, response.status) } : data;
    },
    () => refusalOf(undefined),
  );
  return {
    entries: listing.items.value,
    nextCursor: listing.nextCursor.value,
    refusal: listing.failure.value,
    moreRefusal: listing.moreFailure.value,
    loading: listing.loading.value,
    more: listing.more,
  };
}

/**
 * The URL query the filter form asks for: the company (the chosen one, or the URL's when there is no choice), each
 * filter given (From and To as ISO-8601 UTC instants), and the URL's `limit`, kept.
 */
function filterQueryOf(form: FormData, query: URLSearchParams, companies: string[]): URLSearchParams {
  const field = (name: string) => formField(form, name);
  const next = new URLSearchParams();
  next.set('company', companies.length > 1 ? field('company') : (query.get('company') ?? ''));
  for (const name of FILTERS) {
    const value = name === 'from' || name === 'to' ? instantOf(field(name), query.get(name)) : field(name);
    if (value !== '') next.set(name, value);
  }
  const limit = query.get('limit');
  if (limit !== null) next.set('limit', limit);
  return next;
}

/** The URL query without filters: the URL's company and `limit` only. */
function clearedQueryOf(query: URLSearchParams): URLSearchParams {
  const next = new URLSearchParams({ company: query.get('company') ?? '' });
  const limit = query.get('limit');
  if (limit !== null) next.set('limit', limit);
  return next;
}

/** The company select, offered only to a token of more than one company. */
function CompanyField({ query, companies }: { query: URLSearchParams; companies: string[] }) {
  if (companies.length <= 1) return null;
  return (
    <label>
      Company
      <select name="company" defaultValue={query.get('company') ?? companies[0]}>
        {companies.map((company) => (
          <option key={company} value={company}>
            {visibleText(company)}
          </option>
        ))}
      </select>
    </label>
  );
}

/** The filter fields, prefilled with the URL's filters. */
function FilterFields({ query, companies }: { query: URLSearchParams; companies: string[] }) {
  return (
    <div class="history-fields">
      <CompanyField query={query} companies={companies} />
      <label>
        Device
        <input name="deviceId" defaultValue={query.get('deviceId') ?? ''} maxLength={MAX_HISTORY_ID_LENGTH} />
      </label>
      <label>
        Scenario
        <input name="scenarioId" defaultValue={query.get('scenarioId') ?? ''} maxLength={MAX_HISTORY_ID_LENGTH} />
      </label>
      <label>
        Version (of the scenario)
        <input name="version" defaultValue={query.get('version') ?? ''} maxLength={MAX_HISTORY_ID_LENGTH} />
      </label>
      <label>
        From (inclusive)
        <input name="from" type="datetime-local" step={1} defaultValue={localInputOf(query.get('from'))} />
      </label>
      <label>
        To (exclusive)
        <input name="to" type="datetime-local" step={1} defaultValue={localInputOf(query.get('to'))} />
      </label>
    </div>
  );
}

/**
 * The filter form: its fields show the URL's filters (keyed by them, so back/forward and reload show the URL's);
 * "Show history" writes them into the URL (a new history entry), which loads the listing. From and To are
 * datetime-local fields in the browser's time zone, sent as ISO-8601 UTC instants.
 */
function FilterForm({ query, companies }: { query: URLSearchParams; companies: string[] }) {
  const submit = (event: Event) => {
    event.preventDefault();
    navigate('/history', filterQueryOf(new FormData(event.currentTarget as HTMLFormElement), query, companies));
  };
  const clear = () => navigate('/history', clearedQueryOf(query));
  const anyFilter = FILTERS.some((name) => query.has(name));
  return (
    <form key={query.toString()} class="history-filters" onSubmit={submit}>
      <fieldset>
        <legend>Filters</legend>
        <FilterFields query={query} companies={companies} />
        <div class="toolbar">
          <button type="submit" class="primary">
            Show history
          </button>
          {anyFilter ? (
            <button type="button" onClick={clear}>
              Clear filters
            </button>
          ) : null}
        </div>
      </fieldset>
    </form>
  );
}

/** An entry's outcome: an action's state, or the state the device reported. */
function outcomeOf(entry: HistoryEntry): string {
  return humanize(entry.kind === 'ACTION' ? entry.state : entry.deviceStatus.state);
}

/** An entry's cause (an action's), or an em dash. */
function causeOf(entry: HistoryEntry): string {
  return entry.kind === 'ACTION' && entry.cause !== null ? humanize(entry.cause) : '—';
}

/** An action's note or a device's message, or null. */
function noteOf(entry: HistoryEntry): string | null {
  return entry.kind === 'ACTION' ? entry.note : entry.deviceStatus.message;
}

/** The entries' table: every cell is text, and what users and devices wrote (ids, notes, messages) a UserText. */
function HistoryTable({ company, entries }: { company: string; entries: HistoryEntry[] }) {
  return (
    <div class="history-table">
      <table>
        <caption>
          Deployment history of <UserText text={company} />, newest first ({count(entries.length)} shown)
        </caption>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Kind</th>
            <th scope="col">Device</th>
            <th scope="col">Scenario version</th>
            <th scope="col">Action</th>
            <th scope="col">By</th>
            <th scope="col">Outcome</th>
            <th scope="col">Cause</th>
            <th scope="col">Note or message</th>
          </tr>
        </thead>
        <tbody>
          {entries.map((entry) => {
            const note = noteOf(entry);
            return (
              <tr key={entry.id} data-id={entry.id}>
                <td class="history-nowrap">
                  <time dateTime={entry.at}>{dateTime(entry.at)}</time>
                </td>
                <td>{entry.kind === 'ACTION' ? 'Action' : 'Device status'}</td>
                <td class="mono">
                  <a href={hrefOf(`/devices/${encodeURIComponent(company)}/${encodeURIComponent(entry.target.id)}`)}>
                    <UserText text={entry.target.id} />
                  </a>
                </td>
                <td class="mono">
                  <UserText text={`${entry.what.id}@${entry.what.subId}`} />
                </td>
                <td>{entry.kind === 'ACTION' ? humanize(entry.action) : '—'}</td>
                <td>
                  <UserText text={entry.by} />
                </td>
                <td>{outcomeOf(entry)}</td>
                <td>{causeOf(entry)}</td>
                <td class="history-note">{note === null || note === '' ? <span class="muted">—</span> : <UserText text={note} />}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/** The history page of the URL's `company` (the token's first when it names none). */
export function HistoryPage() {
  const query = here.value.query;
  const company = query.get('company') ?? '';
  const companies = claims.value?.companies ?? [];
  useDefaultCompany('/history', company, companies[0], query);
  const filters = historyQueryOf(query);
  const key = new URLSearchParams(Object.entries(filters).map(([name, value]) => [name, String(value)])).toString();
  const { entries, nextCursor, refusal, moreRefusal, loading, more } = useHistory(company, key);
  const csv = useHistoryExport();
  const status =
    entries === undefined
      ? loading
        ? 'Loading the history…'
        : ''
      : entries.length === 0
        ? 'No entry matches these filters.'
        : `${count(entries.length)} ${entries.length === 1 ? 'entry' : 'entries'} shown${nextCursor === null ? '' : '; more match'}.`;
  return (
    <main id="main">
      <h1>Deployment history</h1>
      <FilterForm query={query} companies={companies} />
      <p role="status">{status}</p>
      {refusal === null ? null : <RefusalAlert refusal={refusal} what="The history could not be loaded" />}
      {entries === undefined || company === '' ? null : (
        <>
          <div class="toolbar">
            <button type="button" onClick={() => csv.run(company, filters)} disabled={csv.exporting || entries.length === 0}>
              Export CSV
            </button>
          </div>
          <p role="status" class="history-export-status">
            {csv.status === '' ? null : <UserText text={csv.status} />}
          </p>
          {csv.failure === null ? null : (
            <p role="alert" class="error">
              <UserText text={csv.failure} />
            </p>
          )}
          {entries.length === 0 ? null : <HistoryTable company={company} entries={entries} />}
          {moreRefusal === null ? null : <RefusalAlert refusal={moreRefusal} what="More entries could not be loaded" />}
          {nextCursor === null ? null : (
            <button type="button" onClick={more} disabled={loading}>
              {loading ? 'Loading more entries…' : 'Show more entries'}
            </button>
          )}
        </>
      )}
    </main>
  );
}
