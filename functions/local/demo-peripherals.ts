/**
 * What the demo fleet is made of (demo-fleet.ts draws from it): firmware releases and their weights, health modes,
 * fallback cities and placements, and the peripheral kinds with their labels, versions, capability modes,
 * messages and commands. Data tables, with the few helpers that build their entries.
 */

import type { Device, DeviceCommand, SubDevice } from '../core/devices/model.js';
import type { DemoLocation } from './demo-data.js';
import type { Rng } from './demo-random.js';

/** A health report's `mode` (the platform a kiosk runs). */
export type HealthMode = NonNullable<Device['health']>['mode'];
/** A peripheral's health state. */
export type SubState = SubDevice['health']['state'];
/** One message of a peripheral's health. */
export type Message = SubDevice['health']['messages'][number];

/** Firmware releases: `versionCode` is major·10000 + minor·100 + patch. Newer releases are more common. */
export const FIRMWARE = [
  { versionCode: '40201', versionName: '4.2.1' },
  { versionCode: '40105', versionName: '4.1.5' },
  { versionCode: '40003', versionName: '4.0.3' },
  { versionCode: '31207', versionName: '3.12.7' },
  { versionCode: '30904', versionName: '3.9.4' },
] as const;
/** Weights of FIRMWARE's releases (same order) per health mode. */
export const FIRMWARE_WEIGHTS: Record<HealthMode, readonly number[]> = {
  EMBEDDED_PLATFORM_ANDROID: [40, 26, 16, 11, 7],
  EMBEDDED_PLATFORM_COMPUTER: [38, 27, 17, 11, 7],
  SERVER: [70, 25, 5, 0, 0],
  EMBEDDED_PLATFORM_UNKNOWN: [5, 10, 20, 35, 30],
};

/** How common each health mode is in a fleet. */
export const HEALTH_MODE_WEIGHTS: readonly (readonly [HealthMode, number])[] = [
  ['EMBEDDED_PLATFORM_ANDROID', 46],
  ['EMBEDDED_PLATFORM_COMPUTER', 34],
  ['SERVER', 12],
  ['EMBEDDED_PLATFORM_UNKNOWN', 8],
];

/** How common each peripheral health state is. */
export const SUB_STATE_WEIGHTS: readonly (readonly [SubState, number])[] = [
  ['NOMINAL', 78],
  ['WARNING', 12],
  ['DOWN', 4],
  ['BOOTING', 3],
  ['HIBERNATION', 3],
];

/** Fallback sites for companies without `locations`, named `<Company> <City>`. */
export const FALLBACK_CITIES: readonly DemoLocation[] = [
  { name: 'Paris', description: 'Paris, France', latitude: 48.8566, longitude: 2.3522, altitude: 35 },
  { name: 'Lyon', description: 'Lyon, France', latitude: 45.764, longitude: 4.8357, altitude: 170 },
  { name: 'Brussels', description: 'Brussels, Belgium', latitude: 50.8503, longitude: 4.3517, altitude: 60 },
  { name: 'Amsterdam', description: 'Amsterdam, Netherlands', latitude: 52.3676, longitude: 4.9041, altitude: 2 },
  { name: 'Berlin', description: 'Berlin, Germany', latitude: 52.52, longitude: 13.405, altitude: 34 },
  { name: 'Madrid', description: 'Madrid, Spain', latitude: 40.4168, longitude: -3.7038, altitude: 657 },
  { name: 'Milan', description: 'Milan, Italy', latitude: 45.4642, longitude: 9.19, altitude: 120 },
  { name: 'Vienna', description: 'Vienna, Austria', latitude: 48.2082, longitude: 16.3738, altitude: 190 },
];
/** Fallback spots inside a site, for companies without `placements`. */
export const FALLBACK_PLACEMENTS: readonly string[] = [
  'kiosk next to the main entrance',
  'kiosk near the reception desk',
  'kiosk on the first floor landing',
  'kiosk by the exit',
];

const command = (name: string, title: string, description: string, args: unknown[] = [], payload: unknown = {}): DeviceCommand => ({
  command: name,
  title,
  description,
  payload,
  arguments: args,
});
const rebootCommand = (): DeviceCommand => command('reboot', 'Reboot', 'Restart the peripheral; it is unavailable for about a minute.');

/** One kind of peripheral a hub can carry. */
export interface PeripheralKind {
  slug: string;
  labels: readonly string[];
  type: SubDevice['capability']['type'];
  modes: (rng: Rng) => SubDevice['capability']['modes'];
  versions: readonly string[];
  /** Probability that the peripheral has its own battery. */
  batteryChance: number;
  commands: () => DeviceCommand[];
  /** Message reported while NOMINAL. */
  ok: string;
  warnings: readonly (readonly [key: string, text: string])[];
  errors: readonly (readonly [key: string, text: string])[];
}

/** The peripheral kinds, by name. */
export const KINDS = {
  scenario: {
    slug: 'scenario',
    labels: ['Scenario player'],
    type: 'SCENARIO',
    modes: () => ['SCENARIO_EXECUTE'],
    versions: ['2.4.0', '2.3.2', '2.2.7'],
    batteryChance: 0,
    commands: () => [
      command('restart-scenario', 'Restart scenario', 'Stop the running scenario and start it again from its first screen.'),
      command('reload-scenario', 'Reload scenarios', 'Fetch the deployed scenarios again and switch to the newest version.'),
    ],
    ok: 'Scenario running',
    warnings: [
      ['scenario.assets.outdated', 'Some scenario assets are outdated; they will be refreshed at the next idle period'],
      ['scenario.storage.low', 'Less than 10% of the scenario storage is free'],
    ],
    errors: [
      ['scenario.crashed', 'The scenario stopped unexpectedly and could not be restarted'],
      ['scenario.none', 'No scenario is deployed on this device'],
    ],
  },
  printer: {
    slug: 'printer',
    labels: ['Receipt printer (Epson TM-T88VII)', 'Receipt printer (Star TSP143IV)', 'Receipt printer (Custom VKP80III)'],
    type: 'PRINTER',
    modes: (rng) => (rng.chance(0.4) ? ['PRINTER_PRINT', 'GENERIC_MONITOR_PRINTER'] : ['PRINTER_PRINT']),
    versions: ['1.08.3', '1.07.1', '2.01.0'],
    batteryChance: 0,
    commands: () => [
      rebootCommand(),
      command('print-test-page', 'Print test page', 'Print a test receipt showing the printer status and settings.', [], {
        template: 'test-receipt',
      }),
    ],
    ok: 'Printer ready',
    warnings: [
      ['printer.paper.low', 'Paper roll low (about 15% left)'],
      ['printer.head.hot', 'Print head temperature high; printing slowed down'],
    ],
    errors: [
      ['printer.paper.out', 'Out of paper'],
      ['printer.cover.open', 'Printer cover open'],
      ['printer.paper.jam', 'Paper jam in the cutter'],
    ],
  },
  payment: {
    slug: 'payment',
    labels: ['Payment terminal (Ingenico Lane/3000)', 'Payment terminal (Verifone P400)', 'Payment terminal (Worldline Valina)'],
    type: 'PAYMENT',
    modes: (rng) =>
      rng.chance(0.2)
        ? ['PAYMENT_CARD_CONTACTLESS', 'PAYMENT_CARD_PHYSICAL', 'PAYMENT_CARD_MAGNETIC']
        : ['PAYMENT_CARD_CONTACTLESS', 'PAYMENT_CARD_PHYSICAL'],
    versions: ['11.16.04', '11.18.02', '12.0.1'],
    batteryChance: 0.35,
    commands: () => [
      rebootCommand(),
      command('reconcile', 'Reconcile', "Send the day's transactions to the acquirer and reset the totals."),
      command('cancel-transaction', 'Cancel transaction', 'Abort the transaction in progress, if any.'),
    ],
    ok: 'Terminal ready, acquirer reachable',
    warnings: [
      ['payment.network.slow', 'Acquirer responses are slow (over 3 s)'],
      ['payment.reconciliation.late', 'Reconciliation not done for more than 24 hours'],
    ],
    errors: [
      ['payment.acquirer.unreachable', 'Acquirer unreachable; card payments are refused'],
      ['payment.tamper.detected', 'Tamper detected; the terminal is locked'],
    ],
  },
  media: {
    slug: 'media',
    labels: ['Customer display 22"', 'Advertising screen 32"', 'Media player (BrightSign HD224)'],
    type: 'MEDIA',
    modes: () => ['MEDIA_IMAGE_HTTP'],
    versions: ['8.5.44', '9.0.110', '8.2.72'],
    batteryChance: 0,
    commands: () => [
      rebootCommand(),
      command('set-brightness', 'Set brightness', 'Set the screen brightness in percent.', [
        { name: 'level', type: 'integer', minimum: 0, maximum: 100 },
      ]),
      command('show-image', 'Show image', 'Display the image at the given HTTP(S) address until the next playlist item.', [
        { name: 'url', type: 'string' },
      ]),
    ],
    ok: 'Playlist playing',
    warnings: [
      ['media.cache.stale', 'Media cache older than 24 hours'],
      ['media.temperature.high', 'Screen temperature high; brightness reduced'],
    ],
    errors: [
      ['media.display.no-signal', 'Display reports no signal'],
      ['media.playlist.empty', 'No playable media in the playlist'],
    ],
  },
  web: {
    slug: 'web',
    labels: ['Web kiosk browser'],
    type: 'WEB',
    modes: () => ['WEB_PAGE'],
    versions: ['124.0.2', '126.1.0'],
    batteryChance: 0,
    commands: () => [
      command('reload-page', 'Reload page', 'Reload the current page, bypassing the cache.'),
      command('navigate', 'Open page', 'Open the given address in the kiosk browser.', [{ name: 'url', type: 'string' }]),
    ],
    ok: 'Home page loaded',
    warnings: [['web.page.slow', 'Home page took more than 5 s to load']],
    errors: [
      ['web.page.unreachable', 'Home page unreachable (HTTP 503)'],
      ['web.certificate.invalid', 'Home page certificate is invalid'],
    ],
  },
  locker: {
    slug: 'locker',
    labels: ['Parcel lockers (12 doors)', 'Parcel lockers (24 doors)', 'Luggage lockers (18 doors)'],
    type: 'IOT',
    modes: (rng) => (rng.chance(0.5) ? ['IOT_LOCKER_OPEN', 'IOT_DATA_SELECT'] : ['IOT_LOCKER_OPEN']),
    versions: ['3.2.0', '3.1.4'],
    batteryChance: 0.3,
    commands: () => [
      rebootCommand(),
      command('open-locker', 'Open locker', 'Unlock one locker door.', [{ name: 'lockerId', type: 'string' }]),
    ],
    ok: 'All doors closed and locked',
    warnings: [
      ['locker.door.ajar', 'Door 7 has been ajar for more than 10 minutes'],
      ['locker.occupancy.high', 'More than 90% of the lockers are occupied'],
    ],
    errors: [['locker.controller.offline', 'Locker controller not responding']],
  },
  scanner: {
    slug: 'scanner',
    labels: ['Barcode scanner (Honeywell Voyager 1470g)', 'Barcode scanner (Zebra DS2208)'],
    type: 'GENERIC_USB',
    modes: () => ['GENERIC_BEEP', 'GENERIC_LED'],
    versions: ['CAACLS00-002-R03', 'PAACHS00-004-R02'],
    batteryChance: 0.3,
    commands: () => [command('beep', 'Beep', 'Make the scanner beep and flash so that staff can find it.')],
    ok: 'Scanner ready',
    warnings: [['scanner.window.dirty', 'Low read rate; the scan window may need cleaning']],
    errors: [['scanner.usb.lost', 'Scanner disconnected from USB']],
  },
  acceptor: {
    slug: 'acceptor',
    labels: ['Coin and note acceptor'],
    type: 'GENERIC_SERIAL',
    modes: () => ['GENERIC_LED'],
    versions: ['5.3.1'],
    batteryChance: 0,
    commands: () => [rebootCommand(), command('empty-cashbox', 'Empty cash box', 'Record that the cash box was emptied by staff.')],
    ok: 'Accepting coins and notes',
    warnings: [['acceptor.cashbox.full', 'Cash box more than 85% full']],
    errors: [['acceptor.jam', 'Note jammed in the validator']],
  },
  watchdog: {
    slug: 'watchdog',
    labels: ['Hardware watchdog'],
    type: 'GENERIC_MONITORING',
    modes: () => ['GENERIC_LED', 'GENERIC_REBOOT'],
    versions: ['1.4.2'],
    batteryChance: 0,
    commands: () => [
      command('reboot-host', 'Reboot kiosk', 'Power-cycle the whole kiosk through the watchdog relay.'),
      command('blink-led', 'Blink LED', 'Blink the status LED so that staff can find the kiosk.', [
        { name: 'color', type: 'string', enum: ['red', 'green', 'blue'] },
      ]),
    ],
    ok: 'Host heartbeat received',
    warnings: [['watchdog.temperature.high', 'Cabinet temperature above 45 °C']],
    errors: [['watchdog.heartbeat.missed', 'Host heartbeat missed three times']],
  },
  cdn: {
    slug: 'cdn',
    labels: ['Content cache'],
    type: 'CDN',
    modes: () => ['CDN_PERSIST'],
    versions: ['1.9.0'],
    batteryChance: 0,
    commands: () => [command('purge-cache', 'Purge cache', 'Drop every cached asset; they are fetched again on demand.')],
    ok: 'Cache in sync',
    warnings: [['cdn.sync.late', 'Last synchronisation more than one hour ago']],
    errors: [['cdn.origin.unreachable', 'Origin unreachable']],
  },
  data: {
    slug: 'data',
    labels: ['Local data store'],
    type: 'DATA',
    modes: () => ['DATA_PERSIST', 'DATA_SELECT'],
    versions: ['3.45.1'],
    batteryChance: 0,
    commands: () => [command('compact', 'Compact', 'Compact the data store to reclaim free space.')],
    ok: 'Data store healthy',
    warnings: [['data.disk.low', 'Less than 15% of the disk is free']],
    errors: [['data.corrupted', 'Data store integrity check failed']],
  },
} satisfies Record<string, PeripheralKind>;

/** The name of a peripheral kind. */
export type KindName = keyof typeof KINDS;

/** Extra peripherals of a kiosk's main hub (it always carries a scenario player). */
export const MAIN_HUB_EXTRAS: readonly (readonly [KindName, number])[] = [
  ['printer', 5],
  ['payment', 4],
  ['media', 3],
  ['web', 2],
  ['scanner', 2],
  ['locker', 1.5],
  ['watchdog', 1],
  ['acceptor', 0.7],
];
/** Peripherals of a kiosk's second hub. */
export const SECOND_HUB_KINDS: readonly (readonly [KindName, number])[] = [
  ['locker', 3],
  ['printer', 2],
  ['media', 2],
  ['scanner', 2],
  ['watchdog', 2],
  ['acceptor', 1],
  ['payment', 1],
];
/** Extra services of a virtual (SERVER) device. */
export const SERVER_EXTRAS: readonly (readonly [KindName, number])[] = [
  ['web', 3],
  ['cdn', 2],
  ['data', 2],
];
