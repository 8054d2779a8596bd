/**
 * The audit page (`#/admin/audit?company=<id>&actor=<username>[&limit=<n>]`, `users:read`): the administrative
 * changes, newest first, a page at a time (`GET /admin/audit`, whose own query parameters the URL holds): when, who,
 * what, on which company or user, and what changed (before → after), as text. A company administrator always names
 * one of their companies (their first when the URL names none, as the API asks them to); a platform administrator
 * may name none for every change.
 */
import type { components } from '../../../client/index.js';
import { type ChangePart, changeLine, changeParts } from '../admin/audit-text.js';
import { optionLabel, useCompanyOptions } from '../admin/company-options.js';
import { limitOf, useDefaultCompany } from '../company-listing.js';
import { formField } from '../form-field.js';
import { dateTime } from '../format.js';
import { usePagedListing } from '../paged-listing.js';
import { ListingStatus, ShowMore } from '../paged-listing-view.js';
import { here, hrefOf, navigate } from '../router.js';
import { api, can, claims, problemText } from '../session.js';
import { UserText, visibleText } from '../user-text.js';

type AuditEntry = components['schemas']['AuditEntry'];

/** An action for people: `user.password-reset` → `User password reset`. */
function actionText(action: string): string {
  const words = action.replace(/[.-]/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** The entry's target, linked to its administration page. */
function Target({ target }: { target: AuditEntry['target'] }) {
  const href =
    target.kind === 'company'
      ? can('companies:read')
        ? hrefOf(`/admin/companies/${encodeURIComponent(target.id)}`)
        : undefined
      : target.kind === 'user'
        ? hrefOf(`/admin/users/${encodeURIComponent(target.id)}`)
        : undefined;
  return (
    <>
      {target.kind === 'company' ? 'Company ' : target.kind === 'user' ? 'User ' : 'Webhook '}
      {href === undefined ? (
        <span class="mono">
          <UserText text={target.id} />
        </span>
      ) : (
        <a href={href}>
          <UserText text={target.id} />
        </a>
      )}
    </>
  );
}

/** A member of a change (its line, changeLine), each value a text of its own. */
function Change({ part }: { part: ChangePart }) {
  const { member, before, after } = part;
  return (
    <>
      {member}: {before === undefined ? null : <UserText text={before} />}
      {before === undefined || after === undefined ? null : ' → '}
      {after === undefined ? null : <UserText text={after} />}
      {after === undefined ? ' (deleted)' : null}
    </>
  );
}

/** The changes matching `company` and `actor` (empty: any), `limit` a page, newest first. */
function useEntries(company: string, actor: string, limit: number | undefined, enabled: boolean) {
  return usePagedListing<AuditEntry, string>(
    [company, actor, limit, enabled],
    enabled,
    async (cursor) => {
      const { data, error, response } = await api.main.GET('/admin/audit', {
        params: {
          query: {
            ...(company === '' ? {} : { company }),
            ...(actor === '' ? {} : { actor }),
            ...(limit === undefined ? {} : { limit }),
            ...(cursor === undefined ? {} : { cursor }),
          },
        },
      });
      return data === undefined ? { failure: problemText(error, response.status) } : data;
    },
    () => problemText(undefined),
  );
}

/** The filter form: company and actor, written into the URL on submit. */
function AuditFilters({ company, actor }: { company: string; actor: string }) {
  const { options } = useCompanyOptions();
  const submit = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const next: Record<string, string> = {};
    const chosen = String(form.get('company') ?? '');
    const who = formField(form, 'actor');
    if (chosen !== '') next.company = chosen;
    if (who !== '') next.actor = who;
    navigate('/admin/audit', next);
  };
  const shown =
    options.value.some((option) => option.id === company) || company === '' ? options.value : [{ id: company }, ...options.value];
  return (
    <form class="toolbar" onSubmit={submit} aria-label="Which changes">
      <label>
        Company
        <select name="company" key={`${company}:${shown.length}`}>
          {can('companies:read') && (
            <option value="" selected={company === ''}>
              All companies
            </option>
          )}
          {shown.map((option) => (
            <option key={option.id} value={option.id} selected={option.id === company}>
              {visibleText(optionLabel(option))}
            </option>
          ))}
        </select>
      </label>
      <label>
        Made by (username)
        <input name="actor" key={actor} defaultValue={actor} maxLength={128} autocomplete="off" />
      </label>
      <button type="submit">Show the changes</button>
    </form>
  );
}

/** The changes table. */
function AuditTable(props: { entries: AuditEntry[] }) {
  return (
    <table class="admin-table">
      <caption>Administrative changes, newest first</caption>
      <thead>
        <tr>
          <th scope="col">When</th>
          <th scope="col">Made by</th>
          <th scope="col">Action</th>
          <th scope="col">Target</th>
          <th scope="col">Change (before → after)</th>
        </tr>
      </thead>
      <tbody>
        {props.entries.map((entry) => (
          <tr key={entry.id}>
            <td class="admin-nowrap">
              <time dateTime={entry.at}>{dateTime(entry.at)}</time>
            </td>
            <td>
              <UserText text={entry.actor} />
            </td>
            <td>{actionText(entry.action)}</td>
            <td>
              <Target target={entry.target} />
            </td>
            <td>
              <ul class="admin-change">
                {changeParts(entry.before, entry.after).map((part) => (
                  <li key={changeLine(part)}>
                    <Change part={part} />
                  </li>
                ))}
              </ul>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The audit page of the URL's filters. */
export function AdminAuditPage() {
  const query = here.value.query;
  const company = query.get('company') ?? '';
  const actor = query.get('actor') ?? '';
  const everyCompany = can('companies:read');
  useDefaultCompany('/admin/audit', company, everyCompany ? undefined : claims.value?.companies[0], query);
  const listed = useEntries(company, actor, limitOf(query), everyCompany || company !== '');
  return (
    <main id="main" class="admin-page">
      <h1>Audit</h1>
      <AuditFilters company={company} actor={actor} />
      <ListingStatus listing={listed} what="changes" one="change" />
      <AuditTable entries={listed.items.value ?? []} />
      <ShowMore listing={listed} what="changes" />
    </main>
  );
}
