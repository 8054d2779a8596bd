/**
 * The forms of a user's page (`users:write`): the one that changes their role, companies and sign-in, the password
 * reset (a new temporary password, shown once) and the deletion, confirmed in the page.
 */
import { useSignal } from '@preact/signals';
import type { components } from '../../../client/index.js';
import { Alert, InlineConfirm } from '../device/focus.js';
import { formField } from '../form-field.js';
import { api, claims, problemText } from '../session.js';
import { UserText } from '../user-text.js';
import type { CompanyOption } from './company-options.js';
import { refusalText } from './refusal.js';
import type { Role } from './roles.js';
import { CompanyChecks, RoleSelect, TemporaryPassword } from './user-fields.js';

/** A user as the administration API gives it. */
export type User = components['schemas']['User'];

/** The changes the form asks for against `user`: only the role, companies and sign-in that differ. */
function changesOf(form: FormData, user: User, self: boolean): { role?: Role; companies?: string[]; enabled?: boolean } {
  const role = formField(form, 'role') as Role;
  const companies = form.getAll('companies').map(String);
  const enabled = self ? user.enabled : form.get('enabled') !== null;
  const sameCompanies = companies.length === user.companies.length && companies.every((id) => user.companies.includes(id));
  return {
    ...(role === user.role ? {} : { role }),
    ...(sameCompanies ? {} : { companies }),
    ...(enabled === user.enabled ? {} : { enabled }),
  };
}

/**
 * The state of the change form of `user` (`self`: the signed-in administrator's own, whose sign-in is not offered):
 * whether it is sending, its error message, what it saved, and `submit`, the form's submit handler (nothing is sent
 * when nothing changed; once saved, `onSaved` gets the answer).
 */
function useEditUser(user: User, self: boolean, onSaved: (changed: User) => void) {
  const busy = useSignal(false);
  const error = useSignal<string | null>(null);
  const saved = useSignal<string | null>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    const changes = changesOf(new FormData(event.currentTarget as HTMLFormElement), user, self);
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
  return { busy, error, saved, submit };
}

/** "Change the user": role, companies and whether they may sign in; sends only what changed. */
export function EditUser({ user, options, onSaved }: { user: User; options: CompanyOption[]; onSaved: (changed: User) => void }) {
  const self = user.username === claims.value?.subject;
  const { busy, error, saved, submit } = useEditUser(user, self, onSaved);
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
export function ResetPassword({ user, onReset }: { user: User; onReset: () => void }) {
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

/** "Delete the user", confirmed in the page; `onDeleted` is called once the user is deleted. */
export function DeleteUser({ user, onDeleted }: { user: User; onDeleted: () => void }) {
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
      onDeleted();
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
