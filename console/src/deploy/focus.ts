/**
 * Where the keyboard focus goes in the deploy flow. A step's controls disappear or get disabled as the flow moves on
 * (the dry-run button while checking, the deploy button while deploying, the whole flow on close), and a focused
 * element that disappears leaves the focus on <body>: a keyboard or screen reader user would start over from the top
 * of the page. So each step change moves the focus to what the step shows, and closing returns it to the opener.
 */
import type { RefObject } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Phase } from './flow.js';

/**
 * Records the element that opened the flow (the fleet's "Deploy to selection…" button: `given`, which the page reads
 * before it disables the button, as a disabled button loses the focus; else the focused element when the flow
 * mounted) and returns `restore()`, which focuses it again once the page has re-rendered if it is still in the
 * document and can take the focus, else the page's `main` (made focusable by script only: tabindex -1 keeps it out of
 * the Tab order).
 */
export function useOpenerFocus(given?: Element | null): () => void {
  // Read during the first render, before the flow's own effects move the focus to its heading.
  const [opener] = useState(() => given ?? document.activeElement);
  const focusOpener = () => {
    if (opener instanceof HTMLElement && opener !== document.body && opener.isConnected) {
      opener.focus();
      if (document.activeElement === opener) return;
    }
    const main = document.querySelector('main');
    if (main === null) return;
    if (!main.hasAttribute('tabindex')) main.tabIndex = -1;
    main.focus();
  };
  // After the page has re-rendered without the flow: the page keeps the opener disabled while the flow is open, and a
  // disabled button takes no focus.
  return () => requestAnimationFrame(focusOpener);
}

/** The elements a step change focuses. */
export interface StepTargets {
  /** The flow's heading: on open, and while a request runs (its buttons are disabled or gone). */
  heading: RefObject<HTMLElement>;
  /** The dry run's table, once it is shown. */
  review: RefObject<HTMLElement>;
  /** The summary's heading, once the deploy is done. */
  summary: RefObject<HTMLElement>;
}

/**
 * Moves the focus on each step change: the heading on open and while checking or deploying, the dry run's table once
 * reviewed (also after a failed deploy), the summary's heading once done. Back to choose (another version chosen, or a
 * failed dry run), the focus stays where it is: on the select, or on the heading.
 */
export function useStepFocus(phase: Phase, targets: StepTargets): void {
  const previous = useRef<Phase | null>(null);
  useEffect(() => {
    const opening = previous.current === null;
    previous.current = phase;
    const target =
      opening || phase === 'checking' || phase === 'deploying'
        ? targets.heading
        : phase === 'reviewed'
          ? targets.review
          : phase === 'done'
            ? targets.summary
            : null;
    target?.current?.focus();
  }, [phase]);
}
