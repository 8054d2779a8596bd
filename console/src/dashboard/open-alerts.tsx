/**
 * The dashboard's open alerts: per company shown, one request (`GET …/alerts?state=OPEN&limit=100`); the API has no
 * count, so a company with more than a page of open alerts shows "100+", never a number it did not read. Each count
 * links to the Alerts page of that company, filtered to the open ones.
 */
import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { loadAlerts } from '../alerts/api.js';
import { openAlertsText } from '../alerts/words.js';
import { hrefOf } from '../router.js';
import { UserText } from '../user-text.js';

/** Open alerts read per company: the count shown is exact up to it, "N+" beyond. */
export const OPEN_ALERTS_LOOKED_AT = 100;

/** One company's open alerts: how many were read and whether there are more, or why they could not be read. */
type CompanyAlerts = { company: string; open: number; more: boolean } | { company: string; failure: string };

/** The open alerts of each of `companies`, read in parallel; read again when they change. */
function useOpenAlerts(companies: string[]): CompanyAlerts[] | undefined {
  const loaded = useSignal<CompanyAlerts[] | undefined>(undefined);
  const key = companies.join('\n');
  useEffect(() => {
    const controller = new AbortController();
    loaded.value = undefined;
    void Promise.all(
      companies.map(async (company): Promise<CompanyAlerts> => {
        const answer = await loadAlerts(company, { state: 'OPEN', limit: OPEN_ALERTS_LOOKED_AT, signal: controller.signal });
        return answer.ok
          ? { company, open: answer.data.items.length, more: answer.data.nextCursor !== null }
          : { company, failure: answer.message };
      }),
    ).then((result) => {
      if (!controller.signal.aborted) loaded.value = result;
    });
    return () => controller.abort();
  }, [key]);
  return loaded.value;
}

/** The open alerts section of the dashboard, for `companies` (every company of the token, or the one chosen). */
export function OpenAlertsSection({ companies }: { companies: string[] }) {
  const alerts = useOpenAlerts(companies);
  const several = companies.length > 1;
  return (
    <section aria-labelledby="dash-alerts-title" aria-busy={alerts === undefined ? 'true' : 'false'}>
      <h2 id="dash-alerts-title">Alerts</h2>
      {alerts === undefined ? (
        <p role="status">Loading the open alerts…</p>
      ) : (
        <ul class="dash-alerts">
          {alerts.map((entry) => (
            <li key={entry.company}>
              {several ? (
                <>
                  <UserText text={entry.company} />:{' '}
                </>
              ) : null}
              {'failure' in entry ? (
                <span class="error">
                  The open alerts could not be read: <UserText text={entry.failure} />
                </span>
              ) : (
                <a href={hrefOf('/alerts', { company: entry.company, state: 'OPEN' })} class={entry.open > 0 ? 'warning' : undefined}>
                  {openAlertsText(entry.open, entry.more)}
                </a>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
