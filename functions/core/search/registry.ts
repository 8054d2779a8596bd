import { BATTERY_HEALTH_STATES, CAPABILITY_TYPES, CONNECTION_STATES, HEALTH_MODES, SUB_DEVICE_HEALTH_STATES } from '../devices/model.js';
import { RESOURCE_TYPES, type ResourceType } from './documents.js';

/**
 * One filterable field: the single registry that drives the filters endpoint,
 * query validation and every search adapter.
 */
export interface FilterField {
  /** Dotted resource path, also the query parameter name (e.g. `connection.state`). */
  field: string;
  /** The field's display name (`Connection state`): the words every client shows for it, so that they agree. */
  name: string;
  /** Resource type the field applies to, or null when it applies to every type (the filters answer's `scope`). */
  appliesTo: ResourceType | null;
  /**
   * `fixed`: the listed values are the only valid ones and all are listed, with count 0 where nothing matches.
   * `data`: values come from the indexed data (e.g. version codes).
   * `companies`: the caller's companies.
   */
  values: { kind: 'fixed'; list: readonly string[] } | { kind: 'data'; labelField?: string } | { kind: 'companies' };
}

/** Turns `EMBEDDED_PLATFORM_ANDROID` into `Embedded platform android` for display names. */
export function humanize(value: string): string {
  const words = value.toLowerCase().split('_');
  const first = words[0] ?? '';
  return [first.charAt(0).toUpperCase() + first.slice(1), ...words.slice(1)].join(' ');
}

/** Every filter field, in the order the filters endpoint lists them (docs/contract.md, "Search"). */
export const FILTER_FIELDS: readonly FilterField[] = [
  { field: 'type', name: 'Resource type', appliesTo: null, values: { kind: 'fixed', list: RESOURCE_TYPES } },
  { field: 'company', name: 'Company', appliesTo: null, values: { kind: 'companies' } },
  { field: 'connection.state', name: 'Connection state', appliesTo: 'DEVICE', values: { kind: 'fixed', list: CONNECTION_STATES } },
  { field: 'health.mode', name: 'Health mode', appliesTo: 'DEVICE', values: { kind: 'fixed', list: HEALTH_MODES } },
  { field: 'health.versionCode', name: 'Version', appliesTo: 'DEVICE', values: { kind: 'data', labelField: 'health.versionName' } },
  {
    field: 'health.hubs.devices.health.state',
    name: 'Sub-device health',
    appliesTo: 'DEVICE',
    values: { kind: 'fixed', list: SUB_DEVICE_HEALTH_STATES },
  },
  {
    field: 'health.hubs.devices.capability.type',
    name: 'Sub-device capability',
    appliesTo: 'DEVICE',
    values: { kind: 'fixed', list: CAPABILITY_TYPES },
  },
  {
    // The names of the commands sub-devices advertise in their latest health report: free text, hence data values.
    field: 'health.hubs.devices.commands.command',
    name: 'Advertised command',
    appliesTo: 'DEVICE',
    values: { kind: 'data' },
  },
  {
    field: 'health.hubs.battery.health.state',
    name: 'Hub battery health',
    appliesTo: 'DEVICE',
    values: { kind: 'fixed', list: BATTERY_HEALTH_STATES },
  },
];

/** Looks a filter field up by name; undefined when the name is not a filter field. */
export function findFilterField(name: string): FilterField | undefined {
  return FILTER_FIELDS.find((candidate) => candidate.field === name);
}

/** Fields the search can sort on (keyword or date fields). Documents missing the field sort last. */
export const SORT_FIELDS = [
  'serial',
  'id',
  'company',
  'type',
  'name',
  'created',
  'updated',
  'connection.state',
  'health.mode',
  'health.versionCode',
  'location.name',
] as const;
/** One sortable field. */
export type SortField = (typeof SORT_FIELDS)[number];

/**
 * Text fields that `global` searches (docs/contract.md: serial, location, names, versions).
 * Sub-device and hub labels are included so an operator can find "the kiosk with the receipt printer".
 */
export const FULL_TEXT_FIELDS = [
  'id',
  'serial',
  'name',
  'description',
  'location.name',
  'location.description',
  'health.versionName',
  'health.versionCode',
  'health.hubs.label',
  'health.hubs.devices.label',
  'latestVersion',
  'versions',
] as const;
