/**
 * "Add webhook" (for `webhooks:write`): the receiver's URL, the events it subscribes to (one checkbox per event type,
 * in a fieldset) and a description. Created, the form is emptied and the new webhook's secret shown once.
 */
import { useSignal } from '@preact/signals';
import type { RefObject } from 'preact';
import { useRef } from 'preact/hooks';
import { MAX_WEBHOOK_DESCRIPTION_LENGTH, MAX_WEBHOOK_URL_LENGTH } from '../../../client/limits.js';
import { Alert, useFocusLater } from '../device/focus.js';
import { formField } from '../form-field.js';
import { UserText } from '../user-text.js';
import { createWebhook, type Webhook, type WebhookEventType } from './api.js';
import { EVENT_TYPES } from './events.js';
import { SecretOnce, type ShownSecret } from './secret.js';

/** The form's state and its submit handler: at least one event checked, then the webhook created, the form emptied. */
function useAddWebhook(company: string, onCreated: (webhook: Webhook) => void, alert: RefObject<HTMLParagraphElement>) {
  const busy = useSignal(false);
  const error = useSignal<string | null>(null);
  const created = useSignal<{ url: string; secret: ShownSecret } | null>(null);
  const focusLater = useFocusLater();
  const submit = async (event: Event) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const form = new FormData(formElement);
    const events = form.getAll('events').map(String) as WebhookEventType[];
    created.value = null;
    if (events.length === 0) {
      error.value = 'Choose at least one event to send to this URL.';
      focusLater(alert);
      return;
    }
    error.value = null;
    busy.value = true;
    const description = formField(form, 'description');
    const answer = await createWebhook(company, { url: formField(form, 'url'), events, ...(description === '' ? {} : { description }) });
    busy.value = false;
    if (!answer.ok) {
      error.value = answer.message;
      focusLater(alert);
      return;
    }
    created.value = { url: answer.data.url, secret: { secret: answer.data.secret, previousSecretExpiresAt: null } };
    formElement.reset();
    onCreated(answer.data);
  };
  return { busy, error, created, submit };
}

/** The fieldset "Events": one checkbox per event type, with what it means. */
function EventChecks() {
  return (
    <fieldset class="webhook-events">
      <legend>Events</legend>
      {EVENT_TYPES.map((entry) => (
        <label key={entry.type} class="admin-check">
          <input type="checkbox" name="events" value={entry.type} />
          <span>
            <code>{entry.type}</code> <span class="muted">{entry.words}</span>
          </span>
        </label>
      ))}
    </fieldset>
  );
}

/** The form (see the module comment); `onCreated` is called with the new webhook. */
export function AddWebhook({ company, onCreated }: { company: string; onCreated: (webhook: Webhook) => void }) {
  const alert = useRef<HTMLParagraphElement>(null);
  const { busy, error, created, submit } = useAddWebhook(company, onCreated, alert);
  return (
    <form class="admin-form webhook-form" onSubmit={submit} aria-labelledby="add-webhook-title">
      <h2 id="add-webhook-title">Add webhook</h2>
      <label>
        URL (https; the service posts each event to it)
        <input
          name="url"
          type="url"
          required
          maxLength={MAX_WEBHOOK_URL_LENGTH}
          autocomplete="off"
          placeholder="https://example.com/webhooks/dss"
        />
      </label>
      <EventChecks />
      <label>
        Description (optional)
        <input name="description" maxLength={MAX_WEBHOOK_DESCRIPTION_LENGTH} autocomplete="off" />
      </label>
      <button type="submit" class="primary admin-submit" disabled={busy.value}>
        Add webhook
      </button>
      <div role="status" class="admin-status">
        {created.value === null ? null : (
          <p>
            Webhook to <UserText text={created.value.url} /> added.
          </p>
        )}
      </div>
      {created.value === null ? null : <SecretOnce shown={created.value.secret} />}
      {error.value === null ? null : <Alert message={error.value} focusRef={alert} />}
    </form>
  );
}
