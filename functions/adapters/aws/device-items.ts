/**
 * The devices table item of a device, both ways: the device resource plus `deviceId` (the sort key) and `entity`,
 * with each command's free-form `payload` and `arguments` (any JSON a device reports) stored as JSON text in
 * `payloadJson` and `argumentsJson`. As DynamoDB maps and lists, legal JSON could fail the write: nesting beyond
 * DynamoDB's 32 levels, an empty member name, an integer above 2^53 (the marshaller refuses it) or a magnitude
 * DynamoDB cannot hold (below 1E-130, from 1E126). As text, a command adds two string attributes whatever it
 * carries, so every report the API accepts fits the item (its size bounded by MAX_HEALTH_REPORT_BYTES, far below
 * DynamoDB's 400 KB item limit) and the item nests only as deep as the health schema does (9 levels). Items written
 * before this encoding hold the members as maps; they are read as they are.
 */
import type { Device, DeviceCommand, StoredDevice } from '../../core/devices/model.js';

/** `entity` of a device item: what the search indexer and the reindex recognise as a device. */
export const DEVICE_ENTITY = 'DEVICE';

/** A device's `health` as the devices table stores it. */
export type StoredHealth = Omit<NonNullable<Device['health']>, 'hubs'> & { hubs: StoredHub[] };
type Hub = NonNullable<Device['health']>['hubs'][number];
type SubDevice = Hub['devices'][number];
type StoredHub = Omit<Hub, 'devices'> & { devices: (Omit<SubDevice, 'commands'> & { commands: StoredCommand[] })[] };

/** A command as stored: `payload` and `arguments` as JSON text (absent when the report left them out). */
export interface StoredCommand extends Omit<DeviceCommand, 'payload' | 'arguments'> {
  payloadJson?: string;
  argumentsJson?: string;
}

/** The item of `device` (a StoredDevice keeps its credential and `deleting` mark). */
export function deviceItem(device: StoredDevice): Record<string, unknown> {
  const { health, ...rest } = device;
  return { ...rest, ...(health === undefined ? {} : { health: storedHealth(health) }), deviceId: device.id, entity: DEVICE_ENTITY };
}

/** `health` as stored: each command's `payload` and `arguments` as JSON text. */
export function storedHealth(health: NonNullable<Device['health']>): StoredHealth {
  return {
    ...health,
    hubs: health.hubs.map((hub) => ({
      ...hub,
      devices: hub.devices.map((subDevice) => ({ ...subDevice, commands: subDevice.commands.map(storedCommand) })),
    })),
  };
}

function storedCommand(command: DeviceCommand): StoredCommand {
  const { payload, arguments: args, ...rest } = command;
  const stored: StoredCommand = rest;
  // JSON.stringify(undefined) is undefined: a member the report left out stays out.
  const payloadJson = JSON.stringify(payload) as string | undefined;
  const argumentsJson = JSON.stringify(args) as string | undefined;
  if (payloadJson !== undefined) stored.payloadJson = payloadJson;
  if (argumentsJson !== undefined) stored.argumentsJson = argumentsJson;
  return stored;
}

/**
 * The device a devices table item (plain, already unmarshalled) holds: `deviceId` folded back into `id`, `entity`
 * dropped, commands' `payloadJson` and `argumentsJson` parsed back into `payload` and `arguments`.
 * @throws SyntaxError when a stored JSON text is not JSON (only this module writes them).
 */
export function deviceFromItem(item: Record<string, unknown>): StoredDevice {
  const { deviceId: id, entity: _entity, health, ...device } = item;
  const stored = { ...device, id } as StoredDevice;
  if (health !== undefined) stored.health = shownHealth(health as StoredHealth);
  return stored;
}

function shownHealth(health: StoredHealth): NonNullable<Device['health']> {
  return {
    ...health,
    hubs: (health.hubs ?? []).map((hub) => ({
      ...hub,
      devices: (hub.devices ?? []).map((subDevice) => ({ ...subDevice, commands: (subDevice.commands ?? []).map(shownCommand) })),
    })),
  };
}

function shownCommand(command: StoredCommand | DeviceCommand): DeviceCommand {
  if (!('payloadJson' in command) && !('argumentsJson' in command)) return command as DeviceCommand;
  const { payloadJson, argumentsJson, ...rest } = command as StoredCommand;
  const shown = { ...rest } as DeviceCommand;
  if (payloadJson !== undefined) shown.payload = JSON.parse(payloadJson);
  if (argumentsJson !== undefined) shown.arguments = JSON.parse(argumentsJson);
  return shown;
}
