/**
 * `dss command run|list|get|cancel`: commands run on one sub-device of a kiosk, which it advertises in its health
 * report, fetches with its desired state and reports SUCCEEDED or FAILED (docs/contract.md, "Commands").
 */
import type { Command } from 'commander';
import { ApiError, type components, type DssClient, expectOk } from '../../client/index.js';
import { positiveInteger } from '../arguments.js';
import { expiresInArgument, jsonArgument } from '../command-arguments.js';
import { type DeviceCommand, waitForFinal } from '../command-wait.js';
import { invocationOf } from '../context.js';
import { CommandFailed, note, printJson, printRecord, reportError, say, visible } from '../output.js';
import { pageQuery, printListing, readPages } from '../paging.js';

type CommandCreateBody = components['schemas']['CommandCreate'];
type Hub = components['schemas']['Hub'];

/** Most sub-devices listed after a refused command (a kiosk has at most 16 hubs of 64 sub-devices). */
const MAX_LISTED_SUB_DEVICES = 20;

/** Adds `dss command` and its subcommands. */
export function registerCommandCommands(program: Command): void {
  const command = program
    .command('command')
    .description("Run a command a kiosk's sub-device advertises (reboot, print-test-page…), follow, list or cancel it");
  registerCommandRun(command);
  registerCommandList(command);
  registerCommandGet(command);
  registerCommandCancel(command);
}

/** `dss command run`: queues a command for one sub-device, and with --wait follows it until final. */
function registerCommandRun(group: Command): void {
  group
    .command('run')
    .description('Queue a command for one sub-device of a device: the kiosk fetches it at its next pull and reports the result')
    .argument('<deviceId>', 'device id')
    .argument('<command>', 'a command the sub-device advertises in its health report, e.g. reboot or print-test-page')
    .requiredOption('--hub <uid>', "the hub's uid, as in the device's health report")
    .requiredOption('--device <uid>', "the sub-device's uid within that hub")
    .option('--arguments <json>', 'arguments for the command, as JSON (delivered to the kiosk as given)', jsonArgument)
    .option(
      '--expires-in <duration>',
      'expire it when not final by then: 90s, 10m, 2h, 7d or seconds, 10 s to 7 days (default 1h)',
      expiresInArgument,
    )
    .option('--note <text>', 'why it was run')
    .option('--wait', 'then follow it until it is final; exit code 1 when it ends FAILED, EXPIRED or CANCELLED')
    .addHelpText(
      'after',
      '\nExamples:\n  dss command run acme-kiosk-0001 print-test-page --hub hub-1 --device printer-1 --wait\n  dss command run acme-kiosk-0001 set-brightness --hub hub-1 --device media-1 --arguments \'{"level": 80}\' --expires-in 10m\n\nThe hubs, sub-devices and commands a kiosk advertises: dss devices get DEVICE --json (health.hubs[].devices[].commands[]).',
    )
    .action(runCommand);
}

interface RunOptions {
  hub: string;
  device: string;
  arguments?: unknown;
  expiresIn?: number;
  note?: string;
  wait?: boolean;
}

/**
 * Action of `dss command run`. A 409 COMMAND_NOT_ADVERTISED is reported with what the device does advertise.
 * @throws CommandFailed when, with --wait, the command ends FAILED, EXPIRED or CANCELLED
 */
async function runCommand(deviceId: string, name: string, options: RunOptions, command: Command): Promise<void> {
  const { dss, json, company } = await invocationOf(command);
  const companyId = company();
  const body: CommandCreateBody = {
    hub: options.hub,
    device: options.device,
    command: name,
    ...(options.arguments === undefined ? {} : { arguments: options.arguments }),
    ...(options.expiresIn === undefined ? {} : { expiresInSeconds: options.expiresIn }),
    ...(options.note === undefined ? {} : { note: options.note }),
  };
  let created: DeviceCommand;
  try {
    created = expectOk(
      await dss.main.POST('/companies/{companyId}/resources/devices/{deviceId}/commands', {
        params: { path: { companyId, deviceId } },
        body,
      }),
    );
  } catch (error) {
    if (!isNotAdvertised(error)) throw error;
    // The problem first, as for any refused request, then what the device does advertise.
    process.exitCode = reportError(error);
    await noteAdvertised(dss, companyId, deviceId, options);
    return;
  }
  if (options.wait === true) {
    if (!json) say(`Command ${created.id} (${describe(created)}) is ${created.state}.`);
    else note(`Command ${created.id} is ${created.state}.`);
    await follow(dss, companyId, created, json);
    return;
  }
  if (json) {
    printJson(created);
    return;
  }
  say(`Command ${created.id} (${describe(created)}) is ${created.state}.`);
  printRecord(commandRecord(created));
  note(`Follow it: dss command get ${deviceId} ${created.id}`);
}

/**
 * Follows a command until it is final, showing each change (stdout for people; stderr with --json, whose stdout is
 * the final command).
 * @throws CommandFailed when it ends FAILED, EXPIRED or CANCELLED
 */
async function follow(dss: DssClient, companyId: string, first: DeviceCommand, json: boolean): Promise<void> {
  const show = json ? note : say;
  const final = await waitForFinal(first, {
    read: () => readCommand(dss, companyId, first.target.id, first.id),
    onChange: (changed) => show(`${changed.updated} ${changed.state}${messageOf(changed)}`),
  });
  if (json) printJson(final);
  else printRecord(commandRecord(final));
  if (final.state !== 'SUCCEEDED') {
    throw new CommandFailed(`Command ${final.id} ended ${final.state}${messageOf(final) || '.'}`);
  }
}

/** `dss command list`: a device's commands, newest first. */
function registerCommandList(group: Command): void {
  group
    .command('list')
    .description("List a device's commands, newest first")
    .argument('<deviceId>', 'device id')
    .option('--limit <n>', 'commands per page (1 to 1000; the service defaults to 100)', positiveInteger)
    .option('--cursor <cursor>', 'continue a listing from the cursor a previous page printed')
    .option('--all', 'follow every page')
    .addHelpText('after', '\nExamples:\n  dss command list acme-kiosk-0001\n  dss command list acme-kiosk-0001 --all --json')
    .action(listCommands);
}

/** Action of `dss command list`: a table of ID, SUB-DEVICE, COMMAND, STATE, UPDATED, BY, MESSAGE (or the page as JSON). */
async function listCommands(
  deviceId: string,
  options: { limit?: number; cursor?: string; all?: boolean },
  command: Command,
): Promise<void> {
  const { dss, json, company } = await invocationOf(command);
  const companyId = company();
  const listing = await readPages(
    async (cursor) =>
      expectOk(
        await dss.main.GET('/companies/{companyId}/resources/devices/{deviceId}/commands', {
          params: { path: { companyId, deviceId }, query: pageQuery(options.limit, cursor) },
        }),
      ),
    options.all === true,
    options.cursor,
  );
  printListing(
    listing,
    json,
    [
      { head: 'ID', value: (item) => item.id },
      { head: 'SUB-DEVICE', value: (item) => item.target.subId },
      { head: 'COMMAND', value: (item) => item.command },
      { head: 'STATE', value: (item) => item.state },
      { head: 'UPDATED', value: (item) => item.updated },
      { head: 'BY', value: (item) => item.by },
      { head: 'MESSAGE', value: (item) => item.result?.message },
    ],
    { empty: 'No commands.', more: 'commands' },
  );
}

/** `dss command get`: one command. */
function registerCommandGet(group: Command): void {
  group
    .command('get')
    .description('Show a command: its state, arguments and what the kiosk reported')
    .argument('<deviceId>', 'device id')
    .argument('<commandId>', 'command id')
    .addHelpText('after', '\nExample:\n  dss command get acme-kiosk-0001 01JD2X3Y4Z5A6B7C8D9E0F1G2H')
    .action(async (deviceId: string, commandId: string, _options: unknown, command: Command) => {
      const { dss, json, company } = await invocationOf(command);
      const found = await readCommand(dss, company(), deviceId, commandId);
      if (json) printJson(found);
      else printRecord(commandRecord(found));
    });
}

/** `dss command cancel`: cancels a command that is not final. */
function registerCommandCancel(group: Command): void {
  group
    .command('cancel')
    .description('Cancel a QUEUED or DELIVERED command (a kiosk that already fetched it may still run it; its result is not recorded)')
    .argument('<deviceId>', 'device id')
    .argument('<commandId>', 'command id')
    .addHelpText(
      'after',
      '\nExample:\n  dss command cancel acme-kiosk-0001 01JD2X3Y4Z5A6B7C8D9E0F1G2H\n\nExit code 1 when the command is already final (409, naming its state).',
    )
    .action(async (deviceId: string, commandId: string, _options: unknown, command: Command) => {
      const { dss, json, company } = await invocationOf(command);
      const companyId = company();
      const cancelled = expectOk(
        await dss.main.POST('/companies/{companyId}/resources/devices/{deviceId}/commands/{commandId}/cancel', {
          params: { path: { companyId, deviceId, commandId } },
        }),
      );
      if (json) printJson(cancelled);
      else {
        say(`Command ${cancelled.id} is ${cancelled.state}.`);
        printRecord(commandRecord(cancelled));
      }
    });
}

async function readCommand(dss: DssClient, companyId: string, deviceId: string, commandId: string): Promise<DeviceCommand> {
  return expectOk(
    await dss.main.GET('/companies/{companyId}/resources/devices/{deviceId}/commands/{commandId}', {
      params: { path: { companyId, deviceId, commandId } },
    }),
  );
}

/** `print-test-page on hub-1/printer-1 of acme-kiosk-0001`, each name on its line whatever it holds (visible). */
function describe(command: DeviceCommand): string {
  return `${visible(command.command)} on ${visible(command.target.subId)} of ${visible(command.target.id)}`;
}

/** `: <the kiosk's message>` on one line (its line breaks shown as `\n`), or nothing. */
function messageOf(command: DeviceCommand): string {
  const message = command.result?.message;
  return message === undefined || message === '' ? '' : `: ${visible(message)}`;
}

/** A command as a two-column table. */
export function commandRecord(command: DeviceCommand): Record<string, unknown> {
  return {
    id: command.id,
    device: command.target.id,
    subDevice: command.target.subId,
    command: command.command,
    arguments: command.arguments === null || command.arguments === undefined ? undefined : JSON.stringify(command.arguments),
    state: command.state,
    message: command.result?.message,
    output: command.result?.output === undefined ? undefined : JSON.stringify(command.result.output),
    note: command.note,
    by: command.by,
    rollout: command.rolloutId,
    created: command.created,
    updated: command.updated,
    expiresAt: command.expiresAt,
  };
}

/** Whether a failure is the service's 409 for a command the sub-device does not advertise. */
function isNotAdvertised(error: unknown): error is ApiError {
  return error instanceof ApiError && error.status === 409 && (error.problem as { cause?: unknown }).cause === 'COMMAND_NOT_ADVERTISED';
}

/**
 * After a 409 COMMAND_NOT_ADVERTISED, notes on stderr what the device's latest health report advertises: the named
 * sub-device's commands when it has any, else every sub-device that advertises some (at most MAX_LISTED_SUB_DEVICES).
 * Says nothing more when the device cannot be read (the problem was reported already).
 */
async function noteAdvertised(dss: DssClient, companyId: string, deviceId: string, options: RunOptions): Promise<void> {
  let hubs: readonly Hub[];
  try {
    const device = expectOk(
      await dss.main.GET('/companies/{companyId}/resources/devices/{deviceId}', { params: { path: { companyId, deviceId } } }),
    );
    hubs = device.health?.hubs ?? [];
  } catch {
    return;
  }
  const advertising = hubs.flatMap((hub) =>
    hub.devices
      .filter((sub) => sub.commands.length > 0)
      .map((sub) => ({ hub: hub.uid, device: sub.uid, commands: sub.commands.map((advertised) => visible(advertised.command)) })),
  );
  const named = advertising.find((sub) => sub.hub === options.hub && sub.device === options.device);
  if (named !== undefined) {
    note(`${visible(named.hub)}/${visible(named.device)} advertises: ${named.commands.join(', ')}.`);
    return;
  }
  if (advertising.length === 0) {
    note(`Device ${visible(deviceId)} advertises no command in its latest health report.`);
    return;
  }
  note(`Sub-device ${visible(options.device)} of hub ${visible(options.hub)} advertises no command; these sub-devices do:`);
  for (const sub of advertising.slice(0, MAX_LISTED_SUB_DEVICES)) {
    note(`  --hub ${visible(sub.hub)} --device ${visible(sub.device)}: ${sub.commands.join(', ')}`);
  }
  if (advertising.length > MAX_LISTED_SUB_DEVICES) note(`  … and ${advertising.length - MAX_LISTED_SUB_DEVICES} more`);
}
