/** Search responses: the device resource, scenario search documents, result pages and filter descriptors. */
import * as z from 'zod';
import { HEALTH_LIMITS } from '../../core/devices/health.js';
import {
  BATTERY_HEALTH_STATES,
  BATTERY_PLUGGED,
  BATTERY_STATUSES,
  CAPABILITY_MODES,
  CAPABILITY_TYPES,
  CONNECTION_STATES,
  HEALTH_MODES,
  MESSAGE_LEVELS,
  SUB_DEVICE_HEALTH_STATES,
} from '../../core/devices/model.js';
import { MAX_PAGE_SIZE } from '../../core/search/query.js';
import { SORT_FIELDS } from '../../core/search/registry.js';
import { displayText } from '../../core/shared/display-text.js';
import { IDENTIFIER_PATTERN } from '../../core/shared/identifiers.js';

const dateTime = (description: string) => z.iso.datetime({ offset: true }).describe(description);
const text = (description: string) => z.string().describe(description);
/**
 * A health member's text: at most HEALTH_LIMITS.shortText characters (ids, labels, versions, keys, names), one line
 * without control characters (a display text, functions/core/shared/display-text.ts).
 */
const shortText = (description: string) => displayText(z.string().max(HEALTH_LIMITS.shortText), 'line').describe(description);
/**
 * A health member's prose: at most HEALTH_LIMITS.longText characters (messages, descriptions), no control character but
 * tab and line breaks.
 */
const longText = (description: string) => displayText(z.string().max(HEALTH_LIMITS.longText), 'prose').describe(description);

export const Battery = z
  .object({
    health: z
      .object({
        state: z.enum(BATTERY_HEALTH_STATES).describe('Battery health.'),
        plugged: z.enum(BATTERY_PLUGGED).describe('Power source plugged in.'),
        status: z.enum(BATTERY_STATUSES).describe('Charging status.'),
        level: z.number().min(0).max(100).describe('Battery level in percent, 0 to 100.'),
        cycle: z.int().min(0).describe('Charge cycle count.'),
      })
      .strict(),
  })
  .strict()
  .meta({
    id: 'Battery',
    description:
      'Battery of a hub or sub-device. The specification lists the battery level a second time under the name `health.status`; this API exposes it as `health.level`.',
  });

export const HealthMessage = z
  .object({ key: shortText('Message key.'), message: longText('Message text.'), level: z.enum(MESSAGE_LEVELS).describe('Message level.') })
  .strict()
  .meta({ id: 'HealthMessage' });

export const DeviceCommand = z
  .object({
    command: shortText('Command name.'),
    title: shortText('Command title.'),
    description: longText('Command description.'),
    payload: z.unknown().describe('Command payload (any JSON).'),
    arguments: z.unknown().describe('Command arguments; their structure is not specified (any JSON).'),
  })
  .strict()
  .meta({ id: 'DeviceCommand', description: 'A command the sub-device accepts.' });

export const SubDevice = z
  .object({
    uid: shortText('Sub-device id.'),
    label: shortText('Sub-device label.'),
    version: shortText('Sub-device version.'),
    health: z
      .object({
        state: z
          .enum(SUB_DEVICE_HEALTH_STATES)
          .describe(
            'BOOTING; NOMINAL; WARNING (usable with a minor problem); DOWN (unusable, major problem); HIBERNATION (unusable, maintenance).',
          ),
        message: longText('General health message.'),
        messages: z.array(HealthMessage).max(HEALTH_LIMITS.messages),
      })
      .strict(),
    capability: z
      .object({
        type: z.enum(CAPABILITY_TYPES).describe('Capability type.'),
        modes: z.array(z.enum(CAPABILITY_MODES).describe('Capability mode.')).max(CAPABILITY_MODES.length),
      })
      .strict(),
    battery: Battery.optional(),
    commands: z.array(DeviceCommand).max(HEALTH_LIMITS.commands),
  })
  .strict()
  .meta({ id: 'SubDevice', description: 'A peripheral connected to a hub (printer, payment terminal, screen, ...).' });

export const Hub = z
  .object({
    uid: shortText('Hub unique id.'),
    label: shortText('Hub label.'),
    version: shortText('Hub version.'),
    registeredSince: dateTime('Hub registration time.'),
    type: shortText('Hub type; values are reserved for future use.'),
    battery: Battery.optional(),
    devices: z.array(SubDevice).max(HEALTH_LIMITS.subDevices).describe('Sub-devices connected to the hub.'),
  })
  .strict()
  .meta({ id: 'Hub', description: 'A hub inside a device, with its sub-devices.' });

/** The members of a device's health besides `updated`: what a device reports (PUT /device/health). */
export const deviceHealthMembers = {
  versionCode: shortText('Version code.'),
  versionName: shortText('Version name.'),
  connectedTo: shortText('Reserved for future use.').optional(),
  mode: z
    .enum(HEALTH_MODES)
    .describe('SERVER (virtual device in the cloud), EMBEDDED_PLATFORM_COMPUTER, EMBEDDED_PLATFORM_ANDROID or EMBEDDED_PLATFORM_UNKNOWN.'),
  hubs: z.array(Hub).max(HEALTH_LIMITS.hubs),
};

export const DeviceHealth = z
  .object({
    updated: dateTime(
      'When the service last recorded this health: the report that changed it, or that brought the device back to CONNECTED.',
    ),
    ...deviceHealthMembers,
  })
  .strict()
  .meta({ id: 'DeviceHealth', description: 'Device health state, as the device last reported it.' });

const coordinate = z.number().meta({ format: 'double' });

/** The device resource's members, shared by the search result. */
const deviceMembers = {
  id: z.string().regex(IDENTIFIER_PATTERN).describe('Device identifier, used as `target.id` in deployments.'),
  company: text('Owning company id.'),
  serial: text('Serial number.'),
  created: dateTime('Creation time.'),
  updated: dateTime('Last update time.'),
  location: z
    .object({ name: text('Short location text.').optional(), description: text('Long location text.').optional() })
    .strict()
    .optional(),
  geoLocation: z
    .object({ latitude: coordinate.optional(), longitude: coordinate.optional(), altitude: coordinate.optional() })
    .strict()
    .optional(),
  connection: z
    .object({
      state: z.enum(CONNECTION_STATES).describe('UNKNOWN (never seen connected), CONNECTED or DISCONNECTED.'),
      connectedSince: dateTime('Present when CONNECTED: since when.').optional(),
      disconnectedSince: dateTime('Present when DISCONNECTED: since when.').optional(),
    })
    .strict(),
  health: DeviceHealth.optional(),
};

export const DeviceSearchResource = z
  .object({ type: z.literal('DEVICE'), ...deviceMembers })
  .strict()
  .meta({
    id: 'DeviceSearchResource',
    description: 'A device in search results: the device resource plus `type`.',
  });

export const ScenarioSearchResource = z
  .object({
    type: z.literal('SCENARIO'),
    id: text('Scenario identifier (`what.id`).'),
    company: text('Owning company id.'),
    name: text('Display name.'),
    description: text('What the scenario does.').optional(),
    latestVersion: text('Highest semantic version stored.'),
    versions: z.array(z.string()).describe('Stored versions, oldest first.'),
    created: dateTime('Creation time.'),
    updated: dateTime('Last update time.'),
  })
  .strict()
  .meta({ id: 'ScenarioSearchResource', description: 'A scenario in search results.' });

export const SearchResource = z.discriminatedUnion('type', [DeviceSearchResource, ScenarioSearchResource]).meta({
  id: 'SearchResource',
  description: 'One search result; `type` tells its shape.',
  discriminator: {
    propertyName: 'type',
    mapping: { DEVICE: '#/components/schemas/DeviceSearchResource', SCENARIO: '#/components/schemas/ScenarioSearchResource' },
  },
});

export const SearchResponse = z
  .object({
    total: z.int().min(0).describe('Number of resources matching the criteria.'),
    page: z
      .object({
        page: z.int().min(1).describe('Current page (the first page is 1).'),
        pages: z.int().min(0).describe('Total number of pages.'),
        pageSize: z.int().min(1).max(MAX_PAGE_SIZE).describe('Resources per page.'),
      })
      .strict(),
    sort: z
      .object({ field: z.enum([...SORT_FIELDS, 'relevance']), direction: z.enum(['ASC', 'DESC']) })
      .strict()
      .describe('The effective sort. `relevance` is reported for `global` searches without an explicit `sort`.'),
    resources: z.array(SearchResource),
  })
  .strict()
  .meta({ id: 'SearchResponse', description: 'One page of matching resources with the effective sort and page.' });
