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
import type { components } from '../../../client/index.js';
import { MAX_EMAIL_LENGTH, USERNAME_HTML_PATTERN } from '../../../client/limits.js';
import { type CompanyOption, optionLabel, useCompanyOptions } from '../admin/company-options.js';
import { refusalText } from '../admin/refusal.js';
import { grantableRoles, type Role, roleName } from '../admin/roles.js';
import { limitOf, useDefaultCompany } from '../company-listing.js';
import { Alert, InlineConfirm } from '../device/focus.js';
import { formField } from '../form-field.js';
import { dateTime } from '../format.js';
import { usePagedListing } from '../paged-listing.js';
import { ListingStatus, ShowMore } from '../paged-listing-view.js';
import { here, hrefOf, navigate } from '../router.js';
import { api, can, claims, problemText } from '../session.js';
import { UserText, visibleText } from '../user-text.js';

type User = components['schemas']['User'];

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

/** A role select (`name="role"`) of the roles the administrator may grant, `selected` chosen (plus it when not grantable). */
function RoleSelect({ selected }: { selected: Role }) {
  const roles = grantableRoles(can('companies:write'));
  const shown = roles.some((entry) => entry.role === selected) ? roles : [...roles, { role: selected, label: roleName(selected) }];
  return (
    <label>
      Role
      <select name="role">
        {shown.map((entry) => (
          <option key={entry.role} value={entry.role} selected={entry.role === selected}>
            {entry.label}
          </option>
        ))}
      </select>
    </label>
  );
}

/** A fieldset of one checkbox per company (`name="companies"`), those of `checked` ticked. */
function CompanyChecks({ options, checked }: { options: CompanyOption[]; checked: readonly string[] }) {
  const shown = [...options, ...checked.filter((id) => !options.some((option) => option.id === id)).map((id) => ({ id }))];
  return (
    <fieldset class="admin-companies">
      <legend>Companies</legend>
      {shown.map((option) => (
        <label key={option.id} class="admin-check">
          <input type="checkbox" name="companies" value={option.id} defaultChecked={checked.includes(option.id)} />
          <UserText text={optionLabel(option)} />
        </label>
      ))}
      {shown.length === 0 && <p class="muted">No company to choose.</p>}
    </fieldset>
  );
}

/** A temporary password shown once, with what to do with it; or, when the service emailed it, where to. */
function TemporaryPassword({ username, email, password }: { username: string; email: string; password: string | undefined }) {
  if (password === undefined) {
    return (
      <p>
        The service emailed a temporary password to <UserText text={email} />.
      </p>
    );
  }
  return (
    <>
      <p>
        Temporary password of <UserText text={username} />, shown only this once: <code class="admin-secret">{password}</code>
      </p>
      <p class="notice">
        Give it to <UserText text={username} /> by a safe channel. They choose their own password when they first sign in with it; it is not
        shown again, and a new one takes a password reset.
      </p>
    </>
  );
}

/** "Invite a user": username, email, role and companies; shows the temporary password once. */
function InviteUser({ options, company, onInvited }: { options: CompanyOption[]; company: string; onInvited: () => void }) {
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
      <ListingStatus listing={listed} what="users" otherFailure={optionsFailure.value} />
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

/** "Change the user": role, companies and whether they may sign in; sends only what changed. */
function EditUser({ user, options, onSaved }: { user: User; options: CompanyOption[]; onSaved: (changed: User) => void }) {
  const busy = useSignal(false);
  const error = useSignal<string | null>(null);
  const saved = useSignal<string | null>(null);
  const self = user.username === claims.value?.subject;
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const role = formField(form, 'role') as Role;
    const companies = form.getAll('companies').map(String);
    const enabled = self ? user.enabled : form.get('enabled') !== null;
    const sameCompanies = companies.length === user.companies.length && companies.every((id) => user.companies.includes(id));
    const changes = {
      ...(role === user.role ? {} : { role }),
      ...(sameCompanies ? {} : { companies }),
      ...(enabled === user.enabled ? {} : { enabled }),
    };
    error.value = null;
    saved.value = null;
    if (Object.keys(changes).length === 0) {
      saved.value = 'Nothing to save: the role, companies and sign-in are as they were.';
      return;
    }
    busy.value = true;
    try {
      const answer = await api.main.PATCH('/admin/users/{username}', { params: { path: { username: user.username } }, body: changes });
      if (answer.data === undefined) {
        error.value = refusalText(answer.error, answer.response.status);
        return;
      }
      saved.value = 'Changes saved.';
      onSaved(answer.data);
    } catch {
      error.value = problemText(undefined);
    } finally {
      busy.value = false;
    }
  };
  return (
    <form class="admin-form" onSubmit={submit} aria-labelledby="edit-user-title">
      <h2 id="edit-user-title">Change the user</h2>
      <RoleSelect selected={user.role} />
      <CompanyChecks key={options.length} options={options} checked={user.companies} />
      {self ? (
        <p class="muted">You cannot disable yourself: another administrator can.</p>
      ) : (
        <label class="admin-check">
          <input type="checkbox" name="enabled" defaultChecked={user.enabled} />
          May sign in (enabled); disabling also ends their sessions
        </label>
      )}
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

/** "Reset the password": a new temporary password, shown once; the user's sessions end. */
function ResetPassword({ user, onReset }: { user: User; onReset: () => void }) {
  const busy = useSignal(false);
  const error = useSignal<string | null>(null);
  const reset = useSignal<{ password: string | undefined } | null>(null);
  const click = async () => {
    busy.value = true;
    error.value = null;
    reset.value = null;
    try {
      const answer = await api.main.POST('/admin/users/{username}/reset-password', { params: { path: { username: user.username } } });
      if (answer.data === undefined) {
        error.value = refusalText(answer.error, answer.response.status);
        return;
      }
      reset.value = { password: answer.data.temporaryPassword };
      onReset();
    } catch {
      error.value = problemText(undefined);
    } finally {
      busy.value = false;
    }
  };
  return (
    <section aria-labelledby="reset-title">
      <h2 id="reset-title">Password</h2>
      <p>
        A reset gives <UserText text={user.username} /> a new temporary password and ends their sessions; they choose a new password when
        they next sign in.
      </p>
      <button type="button" onClick={click} disabled={busy.value}>
        Reset the password of <UserText text={user.username} />
      </button>
      <div role="status" class="admin-status">
        {reset.value !== null && (
          <>
            <p>
              Password of <UserText text={user.username} /> reset.
            </p>
            <TemporaryPassword username={user.username} email={user.email} password={reset.value.password} />
          </>
        )}
      </div>
      {error.value !== null && <Alert message={error.value} />}
    </section>
  );
}

/** "Delete the user", confirmed in the page; returns to the users page once done. */
function DeleteUser({ user, company }: { user: User; company: string }) {
  const confirming = useSignal(false);
  const busy = useSignal(false);
  const error = useSignal<string | null>(null);
  const confirm = async () => {
    busy.value = true;
    error.value = null;
    try {
      const answer = await api.main.DELETE('/admin/users/{username}', { params: { path: { username: user.username } } });
      if (!answer.response.ok) {
        error.value = refusalText(answer.error, answer.response.status);
        confirming.value = false;
        return;
      }
      deleted.value = `User ${user.username} deleted.`;
      navigate('/admin/users', company === '' ? {} : { company });
    } catch {
      error.value = problemText(undefined);
    } finally {
      busy.value = false;
    }
  };
  return (
    <section aria-labelledby="delete-title">
      <h2 id="delete-title">Delete the user</h2>
      {confirming.value ? (
        <InlineConfirm
          id="delete-confirm-title"
          title={
            <>
              Delete <UserText text={user.username} />?
            </>
          }
          consequence={
            <>
              <UserText text={user.username} /> can no longer sign in and their sessions end. This cannot be undone: to let them back,
              invite them again.
            </>
          }
          confirmLabel={
            <>
              Delete <UserText text={user.username} />
            </>
          }
          busy={busy.value}
          onConfirm={() => void confirm()}
          onCancel={() => (confirming.value = false)}
        />
      ) : (
        <button type="button" class="danger" onClick={() => (confirming.value = true)}>
          Delete <UserText text={user.username} />…
        </button>
      )}
      {error.value !== null && <Alert message={error.value} />}
    </section>
  );
}

/** A user's page: their figures and, with `users:write`, the forms that change, reset and delete them. */
export function AdminUserPage({ username }: { username: string }) {
  const company = here.value.query.get('company') ?? '';
  const user = useSignal<User | null>(null);
  const error = useSignal<string | null>(null);
  const revision = useSignal(0);
  const { options } = useCompanyOptions();
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
              {!self && <DeleteUser user={shown} company={company} />}
            </>
          )}
        </>
      )}
    </main>
  );
}
