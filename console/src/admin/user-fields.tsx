/**
 * The fields the users administration's forms share: the role select, the companies' checkboxes, and a temporary
 * password shown once (in the page's state only: never in the URL or the tab's storage).
 */
import { can } from '../session.js';
import { UserText } from '../user-text.js';
import { type CompanyOption, optionLabel } from './company-options.js';
import { grantableRoles, type Role, roleName } from './roles.js';

/** A role select (`name="role"`) of the roles the administrator may grant, `selected` chosen (plus it when not grantable). */
export function RoleSelect({ selected }: { selected: Role }) {
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
export function CompanyChecks({ options, checked }: { options: CompanyOption[]; checked: readonly string[] }) {
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
export function TemporaryPassword({ username, email, password }: { username: string; email: string; password: string | undefined }) {
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
