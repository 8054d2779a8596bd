/**
 * One webhook on the Integrations page (the URL's `webhook`): its facts, and for `webhooks:write` "Send test event",
 * "Rotate secret" (confirmed; the new secret shown once, with when the previous one stops signing), enable or
 * disable, and delete (confirmed); then its deliveries.
 */
import { useSignal } from '@preact/signals';
import { useRef } from 'preact/hooks';
import { Alert, InlineConfirm, useFocusLater } from '../device/focus.js';
import { dateTime } from '../format.js';
import { can } from '../session.js';
import { UserText } from '../user-text.js';
import { deleteWebhook, rotateSecret, sendTest, setEnabled, type Webhook } from './api.js';
import { Deliveries } from './deliveries.js';
import { SecretOnce, useSecretActions } from './secret.js';

/** The webhook's facts. */
function WebhookFacts({ webhook }: { webhook: Webhook }) {
  return (
    <dl class="facts">
      <dt>URL</dt>
      <dd class="mono">
        <UserText text={webhook.url} />
      </dd>
      <dt>Events</dt>
      <dd class="mono">{webhook.events.join(', ')}</dd>
      <dt>Description</dt>
      <dd>{webhook.description === null || webhook.description === '' ? '—' : <UserText text={webhook.description} />}</dd>
      <dt>Enabled</dt>
      <dd>{webhook.enabled ? 'Yes' : 'No: nothing is delivered to it'}</dd>
      <dt>Failing since</dt>
      <dd class={webhook.failingSince === null ? undefined : 'warning'}>
        {webhook.failingSince === null ? (
          'Not failing'
        ) : (
          <>
            <time dateTime={webhook.failingSince}>{dateTime(webhook.failingSince)}</time> (disabled after 5 days without a success)
          </>
        )}
      </dd>
      {webhook.previousSecretExpiresAt === null ? null : (
        <>
          <dt>Previous secret</dt>
          <dd>
            Signs beside the current one until{' '}
            <time dateTime={webhook.previousSecretExpiresAt}>{dateTime(webhook.previousSecretExpiresAt)}</time>
          </dd>
        </>
      )}
      <dt>Created</dt>
      <dd>
        <time dateTime={webhook.created}>{dateTime(webhook.created)}</time> by <UserText text={webhook.by} />
      </dd>
    </dl>
  );
}

/** What the actions change: the webhook shown, the deliveries' revision, and the page after a deletion. */
interface ActionsProps {
  company: string;
  webhook: Webhook;
  onChanged: (webhook: Webhook) => void;
  onTested: () => void;
  onDeleted: (message: string) => void;
}

/** The actions' state: which confirmation is open, whether a call runs, what it said, and the secret to show. */
function useActions({ company, webhook, onChanged, onTested, onDeleted }: ActionsProps) {
  const { confirming, busy, status, error, secret, run } = useSecretActions();
  const test = () =>
    run(
      () => sendTest(company, webhook.id),
      () => {
        status.value = 'A webhook.test event is on its way: its delivery shows below.';
        onTested();
      },
    );
  const rotate = () =>
    run(
      () => rotateSecret(company, webhook.id),
      (rotated) => {
        const { secret: value, ...changed } = rotated;
        secret.value = { secret: value, previousSecretExpiresAt: changed.previousSecretExpiresAt };
        onChanged(changed);
      },
    );
  const toggle = () =>
    run(
      () => setEnabled(company, webhook.id, !webhook.enabled),
      (changed) => {
        status.value = changed.enabled ? 'The webhook is enabled: events are delivered to it again.' : 'The webhook is disabled.';
        onChanged(changed);
      },
    );
  const remove = () =>
    run(
      () => deleteWebhook(company, webhook.id),
      () => onDeleted(`The webhook to ${webhook.url} is deleted.`),
    );
  return { confirming, busy, status, error, secret, test, rotate, toggle, remove };
}

/** The confirmation a destructive action asks for (rotating or deleting), or nothing. */
function Confirmation(props: {
  which: 'rotate' | 'delete' | null;
  url: string;
  busy: boolean;
  rotate: () => void;
  remove: () => void;
  cancel: () => void;
}) {
  if (props.which === 'rotate') {
    return (
      <InlineConfirm
        id="rotate-confirm-title"
        title="Rotate the signing secret?"
        consequence="A new secret signs every delivery from now on; the current one keeps signing beside it for 24 hours, time enough to give the receiver the new one."
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
        title="Delete this webhook?"
        consequence={
          <>
            Nothing more is delivered to <UserText text={props.url} />, and its deliveries are forgotten.
          </>
        }
        confirmLabel="Delete the webhook"
        busy={props.busy}
        onConfirm={props.remove}
        onCancel={props.cancel}
      />
    );
  }
  return null;
}

/** The actions (see the module comment). */
function WebhookActions(props: ActionsProps) {
  const { confirming, busy, status, error, secret, test, rotate, toggle, remove } = useActions(props);
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
        <button type="button" onClick={test} disabled={busy.value}>
          Send test event
        </button>
        <button type="button" ref={rotateButton} onClick={() => (confirming.value = 'rotate')} disabled={busy.value}>
          Rotate secret
        </button>
        <button type="button" onClick={toggle} disabled={busy.value}>
          {props.webhook.enabled ? 'Disable' : 'Enable'}
        </button>
        <button type="button" class="danger" ref={deleteButton} onClick={() => (confirming.value = 'delete')} disabled={busy.value}>
          Delete webhook
        </button>
      </div>
      <Confirmation which={confirming.value} url={props.webhook.url} busy={busy.value} rotate={rotate} remove={remove} cancel={cancel} />
      {secret.value === null ? null : <SecretOnce shown={secret.value} />}
      <p role="status" class="status-line">
        {status.value}
      </p>
      {error.value === null ? null : <Alert message={error.value} />}
    </>
  );
}

/** The webhook's section: facts, actions (for `webhooks:write`) and deliveries. */
export function WebhookPanel(props: ActionsProps & { query: URLSearchParams }) {
  const tests = useSignal(0);
  return (
    <section aria-labelledby="webhook-title" class="webhook-panel">
      <h2 id="webhook-title">
        Webhook to <UserText text={props.webhook.url} />
      </h2>
      <WebhookFacts webhook={props.webhook} />
      {can('webhooks:write') ? (
        <WebhookActions
          {...props}
          onTested={() => {
            tests.value += 1;
            props.onTested();
          }}
        />
      ) : null}
      <Deliveries company={props.company} webhookId={props.webhook.id} query={props.query} revision={tests.value} />
    </section>
  );
}
