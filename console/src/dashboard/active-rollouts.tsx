/**
 * The dashboard's rollouts section: the rollouts that are not over (SCHEDULED, RUNNING, PAUSED) of the companies
 * shown, each with its progress and a link to its page.
 *
 * One listing request per company (GET /companies/{companyId}/resources/rollouts), a single page of its newest
 * ROLLOUTS_LOOKED_AT rollouts: the API lists every state newest first and has no state filter, so the states are kept
 * here, on that page. A rollout older than that page that still runs is not shown; the section then says so and
 * links to the company's rollouts page, which pages through all of them.
 */

import { rolloutSubject } from '../../../client/rollout-events.js';
import { count, dateTime, humanize } from '../format.js';
import type { Rollout } from '../rollouts/api.js';
import { doneOf, totalOf } from '../rollouts/progress.js';
import { hrefOf } from '../router.js';
import { api, problemText } from '../session.js';
import { UserText, visibleText } from '../user-text.js';

/** How many of each company's newest rollouts are looked at (one page of the listing). */
export const ROLLOUTS_LOOKED_AT = 100;

/** The states of a rollout that is not over. */
const ACTIVE_STATES: readonly Rollout['state'][] = ['RUNNING', 'PAUSED', 'SCHEDULED'];

/** A rollout not over, with its company. */
export interface ActiveRollout {
  company: string;
  rollout: Rollout;
}

/** What the listings gave: the rollouts not over (newest first), the companies with older rollouts unread, failures. */
export interface ActiveRollouts {
  items: ActiveRollout[];
  /** Companies whose listing has more than ROLLOUTS_LOOKED_AT rollouts: older ones were not looked at. */
  truncated: string[];
  /** One message per company whose listing failed (`company: detail`). */
  failures: string[];
}

/**
 * Reads the newest ROLLOUTS_LOOKED_AT rollouts of each of `companies` (in parallel, one request each) and keeps those
 * SCHEDULED, RUNNING or PAUSED, newest first across the companies. Never throws: a failed listing is in `failures`.
 */
export async function readActiveRollouts(companies: readonly string[], signal: AbortSignal): Promise<ActiveRollouts> {
  const result: ActiveRollouts = { items: [], truncated: [], failures: [] };
  await Promise.all(
    companies.map(async (company) => {
      try {
        const { data, error, response } = await api.main.GET('/companies/{companyId}/resources/rollouts', {
          params: { path: { companyId: company }, query: { limit: ROLLOUTS_LOOKED_AT } },
          signal,
        });
        if (data === undefined) {
          result.failures.push(`${company}: ${problemText(error, response.status)}`);
          return;
        }
        for (const rollout of data.items) if (ACTIVE_STATES.includes(rollout.state)) result.items.push({ company, rollout });
        if (data.nextCursor !== null) result.truncated.push(company);
      } catch {
        if (!signal.aborted) result.failures.push(`${company}: ${problemText(undefined)}`);
      }
    }),
  );
  result.items.sort((a, b) => b.rollout.created.localeCompare(a.rollout.created));
  return result;
}

/** A rollout's waves done, as `1 of 3 waves done`. */
function wavesText(rollout: Rollout): string {
  const done = rollout.waves.filter((wave) => wave.state === 'COMPLETED').length;
  return `${count(done)} of ${count(rollout.waves.length)} ${rollout.waves.length === 1 ? 'wave' : 'waves'} done`;
}

/** Where the rollout stands: why it is paused, when a scheduled one starts, else nothing. */
function standing(rollout: Rollout) {
  if (rollout.state === 'PAUSED') return rollout.pausedReason === undefined ? '' : <UserText text={rollout.pausedReason} />;
  if (rollout.state === 'SCHEDULED' && rollout.startAt !== undefined) {
    return (
      <>
        Starts at <time dateTime={rollout.startAt}>{dateTime(rollout.startAt)}</time>
      </>
    );
  }
  return '';
}

/** The table of rollouts not over; the Company column only when several companies are shown (`showCompany`). */
export function ActiveRolloutsTable({ items, showCompany }: { items: ActiveRollout[]; showCompany: boolean }) {
  return (
    <table class="dash-rollouts">
      <caption>Running, paused and scheduled rollouts, newest first</caption>
      <thead>
        <tr>
          <th scope="col">Rollout</th>
          {showCompany ? <th scope="col">Company</th> : null}
          <th scope="col">Scenario version or command</th>
          <th scope="col">Action</th>
          <th scope="col">State</th>
          <th scope="col">Waves</th>
          <th scope="col">Devices deployed of targets</th>
          <th scope="col">Paused reason or start</th>
        </tr>
      </thead>
      <tbody>
        {items.map(({ company, rollout }) => {
          const done = doneOf(rollout);
          return (
            <tr key={`${company}/${rollout.id}`} data-id={rollout.id}>
              <td class="mono">
                <a href={hrefOf(`/rollouts/${encodeURIComponent(company)}/${encodeURIComponent(rollout.id)}`)}>
                  <UserText text={rollout.id} />
                </a>
              </td>
              {showCompany ? (
                <td>
                  <UserText text={company} />
                </td>
              ) : null}
              <td class="mono">
                <UserText text={rolloutSubject(rollout)} />
              </td>
              <td>{humanize(rollout.action)}</td>
              <td>{humanize(rollout.state)}</td>
              <td>{wavesText(rollout)}</td>
              <td>
                <progress
                  class="dash-progress-bar"
                  max={Math.max(1, totalOf(rollout))}
                  value={done}
                  aria-label={`Devices deployed by rollout ${visibleText(rollout.id)}`}
                />
                <span>
                  {count(done)} of {count(totalOf(rollout))}
                </span>
              </td>
              <td>{standing(rollout)}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
