/**
 * The device's side of commands: the pending commands its pull carries (marked DELIVERED once fetched), and its
 * report of each one's result. Both act only on the device the caller's device token names.
 */
import type { DeviceRepository } from '../devices/ports.js';
import { activeDevice } from '../devices/session.js';
import { ConflictError, NotFoundError } from '../shared/errors.js';
import { ULID_PATTERN } from '../shared/identifiers.js';
import type { Principal } from '../shared/principal.js';
import type { Command, CommandResult, CommandResultState } from './model.js';
import type { CommandRepository } from './ports.js';

/**
 * Most commands one pull hands a device: a kiosk works through them in order and gets the next ones by its next pulls
 * as it reports; the bound keeps a pull's answer and its writes small (at most 32 × 8 KiB of arguments, far below
 * Lambda's 6 MB response) however many commands an operator queued.
 */
export const MAX_COMMANDS_PER_PULL = 32;

/** Delivery writes in flight at once for one pull. */
const DELIVERY_CONCURRENCY = 8;

/**
 * The commands a device pulls: its pending commands whose expiry is after `now`, oldest first, at most
 * MAX_COMMANDS_PER_PULL. Those still QUEUED become DELIVERED (one conditional update each, DELIVERY_CONCURRENCY at
 * once), and only those whose update succeeded are handed over with the ones already DELIVERED: a command cancelled or
 * expired between the read and its delivery is not handed to the device, so an operator's cancel that answered 200
 * is never run. A DELIVERED command is handed over again by every full pull until it is final (the device recognises
 * it by its id).
 */
export async function deliverPendingCommands(
  commands: Pick<CommandRepository, 'transition'>,
  pending: readonly Command[],
  now: Date,
): Promise<Command[]> {
  const at = now.toISOString();
  const live = pending.filter((command) => command.expiresAt > at).slice(0, MAX_COMMANDS_PER_PULL);
  const delivered: (Command | undefined)[] = new Array(live.length);
  for (let start = 0; start < live.length; start += DELIVERY_CONCURRENCY) {
    await Promise.all(
      live.slice(start, start + DELIVERY_CONCURRENCY).map(async (command, offset) => {
        if (command.state !== 'QUEUED') {
          delivered[start + offset] = command;
          return;
        }
        const outcome = await commands.transition(command.company, command.deviceId, command.id, {
          from: ['QUEUED'],
          to: 'DELIVERED',
          at,
          notExpiredAt: at,
        });
        if (outcome.outcome === 'changed') delivered[start + offset] = outcome.command;
      }),
    );
  }
  return delivered.filter((command): command is Command => command !== undefined);
}

/** A device's report on one of its commands (the route's validated body). */
export interface CommandResultReport {
  state: CommandResultState;
  message?: string;
  output?: unknown;
}

/** What reportCommandResult needs. */
export interface CommandResultDependencies {
  devices: Pick<DeviceRepository, 'get'>;
  commands: Pick<CommandRepository, 'transition'>;
  now?: () => Date;
}

/**
 * Records the calling device's result of one of its commands: a pending command not past its expiry becomes
 * SUCCEEDED or FAILED with the message and output (one conditional update).
 * @throws ForbiddenError / UnauthorizedError as activeDevice; NotFoundError for a command that is not this device's;
 *   ConflictError for one already final (naming its state) or past its expiry.
 */
export async function reportCommandResult(
  deps: CommandResultDependencies,
  principal: Principal,
  commandId: string,
  report: CommandResultReport,
): Promise<void> {
  const device = await activeDevice(deps.devices, principal);
  const notFound = new NotFoundError(`Command '${commandId}' is not a command of this device; nothing was recorded.`);
  if (!ULID_PATTERN.test(commandId)) throw notFound;
  const at = (deps.now?.() ?? new Date()).toISOString();
  const result: CommandResult = {
    ...(report.message === undefined ? {} : { message: report.message }),
    ...(report.output === undefined ? {} : { output: report.output }),
  };
  const outcome = await deps.commands.transition(device.company, device.id, commandId, {
    from: ['QUEUED', 'DELIVERED'],
    to: report.state,
    at,
    result,
    notExpiredAt: at,
  });
  if (outcome.outcome === 'absent') throw notFound;
  if (outcome.outcome === 'final') {
    const { state, expiresAt } = outcome.command;
    throw new ConflictError(
      state === 'QUEUED' || state === 'DELIVERED'
        ? `Command '${commandId}' expired at ${expiresAt}; its result is no longer recorded.`
        : `Command '${commandId}' is already ${state}; its result is recorded once.`,
    );
  }
}
