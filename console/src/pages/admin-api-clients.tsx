/**
 * The API clients page (`#/admin/api-clients?company=<id>[&limit=<n>][&client=<clientId>]`, for `users:read`: a
 * company or platform administrator's): the clients of a company (or of every company for a platform administrator)
 * a page at a time, "Create an API client" for `users:write`, and the client the URL names with its actions. A
 * client's secret is shown once, in the page's state only: never in the URL or the tab's storage.
 */
import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { CreateApiClient } from '../admin/api-client-create.js';
import { ApiClientPanel } from '../admin/api-client-panel.js';
import { type ApiClient, loadApiClient, loadApiClients } from '../admin/api-clients.js';
import { clientRoleName } from '../admin/client-roles.js';
import { type CompanyOption, optionLabel, useCompanyOptions } from '../admin/company-options.js';
import { limitOf, useDefaultCompany } from '../company-listing.js';
import { Alert } from '../device/focus.js';
import { dateTime } from '../format.js';
import { usePagedListing } from '../paged-listing.js';
import { ListingStatus, ShowMore } from '../paged-listing-view.js';
import { here, hrefOf, navigate } from '../router.js';
import { can, claims, problemText } from '../session.js';
import { UserText, visibleText } from '../user-text.js';

const PATH = '/admin/api-clients';

/** The page of `company`'s clients (every client when empty), with `client` open when given. */
function clientsHref(company: string, client?: string): string {
  return hrefOf(PATH, { ...(company === '' ? {} : { company }), ...(client === undefined ? {} : { client }) });
}

/** The client `clientId` as the API gives it (none without an id), and why it could not be read. */
function useApiClient(clientId: string | null) {
  const client = useSignal<ApiClient | null>(null);
  const error = useSignal<string | null>(null);
  useEffect(() => {
    client.value = null;
    error.value = null;
    if (clientId === null) return;
    let current = true;
    void loadApiClient(clientId).then((loaded) => {
      if (!current) return;
      if (loaded.ok) client.value = loaded.data;
      else error.value = loaded.message;
    });
    return () => {
      current = false;
    };
  }, [clientId]);
  return { client, error };
}

/** The company filter: every company for a platform administrator (or all of them), else the token's. */
function CompanyFilter({ options, company }: { options: CompanyOption[]; company: string }) {
  const change = (event: Event) =>
    navigate(
      PATH,
      (event.currentTarget as HTMLSelectElement).value === '' ? {} : { company: (event.currentTarget as HTMLSelectElement).value },
    );
  const shown = options.some((option) => option.id === company) || company === '' ? options : [{ id: company }, ...options];
  return (
    <div class="toolbar">
      <label>
        Company
        <select onChange={change} value={company}>
          {can('companies:read') && <option value="">All companies</option>}
          {shown.map((option) => (
            <option key={option.id} value={option.id}>
              {visibleText(optionLabel(option))}
            </option>
          ))}
        </select>
      </label>
    </div>
  );
}

/** An optional time in a cell: a `<time>`, or `absent`. */
function TimeCell({ iso, absent }: { iso: string | undefined; absent: string }) {
  return <td>{iso === undefined ? absent : <time dateTime={iso}>{dateTime(iso)}</time>}</td>;
}

/** What the table and its headings call the clients of `company`. */
function Clients({ company }: { company: string }) {
  return company === '' ? (
    <>Every API client</>
  ) : (
    <>
      API clients of <UserText text={company} />
    </>
  );
}

/** The clients table; each name opens its client. */
function ApiClientsTable({ clients, company }: { clients: ApiClient[]; company: string }) {
  return (
    <table class="admin-table">
      <caption>
        <Clients company={company} />
      </caption>
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Client id</th>
          <th scope="col">Company</th>
          <th scope="col">Role</th>
          <th scope="col">Enabled</th>
          <th scope="col">Last used</th>
          <th scope="col">Previous secret until</th>
        </tr>
      </thead>
      <tbody>
        {clients.map((client) => (
          <tr key={client.clientId}>
            <td>
              <a href={clientsHref(company, client.clientId)}>
                <UserText text={client.name} />
              </a>
            </td>
            <td class="mono">{client.clientId}</td>
            <td>
              <UserText text={client.company} />
            </td>
            <td>{clientRoleName(client.role)}</td>
            <td class={client.enabled ? undefined : 'warning'}>{client.enabled ? 'Yes' : 'No'}</td>
            <TimeCell iso={client.lastUsedAt} absent="Never" />
            <TimeCell iso={client.previousSecretExpiresAt} absent="—" />
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The clients of `company`, a page at a time, read again when `revision` changes. */
function useClients(company: string, limit: number | undefined, enabled: boolean, revision: number) {
  return usePagedListing<ApiClient, string>(
    [company, limit, revision, enabled],
    enabled,
    async (cursor) => {
      const loaded = await loadApiClients(company, limit, cursor);
      return loaded.ok ? loaded.data : { failure: loaded.message };
    },
    () => problemText(undefined),
  );
}

/**
 * The client the URL names (`clientId`), read from the API, with its panel; `onChanged` after a change, `onDeleted`
 * with the message to show once it is deleted.
 */
function OpenClient(props: { clientId: string | null; company: string; onChanged: () => void; onDeleted: (message: string) => void }) {
  const { clientId, company } = props;
  const { client, error } = useApiClient(clientId);
  const shown = client.value?.clientId === clientId ? client.value : null;
  if (clientId === null) return null;
  return (
    <>
      {error.value === null ? null : <Alert message={error.value} />}
      {shown === null ? null : (
        <ApiClientPanel
          key={shown.clientId}
          client={shown}
          onChanged={(changed) => {
            client.value = changed;
            props.onChanged();
          }}
          onDeleted={props.onDeleted}
        />
      )}
      {shown !== null || error.value !== null ? null : <p class="muted">Loading the API client…</p>}
      <p>
        <a href={clientsHref(company)}>Close the API client</a>
      </p>
    </>
  );
}

/** The API clients page (see the module comment). */
export function AdminApiClientsPage() {
  const query = here.value.query;
  const company = query.get('company') ?? '';
  const everyCompany = can('companies:read');
  useDefaultCompany(PATH, company, everyCompany ? undefined : claims.value?.companies[0], query);
  const { options, failure: optionsFailure } = useCompanyOptions();
  const revision = useSignal(0);
  const notice = useSignal<string | null>(null);
  const listed = useClients(company, limitOf(query), everyCompany || company !== '', revision.value);
  const listing = listed.items.value;
  return (
    <main id="main" class="admin-page">
      <h1>API clients</h1>
      <p>
        An API client is a system of a company (a store's back office, a pipeline) that calls the API with its own id and secret instead of
        a person's password: it gets short-lived tokens with the client credentials grant and acts for its one company with its role.
      </p>
      <p role="status" class="admin-status">
        {notice.value === null ? null : <UserText text={notice.value} />}
      </p>
      <CompanyFilter options={options.value} company={company} />
      {can('users:write') && (
        <CreateApiClient
          options={options.value}
          company={company === '' ? (options.value[0]?.id ?? '') : company}
          onCreated={() => (revision.value += 1)}
        />
      )}
      <h2>
        <Clients company={company} />
      </h2>
      <ListingStatus listing={listed} what="API clients" one="API client" otherFailure={optionsFailure.value} />
      {listing !== undefined && listing.length === 0 ? (
        <p class="muted">No API client yet.</p>
      ) : (
        <ApiClientsTable clients={listing ?? []} company={company} />
      )}
      <ShowMore listing={listed} what="API clients" />
      <OpenClient
        clientId={query.get('client')}
        company={company}
        onChanged={() => (revision.value += 1)}
        onDeleted={(message) => {
          notice.value = message;
          revision.value += 1;
          navigate(PATH, company === '' ? {} : { company });
        }}
      />
    </main>
  );
}
