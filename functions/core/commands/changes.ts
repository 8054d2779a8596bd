/**
 * What follows a command's change of state, derived from the commands table's stream: its CommandStateChanged event,
 * and, when it entered or left the pending set, the refresh of its device's desired state tag (so that the device's
 * next pull with the tag it holds is answered with the change, not 304). Idempotent: a batch applied twice publishes
 * events with the same ids (the bus drops repeats locally) and writes the same tag.
 */
import pLimit from 'p-limit';
import type { EventPublisher } from '../deployments/ports.js';
import { type Command, type CommandState, type CommandStateChangedEvent, commandSubId, isPending } from './model.js';

/** One change of a command's state. */
export interface CommandChange {
  command: Command;
  /** Its state before (undefined: created). */
  before: CommandState | undefined;
}

/**
 * The change between two images of a command item, or undefined when its state did not change (or it was deleted).
 */
export function commandChangeOf(oldImage: Command | undefined, newImage: Command | undefined): CommandChange | undefined {
  if (newImage === undefined || oldImage?.state === newImage.state) return undefined;
  return { command: newImage, before: oldImage?.state };
}

/** The event of a change. */
export function commandEventOf({ command }: CommandChange): CommandStateChangedEvent {
  return {
    type: 'CommandStateChanged',
    company: command.company,
    commandId: command.id,
    deviceId: command.deviceId,
    subId: commandSubId(command),
    command: command.command,
    state: command.state,
    at: command.updated,
    by: command.by,
    message: command.result?.message ?? null,
    rolloutId: command.rollout?.id ?? null,
  };
}

/** Desired state tags refreshed, and rollout results counted, at once (each a few small calls), as the deployment changes consumer does. */
const COUNT_CONCURRENCY = 8;

/** What applyCommandChanges needs. */
export interface CommandChangeDependencies {
  events: EventPublisher;
  /** Brings a device's desired state tag up to date (refreshDesiredStateTag with its ports). */
  refreshDesiredState: (company: string, deviceId: string) => Promise<void>;
  /** Counts a final command of a rollout for its wave (absent where no rollout is wired). */
  countRolloutResult?: (command: Command) => Promise<void>;
}

/**
 * Publishes each change's event in order, refreshes the desired state tag of every device whose pending set changed
 * (once per device), and counts each final command of a rollout.
 * @throws when the bus or a table refuses (the stream consumer then retries the batch).
 */
export async function applyCommandChanges(deps: CommandChangeDependencies, changes: readonly CommandChange[]): Promise<void> {
  if (changes.length === 0) return;
  await deps.events.publish(changes.map(commandEventOf));
  const devices = new Map<string, { company: string; deviceId: string }>();
  for (const { command, before } of changes) {
    const pendingBefore = before !== undefined && isPending(before);
    if (pendingBefore !== isPending(command.state)) {
      devices.set(`${command.company}#${command.deviceId}`, { company: command.company, deviceId: command.deviceId });
    }
  }
  const refreshes = pLimit(COUNT_CONCURRENCY);
  await Promise.all([...devices.values()].map(({ company, deviceId }) => refreshes(() => deps.refreshDesiredState(company, deviceId))));
  const count = deps.countRolloutResult;
  if (count !== undefined) {
    const limit = pLimit(COUNT_CONCURRENCY);
    const final = changes.filter(({ command }) => command.rollout !== undefined && !isPending(command.state));
    await Promise.all(final.map(({ command }) => limit(() => count(command))));
  }
}
