/**
 * Commands: an operator invokes a command that one sub-device of a kiosk advertises in its latest health report
 * (`health.hubs[].devices[].commands[]`), the kiosk fetches it with its desired state and reports the result
 * (docs/contract.md, "Commands").
 */

/** Every state of a command; QUEUED and DELIVERED are pending, the others final. */
export const COMMAND_STATES = ['QUEUED', 'DELIVERED', 'SUCCEEDED', 'FAILED', 'EXPIRED', 'CANCELLED'] as const;

/** One state of a command. */
export type CommandState = (typeof COMMAND_STATES)[number];

/** The states of a command that is not final yet: the device may still get it and act on it. */
export const PENDING_COMMAND_STATES = ['QUEUED', 'DELIVERED'] as const satisfies readonly CommandState[];

/** The states a device reports. */
export const COMMAND_RESULT_STATES = ['SUCCEEDED', 'FAILED'] as const satisfies readonly CommandState[];

/** One state a device reports. */
export type CommandResultState = (typeof COMMAND_RESULT_STATES)[number];

/** Whether a command in `state` is pending (QUEUED or DELIVERED). */
export function isPending(state: CommandState): boolean {
  return (PENDING_COMMAND_STATES as readonly CommandState[]).includes(state);
}

/** Default lifetime of a command, seconds (1 hour). */
export const DEFAULT_COMMAND_EXPIRY_SECONDS = 3_600;
/** Shortest lifetime a command may be given, seconds. */
export const MIN_COMMAND_EXPIRY_SECONDS = 10;
/** Longest lifetime a command may be given, seconds (7 days). */
export const MAX_COMMAND_EXPIRY_SECONDS = 604_800;
/**
 * Most bytes of a command's `arguments` and of a result's `output`, serialized as JSON without white space (8 KiB):
 * the same bound as a health report's command `payload` and `arguments` would allow many times over; a command is an
 * instruction, not a transfer of data.
 */
export const MAX_COMMAND_JSON_BYTES = 8_192;
/** Longest `message` of a command result, characters (as a deployment status report's). */
export const MAX_COMMAND_MESSAGE_LENGTH = 1_000;
/** Longest `note` of a command, characters (as a deployment's). */
export const MAX_COMMAND_NOTE_LENGTH = 2_000;

/** What the device reported with a final state. */
export interface CommandResult {
  message?: string;
  /** Free JSON, at most MAX_COMMAND_JSON_BYTES serialized. */
  output?: unknown;
}

/** A command as stored: one per (device, command id). */
export interface Command {
  /** ULID: sorts by creation time. */
  id: string;
  company: string;
  deviceId: string;
  /** The hub's `uid` in the device's health report. */
  hub: string;
  /** The sub-device's `uid` within that hub. */
  device: string;
  /** The advertised command's name. */
  command: string;
  /** As sent (free JSON), or null when none were sent. */
  arguments: unknown;
  state: CommandState;
  /** ISO-8601. */
  created: string;
  /** ISO-8601: the last change of state. */
  updated: string;
  /** ISO-8601: a command still pending then becomes EXPIRED. */
  expiresAt: string;
  /** Who ran it: the user's username (for a command a rollout created, the rollout's creator's; `rollout` names it). */
  by: string;
  note?: string;
  result?: CommandResult;
  /** Set on a command a rollout created: that rollout and the wave of its target. */
  rollout?: { id: string; wave: number };
}

/** A command as the API shows it (docs/contract.md, "Commands"). */
export interface CommandView {
  id: string;
  target: { type: 'DEVICE'; id: string; subId: string };
  command: string;
  arguments: unknown;
  state: CommandState;
  created: string;
  updated: string;
  expiresAt: string;
  by: string;
  note?: string;
  result?: CommandResult;
  rolloutId?: string;
}

/** The `subId` of a command's target: `{hub uid}/{sub-device uid}`. */
export function commandSubId(command: Pick<Command, 'hub' | 'device'>): string {
  return `${command.hub}/${command.device}`;
}

/** The API view of a stored command. */
export function commandView(command: Command): CommandView {
  return {
    id: command.id,
    target: { type: 'DEVICE', id: command.deviceId, subId: commandSubId(command) },
    command: command.command,
    arguments: command.arguments,
    state: command.state,
    created: command.created,
    updated: command.updated,
    expiresAt: command.expiresAt,
    by: command.by,
    ...(command.note === undefined ? {} : { note: command.note }),
    ...(command.result === undefined ? {} : { result: command.result }),
    ...(command.rollout === undefined ? {} : { rolloutId: command.rollout.id }),
  };
}

/** A pending command as the device pulls it with its desired state. */
export interface PendingCommandView {
  id: string;
  hub: string;
  device: string;
  command: string;
  arguments: unknown;
  /** ISO-8601. */
  created: string;
  /** ISO-8601: report the result before then. */
  expiresAt: string;
}

/** The device's view of a pending command. */
export function pendingCommandView(command: Command): PendingCommandView {
  return {
    id: command.id,
    hub: command.hub,
    device: command.device,
    command: command.command,
    arguments: command.arguments,
    created: command.created,
    expiresAt: command.expiresAt,
  };
}

/**
 * Emitted for each change of a command's state (created QUEUED, DELIVERED, and each final state), derived from the
 * commands table's stream. `commandEventId` (`{commandId}:{state}`) identifies it: a state is entered at most once.
 */
export interface CommandStateChangedEvent {
  type: 'CommandStateChanged';
  company: string;
  commandId: string;
  deviceId: string;
  /** `{hub uid}/{sub-device uid}`. */
  subId: string;
  command: string;
  state: CommandState;
  /** ISO-8601: when the command entered the state. */
  at: string;
  /** Who ran the command. */
  by: string;
  message: string | null;
  rolloutId: string | null;
}

/** The id of a command event, `{commandId}:{state}`: a command enters each state at most once. */
export function commandEventId(event: Pick<CommandStateChangedEvent, 'commandId' | 'state'>): string {
  return `${event.commandId}:${event.state}`;
}
