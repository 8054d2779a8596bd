/** Ports of the commands area: the commands table. */
import type { Page } from '../shared/paging.js';
import type { Command, CommandResult, CommandState } from './model.js';

/** A pending command whose expiry has passed, as the commands table's sparse `sweep` index lists it. */
export interface OverdueCommand {
  company: string;
  deviceId: string;
  commandId: string;
  /** ISO-8601: its `expiresAt` as read from the index. */
  expiresAt: string;
}

/** The outcome of writing one new command of many (CommandRepository.createEach). */
export type CommandWriteOutcome =
  /** Written now. */
  | 'created'
  /** A command with its id was there already (written by an earlier run): left as it is. */
  | 'exists'
  /** The write met a backend error: whether it was made is unknown. */
  | 'failed';

/**
 * A conditional change of a command's state: from one of `from` to `to` at `at` (ISO-8601), with the device's
 * `result` for a final state; with `notExpiredAt` only while `expiresAt` is after it, with `expiredAt` only once it is
 * at or before it.
 */
export interface CommandStateChange {
  from: readonly CommandState[];
  to: CommandState;
  at: string;
  result?: CommandResult;
  notExpiredAt?: string;
  expiredAt?: string;
}

/** The outcome of a conditional change of state. */
export type CommandTransition = { outcome: 'changed'; command: Command } | { outcome: 'absent' } | { outcome: 'final'; command: Command };

/** Commands (commands table): one item per command, in its device's partition, newest last by id. */
export interface CommandRepository {
  /** Writes a new command (one conditional put: only if its id is new). While pending it sits in the sweep index by `expiresAt`. */
  create(command: Command): Promise<void>;
  /**
   * Writes new commands, each with one conditional put (only if its id is new), a bounded number at once: a rollout's,
   * whose ids are derived from the rollout, so that writing them again leaves each as it is now (a command already
   * delivered or final is not made QUEUED again). Never throws for one command's write.
   * @returns the outcome of each command, in order.
   */
  createEach(commands: readonly Command[]): Promise<CommandWriteOutcome[]>;
  /**
   * The commands of `keys` that exist (batched reads, 100 keys a call; eventually consistent), in no particular order.
   * @throws Error on a backend failure.
   */
  getMany(company: string, keys: readonly { deviceId: string; commandId: string }[]): Promise<Command[]>;
  /** One command of a device (a strongly consistent read), or undefined. */
  get(company: string, deviceId: string, commandId: string): Promise<Command | undefined>;
  /** A device's commands, newest first. @throws BadRequestError for a cursor of another listing. */
  list(company: string, deviceId: string, limit: number, cursor: string | undefined): Promise<Page<Command>>;
  /** Every pending command (QUEUED or DELIVERED) of a device, oldest first (one Query; a device has few). */
  pending(company: string, deviceId: string): Promise<Command[]>;
  /**
   * Moves a command from one of `from` to `to` (one conditional update, `updated` = `at`): a final state leaves the
   * sweep index and records `result`. With `notExpiredAt`, only while `expiresAt` is after it; with `expiredAt`, only
   * once `expiresAt` is at or before it.
   * @returns `changed` with the command after; `absent` for no such command; `final` (with the command as stored)
   *   when its state is not one of `from` (or it expired).
   */
  transition(company: string, deviceId: string, commandId: string, change: CommandStateChange): Promise<CommandTransition>;
  /** Pending commands whose `expiresAt` is at or before `now` (the sparse `sweep` index), at most `limit`. */
  overdue(now: string, limit: number): Promise<OverdueCommand[]>;
}
