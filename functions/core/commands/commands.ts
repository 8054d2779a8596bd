/**
 * The operator's side of commands: run an advertised command on one sub-device of a kiosk, read, list and cancel
 * commands (docs/contract.md, "Commands"). Each change is one conditional write of the command; its event and the
 * device's desired state tag follow from the commands table's stream (changes.ts).
 */
import { ulid } from 'ulid';
import type { StoredDevice } from '../devices/model.js';
import type { DeviceRepository } from '../devices/ports.js';
import { ConflictError, NotFoundError } from '../shared/errors.js';
import type { ListParameters, Page } from '../shared/paging.js';
import { authorizeCompany, type Principal } from '../shared/principal.js';
import { type Command, type CommandView, commandView, DEFAULT_COMMAND_EXPIRY_SECONDS, isPending } from './model.js';
import type { CommandRepository } from './ports.js';

/** The `cause` of a command refused because the sub-device does not advertise it. */
export const COMMAND_NOT_ADVERTISED = 'COMMAND_NOT_ADVERTISED';

/**
 * A command the named sub-device does not advertise in its device's latest health report (or no such hub or
 * sub-device): answered 409 with `cause` COMMAND_NOT_ADVERTISED, and nothing is written.
 */
export class CommandNotAdvertisedError extends ConflictError {
  /** Why the command was refused. */
  readonly conflictCause = COMMAND_NOT_ADVERTISED;
}

/** What the command use cases need. */
export interface CommandDependencies {
  devices: Pick<DeviceRepository, 'get'>;
  commands: CommandRepository;
  now?: () => Date;
}

/** A request to run a command (the route's validated body). */
export interface CommandRequest {
  /** The hub's `uid`. */
  hub: string;
  /** The sub-device's `uid` within the hub. */
  device: string;
  command: string;
  arguments?: unknown;
  /** Seconds, MIN_COMMAND_EXPIRY_SECONDS to MAX_COMMAND_EXPIRY_SECONDS. @default DEFAULT_COMMAND_EXPIRY_SECONDS */
  expiresInSeconds?: number;
  note?: string;
}

/** Whether `device`'s latest health report has sub-device `subDevice` of hub `hub` advertising `command`. */
export function advertises(device: Pick<StoredDevice, 'health'>, hub: string, subDevice: string, command: string): boolean {
  return (
    device.health?.hubs.some(
      (candidate) =>
        candidate.uid === hub &&
        candidate.devices.some((sub) => sub.uid === subDevice && sub.commands.some((advertised) => advertised.command === command)),
    ) ?? false
  );
}

/**
 * Every (hub, sub-device) of the device's latest health report that advertises `command`, in report order.
 */
export function advertisers(device: Pick<StoredDevice, 'health'>, command: string): { hub: string; device: string }[] {
  return (device.health?.hubs ?? []).flatMap((hub) =>
    hub.devices
      .filter((sub) => sub.commands.some((advertised) => advertised.command === command))
      .map((sub) => ({ hub: hub.uid, device: sub.uid })),
  );
}

/** The device, when it exists in the company and is not being deleted. @throws NotFoundError otherwise. */
async function existingDevice(devices: Pick<DeviceRepository, 'get'>, company: string, deviceId: string): Promise<StoredDevice> {
  const device = await devices.get(company, deviceId);
  if (device === undefined || device.deleting === true) {
    throw new NotFoundError(`Device '${deviceId}' does not exist in company '${company}'.`);
  }
  return device;
}

/** Who a principal is, as a command's `by`: the username. */
function actorOf(principal: Principal): string {
  return principal.username ?? principal.subject;
}

/**
 * Queues a command for one sub-device of a device: reads the device (404 when absent), checks that the sub-device
 * advertises the command in the latest health report, then writes the command QUEUED (one conditional put) with
 * `expiresAt` = now + `expiresInSeconds`.
 * @throws ForbiddenError for a company not the caller's; NotFoundError for an unknown device;
 *   CommandNotAdvertisedError when the sub-device does not advertise the command.
 */
export async function createCommand(
  deps: CommandDependencies,
  principal: Principal,
  company: string,
  deviceId: string,
  request: CommandRequest,
): Promise<CommandView> {
  authorizeCompany(principal, company);
  const device = await existingDevice(deps.devices, company, deviceId);
  if (!advertises(device, request.hub, request.device, request.command)) {
    throw new CommandNotAdvertisedError(
      `Sub-device '${request.hub}/${request.device}' of device '${deviceId}' does not advertise command '${request.command}' in its latest health report; nothing was queued. Pick a command the device page or \`health.hubs[].devices[].commands\` lists.`,
    );
  }
  const now = deps.now?.() ?? new Date();
  const command: Command = {
    id: ulid(now.getTime()),
    company,
    deviceId,
    hub: request.hub,
    device: request.device,
    command: request.command,
    arguments: request.arguments ?? null,
    state: 'QUEUED',
    created: now.toISOString(),
    updated: now.toISOString(),
    expiresAt: new Date(now.getTime() + (request.expiresInSeconds ?? DEFAULT_COMMAND_EXPIRY_SECONDS) * 1000).toISOString(),
    by: actorOf(principal),
    ...(request.note === undefined ? {} : { note: request.note }),
  };
  await deps.commands.create(command);
  return commandView(command);
}

/**
 * One command of a device. @throws ForbiddenError for a company not the caller's; NotFoundError for an unknown
 * command (or one of another device).
 */
export async function getCommand(
  deps: Pick<CommandDependencies, 'commands'>,
  principal: Principal,
  company: string,
  deviceId: string,
  commandId: string,
): Promise<CommandView> {
  authorizeCompany(principal, company);
  const command = await deps.commands.get(company, deviceId, commandId);
  if (command === undefined) throw new NotFoundError(`Command '${commandId}' does not exist on device '${deviceId}'.`);
  return commandView(command);
}

/**
 * A device's commands, newest first. @throws ForbiddenError for a company not the caller's; NotFoundError for an
 * unknown device; BadRequestError for a cursor of another listing.
 */
export async function listCommands(
  deps: CommandDependencies,
  principal: Principal,
  company: string,
  deviceId: string,
  { limit, cursor }: ListParameters,
): Promise<Page<CommandView>> {
  authorizeCompany(principal, company);
  const [, page] = await Promise.all([
    existingDevice(deps.devices, company, deviceId),
    deps.commands.list(company, deviceId, limit, cursor),
  ]);
  return { items: page.items.map(commandView), nextCursor: page.nextCursor };
}

/** Why a command cannot be cancelled, and what to do instead. */
function cancelRefusal(command: Command, at: string): string {
  if (command.state === 'DELIVERED' && command.expiresAt > at) {
    return `Command '${command.id}' was already delivered to the device and may be running; it ends with the result the device reports, or EXPIRED at ${command.expiresAt}. Only a QUEUED command can be cancelled.`;
  }
  if (isPending(command.state)) return `Command '${command.id}' expired at ${command.expiresAt}; there is nothing left to cancel.`;
  return `Command '${command.id}' is already ${command.state}; only a QUEUED command can be cancelled.`;
}

/**
 * Cancels a command the device has not fetched yet (QUEUED, not past its expiry, becomes CANCELLED: one conditional
 * update). A DELIVERED command may be running on the device: cancelling it would throw away the result the device is
 * about to report, so it is refused; it ends with that result or its expiry.
 * @throws ForbiddenError for a company not the caller's; NotFoundError for an unknown command; ConflictError when the
 *   command is DELIVERED, past its expiry or already final (naming its state).
 */
export async function cancelCommand(
  deps: Pick<CommandDependencies, 'commands' | 'now'>,
  principal: Principal,
  company: string,
  deviceId: string,
  commandId: string,
): Promise<CommandView> {
  authorizeCompany(principal, company);
  const at = (deps.now?.() ?? new Date()).toISOString();
  const outcome = await deps.commands.transition(company, deviceId, commandId, { from: ['QUEUED'], to: 'CANCELLED', at, notExpiredAt: at });
  if (outcome.outcome === 'absent') throw new NotFoundError(`Command '${commandId}' does not exist on device '${deviceId}'.`);
  if (outcome.outcome === 'final') throw new ConflictError(cancelRefusal(outcome.command, at));
  return commandView(outcome.command);
}
