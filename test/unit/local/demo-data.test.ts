import { describe, expect, it } from 'vitest';
import type { Battery, Device } from '../../../functions/core/devices/model.js';
import { DEMO_COMPANIES, DEMO_DEVICES_PER_COMPANY, DEMO_SEED, DEMO_USERS, type DemoCompany } from '../../../functions/local/demo-data.js';
import { generateDemoDevices } from '../../../functions/local/demo-fleet.js';

function company(id: string): DemoCompany {
  const found = DEMO_COMPANIES.find((c) => c.id === id);
  if (found === undefined) throw new Error(`no demo company ${id}`);
  return found;
}

/** Every leaf value at a dotted path, walking through arrays (as the search filters do). */
function valuesAt(devices: readonly Device[], path: string): unknown[] {
  const out: unknown[] = [];
  const walk = (node: unknown, parts: readonly string[]): void => {
    if (node === undefined || node === null) return;
    if (Array.isArray(node)) {
      for (const item of node) walk(item, parts);
      return;
    }
    const [head, ...rest] = parts;
    if (head === undefined) {
      out.push(node);
      return;
    }
    walk((node as Record<string, unknown>)[head], rest);
  };
  for (const device of devices) walk(device, path.split('.'));
  return out;
}

function allBatteries(devices: readonly Device[]): Battery[] {
  return devices.flatMap((d) =>
    (d.health?.hubs ?? []).flatMap((hub) =>
      [hub.battery, ...hub.devices.map((s) => s.battery)].filter((b): b is Battery => b !== undefined),
    ),
  );
}

const isIsoUtc = (value: string): boolean => value.endsWith('Z') && new Date(value).toISOString() === value;

const acme = company('acme');
const acmeDevices = generateDemoDevices(acme, DEMO_DEVICES_PER_COMPANY, DEMO_SEED);

describe('demo companies and users', () => {
  it('defines acme and globex with their quotas and serial prefixes', () => {
    expect(DEMO_COMPANIES.map((c) => [c.id, c.name, c.quotaBytes, c.prefix])).toEqual([
      ['acme', 'Acme Retail', 1073741824, 'ACM'],
      ['globex', 'Globex Transit', 5242880, 'GLX'],
    ]);
  });

  it('defines alice, bob, olivia and root with the documented companies, roles and scopes', () => {
    const full = 'scenarios:read scenarios:write deployments:read deployments:write search:read devices:read devices:write';
    const operator = `${full} webhooks:read alerts:read alerts:write`;
    expect(DEMO_USERS).toEqual([
      { username: 'alice', password: 'alice-demo-password', companies: ['acme'], role: 'operator', scope: operator },
      { username: 'bob', password: 'bob-demo-password', companies: ['globex'], role: 'operator', scope: operator },
      {
        username: 'olivia',
        password: 'olivia-demo-password',
        companies: ['acme', 'globex'],
        role: 'viewer',
        scope: 'scenarios:read deployments:read search:read devices:read alerts:read',
      },
      {
        username: 'root',
        password: 'root-demo-password',
        companies: [],
        role: 'platform-admin',
        scope: `${full} users:read users:write companies:read companies:write webhooks:read webhooks:write alerts:read alerts:write`,
      },
    ]);
  });
});

describe('generateDemoDevices', () => {
  it('is deterministic: the same inputs give deeply equal fleets', () => {
    expect(generateDemoDevices(acme, DEMO_DEVICES_PER_COMPANY, DEMO_SEED)).toEqual(acmeDevices);
    expect(generateDemoDevices(company('globex'), 50, 7)).toEqual(generateDemoDevices(company('globex'), 50, 7));
  });

  it('gives a different fleet for another seed or another company', () => {
    expect(generateDemoDevices(acme, 20, DEMO_SEED + 1)).not.toEqual(acmeDevices.slice(0, 20));
    const globex = generateDemoDevices(company('globex'), 20, DEMO_SEED);
    expect(globex.map((d) => d.serial).some((s) => acmeDevices.some((a) => a.serial === s))).toBe(false);
  });

  it('generates a smaller fleet as a prefix of a larger one', () => {
    expect(generateDemoDevices(acme, 10, DEMO_SEED)).toEqual(acmeDevices.slice(0, 10));
  });

  it('generates the requested number of devices with unique ids of the form <company>-kiosk-NNNN', () => {
    expect(acmeDevices).toHaveLength(120);
    expect(acmeDevices[0]?.id).toBe('acme-kiosk-0001');
    expect(acmeDevices[119]?.id).toBe('acme-kiosk-0120');
    for (const device of acmeDevices) {
      expect(device.id).toMatch(/^acme-kiosk-\d{4}$/);
      expect(device.id).not.toContain('#');
      expect(device.company).toBe('acme');
    }
    expect(new Set(acmeDevices.map((d) => d.id)).size).toBe(120);
  });

  it('gives unique serials derived from the company prefix', () => {
    for (const device of acmeDevices) expect(device.serial).toMatch(/^ACM-K\d-\d{6}$/);
    expect(new Set(acmeDevices.map((d) => d.serial)).size).toBe(120);
  });

  it('sets connectedSince exactly when CONNECTED and disconnectedSince exactly when DISCONNECTED', () => {
    for (const { connection } of acmeDevices) {
      expect(connection.connectedSince !== undefined).toBe(connection.state === 'CONNECTED');
      expect(connection.disconnectedSince !== undefined).toBe(connection.state === 'DISCONNECTED');
    }
  });

  it('has a realistic share of each connection state, and never-seen devices mostly without health', () => {
    const count = (state: string) => acmeDevices.filter((d) => d.connection.state === state).length;
    expect(count('CONNECTED')).toBeGreaterThanOrEqual(72);
    expect(count('CONNECTED')).toBeLessThanOrEqual(96);
    expect(count('DISCONNECTED')).toBeGreaterThanOrEqual(15);
    expect(count('UNKNOWN')).toBeGreaterThanOrEqual(3);
    const unknown = acmeDevices.filter((d) => d.connection.state === 'UNKNOWN');
    expect(unknown.filter((d) => d.health === undefined).length).toBeGreaterThan(unknown.length / 2);
  });

  it.each([
    ['connection.state', 3],
    ['health.mode', 3],
    ['health.versionCode', 3],
    ['health.hubs.devices.health.state', 3],
    ['health.hubs.devices.capability.type', 3],
    ['health.hubs.devices.commands.command', 3],
    ['health.hubs.battery.health.state', 3],
  ])('gives the filter field %s at least %i distinct values', (path, min) => {
    expect(new Set(valuesAt(acmeDevices, path)).size).toBeGreaterThanOrEqual(min);
  });

  it('uses every connection state in both demo fleets', () => {
    for (const c of DEMO_COMPANIES) {
      const states = new Set(generateDemoDevices(c, DEMO_DEVICES_PER_COMPANY, DEMO_SEED).map((d) => d.connection.state));
      expect([...states].sort()).toEqual(['CONNECTED', 'DISCONNECTED', 'UNKNOWN']);
    }
  });

  it('keeps battery levels within 0..100 and cycle counts as non-negative integers', () => {
    const batteries = allBatteries(acmeDevices);
    expect(batteries.length).toBeGreaterThan(10);
    for (const { health } of batteries) {
      expect(health.level).toBeGreaterThanOrEqual(0);
      expect(health.level).toBeLessThanOrEqual(100);
      expect(Number.isInteger(health.cycle) && health.cycle >= 0).toBe(true);
    }
  });

  it('gives each device with health 1–2 hubs of 1–4 sub-devices, each with a message matching its messages', () => {
    for (const device of acmeDevices) {
      if (device.health === undefined) continue;
      expect(device.health.hubs.length).toBeGreaterThanOrEqual(1);
      expect(device.health.hubs.length).toBeLessThanOrEqual(2);
      for (const hub of device.health.hubs) {
        expect(hub.devices.length).toBeGreaterThanOrEqual(1);
        expect(hub.devices.length).toBeLessThanOrEqual(4);
        for (const sub of hub.devices) {
          expect(sub.health.messages.length).toBeGreaterThan(0);
          expect(sub.health.messages.map((m) => m.message)).toContain(sub.health.message);
        }
      }
    }
  });

  it('uses UTC ISO-8601 dates with updated ≥ created and connection dates between them', () => {
    for (const device of acmeDevices) {
      const dates = [
        device.created,
        device.updated,
        device.connection.connectedSince,
        device.connection.disconnectedSince,
        device.health?.updated,
      ].filter((d): d is string => d !== undefined);
      for (const date of dates) expect(isIsoUtc(date)).toBe(true);
      expect(Date.parse(device.updated)).toBeGreaterThanOrEqual(Date.parse(device.created));
      const since = device.connection.connectedSince ?? device.connection.disconnectedSince;
      if (since !== undefined) {
        expect(Date.parse(since)).toBeGreaterThanOrEqual(Date.parse(device.created));
        expect(Date.parse(since)).toBeLessThanOrEqual(Date.parse(device.updated));
      }
      for (const hub of device.health?.hubs ?? []) {
        expect(Date.parse(hub.registeredSince)).toBeGreaterThanOrEqual(Date.parse(device.created));
      }
    }
  });

  it('places non-virtual devices at named sites with plausible European coordinates', () => {
    for (const device of acmeDevices) {
      expect(device.location?.name).toMatch(/^Acme /);
      if (device.geoLocation === undefined) continue;
      expect(device.geoLocation.latitude).toBeGreaterThan(35);
      expect(device.geoLocation.latitude).toBeLessThan(60);
      expect(device.geoLocation.longitude).toBeGreaterThan(-10);
      expect(device.geoLocation.longitude).toBeLessThan(25);
    }
    expect(acmeDevices.some((d) => d.location?.name === 'Acme Store Lyon Part-Dieu')).toBe(true);
  });

  it('derives site names from the company id when no locations are given', () => {
    const devices = generateDemoDevices({ id: 'initech', prefix: 'INI' }, 30, 1);
    expect(devices.every((d) => d.location?.name?.startsWith('Initech '))).toBe(true);
    expect(devices.every((d) => d.serial.startsWith('INI-K'))).toBe(true);
  });

  it('dates the fleet relative to its reference instant: connected kiosks reported minutes ago, disconnected ones went quiet hours to days ago', () => {
    const now = '2026-12-06T09:30:00.000Z';
    const nowMs = Date.parse(now);
    const devices = generateDemoDevices(acme, DEMO_DEVICES_PER_COMPANY, DEMO_SEED, now);
    const minutesAgo = (date: string | undefined) => (nowMs - Date.parse(date as string)) / 60_000;
    for (const device of devices) {
      expect(minutesAgo(device.updated)).toBeGreaterThanOrEqual(0);
      expect(minutesAgo(device.created)).toBeLessThanOrEqual(731 * 24 * 60);
      if (device.connection.state === 'CONNECTED') expect(minutesAgo(device.health?.updated)).toBeLessThanOrEqual(15);
      if (device.connection.state === 'DISCONNECTED') {
        expect(minutesAgo(device.connection.disconnectedSince)).toBeGreaterThanOrEqual(10);
        expect(minutesAgo(device.connection.disconnectedSince)).toBeLessThanOrEqual(14 * 24 * 60);
      }
    }
    const quiet = devices
      .filter((device) => device.connection.state === 'DISCONNECTED')
      .map((device) => minutesAgo(device.connection.disconnectedSince));
    // Most outages are short: at least a quarter of the disconnected kiosks went quiet within the last 12 hours.
    expect(quiet.filter((minutes) => minutes <= 12 * 60).length).toBeGreaterThanOrEqual(quiet.length / 4);
    // The same fleet as at the default instant, moved in time: ids, serials and states do not depend on it.
    expect(devices.map((device) => [device.id, device.serial, device.connection.state])).toEqual(
      acmeDevices.map((device) => [device.id, device.serial, device.connection.state]),
    );
  });
});
