/**
 * The device page's command history, kept live: its first page read when the page opens, "Show more commands", and,
 * while a command shown is pending (QUEUED or DELIVERED), the first page read again every COMMAND_POLL_MS so that
 * QUEUED → DELIVERED → SUCCEEDED shows without a reload. The polling stops when nothing shown is pending, while the tab
 * is hidden (it reads at once when the tab shows again), and when the page is left. A pending command beyond the first
 * page (rare: twenty newer ones) is read on its own. A command reaching a final state is announced.
 */
import { useSignal } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';
import { humanize } from '../format.js';
import { type Command, loadCommand, loadCommands } from './command-api.js';
import { appendPage, COMMAND_POLL_MS, isPending, mergeFirstPage, newlyFinal, withCommand } from './command-list.js';

/** The history's state and actions (see useCommandHistory). */
export interface CommandHistory {
  /** The commands shown, newest first; undefined until the first page is read. */
  items: Command[] | undefined;
  /** Whether "Show more commands" has a page to read. */
  hasMore: boolean;
  loadingMore: boolean;
  /** Why the last read failed (cleared by one that did not). */
  failure: string | null;
  /** The last command that reached a final state, in words, for a polite live region. */
  announcement: string;
  more: () => void;
  /** Reads the first page again now (after a refused cancel: the command moved on). */
  refresh: () => void;
  /** Puts a command's new state in place (the answer of a run or a cancel), which starts the polling when pending. */
  put: (command: Command) => void;
}

/** The name of a sub-device, by the command's `target.subId` (`<hub uid>/<sub-device uid>`). */
export type SubDeviceName = (subId: string) => string;

/** The reads: the first page again (merging it into what is shown), a next page, and the pending ones beyond them. */
function useReads(company: string, deviceId: string, nameOf: SubDeviceName) {
  const items = useSignal<Command[] | undefined>(undefined);
  const cursor = useSignal<string | null>(null);
  /** "Show more" read beyond the first page: the cursor then points after the last command shown, and is kept. */
  const extended = useSignal(false);
  const failure = useSignal<string | null>(null);
  const announcement = useSignal('');
  const loadingMore = useSignal(false);
  const alive = useRef(true);
  useEffect(
    () => () => {
      alive.current = false;
    },
    [],
  );

  const refresh = async () => {
    const first = await loadCommands(company, deviceId);
    if (!alive.current) return;
    if (!first.ok) {
      failure.value = first.message;
      return;
    }
    const fresh = new Set(first.data.items.map((command) => command.id));
    let merged = mergeFirstPage(items.peek(), first.data.items);
    const beyond = merged.filter((command) => isPending(command.state) && !fresh.has(command.id));
    for (const answer of await Promise.all(beyond.map((command) => loadCommand(company, deviceId, command.id)))) {
      if (answer.ok) merged = withCommand(merged, answer.data);
    }
    if (!alive.current) return;
    const done = newlyFinal(items.peek(), merged);
    if (done.length > 0) {
      announcement.value = done
        .map((command) => `${command.command} on ${nameOf(command.target.subId)}: ${humanize(command.state)}.`)
        .join(' ');
    }
    items.value = merged;
    if (!extended.peek()) cursor.value = first.data.nextCursor;
    failure.value = null;
  };

  const more = async () => {
    const after = cursor.peek();
    if (after === null) return;
    loadingMore.value = true;
    const page = await loadCommands(company, deviceId, after);
    if (!alive.current) return;
    loadingMore.value = false;
    if (!page.ok) {
      failure.value = page.message;
      return;
    }
    items.value = appendPage(items.peek() ?? [], page.data.items);
    cursor.value = page.data.nextCursor;
    extended.value = true;
    failure.value = null;
  };
  return { items, cursor, failure, announcement, loadingMore, refresh, more };
}

/**
 * Reads the history again every COMMAND_POLL_MS while `pending`, the tab is visible and the page is shown; a read
 * under way is never doubled, and showing the tab again reads at once.
 */
function usePolling(pending: boolean, refresh: () => Promise<void>) {
  useEffect(() => {
    if (!pending) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let reading = false;
    let stopped = false;
    const tick = async () => {
      timer = undefined;
      reading = true;
      await refresh();
      reading = false;
      schedule();
    };
    const schedule = () => {
      if (stopped || reading || timer !== undefined || document.hidden) return;
      timer = setTimeout(() => void tick(), COMMAND_POLL_MS);
    };
    const onVisibility = () => {
      if (document.hidden && timer !== undefined) {
        clearTimeout(timer);
        timer = undefined;
      } else if (!document.hidden && timer === undefined && !reading) void tick();
    };
    document.addEventListener('visibilitychange', onVisibility);
    schedule();
    return () => {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      document.removeEventListener('visibilitychange', onVisibility);
    };
  }, [pending]);
}

/**
 * The command history of `deviceId` of `company`, read when the page opens and kept live (see the module comment);
 * `nameOf` names a command's sub-device in the announcements.
 */
export function useCommandHistory(company: string, deviceId: string, nameOf: SubDeviceName): CommandHistory {
  const reads = useReads(company, deviceId, nameOf);
  useEffect(() => {
    void reads.refresh();
  }, []);
  const items = reads.items.value;
  usePolling(
    (items ?? []).some((command) => isPending(command.state)),
    reads.refresh,
  );
  return {
    items,
    hasMore: reads.cursor.value !== null,
    loadingMore: reads.loadingMore.value,
    failure: reads.failure.value,
    announcement: reads.announcement.value,
    more: () => void reads.more(),
    refresh: () => void reads.refresh(),
    put: (command) => {
      reads.items.value = withCommand(reads.items.peek(), command);
    },
  };
}
