/**
 * Users administration (`users:read`, `users:write`: a company or platform administrator's): the users page
 * (`#/admin/users?company=<id>[&limit=<n>]`, the users of a company, or every user for a platform administrator, a
 * page at a time, and the invitation form) and a user's page (`#/admin/users/<username>?company=<id>`: their role,
 * companies and state, the form that changes them, the password reset and the deletion). A temporary password (the
 * local service answers it; on AWS Cognito emails it) is shown once, in the page's state only: never in the URL or
 * the tab's storage.
 */
import { signal, useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { MAX_EMAIL_LENGTH, USERNAME_HTML_PATTERN } from '../../../client/limits.js';
import { type CompanyOption, optionLabel, useCompanyOptions } from '../admin/company-options.js';
import { refusalText } from '../admin/refusal.js';
import { type Role, roleName } from '../admin/roles.js';
import { CompanyChecks, RoleSelect, TemporaryPassword } from '../admin/user-fields.js';
import { DeleteUser, EditUser, ResetPassword, type User } from '../admin/user-forms.js';
import { limitOf, useDefaultCompany } from '../company-listing.js';
import { Alert } from '../device/focus.js';
import { formField } from '../form-field.js';
import { dateTime } from '../format.js';
import { usePagedListing } from '../paged-listing.js';
import { ListingStatus, ShowMore } from '../paged-listing-view.js';
import { here, hrefOf, navigate } from '../router.js';
import { api, can, claims, problemText } from '../session.js';
import { UserText, visibleText } from '../user-text.js';

/** The users page of `company` (every user when empty). */
function usersHref(company: string): string {
  return hrefOf('/admin/users', company === '' ? {} : { company });
}

/** A user's page, the users page of `company` being where "All users" returns. */
function userHref(username: string, company: string): string {
  return hrefOf(`/admin/users/${encodeURIComponent(username)}`, company === '' ? {} : { company });
}

/** What the users page says after a deletion made on a user's page (which then returns to it). */
const deleted = signal<string | null>(null);

/**
 * Whether the user may sign in, in words, and who disabled them (`Disabled by root (platform-admin)`: only a
 * platform-admin enables such a user again). Usernames hold no bidirectional or control character (their pattern).
 */
function signInText(user: User): string {
  if (user.enabled) return 'Enabled';
  return user.disabledBy === undefined ? 'Disabled' : `Disabled by ${user.disabledBy.username} (${user.disabledBy.role})`;
}

/** Where the user stands with their password, in words. */
function passwordText(user: User): string {
  return user.status === 'FORCE_CHANGE_PASSWORD' ? 'Temporary: sets a new one at the next sign-in' : 'Set by the user';
}

/** The users of `company` (every user when empty), `limit` a page; read afresh when `revision` changes. */
function useUsers(company: string, limit: number | undefined, enabled: boolean, revision: number) {
  return usePagedListing<User, string>(
    [company, limit, revision, enabled],
    enabled,
    async (cursor) => {
      const { data, error, response } = await api.main.GET('/admin/users', {
        params: {
          query: {
            ...(company === '' ? {} : { company }),
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

/**
 * The state of the invitation form: whether it is sending, its error message, the user it invited (with the
 * temporary password when the service answers it), and `submit`, the form's submit handler (once invited, the form is
 * emptied and `onInvited` called).
 */
function useInviteUser(onInvited: () => void) {
  const busy = useSignal(false);
  const error = useSignal<string | null>(null);
  const invited = useSignal<{ username: string; email: string; password: string | undefined } | null>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const form = new FormData(formElement);
    error.value = null;
    invited.value = null;
    busy.value = true;
    try {
      const body = {
        username: formField(form, 'username'),
        email: formField(form, 'email'),
        role: formField(form, 'role') as Role,
        companies: form.getAll('companies').map(String),
      };
      const answer = await api.main.POST('/admin/users', { body });
      if (answer.data === undefined) {
        error.value = refusalText(answer.error, answer.response.status);
        return;
      }
      invited.value = { username: answer.data.user.username, email: answer.data.user.email, password: answer.data.temporaryPassword };
      formElement.reset();
      onInvited();
    } catch {
      error.value = problemText(undefined);
    } finally {
      busy.value = false;
    }
  };
  return { busy, error, invited, submit };
}

/** "Invite a user": username, email, role and companies; shows the temporary password once. */
function InviteUser({ options, company, onInvited }: { options: CompanyOption[]; company: string; onInvited: () => void }) {
  const { busy, error, invited, submit } = useInviteUser(onInvited);
  const shown = invited.value;
  return (
    <form class="admin-form" onSubmit={submit} aria-labelledby="invite-title">
      <h2 id="invite-title">Invite a user</h2>
      <label>
        Username (letters, digits, “.”, “_”, “-” or “@”; fixed for good)
        <input name="username" required maxLength={128} pattern={USERNAME_HTML_PATTERN} autocomplete="off" />
      </label>
      <label>
        Email
        <input name="email" type="email" required maxLength={MAX_EMAIL_LENGTH} autocomplete="off" />
      </label>
      <RoleSelect selected="viewer" />
      <CompanyChecks key={`${options.length}:${company}`} options={options} checked={company === '' ? [] : [company]} />
      <button type="submit" class="primary admin-submit" disabled={busy.value}>
        Invite the user
      </button>
      <div role="status" class="admin-status">
        {shown !== null && (
          <>
            <p>
              User <UserText text={shown.username} /> invited.{' '}
              <a href={userHref(shown.username, company)}>
                Open <UserText text={shown.username} />
              </a>
            </p>
            <TemporaryPassword username={shown.username} email={shown.email} password={shown.password} />
          </>
        )}
      </div>
      {error.value !== null && <Alert message={error.value} />}
    </form>
  );
}

/** The company filter: every company for a platform administrator (or all of them), else the token's. */
function CompanyFilter({ options, company }: { options: CompanyOption[]; company: string }) {
  const change = (event: Event) => {
    const value = (event.currentTarget as HTMLSelectElement).value;
    navigate('/admin/users', value === '' ? {} : { company: value });
  };
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

/** The users table. */
function UsersTable(props: { users: User[]; company: string }) {
  return (
    <table class="admin-table">
      <caption>
        {props.company === '' ? (
          'Every user'
        ) : (
          <>
            Users of <UserText text={props.company} />
          </>
        )}
      </caption>
      <thead>
        <tr>
          <th scope="col">Username</th>
          <th scope="col">Email</th>
          <th scope="col">Role</th>
          <th scope="col">Companies</th>
          <th scope="col">Sign-in</th>
          <th scope="col">Password</th>
          <th scope="col">Created</th>
        </tr>
      </thead>
      <tbody>
        {props.users.map((user) => (
          <tr key={user.username}>
            <td class="mono">
              <a href={userHref(user.username, props.company)}>
                <UserText text={user.username} />
              </a>
            </td>
            <td>
              <UserText text={user.email} />
            </td>
            <td>{roleName(user.role)}</td>
            <td>
              <UserText text={user.companies.join(', ')} />
            </td>
            <td class={user.enabled ? undefined : 'warning'}>{signInText(user)}</td>
            <td>{passwordText(user)}</td>
            <td>
              <time dateTime={user.createdAt}>{dateTime(user.createdAt)}</time>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * The users page of the URL's `company`: a company administrator always names one (their first when the URL names
 * none, as the API asks them to), a platform administrator may name none for every user.
 */
export function AdminUsersPage() {
  const query = here.value.query;
  const company = query.get('company') ?? '';
  const everyCompany = can('companies:read');
  useDefaultCompany('/admin/users', company, everyCompany ? undefined : claims.value?.companies[0], query);
  const { options, failure: optionsFailure } = useCompanyOptions();
  const revision = useSignal(0);
  const listed = useUsers(company, limitOf(query), everyCompany || company !== '', revision.value);
  return (
    <main id="main" class="admin-page">
      <h1>Users</h1>
      <p role="status" class="admin-status">
        {deleted.value === null ? null : <UserText text={deleted.value} />}
      </p>
      <CompanyFilter options={options.value} company={company} />
      {can('users:write') && <InviteUser options={options.value} company={company} onInvited={() => (revision.value += 1)} />}
      <h2>
        {company === '' ? (
          'Every user'
        ) : (
          <>
            Users of <UserText text={company} />
          </>
        )}
      </h2>
      <ListingStatus listing={listed} what="users" one="user" otherFailure={optionsFailure.value} />
      <UsersTable users={listed.items.value ?? []} company={company} />
      <ShowMore listing={listed} what="users" />
    </main>
  );
}

/** The figures of a user. */
function UserFacts({ user }: { user: User }) {
  return (
    <dl class="facts">
      <dt>Username</dt>
      <dd class="mono">
        <UserText text={user.username} />
      </dd>
      <dt>Email</dt>
      <dd>
        <UserText text={user.email} />
      </dd>
      <dt>Role</dt>
      <dd>{roleName(user.role)}</dd>
      <dt>Companies</dt>
      <dd>{user.companies.length === 0 ? 'None' : <UserText text={user.companies.join(', ')} />}</dd>
      <dt>Sign-in</dt>
      <dd>{signInText(user)}</dd>
      <dt>Password</dt>
      <dd>{passwordText(user)}</dd>
      <dt>Created</dt>
      <dd>
        <time dateTime={user.createdAt}>{dateTime(user.createdAt)}</time>
      </dd>
      <dt>Changed</dt>
      <dd>
        <time dateTime={user.updatedAt}>{dateTime(user.updatedAt)}</time>
      </dd>
    </dl>
  );
}

/**
 * The user `username` as the API gives it, read again when `revision` changes (the user a former `username` gave is
 * kept until the answer comes: the page checks the name), and why it could not be read. Reading a user's page
 * forgets the notice of a deletion.
 */
function useUserRecord(username: string) {
  const user = useSignal<User | null>(null);
  const error = useSignal<string | null>(null);
  const revision = useSignal(0);
  useEffect(() => {
    deleted.value = null;
    let current = true;
    void (async () => {
      try {
        const { data, error: problem, response } = await api.main.GET('/admin/users/{username}', { params: { path: { username } } });
        if (!current) return;
        user.value = data ?? null;
        error.value = data === undefined ? problemText(problem, response.status) : null;
      } catch {
        if (current) error.value = problemText(undefined);
      }
    })();
    return () => {
      current = false;
    };
  }, [username, revision.value]);
  return { user, error, revision };
}

/** A user's page: their figures and, with `users:write`, the forms that change, reset and delete them. */
export function AdminUserPage({ username }: { username: string }) {
  const company = here.value.query.get('company') ?? '';
  const { options } = useCompanyOptions();
  const { user, error, revision } = useUserRecord(username);
  const shown = user.value?.username === username ? user.value : null;
  const self = username === claims.value?.subject;
  return (
    <main id="main" class="admin-page">
      <p>
        <a href={usersHref(company)}>
          All users
          {company === '' ? (
            ''
          ) : (
            <>
              {' of '}
              <UserText text={company} />
            </>
          )}
        </a>
      </p>
      <h1>
        User <UserText text={username} />
      </h1>
      {error.value !== null && <Alert message={error.value} />}
      {shown === null && error.value === null && <p class="muted">Loading the user…</p>}
      {shown !== null && (
        <>
          <UserFacts user={shown} />
          {can('users:write') && (
            <>
              <EditUser key={shown.username} user={shown} options={options.value} onSaved={(changed) => (user.value = changed)} />
              <ResetPassword user={shown} onReset={() => (revision.value += 1)} />
              {!self && (
                <DeleteUser
                  user={shown}
                  onDeleted={() => {
                    deleted.value = `User ${shown.username} deleted.`;
                    navigate('/admin/users', company === '' ? {} : { company });
                  }}
                />
              )}
            </>
          )}
        </>
      )}
    </main>
  );
}
