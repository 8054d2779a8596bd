/**
 * Where the keyboard focus goes in the deploy flow: to its heading when it opens, to the summary's heading once the
 * deploy is done.
 */
import type { RefObject } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import type { Phase } from './flow.js';

/** The elements a step change focuses. */
export interface StepTargets {
  /** The flow's heading, on open. */
  heading: RefObject<HTMLElement>;
  /** The summary's heading, once the deploy is done. */
  summary: RefObject<HTMLElement>;
}

/** Moves the focus on open (the heading) and once the deploy is done (the summary's heading). */
export function useStepFocus(phase: Phase, targets: StepTargets): void {
  const previous = useRef<Phase | null>(null);
  useEffect(() => {
    const opening = previous.current === null;
    previous.current = phase;
    const target = opening ? targets.heading : phase === 'done' ? targets.summary : null;
    target?.current?.focus();
  }, [phase]);
}
