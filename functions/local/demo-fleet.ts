/**
 * The demo kiosk fleets (docs/contract.md, "Local demo data"): realistic kiosks of a company generated from a seed
 * and a reference "now". Pure: the same inputs give the same fleet on every run and machine (seeded PRNG, no
 * `Math.random`, no `Date.now`); every timestamp is at or before the reference "now".
 */

import type { Battery, Device, Hub, SubDevice } from '../core/devices/model.js';
import { DEMO_EPOCH, type DemoFleetOwner, type DemoLocation } from './demo-data.js';
import {
  FALLBACK_CITIES,
  FALLBACK_PLACEMENTS,
  FIRMWARE,
  FIRMWARE_WEIGHTS,
  HEALTH_MODE_WEIGHTS,
  type HealthMode,
  KINDS,
  type KindName,
  MAIN_HUB_EXTRAS,
  type Message,
  type PeripheralKind,
  SECOND_HUB_KINDS,
  SERVER_EXTRAS,
  SUB_STATE_WEIGHTS,
  type SubState,
} from './demo-peripherals.js';
import { hashString, mixSeeds, Rng } from './demo-random.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

const iso = (ms: number): string => new Date(ms).toISOString();

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
 * Generates `count` kiosks of `company`, deterministically from `seed` and `now` (ISO-8601, the reference instant;
 * default {@link DEMO_EPOCH}): same inputs, same devices, on every run and machine; device n does not depend on
 * `count`, so a smaller fleet is a prefix of a larger one.
 *
 * - ids `<company.id>-kiosk-0001`…, serials `<prefix>-K<hardware revision>-<6 digits>`, unique per company and seed;
 * - connection states about 70% CONNECTED (with `connectedSince`), 22% DISCONNECTED (with `disconnectedSince`),
 *   8% UNKNOWN (never seen connected: neither date, and most of them without `health`);
 * - health modes mostly EMBEDDED_PLATFORM_ANDROID / EMBEDDED_PLATFORM_COMPUTER, some SERVER (virtual devices, no
 *   geoLocation), a few EMBEDDED_PLATFORM_UNKNOWN; five firmware versions, newer ones more common;
 * - 1–2 hubs with 1–4 peripherals each (scenario player, printer, payment terminal, screen, web kiosk, lockers…),
 *   batteries on some hubs and peripherals, coherent health states and messages, and commands;
 * - locations from `company.locations` and `company.placements` when given, else built-in European cities;
 * - times relative to `now`: created over the last two years, a connected kiosk's last report in the last 15
 *   minutes, a disconnected one quiet for minutes to days (at most 14), every timestamp at or before `now`,
 *   `updated` ≥ `created`.
 */
export function generateDemoDevices(company: DemoFleetOwner, count: number, seed: number, now: string = DEMO_EPOCH): Device[] {
  return [...iterateDemoDevices(company, seed, 1, count, now)];
}

/**
 * Devices `first` to `last` (1-based, inclusive) of the fleet generateDemoDevices makes, one at a time, so that a
 * fleet of millions (the OpenSearch benchmark's) never sits in memory: device n is the same in both.
 */
export function* iterateDemoDevices(
  company: DemoFleetOwner,
  seed: number,
  first: number,
  last: number,
  now: string = DEMO_EPOCH,
): Generator<Device> {
  const fleet = demoFleetOf(company, seed, Date.parse(now));
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
  /** The reference "now", epoch ms: every timestamp of the fleet is at or before it. */
  nowMs: number;
}

/** The company's fleet basis: its seed, serial base and state offset (drawn in that order), locations and placements. */
function demoFleetOf(company: DemoFleetOwner, seed: number, nowMs: number): DemoFleet {
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
  return { company, companySeed, serialBase, stateOffset, locations, placements, nowMs };
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
  const createdMs = fleet.nowMs - ageDays * DAY - rng.int(0, DAY / 1000 - 1) * 1000;
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
  let { lastChangeMs, healthMs } = demoConnectionTimes(device, rng, createdMs, fleet.nowMs);

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
 * How long a disconnected kiosk has been quiet, in ms: from 10 minutes to 14 days (never before `ageMs`), skewed
 * towards hours (about a quarter within 6 h, half within 2 days), as in a fleet where most outages are short.
 */
function quietFor(rng: Rng, ageMs: number): number {
  const shortest = 10 * MINUTE;
  const range = Math.max(0, Math.min(14 * DAY, ageMs) - shortest);
  const share = range === 0 ? 0 : secondsBetween(rng, 0, range) / range;
  return shortest + Math.round((share ** 3 * range) / 1000) * 1000;
}

/**
 * Sets the device's `connectedSince` or `disconnectedSince` after its creation; returns that instant (its creation
 * when never seen) and the instant of its health report, both epoch ms at or before `nowMs`: a connected kiosk
 * reported in the last 15 minutes, a disconnected one went quiet minutes to days ago.
 */
function demoConnectionTimes(device: Device, rng: Rng, createdMs: number, nowMs: number): { lastChangeMs: number; healthMs: number } {
  const ageMs = nowMs - createdMs;
  const { connection } = device;
  if (connection.state === 'CONNECTED') {
    const sinceMs = Math.max(createdMs, nowMs - secondsBetween(rng, 5 * MINUTE, Math.min(45 * DAY, ageMs)));
    connection.connectedSince = iso(sinceMs);
    return { lastChangeMs: sinceMs, healthMs: nowMs - secondsBetween(rng, 0, Math.min(15 * MINUTE, nowMs - sinceMs)) };
  }
  if (connection.state === 'DISCONNECTED') {
    const sinceMs = Math.max(createdMs, nowMs - quietFor(rng, ageMs));
    connection.disconnectedSince = iso(sinceMs);
    return { lastChangeMs: sinceMs, healthMs: Math.max(createdMs, sinceMs - secondsBetween(rng, 0, 10 * MINUTE)) };
  }
  return { lastChangeMs: createdMs, healthMs: Math.min(nowMs, createdMs + secondsBetween(rng, MINUTE, HOUR)) };
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
