/**
 * The commands calls of the device page, each answering its data or the message to show (load.ts's Loaded): a page of
 * the device's commands (newest first), one command, run one (202 QUEUED; a 409 COMMAND_NOT_ADVERTISED or any other
 * problem answers its detail), cancel one.
 */
import type { components } from '../../../client/index.js';
import { api } from '../session.js';
import { attempt, type Loaded } from './load.js';

/** A command run on one sub-device of the device (its `target.subId` is `<hub uid>/<sub-device uid>`). */
export type Command = components['schemas']['Command'];
/** A command a sub-device advertises in its health report. */
export type AdvertisedCommand = components['schemas']['DeviceCommand'];

/** How many commands one page of the history shows ("Show more commands" adds as many). */
export const COMMANDS_PAGE = 20;

/** What running a command sends: the sub-device, the command, and the form's choices. */
export interface CommandRun {
  hub: string;
  device: string;
  command: string;
  /** The JSON to send; null sends none. */
  arguments: unknown;
  expiresInSeconds: number;
  /** Omitted when empty. */
  note: string;
}

/** A page of the device's commands, newest first, from `cursor` (the first page without it). */
export function loadCommands(
  company: string,
  deviceId: string,
  cursor?: string,
): Promise<Loaded<{ items: Command[]; nextCursor: string | null }>> {
  return attempt(() =>
    api.main.GET('/companies/{companyId}/resources/devices/{deviceId}/commands', {
      params: { path: { companyId: company, deviceId }, query: { limit: COMMANDS_PAGE, ...(cursor === undefined ? {} : { cursor }) } },
    }),
  );
}

/** One command of the device, as it is now. */
export function loadCommand(company: string, deviceId: string, commandId: string): Promise<Loaded<Command>> {
  return attempt(() =>
    api.main.GET('/companies/{companyId}/resources/devices/{deviceId}/commands/{commandId}', {
      params: { path: { companyId: company, deviceId, commandId } },
    }),
  );
}

/** Runs a command on one sub-device of the device: the command, QUEUED, or the problem's detail. */
export function runCommand(company: string, deviceId: string, run: CommandRun): Promise<Loaded<Command>> {
  const note = run.note.trim();
  return attempt(() =>
    api.main.POST('/companies/{companyId}/resources/devices/{deviceId}/commands', {
      params: { path: { companyId: company, deviceId } },
      body: {
        hub: run.hub,
        device: run.device,
        command: run.command,
        ...(run.arguments === null ? {} : { arguments: run.arguments }),
        expiresInSeconds: run.expiresInSeconds,
        ...(note === '' ? {} : { note: run.note }),
      },
    }),
  );
}

/** Cancels a pending command: the command, CANCELLED, or the problem's detail (a 409 names the state it reached). */
export function cancelCommand(company: string, deviceId: string, commandId: string): Promise<Loaded<Command>> {
  return attempt(() =>
    api.main.POST('/companies/{companyId}/resources/devices/{deviceId}/commands/{commandId}/cancel', {
      params: { path: { companyId: company, deviceId, commandId } },
    }),
  );
}
