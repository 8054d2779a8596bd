/**
 * Follows one rollout: GETs it now and then every POLL_MS (one request per refresh), while the tab is visible and the
 * rollout can still change (not COMPLETED or CANCELLED). A state change is put into `announcement` for a live region,
 * not every poll.
 */
import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { humanize } from '../format.js';
import { type Rollout, readRollout } from './api.js';

/** Milliseconds between two reads of the rollout. */
export const POLL_MS = 2_000;

/** Whether a rollout in `state` can change no more (nothing to poll for). */
export function isFinal(state: Rollout['state']): boolean {
  return state === 'COMPLETED' || state === 'CANCELLED';
}

/**
 * The rollout `rolloutId` of `company`, kept fresh. `rollout` null until read; `error`/`status` of the last failed read
 * (status 404: no such rollout); `show(next)` takes an answer of an action (pause, resume, cancel) at once.
 */
export function useRollout(company: string, rolloutId: string) {
  const rollout = useSignal<Rollout | null>(null);
  const error = useSignal<string | null>(null);
  const status = useSignal<number | undefined>(undefined);
  const announcement = useSignal('');
  const show = (next: Rollout) => {
    const before = rollout.peek();
    if (before !== null && before.state !== next.state) announcement.value = `The rollout is now ${humanize(next.state).toLowerCase()}.`;
    rollout.value = next;
  };
  useEffect(() => {
    rollout.value = null;
    error.value = null;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let stopped = false;
    // A read under way: coming back to the tab then starts no second one.
    let reading = false;
    const refresh = async () => {
      timer = undefined;
      reading = true;
      const answer = await readRollout(company, rolloutId);
      reading = false;
      if (stopped) return;
      if ('data' in answer) {
        show(answer.data);
        error.value = null;
        status.value = undefined;
      } else {
        error.value = answer.error;
        status.value = answer.status;
      }
      schedule();
    };
    const schedule = () => {
      const current = rollout.peek();
      const over = (current !== null && isFinal(current.state)) || status.peek() === 404;
      if (stopped || reading || timer !== undefined || document.hidden || over) return;
      timer = setTimeout(() => void refresh(), POLL_MS);
    };
    // Back on the tab: read at once, then poll again.
    const onVisibility = () => {
      if (!document.hidden && timer === undefined && !reading) void refresh();
      else if (document.hidden && timer !== undefined) {
        clearTimeout(timer);
        timer = undefined;
      }
    };
    document.addEventListener('visibilitychange', onVisibility);
    void refresh();
    return () => {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      document.removeEventListener('visibilitychange', onVisibility);
    };
  }, [company, rolloutId]);
  return { rollout, error, status, announcement, show };
}
