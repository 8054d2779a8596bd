/**
 * A rollout's event log in words, the same in every client (the CLI, the console): "Wave 2 completed: 98 deployed,
 * 2 failed", "Paused by alice", "Paused: <the reason>"…; and what a rollout does, in a few words.
 */
import type { components } from './api-types.js';

/** One event of a rollout's `events` log. */
export type RolloutEvent = components['schemas']['RolloutEvent'];

/** What a rollout does on each target, as `{ action, what, command }` of the contract's `Rollout` say it. */
export interface RolloutSubject {
  action: 'DEPLOY' | 'UNDEPLOY' | 'COMMAND';
  what?: { id: string; subId: string } | undefined;
  command?: { command: string } | undefined;
}

/**
 * What a rollout does, in a few words: its scenario version (`acme-welcome@1.1.0`), or `command reboot` for a COMMAND
 * rollout.
 */
export function rolloutSubject(rollout: RolloutSubject): string {
  if (rollout.action === 'COMMAND' || rollout.what === undefined) return `command ${rollout.command?.command ?? '?'}`;
  return `${rollout.what.id}@${rollout.what.subId}`;
}

/** How a client writes what the words hold: an ISO-8601 instant (the CLI keeps it as is, the console shows local time). */
export interface EventWording {
  /** The rollout's action: the SUCCESS count of an UNDEPLOY wave is "undeployed", of a COMMAND wave "sent". */
  action: RolloutSubject['action'];
  /** @default the ISO-8601 text itself */
  time?: (iso: string) => string;
}

/**
 * How many of a rollout's first events the service always keeps (the contract's `Rollout.events`): when
 * `eventsDropped` is above 0, the dropped events were between the first EVENTS_KEPT_FIRST and the others.
 */
export const EVENTS_KEPT_FIRST = 10;

/** One line of a rollout's event log: an event, or the place of the events dropped to bound the log. */
export type EventLogLine = { kind: 'event'; event: RolloutEvent } | { kind: 'dropped'; count: number };

/** A rollout's event log as lines, oldest first, with one `dropped` line where events were left out. */
export function eventLogLines(rollout: { events: readonly RolloutEvent[]; eventsDropped: number }): EventLogLine[] {
  const lines: EventLogLine[] = rollout.events.map((event) => ({ kind: 'event', event }));
  if (rollout.eventsDropped > 0) lines.splice(EVENTS_KEPT_FIRST, 0, { kind: 'dropped', count: rollout.eventsDropped });
  return lines;
}

/** The counts named first, in this order; any other key (a failure cause) follows, by name. */
const FIRST_COUNTS = ['SUCCESS', 'INSTALLED', 'FAILED'] as const;
/** A COMMAND wave's counts named first: its targets reached, the commands queued, then their final states. */
const FIRST_COMMAND_COUNTS = ['SUCCESS', 'COMMANDS', 'SUCCEEDED', 'FAILED', 'EXPIRED', 'CANCELLED'] as const;

/**
 * A wave's counts in words: `{ SUCCESS: 98, FAILED: 2, ALREADY_DEPLOYED: 1 }` → "98 deployed, 2 failed, 1 already
 * deployed"; a COMMAND wave's `{ SUCCESS: 10, COMMANDS: 12, SUCCEEDED: 11, FAILED: 1 }` → "10 sent, 12 commands,
 * 11 succeeded, 1 failed"; zero counts are left out; "nothing deployed" ("nothing sent") when every count is 0.
 */
export function countsInWords(counts: Readonly<Record<string, number>>, action: EventWording['action'] = 'DEPLOY'): string {
  const names: Record<string, string> = {
    SUCCESS: action === 'UNDEPLOY' ? 'undeployed' : action === 'COMMAND' ? 'sent' : 'deployed',
    INSTALLED: 'installed',
    FAILED: 'failed',
    COMMANDS: 'commands',
  };
  const first: readonly string[] = action === 'COMMAND' ? FIRST_COMMAND_COUNTS : FIRST_COUNTS;
  const others = Object.keys(counts)
    .filter((key) => !first.includes(key))
    .sort();
  const parts = [...first, ...others]
    .filter((key) => (counts[key] ?? 0) > 0)
    .map((key) => `${(counts[key] ?? 0).toLocaleString('en-US')} ${names[key] ?? key.toLowerCase().replaceAll('_', ' ')}`);
  return parts.length > 0 ? parts.join(', ') : `nothing ${names.SUCCESS}`;
}

/** What one event says happened, as a sentence without its time (e.g. "Wave 2 completed: 98 deployed, 2 failed"). */
export function describeRolloutEvent(event: RolloutEvent, wording: EventWording): string {
  const time = wording.time ?? ((iso: string) => iso);
  const by = event.by === undefined ? '' : ` by ${event.by}`;
  switch (event.type) {
    case 'CREATED':
      return `Created${by}${event.startAt === undefined ? '' : `, scheduled for ${time(event.startAt)}`}`;
    case 'STARTED':
      return `Started${by}`;
    case 'WAVE_STARTED':
      return `Wave ${event.wave ?? '?'} started`;
    case 'WAVE_COMPLETED':
      return `Wave ${event.wave ?? '?'} completed: ${countsInWords(event.counts ?? {}, wording.action)}`;
    case 'PAUSED':
      if (event.reason !== undefined) return `Paused${by}: ${event.reason}`;
      return `Paused${by}`;
    case 'RESUMED':
      return `Resumed${by}`;
    case 'CANCELLED':
      return `Cancelled${by}`;
    case 'COMPLETED':
      return 'Completed';
    case 'FOLLOWING':
      return 'All waves done; following devices that join';
    default:
      return event.type;
  }
}
