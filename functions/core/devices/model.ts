/**
 * The device resource (docs/contract.md, "Devices"), as stored in the devices table and returned by search. Dates are
 * ISO-8601 strings (UTC).
 */
import { IDENTIFIER_PATTERN } from '../shared/identifiers.js';

/** Separates the company from the device id in a device's OAuth client id; neither id may contain it. */
const CLIENT_ID_SEPARATOR = '~';

/** The OAuth client id of a device: `{company}~{deviceId}` (e.g. `acme~acme-kiosk-0001`), stable for its lifetime. */
export function deviceClientId(company: string, deviceId: string): string {
  return `${company}${CLIENT_ID_SEPARATOR}${deviceId}`;
}

/** The company and device a client id names, or undefined when it is not of the form deviceClientId makes. */
export function parseDeviceClientId(clientId: string): { company: string; deviceId: string } | undefined {
  const parts = clientId.split(CLIENT_ID_SEPARATOR);
  if (parts.length !== 2) return undefined;
  const [company, deviceId] = parts as [string, string];
  return IDENTIFIER_PATTERN.test(company) && IDENTIFIER_PATTERN.test(deviceId) ? { company, deviceId } : undefined;
}

/** `connection.state` values. */
export const CONNECTION_STATES = ['UNKNOWN', 'CONNECTED', 'DISCONNECTED'] as const;
/** `health.mode` values. */
export const HEALTH_MODES = ['SERVER', 'EMBEDDED_PLATFORM_COMPUTER', 'EMBEDDED_PLATFORM_ANDROID', 'EMBEDDED_PLATFORM_UNKNOWN'] as const;
/** `...battery.health.state` values. */
export const BATTERY_HEALTH_STATES = ['COLD', 'DEAD', 'GOOD', 'OVERHEAT', 'OVER_VOLTAGE', 'UNKNOWN', 'UNSPECIFIED_VALUE'] as const;
/** `...battery.health.plugged` values. */
export const BATTERY_PLUGGED = ['AC', 'DOCK', 'USB', 'WIRELESS'] as const;
/** `...battery.health.status` values. */
export const BATTERY_STATUSES = ['CHARGING', 'DISCHARGING', 'FULL', 'NOT_CHARGING', 'UNKNOWN'] as const;
/** `health.hubs.devices.health.state` values. */
export const SUB_DEVICE_HEALTH_STATES = ['BOOTING', 'NOMINAL', 'WARNING', 'DOWN', 'HIBERNATION'] as const;
/** `health.hubs.devices.health.messages.level` values. */
export const MESSAGE_LEVELS = ['DEBUG', 'INFO', 'WARNING', 'ERROR'] as const;
/** `health.hubs.devices.capability.type` values. */
export const CAPABILITY_TYPES = [
  'SCENARIO',
  'PRINTER',
  'CDN',
  'DATA',
  'IOT',
  'PAYMENT',
  'GENERIC',
  'GENERIC_USB',
  'GENERIC_SERIAL',
  'GENERIC_MONITORING',
  'MEDIA',
  'WEB',
] as const;
/** `health.hubs.devices.capability.modes` values. */
export const CAPABILITY_MODES = [
  'SCENARIO_EXECUTE',
  'PRINTER_PRINT',
  'CDN_PERSIST',
  'DATA_PERSIST',
  'DATA_SELECT',
  'PAYMENT_CARD_CONTACTLESS',
  'PAYMENT_CARD_PHYSICAL',
  'PAYMENT_CARD_MAGNETIC',
  'GENERIC_BEEP',
  'GENERIC_LED',
  'GENERIC_REBOOT',
  'IOT_DATA_SELECT',
  'IOT_LOCKER_OPEN',
  'MEDIA_IMAGE_HTTP',
  'GENERIC_MONITOR_PRINTER',
  'WEB_PAGE',
] as const;

/**
 * Battery of a hub or sub-device. `status` is the charging status; the battery level is a separate member, `level`
 * (percent, 0–100), so that the one name does not carry two meanings.
 */
export interface Battery {
  health: {
    state: (typeof BATTERY_HEALTH_STATES)[number];
    plugged: (typeof BATTERY_PLUGGED)[number];
    status: (typeof BATTERY_STATUSES)[number];
    /** Battery level in percent, 0 to 100. */
    level: number;
    /** Charge cycle count. */
    cycle: number;
  };
}

/** A command a sub-device accepts. `arguments` is free-form (its structure is not specified). */
export interface DeviceCommand {
  command: string;
  title: string;
  description: string;
  payload: unknown;
  arguments: unknown;
}

/** A peripheral connected to a hub (printer, payment terminal, screen, ...). */
export interface SubDevice {
  uid: string;
  label: string;
  version: string;
  health: {
    state: (typeof SUB_DEVICE_HEALTH_STATES)[number];
    message: string;
    messages: { key: string; message: string; level: (typeof MESSAGE_LEVELS)[number] }[];
  };
  capability: { type: (typeof CAPABILITY_TYPES)[number]; modes: (typeof CAPABILITY_MODES)[number][] };
  battery?: Battery;
  commands: DeviceCommand[];
}

/** A hub inside a device, with its sub-devices. `type` is free text: no values are defined yet, they are reserved for future use. */
export interface Hub {
  uid: string;
  label: string;
  version: string;
  /** ISO-8601. */
  registeredSince: string;
  type: string;
  battery?: Battery;
  devices: SubDevice[];
}

/** The device resource, without the search envelope fields. */
export interface Device {
  /** Device identifier, used as `target.id` in deployments. Never contains `#`. */
  id: string;
  /** Owning company id. */
  company: string;
  serial: string;
  /** ISO-8601. */
  created: string;
  /** ISO-8601. */
  updated: string;
  location?: { name?: string; description?: string };
  geoLocation?: { latitude?: number; longitude?: number; altitude?: number };
  connection: {
    state: (typeof CONNECTION_STATES)[number];
    /** ISO-8601; present when CONNECTED. */
    connectedSince?: string;
    /** ISO-8601; present when DISCONNECTED. */
    disconnectedSince?: string;
  };
  health?: {
    /** ISO-8601. */
    updated: string;
    versionCode: string;
    versionName: string;
    connectedTo?: string;
    mode: (typeof HEALTH_MODES)[number];
    hubs: Hub[];
  };
}

/** A device's OAuth client secret, as stored: only its slow hash. Replaced by each new issue. */
export interface DeviceCredential {
  /** ULID: the `cred` claim of the tokens issued for it. */
  id: string;
  /** `scrypt$N$r$p$salt$hash` (base64 parts). */
  secretHash: string;
  /** ISO-8601. */
  created: string;
}

/**
 * The version of a device's desired state kept on the device item, so that a device polling `GET /device/deployments`
 * with the tag it holds is answered 304 after one read of its item (functions/core/devices/desired-state.ts).
 */
export interface DesiredStateVersion {
  /** desiredStateTag of the device's active deployments when it was written. */
  tag: string;
  /** How many times it was written: each write is conditional on the previous value (a compare-and-set). */
  generation: number;
}

/**
 * A device as the devices table stores it: the resource, and what is never shown (its credential; `deleting`, set
 * while a delete undeploys its deployments, during which the device counts as absent everywhere; the version of its
 * desired state, absent until first written).
 */
export interface StoredDevice extends Device {
  credential?: DeviceCredential;
  deleting?: boolean;
  desiredState?: DesiredStateVersion;
}
