/**
 * The pure parts of a device's command history as the page keeps it: which states are still pending, a fresh first
 * page merged into the commands shown, one command's new state put in place, and the commands that reached a final
 * state since the last read (to announce). No DOM: the unit tests use it as it is.
 */
import type { components } from '../../../client/index.js';

/** A command as the API answers it. */
type Command = components['schemas']['Command'];
/** A command's state, as the API names it. */
export type CommandState = components['schemas']['CommandState'];

/** Milliseconds between two reads of the history while a command is pending. */
export const COMMAND_POLL_MS = 3_000;

/** Whether a command in `state` may still change (QUEUED or DELIVERED): it can be cancelled, and the page follows it. */
export function isPending(state: CommandState): boolean {
  return state === 'QUEUED' || state === 'DELIVERED';
}

/**
 * Whether a command in `state` can be cancelled: only while QUEUED (a DELIVERED one may be running on the device; it
 * ends with its result or its expiry).
 */
export function isCancellable(state: CommandState): boolean {
  return state === 'QUEUED';
}

/** Newest first, as the API lists them: by id, a ULID, which sorts by creation time. */
function newestFirst(commands: Command[]): Command[] {
  return commands.sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
}

/** How far along its lifecycle a state is: a command only moves forward (QUEUED, DELIVERED, then one final state). */
function stage(state: CommandState): number {
  return state === 'QUEUED' ? 0 : state === 'DELIVERED' ? 1 : 2;
}

/** Of two versions of one command, the later: an answer read before a cancel, arriving after it, does not undo it. */
function later(one: Command, other: Command | undefined): Command {
  return other !== undefined && stage(other.state) > stage(one.state) ? other : one;
}

/**
 * The commands to show after reading the first page again: that page's commands (as they are now, unless the page
 * already shows a later state of one), then those shown before that it does not hold (older ones of later pages, or
 * ones pushed off the first page by new commands), newest first and each once.
 */
export function mergeFirstPage(shown: readonly Command[] | undefined, firstPage: readonly Command[]): Command[] {
  const before = new Map((shown ?? []).map((command) => [command.id, command]));
  const fresh = new Set(firstPage.map((command) => command.id));
  return newestFirst([
    ...firstPage.map((command) => later(command, before.get(command.id))),
    ...(shown ?? []).filter((command) => !fresh.has(command.id)),
  ]);
}

/** `shown` with `command` in place of the one of the same id (unless that one is later), or added, newest first. */
export function withCommand(shown: readonly Command[] | undefined, command: Command): Command[] {
  const current = (shown ?? []).find((other) => other.id === command.id);
  return newestFirst([later(command, current), ...(shown ?? []).filter((other) => other.id !== command.id)]);
}

/** `shown` followed by a next page's commands, leaving out those already shown (the list moved between the reads). */
export function appendPage(shown: readonly Command[], page: readonly Command[]): Command[] {
  const known = new Set(shown.map((command) => command.id));
  return [...shown, ...page.filter((command) => !known.has(command.id))];
}

/** The commands of `after` that were pending in `before` and no longer are: their final state is news. */
export function newlyFinal(before: readonly Command[] | undefined, after: readonly Command[]): Command[] {
  const wasPending = new Set((before ?? []).filter((command) => isPending(command.state)).map((command) => command.id));
  return after.filter((command) => wasPending.has(command.id) && !isPending(command.state));
}
