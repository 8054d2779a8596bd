/**
 * Deterministic local demo data (docs/contract.md, "Local demo data"): the demo companies, the demo users and a
 * generator of realistic kiosk fleets. Everything here is pure: the same inputs give the same output on every
 * run and machine (seeded PRNG, fixed reference date, no `Math.random`, no `Date.now`).
 */

import { type Role, scopeClaimOf } from '../core/access/roles.js';
import type { Battery, Device, DeviceCommand, Hub, SubDevice } from '../core/devices/model.js';

// ---------------------------------------------------------------------------------------------------------------
// Public types and constants
// ---------------------------------------------------------------------------------------------------------------

/** A site where kiosks are installed: short name, long description and coordinates (WGS 84, altitude in metres). */
export interface DemoLocation {
  readonly name: string;
  readonly description: string;
  readonly latitude: number;
  readonly longitude: number;
  readonly altitude: number;
}

/**
 * What the device generator needs to know about a company. `locations` lists its sites and `placements` the
 * spots inside a site ("ticket machine near platform 7"); both are optional: without them, sites named
 * `<Company> <City>` in a built-in list of European cities and generic placements are used.
 */
export interface DemoFleetOwner {
  readonly id: string;
  /** Serial number prefix, e.g. `ACM` gives serials such as `ACM-K1-000123`. */
  readonly prefix: string;
  readonly locations?: readonly DemoLocation[];
  readonly placements?: readonly string[];
}

/** A demo company: identifier, display name, storage quota for scenario packages, and its fleet description. */
export interface DemoCompany extends DemoFleetOwner {
  readonly name: string;
  /** Storage quota for scenario packages, in bytes. */
  readonly quotaBytes: number;
}

/** A demo user of the local authentication service (password in clear: it is printed by `npm start`). */
export interface DemoUser {
  readonly username: string;
  readonly password: string;
  /** Company ids the user may act on (`companies` token claim). */
  readonly companies: readonly string[];
  /** The user's role (functions/core/access/roles.ts). */
  readonly role: Role;
  /** Space-separated permissions (`scope` token claim): the role's scopes. */
  readonly scope: string;
}

/** Number of devices seeded per demo company. */
export const DEMO_DEVICES_PER_COMPANY = 120;

/** Seed the local seeding uses for {@link generateDemoDevices}; changing it changes the whole demo fleet. */
export const DEMO_SEED = 20260101;

/**
 * Reference "now" of the demo data (2026-01-01T00:00:00Z): every generated timestamp is at or before it, so a
 * fresh demo reads as a snapshot of the fleet taken at that instant.
 */
export const DEMO_EPOCH = '2026-01-01T00:00:00.000Z';

const EPOCH_MS = Date.UTC(2026, 0, 1);
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** The two demo companies: `acme` (retail stores, 1 GiB quota) and `globex` (transit stations, 5 MiB quota). */
export const DEMO_COMPANIES: readonly DemoCompany[] = [
  {
    id: 'acme',
    name: 'Acme Retail',
    quotaBytes: 1_073_741_824,
    prefix: 'ACM',
    locations: [
      {
        name: 'Acme Store Lyon Part-Dieu',
        description: 'Acme Store in the Part-Dieu shopping centre, Lyon, level 1',
        latitude: 45.761,
        longitude: 4.8565,
        altitude: 170,
      },
      {
        name: 'Acme Store Paris Rivoli',
        description: 'Acme flagship store, rue de Rivoli, Paris 1er',
        latitude: 48.86,
        longitude: 2.344,
        altitude: 35,
      },
      {
        name: 'Acme Store Paris La Défense',
        description: 'Acme Store in the Westfield Les 4 Temps mall, La Défense',
        latitude: 48.891,
        longitude: 2.239,
        altitude: 60,
      },
      {
        name: 'Acme Store Marseille Vieux-Port',
        description: 'Acme Store on the Quai des Belges, Marseille',
        latitude: 43.2955,
        longitude: 5.3745,
        altitude: 5,
      },
      {
        name: 'Acme Store Bordeaux Sainte-Catherine',
        description: 'Acme Store, rue Sainte-Catherine, Bordeaux',
        latitude: 44.84,
        longitude: -0.573,
        altitude: 12,
      },
      {
        name: 'Acme Store Lille Euralille',
        description: 'Acme Store in the Euralille shopping centre, Lille',
        latitude: 50.637,
        longitude: 3.075,
        altitude: 25,
      },
      {
        name: 'Acme Store Toulouse Capitole',
        description: 'Acme Store near the Place du Capitole, Toulouse',
        latitude: 43.6045,
        // biome-ignore lint/suspicious/noApproximativeNumericConstant: Toulouse's longitude, not log2(e).
        longitude: 1.443,
        altitude: 146,
      },
      {
        name: 'Acme Store Nantes Atlantis',
        description: 'Acme Store in the Atlantis retail park, Saint-Herblain',
        latitude: 47.225,
        longitude: -1.629,
        altitude: 30,
      },
      {
        name: 'Acme Store Bruxelles Louise',
        description: 'Acme Store, avenue Louise, Brussels',
        latitude: 50.833,
        longitude: 4.361,
        altitude: 70,
      },
      { name: 'Acme Store Genève Rive', description: 'Acme Store, rue de Rive, Geneva', latitude: 46.203, longitude: 6.151, altitude: 375 },
      {
        name: 'Acme Store Milano Duomo',
        description: 'Acme Store in the Galleria area near the Duomo, Milan',
        latitude: 45.465,
        longitude: 9.19,
        altitude: 122,
      },
      {
        name: 'Acme Store Barcelona Diagonal',
        description: 'Acme Store in the Diagonal Mar centre, Barcelona',
        latitude: 41.41,
        longitude: 2.217,
        altitude: 8,
      },
      {
        name: 'Acme Store Berlin Alexanderplatz',
        description: 'Acme Store at Alexanderplatz, Berlin-Mitte',
        latitude: 52.5215,
        longitude: 13.412,
        altitude: 37,
      },
      {
        name: 'Acme Store Amsterdam Kalverstraat',
        description: 'Acme Store, Kalverstraat, Amsterdam',
        latitude: 52.37,
        longitude: 4.892,
        altitude: 2,
      },
    ],
    placements: [
      'self-checkout kiosk next to the main entrance',
      'self-checkout kiosk near the tills',
      'click & collect pick-up point, ground floor',
      'price checker in aisle 4',
      'loyalty card kiosk near customer service',
      'order kiosk in the electronics department',
      'parcel locker bank by the car park exit',
    ],
  },
  {
    id: 'globex',
    name: 'Globex Transit',
    quotaBytes: 5_242_880,
    prefix: 'GLX',
    locations: [
      {
        name: 'Globex Gare du Nord Hall 2',
        description: 'Paris Gare du Nord, Hall 2 (suburban lines), mezzanine',
        latitude: 48.8809,
        longitude: 2.3553,
        altitude: 40,
      },
      {
        name: 'Globex Gare de Lyon Hall 1',
        description: 'Paris Gare de Lyon, Hall 1, main concourse',
        latitude: 48.8443,
        longitude: 2.3744,
        altitude: 38,
      },
      {
        name: 'Globex Lyon Part-Dieu Gare',
        description: 'Lyon Part-Dieu station, Villette concourse',
        latitude: 45.7606,
        longitude: 4.8594,
        altitude: 170,
      },
      {
        name: 'Globex Marseille Saint-Charles',
        description: 'Marseille Saint-Charles station, Halle Honnorat',
        latitude: 43.3027,
        longitude: 5.3806,
        altitude: 50,
      },
      {
        name: 'Globex Lille Europe',
        description: 'Lille Europe station, platform level',
        latitude: 50.6392,
        longitude: 3.0755,
        altitude: 22,
      },
      {
        name: 'Globex Strasbourg Gare Centrale',
        description: 'Strasbourg central station, under the glass dome',
        latitude: 48.585,
        longitude: 7.735,
        altitude: 142,
      },
      {
        name: 'Globex Bruxelles-Midi',
        description: 'Brussels-South station, international hall',
        latitude: 50.8357,
        longitude: 4.336,
        altitude: 22,
      },
      {
        name: 'Globex Amsterdam Centraal',
        description: 'Amsterdam Centraal, IJhal (north side)',
        latitude: 52.3791,
        longitude: 4.9003,
        altitude: 1,
      },
      {
        name: 'Globex Frankfurt Hauptbahnhof',
        description: 'Frankfurt (Main) Hauptbahnhof, B-level passage',
        latitude: 50.1071,
        longitude: 8.6638,
        altitude: 101,
      },
      { name: 'Globex Zürich HB Halle', description: 'Zürich HB, main hall', latitude: 47.3782, longitude: 8.5402, altitude: 408 },
      {
        name: 'Globex Milano Centrale',
        description: 'Milano Centrale, ticket hall, ground floor',
        latitude: 45.4864,
        longitude: 9.204,
        altitude: 125,
      },
      {
        name: 'Globex Madrid Atocha',
        description: 'Madrid Puerta de Atocha, long-distance terminal',
        latitude: 40.4066,
        longitude: -3.6892,
        altitude: 620,
      },
    ],
    placements: [
      'ticket machine near platform 7',
      'ticket machine at the north exit',
      'information kiosk on the main concourse',
      'luggage locker bank, lower level',
      'lost & found kiosk next to the ticket office',
      'ticket machine by the metro connection',
      'travel information screen at the taxi rank',
    ],
  },
];

/** A demo user of `role`: its `scope` claim is the role's scopes. */
const demoUser = (username: string, companies: readonly string[], role: Role): DemoUser => ({
  username,
  password: `${username}-demo-password`,
  companies,
  role,
  scope: scopeClaimOf(role),
});

/**
 * The demo users: `alice` (acme) and `bob` (globex), operators (every scope they had before roles: reading and
 * writing scenarios, deployments and devices, and search); `olivia` (both companies), a viewer (read scopes only);
 * `root`, the platform administrator (companies administration and every other scope) of no company: it administers
 * companies, it does not act inside one. Passwords are fixed so that the start banner and docs/walkthrough.md can
 * show them.
 */
export const DEMO_USERS: readonly DemoUser[] = [
  demoUser('alice', ['acme'], 'operator'),
  demoUser('bob', ['globex'], 'operator'),
  demoUser('olivia', ['acme', 'globex'], 'viewer'),
  demoUser('root', [], 'platform-admin'),
];

// ---------------------------------------------------------------------------------------------------------------
// Seeded randomness
// ---------------------------------------------------------------------------------------------------------------

/** 32-bit FNV-1a hash of a string. */
function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Combines 32-bit integers into one well-mixed 32-bit seed. */
function mixSeeds(...parts: number[]): number {
  let h = 0x9e3779b9;
  for (const part of parts) {
    h = Math.imul(h ^ (part >>> 0), 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 16;
  }
  return h >>> 0;
}

/** Small seeded random source (mulberry32) with the helpers the generator needs. */
class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Uniform integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** Uniform float in [min, max), rounded to `decimals`. */
  float(min: number, max: number, decimals: number): number {
    const factor = 10 ** decimals;
    return Math.round((min + this.next() * (max - min)) * factor) / factor;
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.next() * items.length)];
    if (item === undefined) throw new Error('pick from an empty list');
    return item;
  }

  /** Picks a value with probability proportional to its weight. */
  weighted<T>(items: readonly (readonly [T, number])[]): T {
    const total = items.reduce((sum, [, weight]) => sum + weight, 0);
    let roll = this.next() * total;
    for (const [value, weight] of items) {
      roll -= weight;
      if (roll < 0) return value;
    }
    const last = items[items.length - 1];
    if (last === undefined) throw new Error('weighted pick from an empty list');
    return last[0];
  }

  /** Picks `count` distinct values, each draw proportional to the weights of the values left. */
  weightedDistinct<T>(items: readonly (readonly [T, number])[], count: number): T[] {
    const left = [...items];
    const chosen: T[] = [];
    while (chosen.length < count && left.length > 0) {
      const value = this.weighted(left);
      chosen.push(value);
      left.splice(
        left.findIndex(([candidate]) => candidate === value),
        1,
      );
    }
    return chosen;
  }
}

const iso = (ms: number): string => new Date(ms).toISOString();

// ---------------------------------------------------------------------------------------------------------------
// Fleet vocabulary
// ---------------------------------------------------------------------------------------------------------------

type HealthMode = NonNullable<Device['health']>['mode'];
type SubState = SubDevice['health']['state'];
type Message = SubDevice['health']['messages'][number];

/** Firmware releases: `versionCode` is major·10000 + minor·100 + patch. Newer releases are more common. */
const FIRMWARE = [
  { versionCode: '40201', versionName: '4.2.1' },
  { versionCode: '40105', versionName: '4.1.5' },
  { versionCode: '40003', versionName: '4.0.3' },
  { versionCode: '31207', versionName: '3.12.7' },
  { versionCode: '30904', versionName: '3.9.4' },
] as const;
const FIRMWARE_WEIGHTS: Record<HealthMode, readonly number[]> = {
  EMBEDDED_PLATFORM_ANDROID: [40, 26, 16, 11, 7],
  EMBEDDED_PLATFORM_COMPUTER: [38, 27, 17, 11, 7],
  SERVER: [70, 25, 5, 0, 0],
  EMBEDDED_PLATFORM_UNKNOWN: [5, 10, 20, 35, 30],
};

const HEALTH_MODE_WEIGHTS: readonly (readonly [HealthMode, number])[] = [
  ['EMBEDDED_PLATFORM_ANDROID', 46],
  ['EMBEDDED_PLATFORM_COMPUTER', 34],
  ['SERVER', 12],
  ['EMBEDDED_PLATFORM_UNKNOWN', 8],
];

const SUB_STATE_WEIGHTS: readonly (readonly [SubState, number])[] = [
  ['NOMINAL', 78],
  ['WARNING', 12],
  ['DOWN', 4],
  ['BOOTING', 3],
  ['HIBERNATION', 3],
];

/** Fallback sites for companies without `locations`, named `<Company> <City>`. */
const FALLBACK_CITIES: readonly DemoLocation[] = [
  { name: 'Paris', description: 'Paris, France', latitude: 48.8566, longitude: 2.3522, altitude: 35 },
  { name: 'Lyon', description: 'Lyon, France', latitude: 45.764, longitude: 4.8357, altitude: 170 },
  { name: 'Brussels', description: 'Brussels, Belgium', latitude: 50.8503, longitude: 4.3517, altitude: 60 },
  { name: 'Amsterdam', description: 'Amsterdam, Netherlands', latitude: 52.3676, longitude: 4.9041, altitude: 2 },
  { name: 'Berlin', description: 'Berlin, Germany', latitude: 52.52, longitude: 13.405, altitude: 34 },
  { name: 'Madrid', description: 'Madrid, Spain', latitude: 40.4168, longitude: -3.7038, altitude: 657 },
  { name: 'Milan', description: 'Milan, Italy', latitude: 45.4642, longitude: 9.19, altitude: 120 },
  { name: 'Vienna', description: 'Vienna, Austria', latitude: 48.2082, longitude: 16.3738, altitude: 190 },
];
const FALLBACK_PLACEMENTS: readonly string[] = [
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
interface PeripheralKind {
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

const KINDS = {
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

type KindName = keyof typeof KINDS;

/** Extra peripherals of a kiosk's main hub (it always carries a scenario player). */
const MAIN_HUB_EXTRAS: readonly (readonly [KindName, number])[] = [
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
const SECOND_HUB_KINDS: readonly (readonly [KindName, number])[] = [
  ['locker', 3],
  ['printer', 2],
  ['media', 2],
  ['scanner', 2],
  ['watchdog', 2],
  ['acceptor', 1],
  ['payment', 1],
];
/** Extra services of a virtual (SERVER) device. */
const SERVER_EXTRAS: readonly (readonly [KindName, number])[] = [
  ['web', 3],
  ['cdn', 2],
  ['data', 2],
];

// ---------------------------------------------------------------------------------------------------------------
// Generator
// ---------------------------------------------------------------------------------------------------------------

const capitalize = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1);

/** Battery of a hub or peripheral, coherent between state, status and level. */
function makeBattery(rng: Rng, connected: boolean, ageDays: number): Battery {
  const state = rng.weighted<Battery['health']['state']>([
    ['GOOD', 72],
    ['OVERHEAT', 6],
    ['UNKNOWN', 6],
    ['UNSPECIFIED_VALUE', 4],
    ['COLD', 4],
    ['DEAD', 5],
    ['OVER_VOLTAGE', 3],
  ]);
  const plugged = rng.weighted<Battery['health']['plugged']>([
    ['AC', 60],
    ['DOCK', 20],
    ['USB', 15],
    ['WIRELESS', 5],
  ]);
  let level: number;
  if (state === 'DEAD') level = 0;
  else if (!connected) level = rng.float(2, 60, 1);
  else level = rng.chance(0.3) ? 100 : rng.float(8, 99.9, 1);
  let status: Battery['health']['status'];
  if (state === 'DEAD' || state === 'OVERHEAT' || state === 'COLD' || state === 'OVER_VOLTAGE') status = 'NOT_CHARGING';
  else if (state === 'UNKNOWN' || state === 'UNSPECIFIED_VALUE') status = rng.chance(0.6) ? 'UNKNOWN' : 'CHARGING';
  else if (level >= 100) status = 'FULL';
  else if (!connected) status = 'DISCHARGING';
  else
    status = rng.weighted<Battery['health']['status']>([
      ['CHARGING', 75],
      ['DISCHARGING', 15],
      ['NOT_CHARGING', 10],
    ]);
  const cycle = Math.min(2500, Math.round(ageDays * rng.float(0.3, 1.2, 2)) + (state === 'DEAD' ? 800 : 0));
  return { health: { state, plugged, status, level, cycle } };
}

interface DeviceContext {
  rng: Rng;
  connected: boolean;
  neverSeen: boolean;
  ageDays: number;
}

/** A peripheral with a health state and messages that agree with each other. */
function makeSubDevice(ctx: DeviceContext, hubUid: string, kindName: KindName): SubDevice {
  const { rng } = ctx;
  const kind: PeripheralKind = KINDS[kindName];
  const battery = rng.chance(kind.batteryChance) ? makeBattery(rng, ctx.connected, ctx.ageDays) : undefined;
  let state: SubState = ctx.neverSeen
    ? rng.weighted<SubState>([
        ['BOOTING', 2],
        ['HIBERNATION', 1],
      ])
    : rng.weighted(SUB_STATE_WEIGHTS);
  const messages: Message[] = [];
  if (state === 'NOMINAL' && battery !== undefined && battery.health.level < 15) {
    state = 'WARNING';
    messages.push({ key: 'battery.low', message: `Battery low (${battery.health.level}%)`, level: 'WARNING' });
  }
  switch (state) {
    case 'NOMINAL':
      messages.push({ key: `${kind.slug}.status.ok`, message: kind.ok, level: 'INFO' });
      if (rng.chance(0.2)) messages.push({ key: `${kind.slug}.selftest.passed`, message: 'Self-test passed', level: 'DEBUG' });
      break;
    case 'WARNING':
      if (messages.length === 0) {
        const [key, text] = rng.pick(kind.warnings);
        messages.push({ key, message: text, level: 'WARNING' });
      }
      messages.push({ key: `${kind.slug}.status.degraded`, message: 'Usable with reduced service', level: 'INFO' });
      break;
    case 'DOWN': {
      const [key, text] = rng.pick(kind.errors);
      messages.push({ key, message: text, level: 'ERROR' });
      if (rng.chance(0.5))
        messages.push({ key: `${kind.slug}.intervention.required`, message: 'On-site intervention required', level: 'WARNING' });
      break;
    }
    case 'BOOTING':
      messages.push({
        key: `${kind.slug}.booting`,
        message: ctx.neverSeen ? 'Provisioned; waiting for the first start' : 'Starting up',
        level: 'INFO',
      });
      break;
    case 'HIBERNATION':
      messages.push({ key: `${kind.slug}.maintenance`, message: 'Maintenance mode enabled by an operator', level: 'INFO' });
      break;
  }
  const subDevice: SubDevice = {
    uid: `${hubUid}-${kind.slug}`,
    label: rng.pick(kind.labels),
    version: rng.pick(kind.versions),
    health: { state, message: messages[0]?.message ?? kind.ok, messages },
    capability: { type: kind.type, modes: kind.modes(rng) },
    commands: kind.commands(),
  };
  if (battery !== undefined) subDevice.battery = battery;
  return subDevice;
}

function makeHub(
  ctx: DeviceContext,
  deviceId: string,
  index: number,
  label: string,
  registeredMs: number,
  kinds: KindName[],
  batteryChance: number,
): Hub {
  const { rng } = ctx;
  const uid = `${deviceId}-hub${index}`;
  const hub: Hub = {
    uid,
    label,
    version: rng.pick(['2.3.0', '2.2.4', '2.1.9']),
    registeredSince: iso(registeredMs),
    type: 'STANDARD',
    devices: kinds.map((kind) => makeSubDevice(ctx, uid, kind)),
  };
  if (rng.chance(batteryChance)) hub.battery = makeBattery(rng, ctx.connected, ctx.ageDays);
  return hub;
}

/**
 * Generates `count` kiosks of `company`, deterministically from `seed` (same inputs, same devices, on every run and
 * machine; device n does not depend on `count`, so a smaller fleet is a prefix of a larger one).
 *
 * - ids `<company.id>-kiosk-0001`…, serials `<prefix>-K<hardware revision>-<6 digits>`, unique per company and seed;
 * - connection states about 70% CONNECTED (with `connectedSince`), 22% DISCONNECTED (with `disconnectedSince`),
 *   8% UNKNOWN (never seen connected: neither date, and most of them without `health`);
 * - health modes mostly EMBEDDED_PLATFORM_ANDROID / EMBEDDED_PLATFORM_COMPUTER, some SERVER (virtual devices, no
 *   geoLocation), a few EMBEDDED_PLATFORM_UNKNOWN; five firmware versions, newer ones more common;
 * - 1–2 hubs with 1–4 peripherals each (scenario player, printer, payment terminal, screen, web kiosk, lockers…),
 *   batteries on some hubs and peripherals, coherent health states and messages, and commands;
 * - locations from `company.locations` and `company.placements` when given, else built-in European cities;
 * - every timestamp is at or before {@link DEMO_EPOCH}, `updated` ≥ `created`.
 */
export function generateDemoDevices(company: DemoFleetOwner, count: number, seed: number): Device[] {
  return [...iterateDemoDevices(company, seed, 1, count)];
}

/**
 * Devices `first` to `last` (1-based, inclusive) of the fleet generateDemoDevices makes, one at a time, so that a
 * fleet of millions (the OpenSearch benchmark's) never sits in memory: device n is the same in both.
 */
export function* iterateDemoDevices(company: DemoFleetOwner, seed: number, first: number, last: number): Generator<Device> {
  const fleet = demoFleetOf(company, seed);
  for (let n = first; n <= last; n++) yield generateDemoDevice(fleet, n);
}

/** What every device of one company's demo fleet is drawn from. */
interface DemoFleet {
  company: DemoFleetOwner;
  /** Seed of the company's fleet; device n's own generator is seeded from it and n. */
  companySeed: number;
  /** First serial number, before each device's offset. */
  serialBase: number;
  /** Start of the golden-ratio sequence that picks connection states. */
  stateOffset: number;
  locations: readonly DemoLocation[];
  placements: readonly string[];
}

/** The company's fleet basis: its seed, serial base and state offset (drawn in that order), locations and placements. */
function demoFleetOf(company: DemoFleetOwner, seed: number): DemoFleet {
  const companySeed = mixSeeds(seed, hashString(company.id));
  const companyRng = new Rng(companySeed);
  const serialBase = companyRng.int(100_000, 400_000);
  // Golden-ratio sequence: connection states keep their proportions in any prefix of the fleet.
  const stateOffset = companyRng.next();
  const locations: readonly DemoLocation[] =
    company.locations !== undefined && company.locations.length > 0
      ? company.locations
      : FALLBACK_CITIES.map((city) => ({
          ...city,
          name: `${capitalize(company.id)} ${city.name}`,
          description: `${capitalize(company.id)} site in ${city.description}`,
        }));
  const placements = company.placements !== undefined && company.placements.length > 0 ? company.placements : FALLBACK_PLACEMENTS;
  return { company, companySeed, serialBase, stateOffset, locations, placements };
}

/** Device `n` (from 1) of the fleet, drawn from its own generator: identity, location, connection, health. */
function generateDemoDevice(fleet: DemoFleet, n: number): Device {
  const { company } = fleet;
  const rng = new Rng(mixSeeds(fleet.companySeed, n));
  const id = `${company.id}-kiosk-${String(n).padStart(4, '0')}`;
  const u = (fleet.stateOffset + n * 0.6180339887498949) % 1;
  const state: Device['connection']['state'] = u < 0.7 ? 'CONNECTED' : u < 0.92 ? 'DISCONNECTED' : 'UNKNOWN';
  const neverSeen = state === 'UNKNOWN';

  // Never-seen devices were provisioned recently; the rest of the fleet over the last two years.
  const ageDays = neverSeen ? rng.int(1, 60) : rng.int(20, 730);
  const createdMs = EPOCH_MS - ageDays * DAY - rng.int(0, DAY / 1000 - 1) * 1000;
  const mode = rng.weighted(HEALTH_MODE_WEIGHTS);
  const hardwareRevision =
    mode === 'SERVER'
      ? 0
      : ageDays > 400
        ? 1
        : rng.weighted([
            [2, 3],
            [3, 1],
          ] as const);

  const device: Device = {
    id,
    company: company.id,
    serial: `${company.prefix}-K${hardwareRevision}-${String(fleet.serialBase + n * 13 + rng.int(0, 12)).padStart(6, '0')}`,
    created: iso(createdMs),
    updated: iso(createdMs),
    connection: { state },
  };
  placeDemoDevice(device, fleet, rng, mode, neverSeen);
  let { lastChangeMs, healthMs } = demoConnectionTimes(device, rng, createdMs);

  // Never-seen devices mostly have no health; the others carry a health report.
  if (!neverSeen || rng.chance(0.3)) {
    const ctx: DeviceContext = { rng, connected: state === 'CONNECTED', neverSeen, ageDays };
    device.health = demoHealth(ctx, id, mode, createdMs, healthMs);
    lastChangeMs = Math.max(lastChangeMs, healthMs);
  }

  device.updated = iso(lastChangeMs);
  return device;
}

/** Sets the device's location (a cloud region for SERVER) and, for most physical kiosks, its coordinates near the site. */
function placeDemoDevice(device: Device, fleet: DemoFleet, rng: Rng, mode: HealthMode, neverSeen: boolean): void {
  if (mode === 'SERVER') {
    device.location = {
      name: `${capitalize(fleet.company.id)} Cloud eu-west-3`,
      description: 'Virtual kiosk hosted in the cloud (Paris region), used for scenario previews and the web channel',
    };
    return;
  }
  const site = rng.pick(fleet.locations);
  device.location = { name: site.name, description: `${capitalize(rng.pick(fleet.placements))}. ${site.description}` };
  if (!neverSeen || rng.chance(0.5)) {
    device.geoLocation = {
      latitude: Math.round((site.latitude + (rng.next() - 0.5) * 0.004) * 1e6) / 1e6,
      longitude: Math.round((site.longitude + (rng.next() - 0.5) * 0.004) * 1e6) / 1e6,
      altitude: Math.round((site.altitude + rng.float(-3, 8, 1)) * 10) / 10,
    };
  }
}

/** A whole number of seconds between `minMs` and `maxMs` (`minMs` when the range is empty), in ms. */
function secondsBetween(rng: Rng, minMs: number, maxMs: number): number {
  const min = Math.ceil(minMs / 1000);
  return rng.int(min, Math.max(min, Math.floor(maxMs / 1000))) * 1000;
}

/**
 * Sets the device's `connectedSince` or `disconnectedSince` after its creation; returns that instant (its creation
 * when never seen) and the instant of its health report, both epoch ms at or before DEMO_EPOCH.
 */
function demoConnectionTimes(device: Device, rng: Rng, createdMs: number): { lastChangeMs: number; healthMs: number } {
  const ageMs = EPOCH_MS - createdMs;
  const { connection } = device;
  if (connection.state === 'CONNECTED') {
    const sinceMs = Math.max(createdMs, EPOCH_MS - secondsBetween(rng, 5 * MINUTE, Math.min(45 * DAY, ageMs)));
    connection.connectedSince = iso(sinceMs);
    return { lastChangeMs: sinceMs, healthMs: EPOCH_MS - secondsBetween(rng, 0, Math.min(15 * MINUTE, EPOCH_MS - sinceMs)) };
  }
  if (connection.state === 'DISCONNECTED') {
    const sinceMs = Math.max(createdMs, EPOCH_MS - secondsBetween(rng, 10 * MINUTE, Math.min(120 * DAY, ageMs)));
    connection.disconnectedSince = iso(sinceMs);
    return { lastChangeMs: sinceMs, healthMs: Math.max(createdMs, sinceMs - secondsBetween(rng, 0, 10 * MINUTE)) };
  }
  return { lastChangeMs: createdMs, healthMs: Math.min(EPOCH_MS, createdMs + secondsBetween(rng, MINUTE, HOUR)) };
}

/** The device's health report at `healthMs`: its firmware and 1–2 hubs (one virtual hub for SERVER). */
function demoHealth(ctx: DeviceContext, id: string, mode: HealthMode, createdMs: number, healthMs: number): NonNullable<Device['health']> {
  const { rng } = ctx;
  const firmware = rng.weighted(FIRMWARE.map((release, i) => [release, FIRMWARE_WEIGHTS[mode][i] ?? 0] as const));
  const hubs: Hub[] = [];
  const firstRegisteredMs = Math.min(healthMs, createdMs + secondsBetween(rng, 0, 2 * HOUR));
  if (mode === 'SERVER') {
    const extras = rng.weightedDistinct(SERVER_EXTRAS, rng.int(0, 3));
    hubs.push(makeHub(ctx, id, 1, 'Virtual hub', firstRegisteredMs, ['scenario', ...extras], 0));
  } else {
    const extras = rng.weightedDistinct(
      MAIN_HUB_EXTRAS,
      rng.weighted([
        [0, 15],
        [1, 35],
        [2, 35],
        [3, 15],
      ] as const),
    );
    const mainBattery = mode === 'EMBEDDED_PLATFORM_ANDROID' ? 0.7 : 0.15;
    hubs.push(makeHub(ctx, id, 1, 'Main hub', firstRegisteredMs, ['scenario', ...extras], mainBattery));
    if (rng.chance(0.35)) {
      const secondRegisteredMs = Math.min(healthMs, firstRegisteredMs + secondsBetween(rng, 0, healthMs - firstRegisteredMs));
      const kinds = rng.weightedDistinct(SECOND_HUB_KINDS, rng.int(1, 4));
      hubs.push(makeHub(ctx, id, 2, rng.pick(['Peripheral hub', 'Locker hub', 'Secondary hub']), secondRegisteredMs, kinds, 0.25));
    }
  }
  return {
    updated: iso(healthMs),
    versionCode: firmware.versionCode,
    versionName: firmware.versionName,
    mode,
    hubs,
  };
}
