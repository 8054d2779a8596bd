/**
 * The rollouts page (`#/rollouts?company=<id>[&limit=<n>]`): a company's rollouts, newest first, a page at a time
 * (`limit` per page, the API's default without it; "Show more" follows the API's cursor), each with its scenario version, action, state and progress, linked to its own page.
 */

import { rolloutSubject } from '../../../client/rollout-events.js';
import { limitOf, useDefaultCompany } from '../company-listing.js';
import { count, dateTime, humanize } from '../format.js';
import { usePagedListing } from '../paged-listing.js';
import { ListingStatus, ShowMore } from '../paged-listing-view.js';
import type { Rollout } from '../rollouts/api.js';
import { doneOf, totalOf } from '../rollouts/progress.js';
import { here, hrefOf } from '../router.js';
import { api, claims, problemText } from '../session.js';
import { UserText, visibleText } from '../user-text.js';

/** The company's rollouts, `limit` a page (the API's default when undefined), newest first. */
function useRollouts(company: string, limit: number | undefined) {
  return usePagedListing<Rollout, string>(
    [company, limit],
    company !== '',
    async (cursor) => {
      const { data, error, response } = await api.main.GET('/companies/{companyId}/resources/rollouts', {
        params: {
          path: { companyId: company },
          query: { ...(limit === undefined ? {} : { limit }), ...(cursor === undefined ? {} : { cursor }) },
        },
      });
      return data === undefined ? { failure: problemText(error, response.status) } : data;
    },
    () => problemText(undefined),
  );
}

/** One rollout's row: its id links to its page; progress as text and a `<progress>`. */
function RolloutRow({ company, rollout }: { company: string; rollout: Rollout }) {
  const done = doneOf(rollout);
  const total = totalOf(rollout);
  return (
    <tr>
      <td class="mono">
        <a href={hrefOf(`/rollouts/${encodeURIComponent(company)}/${encodeURIComponent(rollout.id)}`)}>
          <UserText text={rollout.id} />
        </a>
      </td>
      <td class="mono">
        <UserText text={rolloutSubject(rollout)} />
      </td>
      <td>{humanize(rollout.action)}</td>
      <td>
        {humanize(rollout.state)}
        {rollout.continuous ? ', continuous' : ''}
      </td>
      <td>
        <progress class="rollout-progress" max={Math.max(1, total)} value={done} aria-label={`Progress of ${visibleText(rollout.id)}`} />{' '}
        {count(done)}/{count(total)}
      </td>
      <td>
        <UserText text={rollout.createdBy} />
      </td>
      <td>
        <time dateTime={rollout.created}>{dateTime(rollout.created)}</time>
      </td>
      <td>{rollout.startAt === undefined ? '' : <time dateTime={rollout.startAt}>{dateTime(rollout.startAt)}</time>}</td>
    </tr>
  );
}

/** The rollouts table. */
function RolloutsTable(props: { company: string; rollouts: Rollout[] }) {
  const { company, rollouts } = props;
  return (
    <table class="rollouts">
      <caption>
        Rollouts of <UserText text={company} />
      </caption>
      <thead>
        <tr>
          <th scope="col">Rollout</th>
          <th scope="col">Scenario version or command</th>
          <th scope="col">Action</th>
          <th scope="col">State</th>
          <th scope="col">Progress (devices done of targets)</th>
          <th scope="col">Created by</th>
          <th scope="col">Created</th>
          <th scope="col">Starts at</th>
        </tr>
      </thead>
      <tbody>
        {rollouts.map((rollout) => (
          <RolloutRow key={rollout.id} company={company} rollout={rollout} />
        ))}
      </tbody>
    </table>
  );
}

/** The rollouts page of the URL's `company` (the token's first when it names none). */
export function RolloutsPage() {
  const query = here.value.query;
  const company = query.get('company') ?? '';
  useDefaultCompany('/rollouts', company, claims.value?.companies[0], query);
  const listed = useRollouts(company, limitOf(query));
  return (
    <main id="main">
      <h1>Rollouts</h1>
      <ListingStatus listing={listed} what="rollouts" one="rollout" />
      {company !== '' && (
        <>
          <RolloutsTable company={company} rollouts={listed.items.value ?? []} />
          <ShowMore listing={listed} what="rollouts" />
        </>
      )}
    </main>
  );
}
