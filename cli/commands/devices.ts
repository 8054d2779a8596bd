/**
 * `dss devices register|get|delete|import|credentials`: the device registry (docs/contract.md, "Devices", "Registry"
 * and "Credentials and device tokens").
 */
import type { Command } from 'commander';
import { type components, expectOk } from '../../client/index.js';
import { MAX_REGISTRATION_ENTRIES } from '../../functions/core/devices/registry.js';
import { finiteNumber } from '../arguments.js';
import { invocationOf } from '../context.js';
import { readRecords } from '../files.js';
import { CommandFailed, note, printJson, printRecord, printTable, say, startProgress, UsageError } from '../output.js';

type Device = components['schemas']['DeviceSearchResource'];
type DeviceBody = components['schemas']['DeviceBody'];
type RegistrationResult = components['schemas']['DeviceRegistrationResult'];

/** Adds `dss devices` and its subcommands. */
export function registerDeviceCommands(program: Command): void {
  const devices = program
    .command('devices')
    .description('Register, read and delete devices, import many at once, issue their client credentials');
  registerDeviceRegister(devices);
  registerDeviceGet(devices);
  registerDeviceDelete(devices);
  registerDeviceImport(devices);
  registerDeviceCredentials(devices);
}

/** `dss devices register`: registers a device or updates its static fields. */
function registerDeviceRegister(devices: Command): void {
  devices
    .command('register')
    .description('Register a device (needs --serial) or update its static fields; options left out are kept')
    .argument('<deviceId>', 'device id: 1 to 128 letters, digits, ".", "_" or "-"')
    .option('--serial <serial>', 'serial number (required for a new device)')
    .option('--location-name <text>', 'short location text')
    .option('--location-description <text>', 'long location text')
    .option('--latitude <degrees>', 'latitude, -90 to 90', finiteNumber)
    .option('--longitude <degrees>', 'longitude, -180 to 180', finiteNumber)
    .option('--altitude <metres>', 'altitude, metres', finiteNumber)
    .addHelpText(
      'after',
      '\nExamples:\n  dss devices register kiosk-0001 --serial SN-0001 --location-name Entrance --latitude 52.52 --longitude 13.405\n  dss devices register kiosk-0001 --location-name "Back door"\n\nThe location options given replace the stored location whole (as do the coordinates): give its name and description together.',
    )
    .action(registerDevice);
}

/** Action of `dss devices register`: prints whether the device was registered or updated. */
async function registerDevice(deviceId: string, options: RegisterOptions, command: Command): Promise<void> {
  const { dss, json, company } = await invocationOf(command);
  const companyId = company();
  const result = await dss.main.PUT('/companies/{companyId}/resources/devices/{deviceId}', {
    params: { path: { companyId, deviceId } },
    body: deviceBodyOf(options),
  });
  const device = expectOk(result);
  if (json) {
    printJson(device);
    return;
  }
  say(`${result.response.status === 201 ? 'Registered' : 'Updated'} device ${device.id}.`);
  printRecord(deviceRecord(device));
}

/** `dss devices get`: shows one device. */
function registerDeviceGet(devices: Command): void {
  devices
    .command('get')
    .description('Show a device: static fields, connection state, latest health')
    .argument('<deviceId>', 'device id')
    .addHelpText('after', '\nExamples:\n  dss devices get kiosk-0001\n  dss devices get kiosk-0001 --json')
    .action(showDevice);
}

/** Action of `dss devices get`. */
async function showDevice(deviceId: string, _options: unknown, command: Command): Promise<void> {
  const { dss, json, company } = await invocationOf(command);
  const companyId = company();
  const device = expectOk(
    await dss.main.GET('/companies/{companyId}/resources/devices/{deviceId}', { params: { path: { companyId, deviceId } } }),
  );
  if (json) printJson(device);
  else printRecord(deviceRecord(device));
}

/** `dss devices delete`: deletes a device. */
function registerDeviceDelete(devices: Command): void {
  devices
    .command('delete')
    .description('Delete a device: its credentials stop working and each of its active deployments is undeployed')
    .argument('<deviceId>', 'device id')
    .addHelpText('after', '\nExample:\n  dss devices delete kiosk-0001\n\nA delete interrupted half-way is completed by running it again.')
    .action(deleteDevice);
}

/** Action of `dss devices delete`. */
async function deleteDevice(deviceId: string, _options: unknown, command: Command): Promise<void> {
  const { dss, json, company } = await invocationOf(command);
  const companyId = company();
  expectOk(await dss.main.DELETE('/companies/{companyId}/resources/devices/{deviceId}', { params: { path: { companyId, deviceId } } }));
  if (json) printJson({ id: deviceId, deleted: true });
  else say(`Deleted device ${deviceId}.`);
}

/** `dss devices import`: registers the devices of a CSV or JSON file. */
function registerDeviceImport(devices: Command): void {
  devices
    .command('import')
    .description(
      `Register or update the devices of a CSV or JSON file, ${MAX_REGISTRATION_ENTRIES.toLocaleString('en-US')} per request; lists each FAILURE with its errors`,
    )
    .argument('<file>', 'CSV with a header row (id, serial, location.name, location.description, geoLocation.latitude, …) or a JSON array')
    .addHelpText(
      'after',
      '\nExamples:\n  dss devices import devices.csv\n  dss devices import devices.json --json\n\ndevices.csv:\n  id,serial,location.name,geoLocation.latitude,geoLocation.longitude\n  kiosk-0001,SN-0001,Entrance,52.52,13.405\n\nExit code 1 when any record is a FAILURE (the others are written). Running it again is safe: a device already registered is UPDATED.',
    )
    .action(importDevices);
}

/**
 * Action of `dss devices import`: sends the records MAX_REGISTRATION_ENTRIES at a time.
 * @throws UsageError on an empty file; CommandFailed when any record is a FAILURE
 */
async function importDevices(file: string, _options: unknown, command: Command): Promise<void> {
  const { dss, json, company } = await invocationOf(command);
  const companyId = company();
  const records = (await readRecords(file)).map(registrationEntryOf);
  if (records.length === 0) throw new UsageError(`${file} holds no device.`);
  const results: RegistrationResult[] = [];
  const progress = startProgress('Registering', records.length, 'items');
  try {
    for (let offset = 0; offset < records.length; offset += MAX_REGISTRATION_ENTRIES) {
      const batch = records.slice(offset, offset + MAX_REGISTRATION_ENTRIES);
      try {
        const answered = expectOk(
          await dss.main.POST('/companies/{companyId}/resources/devices', {
            params: { path: { companyId } },
            // Entries are sent as read: the service validates each on its own and reports it.
            body: batch as components['schemas']['DeviceRegistrationBody'],
          }),
        );
        results.push(...answered);
      } catch (error) {
        if (offset > 0) note(`The first ${offset} records were written; running the import again is safe.`);
        throw error;
      }
      progress.update(results.length);
    }
  } finally {
    progress.stop();
  }
  const summary = summarize(results);
  if (json) printJson({ counts: summary.counts, results });
  else printSummary(summary);
  if (summary.counts.FAILURE > 0) {
    throw new CommandFailed(`${summary.counts.FAILURE} of ${results.length} devices were not registered (FAILURE).`);
  }
}

/** `dss devices credentials`: issues a device's client id and secret. */
function registerDeviceCredentials(devices: Command): void {
  devices
    .command('credentials')
    .description("Issue a device's client id and secret (replacing any earlier secret, which stops working at once)")
    .argument('<deviceId>', 'device id')
    .addHelpText(
      'after',
      '\nExample:\n  dss devices credentials kiosk-0001\n\nThe secret is shown only this once. The device gets its token with:\n  dss login --client-id <clientId> --client-secret <clientSecret>',
    )
    .action(issueCredentials);
}

/** Action of `dss devices credentials`: prints the secret, shown only this once. */
async function issueCredentials(deviceId: string, _options: unknown, command: Command): Promise<void> {
  const { dss, json, company } = await invocationOf(command);
  const companyId = company();
  const credentials = expectOk(
    await dss.main.POST('/companies/{companyId}/resources/devices/{deviceId}/credentials', {
      params: { path: { companyId, deviceId } },
    }),
  );
  if (json) printJson(credentials);
  else {
    printRecord({ clientId: credentials.clientId, clientSecret: credentials.clientSecret });
    say(`dss login --client-id ${credentials.clientId} --client-secret ${credentials.clientSecret}`);
  }
  note(
    'The secret is shown only now: store it where the device can read it. Any earlier secret of the device has stopped working. (Logging in with it replaces the stored login: use another DSS_CONFIG_DIR to keep yours.)',
  );
}

interface RegisterOptions {
  serial?: string;
  locationName?: string;
  locationDescription?: string;
  latitude?: number;
  longitude?: number;
  altitude?: number;
}

/** The PUT body of `devices register`: only the members whose options were given. */
export function deviceBodyOf(options: RegisterOptions): DeviceBody {
  const body: DeviceBody = {};
  if (options.serial !== undefined) body.serial = options.serial;
  if (options.locationName !== undefined || options.locationDescription !== undefined) {
    body.location = {
      ...(options.locationName === undefined ? {} : { name: options.locationName }),
      ...(options.locationDescription === undefined ? {} : { description: options.locationDescription }),
    };
  }
  if (options.latitude !== undefined || options.longitude !== undefined || options.altitude !== undefined) {
    body.geoLocation = {
      ...(options.latitude === undefined ? {} : { latitude: options.latitude }),
      ...(options.longitude === undefined ? {} : { longitude: options.longitude }),
      ...(options.altitude === undefined ? {} : { altitude: options.altitude }),
    };
  }
  return body;
}

const COORDINATES = ['latitude', 'longitude', 'altitude'] as const;

/**
 * A record of an import file as a registration entry: a CSV's cells are text, so `geoLocation.latitude`,
 * `longitude` and `altitude` written as numbers become numbers (anything else is sent as it is, for the service to
 * report). The record itself is not changed.
 */
export function registrationEntryOf(record: Record<string, unknown>): Record<string, unknown> {
  const geo = record.geoLocation;
  if (typeof geo !== 'object' || geo === null || Array.isArray(geo)) return record;
  const converted: Record<string, unknown> = { ...(geo as Record<string, unknown>) };
  for (const key of COORDINATES) {
    const value = converted[key];
    if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) converted[key] = Number(value);
  }
  return { ...record, geoLocation: converted };
}

/** The counts of an import and its failures, each with the record's position in the file (1-based). */
export interface ImportSummary {
  counts: { CREATED: number; UPDATED: number; FAILURE: number };
  failures: { record: number; id: string | null; errors: string[] }[];
}

/**
 * Counts the results of an import and lists its failures. Results come in file order, batch after batch, so result
 * `i` is record `i + 1`; each error's path (a JSON pointer into its batch, `/3/serial`) is given relative to its
 * record (`/serial`).
 */
export function summarize(results: readonly RegistrationResult[]): ImportSummary {
  const counts = { CREATED: 0, UPDATED: 0, FAILURE: 0 };
  const failures: ImportSummary['failures'] = [];
  results.forEach((result, index) => {
    counts[result.state] += 1;
    if (result.state !== 'FAILURE') return;
    const errors = (result.errors ?? []).map((error) => `${error.path.replace(/^\/\d+/, '') || '/'}: ${error.message}`);
    failures.push({ record: index + 1, id: result.id, errors });
  });
  return { counts, failures };
}

function printSummary(summary: ImportSummary): void {
  printTable(Object.entries(summary.counts), [
    { head: 'STATE', value: ([state]) => state },
    { head: 'DEVICES', value: ([, count]) => count },
  ]);
  if (summary.failures.length === 0) return;
  say('Failures:');
  printTable(summary.failures, [
    { head: 'RECORD', value: (failure) => failure.record },
    { head: 'ID', value: (failure) => failure.id ?? '(none)' },
    { head: 'ERRORS', value: (failure) => failure.errors },
  ]);
}

/** A device as a two-column table: static fields, connection, the health's headline. */
function deviceRecord(device: Device): Record<string, unknown> {
  const { connection, health } = device;
  return {
    id: device.id,
    company: device.company,
    serial: device.serial,
    location: device.location === undefined ? undefined : [device.location.name, device.location.description].filter(Boolean).join(' — '),
    geoLocation:
      device.geoLocation === undefined
        ? undefined
        : COORDINATES.filter((key) => device.geoLocation?.[key] !== undefined)
            .map((key) => `${key} ${device.geoLocation?.[key]}`)
            .join(', '),
    connection: connection.state,
    connectedSince: connection.connectedSince,
    disconnectedSince: connection.disconnectedSince,
    version: health === undefined ? undefined : `${health.versionName} (${health.versionCode})`,
    mode: health?.mode,
    hubs: health?.hubs.length,
    healthUpdated: health?.updated,
    created: device.created,
    updated: device.updated,
  };
}
