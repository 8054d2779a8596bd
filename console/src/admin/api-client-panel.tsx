/**
 * One API client on the API clients page (the URL's `client`): its facts, and for `users:write` "Rotate secret"
 * (confirmed; the new secret shown once, with until when the previous one still works), "Disable" or "Enable",
 * "Delete API client" (confirmed), and "Change the API client" (its name and role).
 */
import type { ComponentChildren } from 'preact';
import { useRef } from 'preact/hooks';
import { Alert, InlineConfirm, useFocusLater } from '../device/focus.js';
import { dateTime } from '../format.js';
import { SecretOnce, useSecretActions } from '../integrations/secret.js';
import { can } from '../session.js';
import { UserText } from '../user-text.js';
import { EditApiClient } from './api-client-edit.js';
import { CLIENT_SECRET_WORDS } from './api-client-secret.js';
import { type ApiClient, deleteApiClient, rotateApiClientSecret, updateApiClient } from './api-clients.js';
import { clientRoleName } from './client-roles.js';

/** An optional time as the page shows it: a `<time>`, or `absent` when there is none. */
function when(iso: string | undefined, absent: string): ComponentChildren {
  return iso === undefined ? absent : <time dateTime={iso}>{dateTime(iso)}</time>;
}

/** The client's facts. */
function ClientFacts({ client }: { client: ApiClient }) {
  return (
    <dl class="facts">
      <dt>Client id</dt>
      <dd class="mono">{client.clientId}</dd>
      <dt>Company</dt>
      <dd>
        <UserText text={client.company} />
      </dd>
      <dt>Role</dt>
      <dd>{clientRoleName(client.role)}</dd>
      <dt>Enabled</dt>
      <dd class={client.enabled ? undefined : 'warning'}>{client.enabled ? 'Yes' : 'No: it gets no token, and its tokens stop working'}</dd>
      <dt>Last used</dt>
      <dd>{when(client.lastUsedAt, 'Never')}</dd>
      <dt>Previous secret</dt>
      <dd>
        {client.previousSecretExpiresAt === undefined ? (
          'None'
        ) : (
          <>Works beside the current one until {when(client.previousSecretExpiresAt, '')}</>
        )}
      </dd>
      <dt>Created</dt>
      <dd>
        <time dateTime={client.created}>{dateTime(client.created)}</time> by <UserText text={client.createdBy} />
      </dd>
    </dl>
  );
}

/** What the actions change: the client shown, and the page after a deletion. */
interface ActionsProps {
  client: ApiClient;
  onChanged: (client: ApiClient) => void;
  onDeleted: (message: string) => void;
}

/** The actions' state: which confirmation is open, whether a call runs, what it said, and the secret to show. */
function useActions({ client, onChanged, onDeleted }: ActionsProps) {
  const { confirming, busy, status, error, secret, run } = useSecretActions();
  const rotate = () =>
    run(
      () => rotateApiClientSecret(client.clientId),
      (rotated) => {
        const { clientSecret, ...changed } = rotated;
        secret.value = { secret: clientSecret, previousSecretExpiresAt: changed.previousSecretExpiresAt ?? null };
        onChanged(changed);
      },
    );
  const toggle = () =>
    run(
      () => updateApiClient(client.clientId, { enabled: !client.enabled }),
      (changed) => {
        status.value = changed.enabled
          ? 'The API client is enabled: it gets tokens again.'
          : 'The API client is disabled: it gets no token, and its tokens stop working within a minute.';
        onChanged(changed);
      },
    );
  const remove = () =>
    run(
      () => deleteApiClient(client.clientId),
      () => onDeleted(`The API client ${client.name} is deleted.`),
    );
  return { confirming, busy, status, error, secret, rotate, toggle, remove };
}

/** The confirmation a destructive action asks for (rotating or deleting), or nothing. */
function Confirmation(
  props: { which: 'rotate' | 'delete' | null; name: string; busy: boolean } & Record<'rotate' | 'remove' | 'cancel', () => void>,
) {
  if (props.which === 'rotate') {
    return (
      <InlineConfirm
        id="rotate-confirm-title"
        title="Rotate the client secret?"
        consequence="A new secret is made; the current one keeps working beside it for 24 hours, time enough to give the client's system the new one."
        confirmLabel="Rotate the secret"
        busy={props.busy}
        onConfirm={props.rotate}
        onCancel={props.cancel}
      />
    );
  }
  if (props.which === 'delete') {
    return (
      <InlineConfirm
        id="delete-confirm-title"
        title={
          <>
            Delete <UserText text={props.name} />?
          </>
        }
        consequence="It gets no token from now on and its tokens stop working within a minute. This cannot be undone: a new client has a new id and secret."
        confirmLabel="Delete the API client"
        busy={props.busy}
        onConfirm={props.remove}
        onCancel={props.cancel}
      />
    );
  }
  return null;
}

/** The actions (see the module comment). */
function ClientActions(props: ActionsProps) {
  const { confirming, busy, status, error, secret, rotate, toggle, remove } = useActions(props);
  // Cancel gives the focus back to the button that opened the confirmation.
  const rotateButton = useRef<HTMLButtonElement>(null);
  const deleteButton = useRef<HTMLButtonElement>(null);
  const focusLater = useFocusLater();
  const cancel = () => {
    focusLater(confirming.value === 'rotate' ? rotateButton : deleteButton);
    confirming.value = null;
  };
  return (
    <>
      <div class="toolbar">
        <button type="button" ref={rotateButton} onClick={() => (confirming.value = 'rotate')} disabled={busy.value}>
          Rotate secret
        </button>
        <button type="button" onClick={toggle} disabled={busy.value}>
          {props.client.enabled ? 'Disable' : 'Enable'}
        </button>
        <button type="button" class="danger" ref={deleteButton} onClick={() => (confirming.value = 'delete')} disabled={busy.value}>
          Delete API client
        </button>
      </div>
      <Confirmation which={confirming.value} name={props.client.name} busy={busy.value} rotate={rotate} remove={remove} cancel={cancel} />
      {secret.value === null ? null : <SecretOnce shown={secret.value} words={CLIENT_SECRET_WORDS} />}
      <p role="status" class="status-line">
        {status.value}
      </p>
      {error.value === null ? null : <Alert message={error.value} />}
    </>
  );
}

/** The client's section: its facts and, for `users:write`, its actions. */
export function ApiClientPanel(props: ActionsProps) {
  return (
    <section aria-labelledby="client-title" class="webhook-panel">
      <h2 id="client-title">
        API client <UserText text={props.client.name} />
      </h2>
      <ClientFacts client={props.client} />
      {can('users:write') ? (
        <>
          <ClientActions {...props} />
          <EditApiClient client={props.client} onSaved={props.onChanged} />
        </>
      ) : null}
    </section>
  );
}
