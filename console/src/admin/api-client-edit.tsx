/**
 * "Change the API client" (`users:write`): its name and role; sends only what changed. A lower role takes effect at
 * the client's next token, and for its live tokens within a minute.
 */
import { useSignal } from '@preact/signals';
import { MAX_API_CLIENT_NAME_LENGTH } from '../../../client/limits.js';
import { Alert } from '../device/focus.js';
import { formField } from '../form-field.js';
import { RoleChoice } from './api-client-create.js';
import { type ApiClient, updateApiClient } from './api-clients.js';
import type { ApiClientRole } from './client-roles.js';

/** The changes the form asks for against `client`: only the name and role that differ. */
function changesOf(form: FormData, client: ApiClient): { name?: string; role?: ApiClientRole } {
  const name = formField(form, 'name');
  const role = formField(form, 'role') as ApiClientRole;
  return { ...(name === client.name ? {} : { name }), ...(role === client.role ? {} : { role }) };
}

/** The form (see the module comment); `onSaved` gets the client as changed. */
export function EditApiClient({ client, onSaved }: { client: ApiClient; onSaved: (changed: ApiClient) => void }) {
  const busy = useSignal(false);
  const error = useSignal<string | null>(null);
  const saved = useSignal<string | null>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    const changes = changesOf(new FormData(event.currentTarget as HTMLFormElement), client);
    error.value = null;
    saved.value = null;
    if (Object.keys(changes).length === 0) {
      saved.value = 'Nothing to save: the name and role are as they were.';
      return;
    }
    busy.value = true;
    const answer = await updateApiClient(client.clientId, changes);
    busy.value = false;
    if (!answer.ok) {
      error.value = answer.message;
      return;
    }
    saved.value = 'Changes saved.';
    onSaved(answer.data);
  };
  return (
    <form class="admin-form" onSubmit={submit} aria-labelledby="edit-client-title">
      <h3 id="edit-client-title">Change the API client</h3>
      <label>
        Name
        <input name="name" required maxLength={MAX_API_CLIENT_NAME_LENGTH} autocomplete="off" defaultValue={client.name} />
      </label>
      <RoleChoice checked={client.role} />
      <button type="submit" class="primary admin-submit" disabled={busy.value}>
        Save the changes
      </button>
      <p role="status" class="admin-status">
        {saved.value}
      </p>
      {error.value === null ? null : <Alert message={error.value} />}
    </form>
  );
}
