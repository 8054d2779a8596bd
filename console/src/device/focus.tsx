/**
 * Keyboard focus after an action: an action's control is disabled while it runs (so the browser drops its focus to
 * the page's body) or is removed when it ends, so the focus is moved on purpose once the page shows the result.
 */
import type { ComponentChildren, Ref, RefObject } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { UserText } from '../user-text.js';

/**
 * Asks for the focus to move to an element once the next render is done (the element may only exist, or be enabled,
 * after it). Returns `focusLater(ref)`; each call is a new request, so the same element can be asked for again.
 */
export function useFocusLater(): (target: RefObject<HTMLElement>) => void {
  const [request, setRequest] = useState<{ target: RefObject<HTMLElement> } | null>(null);
  useEffect(() => {
    request?.target.current?.focus();
  }, [request]);
  return (target) => setRequest({ target });
}

/**
 * An error message in an alert region, as a UserText (the service's words may quote what a device or user wrote).
 * With `focusRef`, an action can move the focus to it (tabIndex -1: focusable by script, not a Tab stop).
 */
export function Alert({ message, focusRef }: { message: string; focusRef?: Ref<HTMLParagraphElement> }) {
  return (
    <p role="alert" class="error" ref={focusRef} {...(focusRef === undefined ? {} : { tabIndex: -1 })}>
      <UserText text={message} />
    </p>
  );
}

/** What an inline confirmation asks and does. */
export interface InlineConfirmProps {
  /** The heading's id (its `aria-labelledby`). */
  id: string;
  /** The question (`Undeploy acme-welcome@1.1.0?`). */
  title: ComponentChildren;
  /** What confirming does, in a sentence. */
  consequence: ComponentChildren;
  /** The confirm button's words: what it does (`Replace the secret of kiosk-1`). */
  confirmLabel: ComponentChildren;
  busy: boolean;
  onConfirm(): void;
  onCancel(): void;
  /** Changing it gives the confirm button the focus again (another item to confirm). */
  focusKey?: unknown;
}

/**
 * A confirmation shown in the page (no dialog): its question, the consequence, a danger button that says what it does
 * and Cancel. The confirm button takes the focus when it shows, so Enter confirms and Tab reaches Cancel.
 */
export function InlineConfirm({ id, title, consequence, confirmLabel, busy, onConfirm, onCancel, focusKey }: InlineConfirmProps) {
  const confirmRef = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    confirmRef.current?.focus();
  }, [focusKey]);
  return (
    <section class="confirm" aria-labelledby={id}>
      <h3 id={id}>{title}</h3>
      <p>{consequence}</p>
      <div class="toolbar">
        <button type="button" class="danger" ref={confirmRef} onClick={onConfirm} disabled={busy}>
          {confirmLabel}
        </button>
        <button type="button" onClick={onCancel} disabled={busy}>
          Cancel
        </button>
      </div>
    </section>
  );
}
