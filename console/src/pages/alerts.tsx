/**
 * The Alerts page (`#/alerts?company=<id>[&state=OPEN|RESOLVED]`, for `alerts:read`): the company's alerts, newest
 * first, filtered by state in the URL (both without `state`), each linked to its device's page with the sub-device
 * that holds the condition, its rule, when it was raised and resolved, and what held (as text); then the company's
 * rules (delete for `alerts:write`; rules are made on the fleet page, from its search).
 */
import { useSignal } from '@preact/signals';
import { type Alert, type AlertRule, type AlertState, loadAlerts, loadRules } from '../alerts/api.js';
import { alertDeviceHref } from '../alerts/links.js';
import { RulesTable } from '../alerts/rules-table.js';
import { limitOf, useDefaultCompany } from '../company-listing.js';
import { Alert as AlertMessage } from '../device/focus.js';
import { dateTime } from '../format.js';
import { usePagedListing } from '../paged-listing.js';
import { ListingStatus, ShowMore } from '../paged-listing-view.js';
import { fleetHref, here, navigate } from '../router.js';
import { claims, problemText } from '../session.js';
import { UserText } from '../user-text.js';

/** The URL's `state` when it is one the API takes, else undefined (every alert). */
function stateOf(query: URLSearchParams): AlertState | undefined {
  const state = query.get('state');
  return state === 'OPEN' || state === 'RESOLVED' ? state : undefined;
}

/** The state filter: a select whose choice is the URL's `state`. */
function StateFilter({ query, state }: { query: URLSearchParams; state: AlertState | undefined }) {
  const change = (event: Event) => {
    const value = (event.currentTarget as HTMLSelectElement).value;
    const next = new URLSearchParams(query);
    next.delete('state');
    if (value !== '') next.set('state', value);
    navigate('/alerts', next);
  };
  return (
    <div class="toolbar">
      <label>
        Show
        <select onChange={change} value={state ?? ''}>
          <option value="">Open and resolved alerts</option>
          <option value="OPEN">Open alerts</option>
          <option value="RESOLVED">Resolved alerts</option>
        </select>
      </label>
    </div>
  );
}

/** The alerts table. */
function AlertsTable({ alerts }: { alerts: Alert[] }) {
  return (
    <table class="admin-table">
      <caption>Alerts, newest first</caption>
      <thead>
        <tr>
          <th scope="col">Device</th>
          <th scope="col">Rule</th>
          <th scope="col">State</th>
          <th scope="col">Raised</th>
          <th scope="col">Resolved</th>
          <th scope="col">Detail</th>
        </tr>
      </thead>
      <tbody>
        {alerts.map((alert) => (
          <tr key={alert.id}>
            <td class="mono">
              <a href={alertDeviceHref(alert)}>
                <UserText text={alert.target.id} />
              </a>
              {alert.target.subId === undefined ? null : (
                <div class="muted">
                  Sub-device <UserText text={alert.target.subId} />
                </div>
              )}
            </td>
            <td>
              <UserText text={alert.ruleName} />
            </td>
            <td class={alert.state === 'OPEN' ? 'warning' : undefined}>{alert.state === 'OPEN' ? 'Open' : 'Resolved'}</td>
            <td>
              <time dateTime={alert.raisedAt}>{dateTime(alert.raisedAt)}</time>
            </td>
            <td>{alert.resolvedAt === undefined ? '—' : <time dateTime={alert.resolvedAt}>{dateTime(alert.resolvedAt)}</time>}</td>
            <td>
              <UserText text={alert.detail} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The company's rules, read again when `revision` changes. */
function useRules(company: string, revision: number) {
  return usePagedListing<AlertRule, string>(
    [company, revision],
    company !== '',
    async () => {
      const loaded = await loadRules(company);
      return loaded.ok ? { items: loaded.data.items, nextCursor: null } : { failure: loaded.message };
    },
    () => problemText(undefined),
  );
}

/** What a page of one company's resources shows while no company is named: choosing one, or that there is none. */
export function NoCompany({ title }: { title: string }) {
  const none = (claims.value?.companies ?? []).length === 0;
  return (
    <main id="main">
      <h1>{title}</h1>
      <p>{none ? 'Your account belongs to no company: there is nothing to show here.' : 'Choosing a company…'}</p>
    </main>
  );
}

/** The Alerts page (see the module comment). */
export function AlertsPage() {
  const query = here.value.query;
  const company = query.get('company') ?? '';
  useDefaultCompany('/alerts', company, claims.value?.companies[0], query);
  const state = stateOf(query);
  const limit = limitOf(query);
  const revision = useSignal(0);
  const alerts = usePagedListing<Alert, string>(
    [company, state, limit, revision.value],
    company !== '',
    async (cursor) => {
      const loaded = await loadAlerts(company, { state, limit, cursor });
      return loaded.ok ? loaded.data : { failure: loaded.message };
    },
    () => problemText(undefined),
  );
  const rules = useRules(company, revision.value);
  const deleted = useSignal<string | null>(null);
  if (company === '') return <NoCompany title="Alerts" />;
  return (
    <main id="main" class="admin-page">
      <h1>Alerts</h1>
      <StateFilter query={query} state={state} />
      <ListingStatus listing={alerts} what="alerts" one="alert" />
      {alerts.items.value !== undefined && alerts.items.value.length === 0 ? (
        <p class="muted">
          {state === 'RESOLVED' ? 'No alert was resolved yet.' : state === 'OPEN' ? 'No alert is open.' : 'No alert yet.'}
        </p>
      ) : (
        <AlertsTable alerts={alerts.items.value ?? []} />
      )}
      <ShowMore listing={alerts} what="alerts" />
      <h2>Rules</h2>
      <p>
        A rule watches the devices of a fleet search: on the <a href={fleetHref()}>fleet page</a>, search, then{' '}
        <strong>Alert me when these devices…</strong>
      </p>
      <p role="status" class="admin-status">
        {deleted.value === null ? null : <UserText text={deleted.value} />}
      </p>
      {rules.failure.value === null ? null : <AlertMessage message={rules.failure.value} />}
      {rules.items.value === undefined ? (
        <p class="muted">Loading the rules…</p>
      ) : rules.items.value.length === 0 ? (
        <p class="muted">No rule yet.</p>
      ) : (
        <RulesTable
          company={company}
          rules={rules.items.value}
          onDeleted={(rule) => {
            deleted.value = `Rule ${rule.name} deleted.`;
            revision.value += 1;
          }}
        />
      )}
    </main>
  );
}
