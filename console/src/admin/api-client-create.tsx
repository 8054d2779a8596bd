/**
 * "Create an API client" (`users:write`): its name, its company (every company for a platform administrator, else
 * the administrator's own) and its role (a fieldset of radio buttons). Created, the form is emptied and the client's
 * secret shown once, in the page's state only.
 */
import { useSignal } from '@preact/signals';
import type { RefObject } from 'preact';
import { useRef } from 'preact/hooks';
import { MAX_API_CLIENT_NAME_LENGTH } from '../../../client/limits.js';
import { Alert, useFocusLater } from '../device/focus.js';
import { formField } from '../form-field.js';
import { SecretOnce, type ShownSecret } from '../integrations/secret.js';
import { hrefOf } from '../router.js';
import { UserText, visibleText } from '../user-text.js';
import { CLIENT_SECRET_WORDS } from './api-client-secret.js';
import { type ApiClient, createApiClient } from './api-clients.js';
import { API_CLIENT_ROLES, type ApiClientRole } from './client-roles.js';
import { type CompanyOption, optionLabel } from './company-options.js';

/** The form's state and its submit handler: the client created, the form emptied, its secret kept to show once. */
function useCreateApiClient(onCreated: (client: ApiClient) => void, alert: RefObject<HTMLParagraphElement>) {
  const busy = useSignal(false);
  const error = useSignal<string | null>(null);
  const created = useSignal<{ client: ApiClient; secret: ShownSecret } | null>(null);
  const focusLater = useFocusLater();
  const submit = async (event: Event) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const form = new FormData(formElement);
    created.value = null;
    error.value = null;
    busy.value = true;
    const answer = await createApiClient({
      name: formField(form, 'name'),
      company: formField(form, 'company'),
      role: formField(form, 'role') as ApiClientRole,
    });
    busy.value = false;
    if (!answer.ok) {
      error.value = answer.message;
      focusLater(alert);
      return;
    }
    const { clientSecret, ...client } = answer.data;
    created.value = { client, secret: { secret: clientSecret, previousSecretExpiresAt: null } };
    formElement.reset();
    onCreated(client);
  };
  return { busy, error, created, submit };
}

/** The fieldset "Role": one radio button per role a client may hold, with what it may do; `checked` checked. */
export function RoleChoice({ checked = 'viewer' }: { checked?: ApiClientRole }) {
  return (
    <fieldset class="admin-companies">
      <legend>Role</legend>
      {API_CLIENT_ROLES.map((entry) => (
        <label key={entry.role} class="admin-check">
          <input type="radio" name="role" value={entry.role} defaultChecked={entry.role === checked} required />
          {entry.label}
        </label>
      ))}
    </fieldset>
  );
}

/** The form (see the module comment); `company` is chosen first, `onCreated` is called with the new client. */
export function CreateApiClient(props: { options: CompanyOption[]; company: string; onCreated: (client: ApiClient) => void }) {
  const alert = useRef<HTMLParagraphElement>(null);
  const { busy, error, created, submit } = useCreateApiClient(props.onCreated, alert);
  const shown = created.value;
  return (
    <form class="admin-form" onSubmit={submit} aria-labelledby="create-client-title">
      <h2 id="create-client-title">Create an API client</h2>
      <label>
        Name (what it is for, e.g. the store's back office)
        <input name="name" required maxLength={MAX_API_CLIENT_NAME_LENGTH} autocomplete="off" />
      </label>
      <label>
        Company (the client acts for this company only)
        <select key={`${props.options.length}:${props.company}`} name="company" required defaultValue={props.company}>
          {props.options.map((option) => (
            <option key={option.id} value={option.id}>
              {visibleText(optionLabel(option))}
            </option>
          ))}
        </select>
      </label>
      <RoleChoice />
      <button type="submit" class="primary admin-submit" disabled={busy.value}>
        Create the API client
      </button>
      <div role="status" class="admin-status">
        {shown === null ? null : (
          <p>
            API client <UserText text={shown.client.name} /> created, with the client id <code>{shown.client.clientId}</code>.{' '}
            <a href={hrefOf('/admin/api-clients', { company: shown.client.company, client: shown.client.clientId })}>
              Open <UserText text={shown.client.name} />
            </a>
          </p>
        )}
      </div>
      {shown === null ? null : <SecretOnce shown={shown.secret} words={CLIENT_SECRET_WORDS} />}
      {error.value === null ? null : <Alert message={error.value} focusRef={alert} />}
    </form>
  );
}
