/**
 * The dashboard, the console's home page (`#/`, `#/?company=<id>`): the count of open alerts (a link to the Alerts
 * page), the fleet by its facet counts, each count a link into the fleet page, and the rollouts that are not over.
 * The company picker's `company` narrows them to one company; without it they cover every company of the token.
 *
 * Requests per visit: one GET /resources/search/filters (every field's counts in one answer), one rollouts listing
 * per company shown (dashboard/active-rollouts.ts) and one listing of its open alerts (dashboard/open-alerts.tsx),
 * sent in parallel; a change of company sends them again and aborts the previous ones.
 */
import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { type ActiveRollouts, ActiveRolloutsTable, ROLLOUTS_LOOKED_AT, readActiveRollouts } from '../dashboard/active-rollouts.js';
import { FleetCounts } from '../dashboard/fleet-counts.js';
import { OpenAlertsSection } from '../dashboard/open-alerts.js';
import type { FilterDescriptor } from '../fleet/search-query.js';
import { count } from '../format.js';
import { here, hrefOf } from '../router.js';
import { api, can, claims, problemText } from '../session.js';
import { UserText } from '../user-text.js';

/** A request's state as the page shows it: loading (undefined), its answer, or what went wrong. */
type Loaded<T> = { data: T } | { error: string } | undefined;

/** The filter counts of the devices of `companies` (all of the token's when empty); sent again when they change. */
function useFleetCounts(companies: string[]): Loaded<FilterDescriptor[]> {
  const loaded = useSignal<Loaded<FilterDescriptor[]>>(undefined);
  const key = companies.join('\n');
  useEffect(() => {
    const controller = new AbortController();
    loaded.value = undefined;
    api.main
      .GET('/resources/search/filters', {
        params: { query: { type: 'DEVICE', ...(companies.length === 0 ? {} : { company: companies }) } },
        signal: controller.signal,
      })
      .then(({ data, error, response }) => {
        if (!controller.signal.aborted)
          loaded.value = data === undefined ? { error: problemText(error, response.status) } : { data: data.items };
      })
      .catch(() => {
        if (!controller.signal.aborted) loaded.value = { error: problemText(undefined) };
      });
    return () => controller.abort();
  }, [key]);
  return loaded.value;
}

/** The rollouts not over of `companies`; read again when they change. */
function useActiveRollouts(companies: string[]): ActiveRollouts | undefined {
  const loaded = useSignal<ActiveRollouts | undefined>(undefined);
  const key = companies.join('\n');
  useEffect(() => {
    const controller = new AbortController();
    loaded.value = undefined;
    void readActiveRollouts(companies, controller.signal).then((result) => {
      if (!controller.signal.aborted) loaded.value = result;
    });
    return () => controller.abort();
  }, [key]);
  return loaded.value;
}

/** The fleet section: loading, the problem's detail, or the counts. */
function FleetSection({ companies }: { companies: string[] }) {
  const counts = useFleetCounts(companies);
  return (
    <section aria-labelledby="dash-fleet-title" aria-busy={counts === undefined ? 'true' : 'false'}>
      <h2 id="dash-fleet-title">Fleet</h2>
      {counts === undefined ? (
        <p role="status">Loading the fleet's counts…</p>
      ) : 'error' in counts ? (
        <p role="alert" class="error">
          The fleet's counts could not be loaded: <UserText text={counts.error} />
        </p>
      ) : (
        <FleetCounts descriptors={counts.data} companies={companies} />
      )}
    </section>
  );
}

/** The rollouts section: loading, the listings' failures, the table (or that none is running), and what was not read. */
function RolloutsSection({ companies, showCompany }: { companies: string[]; showCompany: boolean }) {
  const active = useActiveRollouts(companies);
  return (
    <section aria-labelledby="dash-rollouts-title" aria-busy={active === undefined ? 'true' : 'false'}>
      <h2 id="dash-rollouts-title">Rollouts in progress</h2>
      <p role="status">
        {active === undefined
          ? 'Loading the rollouts…'
          : active.items.length === 0
            ? 'No rollout is running, paused or scheduled.'
            : `${count(active.items.length)} ${active.items.length === 1 ? 'rollout is' : 'rollouts are'} running, paused or scheduled.`}
      </p>
      {active === undefined ? null : (
        <>
          {active.failures.length === 0 ? null : (
            <div role="alert" class="error">
              <p>Some rollouts could not be listed:</p>
              <ul>
                {active.failures.map((failure) => (
                  <li key={failure}>
                    <UserText text={failure} />
                  </li>
                ))}
              </ul>
            </div>
          )}
          {active.items.length === 0 ? null : <ActiveRolloutsTable items={active.items} showCompany={showCompany} />}
          {active.truncated.map((company) => (
            <p key={company} class="notice">
              Only the newest {count(ROLLOUTS_LOOKED_AT)} rollouts of <UserText text={company} /> were looked at:{' '}
              <a href={hrefOf('/rollouts', { company })}>
                see every rollout of <UserText text={company} />
              </a>
              .
            </p>
          ))}
        </>
      )}
    </section>
  );
}

/** The dashboard page. */
export function DashboardPage() {
  const chosen = here.value.query.getAll('company');
  const mine = claims.value?.companies ?? [];
  // The rollouts and alerts are listed per company: the chosen ones, else every company of the token.
  const rolloutCompanies = chosen.length === 0 ? mine : chosen;
  return (
    <main id="main">
      <h1>Dashboard</h1>
      {can('alerts:read') && rolloutCompanies.length > 0 ? <OpenAlertsSection companies={rolloutCompanies} /> : null}
      <FleetSection companies={chosen} />
      {can('deployments:read') ? <RolloutsSection companies={rolloutCompanies} showCompany={rolloutCompanies.length > 1} /> : null}
    </main>
  );
}
