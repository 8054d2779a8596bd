/**
 * Keyboard focus after an action: an action's control is disabled while it runs (so the browser drops its focus to
 * the page's body) or is removed when it ends, so the focus is moved on purpose once the page shows the result.
 */
import type { Ref, RefObject } from 'preact';
import { useEffect, useState } from 'preact/hooks';

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
 * An error message in an alert region. With `focusRef`, an action can move the focus to it (tabIndex -1: focusable by
 * script, not a Tab stop).
 */
export function Alert({ message, focusRef }: { message: string; focusRef?: Ref<HTMLParagraphElement> }) {
  return (
    <p role="alert" class="error" ref={focusRef} {...(focusRef === undefined ? {} : { tabIndex: -1 })}>
      {message}
    </p>
  );
}
