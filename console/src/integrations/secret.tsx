/**
 * A secret shown once (a webhook's signing secret or an API client's secret, after a create or a rotation): the words
 * that say it is not shown again, the secret in a read-only field that takes the focus, and "Copy secret". It lives
 * only in the page's state: never in the URL or the tab's storage, so leaving the page forgets it.
 */
import { useSignal } from '@preact/signals';
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { dateTime } from '../format.js';

/** What the secret box shows: the secret and, after a rotation, until when the previous one still signs. */
export interface ShownSecret {
  secret: string;
  /** ISO-8601: until when the previous secret signs beside this one; null after a create. */
  previousSecretExpiresAt: string | null;
}

/** What the box says of the secret: its field's label, where to put it, and how the previous one goes on. */
export interface SecretWords {
  /** The field's label (its accessible name). */
  label: string;
  /** What to do with it, after "This secret is not shown again." */
  use: ComponentChildren;
  /** Before the previous secret's end, after a rotation (`The previous secret keeps signing beside it until`). */
  previous: string;
}

/** A webhook's signing secret. */
const WEBHOOK_SECRET: SecretWords = {
  label: 'Signing secret',
  use: (
    <>
      Copy it now into the receiver, which verifies each delivery's <code>webhook-signature</code> with it.
    </>
  ),
  previous: 'The previous secret keeps signing beside it until',
};

/** The secret box (see the module comment); the words of a webhook's signing secret unless `words` says others. */
export function SecretOnce({ shown, words = WEBHOOK_SECRET }: { shown: ShownSecret; words?: SecretWords }) {
  const field = useRef<HTMLInputElement>(null);
  const copied = useSignal('');
  useEffect(() => {
    field.current?.focus();
    field.current?.select();
  }, [shown.secret]);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(shown.secret);
      copied.value = 'The secret is copied to the clipboard.';
    } catch {
      // Without the clipboard API (or its permission), the field is selected for the user to copy.
      field.current?.select();
      copied.value = 'Select the secret and copy it with your keyboard (the clipboard is not available here).';
    }
  };
  return (
    <div class="secret">
      <p class="warning-box">
        <strong>This secret is not shown again.</strong> {words.use}
        {shown.previousSecretExpiresAt === null ? null : (
          <>
            {' '}
            {words.previous} <time dateTime={shown.previousSecretExpiresAt}>{dateTime(shown.previousSecretExpiresAt)}</time>, then stops.
          </>
        )}
      </p>
      <label>
        {words.label}
        <input class="mono" readOnly value={shown.secret} ref={field} />
      </label>
      <div class="toolbar">
        <button type="button" onClick={copy}>
          Copy secret
        </button>
      </div>
      <p role="status" class="status-line">
        {copied.value}
      </p>
    </div>
  );
}

/** A call of the console's API helpers: its data, or the message to show. */
type Answer<T> = { ok: true; data: T } | { ok: false; message: string };

/**
 * The state of a panel's actions on a resource holding a secret (a webhook, an API client): which confirmation is
 * open (rotating or deleting), whether a call runs, what the last one said or why it failed, and a secret to show
 * once. `run(call, done)` runs one action: busy meanwhile, the confirmation closed after, `done` with its data, or its
 * message as the error.
 */
export function useSecretActions() {
  const confirming = useSignal<'rotate' | 'delete' | null>(null);
  const busy = useSignal(false);
  const status = useSignal('');
  const error = useSignal<string | null>(null);
  const secret = useSignal<ShownSecret | null>(null);
  const run = async <T,>(call: () => Promise<Answer<T>>, done: (data: T) => void) => {
    busy.value = true;
    error.value = null;
    status.value = '';
    const answer = await call();
    busy.value = false;
    confirming.value = null;
    if (answer.ok) done(answer.data);
    else error.value = answer.message;
  };
  return { confirming, busy, status, error, secret, run };
}
