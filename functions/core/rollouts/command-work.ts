/**
 * The work of a COMMAND rollout (docs/rollouts.md, "Command rollouts"): a chunk's targets each get the command on
 * every sub-device that advertises it in their latest health report, as ordinary commands (QUEUED, in the creator's
 * name, tagged with the rollout and wave); and, once the rollout is cancelled, its commands still QUEUED are cancelled.
 *
 * Run twice (a redelivered message, a chunk sent again), a chunk writes nothing new: each command's id is derived from
 * the rollout, the target and the sub-device, and written only if absent, so a command the device already fetched or
 * answered stays as it is, and the chunk's results are counted once (markDone).
 */
import pLimit from 'p-limit';
import { advertisers, COMMAND_NOT_ADVERTISED } from '../commands/commands.js';
import { type Command, isPending } from '../commands/model.js';
import type { CommandRepository } from '../commands/ports.js';
import { DEPLOYMENT_WRITE_CONCURRENCY } from '../deployments/deployments.js';
import type { StoredDevice } from '../devices/model.js';
import { derivedId } from './derived-ids.js';
import type { RolloutCancelMessage, RolloutChunk, RolloutCommand, RolloutCommandResult, StoredRollout } from './model.js';
import type { RolloutRepository, TargetHealthReader } from './ports.js';

/** The counter of the commands a wave queued, beside the targets' results (`SUCCESS`, the causes). */
export const COMMANDS_COUNT = 'COMMANDS';

/** What the command work needs: the rollouts, the commands, the targets' health and the time. */
export interface CommandWorkDependencies {
  rollouts: Pick<RolloutRepository, 'get' | 'chunk' | 'markDone' | 'members'>;
  commands: Pick<CommandRepository, 'createEach' | 'transition'>;
  targetHealth: TargetHealthReader;
  now?: () => Date;
}

/**
 * The id of the command a rollout queues on one sub-device of a target: a ULID whose time part is `at` (ISO-8601: the
 * wave's start, or a member's join time) and whose 80 random bits come from sha256 of the rollout, the device, the hub
 * and the sub-device, so that a chunk run again derives the same ids.
 */
export function rolloutCommandId(rolloutId: string, deviceId: string, hub: string, subDevice: string, at: string): string {
  return derivedId(at, JSON.stringify([rolloutId, deviceId, hub, subDevice]));
}

/**
 * The commands a rollout queues on one target: one per sub-device (hub and sub-device uid) of its latest health report
 * that advertises the rollout's command (none: the target does not advertise it). QUEUED since `now`, expiring `expiresInSeconds` later,
 * `by` the creator's username, with the rollout's note.
 * @param idTime ISO-8601: the time part of their ids (rolloutCommandId).
 */
export function rolloutCommandsFor(
  rollout: StoredRollout,
  wave: number,
  deviceId: string,
  device: Pick<StoredDevice, 'health'>,
  idTime: string,
  now: Date,
): Command[] {
  const spec = rollout.command as RolloutCommand;
  const created = now.toISOString();
  const expiresAt = new Date(now.getTime() + spec.expiresInSeconds * 1000).toISOString();
  // A report may name a sub-device twice (nothing makes uids unique): it gets one command, as one id.
  const unique = new Map(advertisers(device, spec.command).map((one) => [JSON.stringify([one.hub, one.device]), one]));
  return [...unique.values()].map(({ hub, device: subDevice }) => ({
    id: rolloutCommandId(rollout.id, deviceId, hub, subDevice, idTime),
    company: rollout.company,
    deviceId,
    hub,
    device: subDevice,
    command: spec.command,
    arguments: spec.arguments ?? null,
    state: 'QUEUED',
    created,
    updated: created,
    expiresAt,
    by: rollout.commandBy ?? rollout.createdBy,
    ...(rollout.note === undefined ? {} : { note: rollout.note }),
    rollout: { id: rollout.id, wave },
  }));
}

/** What queuing a chunk's commands gave: results by cause, each failed target's cause, each target's command ids. */
export interface QueuedCommands {
  /** `SUCCESS` (targets whose commands are queued), failure causes, and COMMANDS_COUNT (commands queued). */
  results: Record<string, number>;
  failures: Record<string, string>;
  commands: Record<string, string[]>;
}

/**
 * Queues the commands of `deviceIds` (one conditional put per command) from their latest health (`health`: a device
 * absent from it does not exist): a device that does not exist is TARGET_NOT_FOUND, one advertising the command
 * nowhere COMMAND_NOT_ADVERTISED, one whose write met a backend error NONE (its other commands are kept in `commands`),
 * the others SUCCESS.
 */
export async function queueRolloutCommands(
  deps: Pick<CommandWorkDependencies, 'commands' | 'now'>,
  rollout: StoredRollout,
  wave: number,
  deviceIds: readonly string[],
  health: ReadonlyMap<string, Pick<StoredDevice, 'health'>>,
  idTime: string,
): Promise<QueuedCommands> {
  const now = deps.now?.() ?? new Date();
  const failures: Record<string, string> = {};
  const queued: Command[] = [];
  for (const deviceId of deviceIds) {
    const device = health.get(deviceId);
    const commands = device === undefined ? [] : rolloutCommandsFor(rollout, wave, deviceId, device, idTime, now);
    if (commands.length === 0) failures[deviceId] = device === undefined ? 'TARGET_NOT_FOUND' : COMMAND_NOT_ADVERTISED;
    queued.push(...commands);
  }
  const outcomes = await deps.commands.createEach(queued);
  const commands: Record<string, string[]> = {};
  outcomes.forEach((outcome, index) => {
    const command = queued[index] as Command;
    if (outcome === 'failed') failures[command.deviceId] = 'NONE';
    else (commands[command.deviceId] ??= []).push(command.id);
  });
  const results: Record<string, number> = {};
  for (const deviceId of deviceIds) {
    const key = failures[deviceId] ?? 'SUCCESS';
    results[key] = (results[key] ?? 0) + 1;
  }
  const count = Object.values(commands).reduce((sum, ids) => sum + ids.length, 0);
  if (count > 0) results[COMMANDS_COUNT] = count;
  return { results, failures, commands };
}

/**
 * Runs one chunk of a RUNNING COMMAND rollout's running wave (runRolloutChunk has checked both): queues its targets'
 * commands, then marks the chunk done with its results, failures and command ids, counted once. A chunk done while a
 * cancel went by (the rollout read again after marking it is CANCELLED) cancels its own QUEUED commands, since the
 * cancel's work may have found the chunk not done yet.
 * @returns `done` with the results, or `incomplete` (nothing marked) when some writes met a backend error and this is
 *   not the last attempt; `skipped` when the chunk was marked done meanwhile.
 * @throws Error on backend failures reading health, marking the chunk or cancelling.
 */
export async function runCommandChunk(
  deps: CommandWorkDependencies,
  rollout: StoredRollout,
  chunk: RolloutChunk,
  startedAt: string,
  lastAttempt: boolean,
): Promise<{ outcome: 'done' | 'incomplete' | 'skipped'; results: Record<string, number> }> {
  const health = await deps.targetHealth.healthOf(rollout.company, chunk.deviceIds);
  const { results, failures, commands } = await queueRolloutCommands(deps, rollout, chunk.wave, chunk.deviceIds, health, startedAt);
  if ((results.NONE ?? 0) > 0 && !lastAttempt) return { outcome: 'incomplete', results };
  const marked = await deps.rollouts.markDone(rollout.company, rollout.id, chunk, results, failures, commands);
  if (!marked) return { outcome: 'skipped', results };
  if ((await deps.rollouts.get(rollout.company, rollout.id))?.state === 'CANCELLED') {
    await cancelQueued(deps, rollout.company, commands);
  }
  return { outcome: 'done', results };
}

/** Members read per Query while cancelling their commands. */
const MEMBER_PAGE = 500;

/**
 * Cancels the QUEUED commands of a cancelled COMMAND rollout that one message names: those of a chunk (nothing while
 * it is not done: its run cancels them itself), or those of its members. Nothing when the rollout is not CANCELLED.
 * @returns how many commands became CANCELLED.
 * @throws Error on backend failures (the message is then delivered again; cancelling twice changes nothing).
 */
export async function cancelRolloutCommands(deps: CommandWorkDependencies, message: RolloutCancelMessage): Promise<number> {
  const rollout = await deps.rollouts.get(message.company, message.rolloutId);
  if (rollout?.state !== 'CANCELLED' || rollout.action !== 'COMMAND') return 0;
  if ('chunk' in message) {
    const chunk = await deps.rollouts.chunk(message.company, message.rolloutId, message.chunk);
    return chunk?.done === true && chunk.commands !== undefined ? cancelQueued(deps, message.company, chunk.commands) : 0;
  }
  let cancelled = 0;
  let after: string | undefined;
  for (;;) {
    const page = await deps.rollouts.members(message.company, message.rolloutId, after, MEMBER_PAGE);
    const commands = Object.fromEntries(page.items.map((member) => [member.deviceId, member.commands ?? []]));
    cancelled += await cancelQueued(deps, message.company, commands);
    after = page.items.at(-1)?.deviceId;
    if (!page.more || after === undefined) return cancelled;
  }
}

/**
 * QUEUED → CANCELLED for each command of `commands` (`{ deviceId: [commandId] }`), one conditional update each, a
 * bounded number at once: a command a device has fetched (DELIVERED) or answered is left as it is.
 * @returns how many changed. @throws Error on a backend failure.
 */
export async function cancelQueued(
  deps: Pick<CommandWorkDependencies, 'commands' | 'now'>,
  company: string,
  commands: Readonly<Record<string, readonly string[]>>,
): Promise<number> {
  const at = (deps.now?.() ?? new Date()).toISOString();
  const limit = pLimit(DEPLOYMENT_WRITE_CONCURRENCY);
  const outcomes = await Promise.all(
    Object.entries(commands).flatMap(([deviceId, ids]) =>
      ids.map((id) =>
        limit(() => deps.commands.transition(company, deviceId, id, { from: ['QUEUED'], to: 'CANCELLED', at, notExpiredAt: at })),
      ),
    ),
  );
  return outcomes.filter((outcome) => outcome.outcome === 'changed').length;
}

/**
 * Counts a final command a COMMAND rollout queued once for its wave (the command changes consumer's hook): SUCCEEDED,
 * FAILED, EXPIRED or CANCELLED, each command once whatever record redelivers it (a command enters one final state
 * only). A pending command, or one no rollout queued, counts nowhere.
 * @returns whether it was counted now. @throws Error on a backend failure (the batch is retried).
 */
export async function countRolloutCommand(rollouts: Pick<RolloutRepository, 'recordCommandResult'>, command: Command): Promise<boolean> {
  if (command.rollout === undefined || isPending(command.state)) return false;
  return rollouts.recordCommandResult({
    company: command.company,
    rolloutId: command.rollout.id,
    wave: command.rollout.wave,
    commandId: command.id,
    state: command.state as RolloutCommandResult['state'],
  });
}
