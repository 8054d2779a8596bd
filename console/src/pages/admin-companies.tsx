/**
 * Companies administration (`companies:read`, `companies:write`: a platform administrator's): the companies page
 * (`#/admin/companies[?limit=<n>]`, every company with its storage used against its quota, a page at a time, and the
 * form that creates one) and a company's page (`#/admin/companies/<id>`, its figures with the device and user counts
 * the API counts on each read, and the form that changes its name and quota).
 */
import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import type { components } from '../../../client/index.js';
import { MAX_COMPANY_NAME_LENGTH, NEW_COMPANY_ID_HTML_PATTERN } from '../../../client/limits.js';
import { quotaBytesOf, quotaFieldsOf } from '../admin/quota.js';
import { QuotaFields } from '../admin/quota-fields.js';
import { refusalText } from '../admin/refusal.js';
import { limitOf } from '../company-listing.js';
import { Alert } from '../device/focus.js';
import { formField } from '../form-field.js';
import { bytes, count } from '../format.js';
import { usePagedListing } from '../paged-listing.js';
import { ListingStatus, ShowMore } from '../paged-listing-view.js';
import { here, hrefOf } from '../router.js';
import { api, can, problemText } from '../session.js';
import { UserText } from '../user-text.js';

type AdminCompany = components['schemas']['AdminCompany'];
type AdminCompanyDetail = components['schemas']['AdminCompanyDetail'];

/** The address of a company's administration page. */
export function companyHref(id: string): string {
  return hrefOf(`/admin/companies/${encodeURIComponent(id)}`);
}

/** A size in words with its exact bytes as a tooltip. */
function Size({ value }: { value: number }) {
  return <span title={`${count(value)} bytes`}>{bytes(value)}</span>;
}

/** Whether the company is over its quota, in words. */
function overQuotaText(company: AdminCompany): string {
  return company.overQuota ? 'Over quota' : 'No';
}

/** The companies, `limit` a page (the API's default when undefined); read afresh when `revision` changes. */
function useCompanies(limit: number | undefined, revision: number) {
  return usePagedListing<AdminCompany, string>(
    [limit, revision],
    true,
    async (cursor) => {
      const { data, error, response } = await api.main.GET('/admin/companies', {
        params: { query: { ...(limit === undefined ? {} : { limit }), ...(cursor === undefined ? {} : { cursor }) } },
      });
      return data === undefined ? { failure: problemText(error, response.status) } : data;
    },
    () => problemText(undefined),
  );
}

/**
 * The state of the creation form: whether it is sending, its error message, the id of the company it created, and
 * `submit`, the form's submit handler (the quota checked first; once created, the form is emptied and `onCreated`
 * called).
 */
function useCreateCompany(onCreated: () => void) {
  const busy = useSignal(false);
  const error = useSignal<string | null>(null);
  const created = useSignal<string | null>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const form = new FormData(formElement);
    const quotaBytes = quotaBytesOf(formField(form, 'quotaAmount'), formField(form, 'quotaUnit'));
    error.value = null;
    created.value = null;
    if (quotaBytes === undefined) {
      error.value = 'Write the quota as a number, in the unit chosen.';
      return;
    }
    busy.value = true;
    try {
      const id = formField(form, 'id');
      const answer = await api.main.POST('/admin/companies', { body: { id, name: formField(form, 'name'), quotaBytes } });
      if (answer.data === undefined) {
        error.value = refusalText(answer.error, answer.response.status);
        return;
      }
      created.value = answer.data.id;
      formElement.reset();
      onCreated();
    } catch {
      error.value = problemText(undefined);
    } finally {
      busy.value = false;
    }
  };
  return { busy, error, created, submit };
}

/** "Create a company": id, name and quota; says what it created (with a link) or why not. */
function CreateCompany({ onCreated }: { onCreated: () => void }) {
  const { busy, error, created, submit } = useCreateCompany(onCreated);
  return (
    <form class="admin-form" onSubmit={submit} aria-labelledby="create-company-title">
      <h2 id="create-company-title">Create a company</h2>
      <label>
        Company id (lower-case letters, digits, “.”, “_” or “-”; fixed for good)
        <input name="id" required maxLength={128} pattern={NEW_COMPANY_ID_HTML_PATTERN} autocomplete="off" />
      </label>
      <label>
        Name
        <input name="name" required maxLength={MAX_COMPANY_NAME_LENGTH} autocomplete="off" />
      </label>
      <QuotaFields />
      <button type="submit" class="primary admin-submit" disabled={busy.value}>
        Create the company
      </button>
      <p role="status" class="admin-status">
        {created.value !== null && (
          <>
            Company <UserText text={created.value} /> created.{' '}
            <a href={companyHref(created.value)}>
              Open <UserText text={created.value} />
            </a>
          </>
        )}
      </p>
      {error.value !== null && <Alert message={error.value} />}
    </form>
  );
}

/** The companies table. */
function CompaniesTable(props: { companies: AdminCompany[] }) {
  return (
    <table class="admin-table">
      <caption>Companies</caption>
      <thead>
        <tr>
          <th scope="col">Company</th>
          <th scope="col">Name</th>
          <th scope="col">Storage used</th>
          <th scope="col">Quota</th>
          <th scope="col">Over quota</th>
        </tr>
      </thead>
      <tbody>
        {props.companies.map((company) => (
          <tr key={company.id}>
            <td class="mono">
              <a href={companyHref(company.id)}>
                <UserText text={company.id} />
              </a>
            </td>
            <td>
              <UserText text={company.name} />
            </td>
            <td>
              <Size value={company.usedBytes} />
            </td>
            <td>
              <Size value={company.quotaBytes} />
            </td>
            <td class={company.overQuota ? 'error' : undefined}>{overQuotaText(company)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The companies page: the listing and, with `companies:write`, the creation form. */
export function AdminCompaniesPage() {
  const revision = useSignal(0);
  const listed = useCompanies(limitOf(here.value.query), revision.value);
  return (
    <main id="main" class="admin-page">
      <h1>Companies</h1>
      {can('companies:write') && <CreateCompany onCreated={() => (revision.value += 1)} />}
      <h2>All companies</h2>
      <ListingStatus listing={listed} what="companies" one="company" />
      <CompaniesTable companies={listed.items.value ?? []} />
      <ShowMore listing={listed} what="companies" />
    </main>
  );
}

/** "Change the company": its name and quota, prefilled; sends only what changed; `onSaved` gets the answer. */
function EditCompany({ company, onSaved }: { company: AdminCompanyDetail; onSaved: (changed: AdminCompany) => void }) {
  const busy = useSignal(false);
  const error = useSignal<string | null>(null);
  const saved = useSignal<string | null>(null);
  const quota = quotaFieldsOf(company.quotaBytes);
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const name = formField(form, 'name');
    const quotaBytes = quotaBytesOf(formField(form, 'quotaAmount'), formField(form, 'quotaUnit'));
    error.value = null;
    saved.value = null;
    if (quotaBytes === undefined) {
      error.value = 'Write the quota as a number, in the unit chosen.';
      return;
    }
    const changes = { ...(name === company.name ? {} : { name }), ...(quotaBytes === company.quotaBytes ? {} : { quotaBytes }) };
    if (Object.keys(changes).length === 0) {
      saved.value = 'Nothing to save: the name and quota are as they were.';
      return;
    }
    busy.value = true;
    try {
      const answer = await api.main.PATCH('/admin/companies/{companyId}', { params: { path: { companyId: company.id } }, body: changes });
      if (answer.data === undefined) {
        error.value = refusalText(answer.error, answer.response.status);
        return;
      }
      saved.value = answer.data.overQuota
        ? 'Changes saved. The quota is below the storage used: uploads are refused until it is raised.'
        : 'Changes saved.';
      onSaved(answer.data);
    } catch {
      error.value = problemText(undefined);
    } finally {
      busy.value = false;
    }
  };
  return (
    <form class="admin-form" onSubmit={submit} aria-labelledby="edit-company-title">
      <h2 id="edit-company-title">Change the company</h2>
      <label>
        Name
        <input name="name" required maxLength={MAX_COMPANY_NAME_LENGTH} defaultValue={company.name} autocomplete="off" />
      </label>
      <QuotaFields amount={quota.amount} unit={quota.unit} />
      <button type="submit" class="primary admin-submit" disabled={busy.value}>
        Save the changes
      </button>
      <p role="status" class="admin-status">
        {saved.value}
      </p>
      {error.value !== null && <Alert message={error.value} />}
    </form>
  );
}

/** The figures of a company as its detail gives them. */
function CompanyFacts({ company }: { company: AdminCompanyDetail }) {
  return (
    <dl class="facts">
      <dt>Id</dt>
      <dd class="mono">
        <UserText text={company.id} />
      </dd>
      <dt>Name</dt>
      <dd>
        <UserText text={company.name} />
      </dd>
      <dt>Storage used</dt>
      <dd>
        <Size value={company.usedBytes} />
      </dd>
      <dt>Quota</dt>
      <dd>
        <Size value={company.quotaBytes} />
      </dd>
      <dt>Over quota</dt>
      <dd class={company.overQuota ? 'error' : undefined}>
        {company.overQuota ? 'Over quota: every upload is refused until the quota is raised above the storage used.' : 'No'}
      </dd>
      <dt>Devices</dt>
      <dd>{count(company.deviceCount)}</dd>
      <dt>Users</dt>
      <dd>{count(company.userCount)}</dd>
    </dl>
  );
}

/** A company's page: its figures (read on each visit) and, with `companies:write`, the form that changes it. */
export function AdminCompanyPage({ companyId }: { companyId: string }) {
  const company = useSignal<AdminCompanyDetail | null>(null);
  const error = useSignal<string | null>(null);
  useEffect(() => {
    let current = true;
    company.value = null;
    error.value = null;
    void (async () => {
      try {
        const {
          data,
          error: problem,
          response,
        } = await api.main.GET('/admin/companies/{companyId}', {
          params: { path: { companyId } },
        });
        if (!current) return;
        company.value = data ?? null;
        error.value = data === undefined ? problemText(problem, response.status) : null;
      } catch {
        if (current) error.value = problemText(undefined);
      }
    })();
    return () => {
      current = false;
    };
  }, [companyId]);
  const shown = company.value;
  return (
    <main id="main" class="admin-page">
      <p>
        <a href={hrefOf('/admin/companies')}>All companies</a>
      </p>
      <h1>
        Company <UserText text={companyId} />
      </h1>
      {error.value !== null && <Alert message={error.value} />}
      {shown === null && error.value === null && <p class="muted">Loading the company…</p>}
      {shown !== null && (
        <>
          <CompanyFacts company={shown} />
          {can('users:read') && (
            <p>
              <a href={hrefOf('/admin/users', { company: shown.id })}>
                Users of <UserText text={shown.id} />
              </a>
            </p>
          )}
          {can('companies:write') && (
            <EditCompany key={shown.id} company={shown} onSaved={(changed) => (company.value = { ...shown, ...changed })} />
          )}
        </>
      )}
    </main>
  );
}
