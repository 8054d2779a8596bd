/**
 * Contract of the SearchIndex port, run against every adapter (embedded engine, OpenSearch):
 * company scoping, filter semantics, full text, sorting, paging, counts and writes.
 * Only imports the core: an adapter passes when it behaves as the port documents.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { CONNECTION_STATES, SUB_DEVICE_HEALTH_STATES, type SubDevice } from '../../functions/core/devices/model.js';
import type { DeviceDocument, ScenarioDocument, SearchDocument } from '../../functions/core/search/documents.js';
import type { SearchIndex } from '../../functions/core/search/ports.js';
import type { CountQuery, SearchQuery, SearchResult, SearchSort } from '../../functions/core/search/query.js';

type SubDeviceState = SubDevice['health']['state'];
type CapabilityType = SubDevice['capability']['type'];

/** What varies between test devices; everything else gets realistic defaults. */
interface DeviceSpec {
  id: string;
  company?: string;
  serial: string;
  location?: string;
  state?: DeviceDocument['connection']['state'];
  created?: string;
  /** Omit to make a device without health (no mode, version or hubs). */
  health?: {
    mode: NonNullable<DeviceDocument['health']>['mode'];
    versionCode: string;
    versionName: string;
    /** One sub-device per entry, all on one hub, with the names of the commands it advertises (none unless given). */
    subDevices: { state: SubDeviceState; type: CapabilityType; label: string; commands?: string[] }[];
  };
}

/** Builds a device document as the indexer would (device resource plus `type`). */
function device(spec: DeviceSpec): DeviceDocument {
  const state = spec.state ?? 'CONNECTED';
  const created = spec.created ?? '2024-01-15T08:00:00.000Z';
  return {
    type: 'DEVICE',
    id: spec.id,
    company: spec.company ?? 'acme',
    serial: spec.serial,
    created,
    updated: '2024-06-01T12:00:00.000Z',
    ...(spec.location === undefined ? {} : { location: { name: spec.location, description: 'Main hall, next to the ticket office' } }),
    connection: {
      state,
      ...(state === 'CONNECTED' ? { connectedSince: '2024-06-01T07:00:00.000Z' } : {}),
      ...(state === 'DISCONNECTED' ? { disconnectedSince: '2024-05-30T22:00:00.000Z' } : {}),
    },
    ...(spec.health === undefined
      ? {}
      : {
          health: {
            updated: '2024-06-01T12:00:00.000Z',
            versionCode: spec.health.versionCode,
            versionName: spec.health.versionName,
            mode: spec.health.mode,
            hubs: [
              {
                uid: `${spec.id}-hub`,
                label: 'Main hub',
                version: '3.2.0',
                registeredSince: created,
                type: 'STANDARD',
                battery: { health: { state: 'GOOD', plugged: 'AC', status: 'FULL', level: 100, cycle: 12 } },
                devices: spec.health.subDevices.map((sub, index) => ({
                  uid: `${spec.id}-sub-${index}`,
                  label: sub.label,
                  version: '1.4.2',
                  health: { state: sub.state, message: sub.state === 'NOMINAL' ? 'OK' : 'Check device', messages: [] },
                  capability: { type: sub.type, modes: [] },
                  commands: (sub.commands ?? []).map((command) => ({
                    command,
                    title: command,
                    description: `Runs ${command}.`,
                    payload: {},
                    arguments: [],
                  })),
                })),
              },
            ],
          },
        }),
  };
}

function scenario(id: string, company: string, name: string): ScenarioDocument {
  return {
    type: 'SCENARIO',
    id,
    company,
    name,
    description: 'Attract loop and ticket purchase flow',
    latestVersion: '1.2.0',
    versions: ['1.0.0', '1.2.0'],
    created: '2024-02-01T09:00:00.000Z',
    updated: '2024-03-01T09:00:00.000Z',
  };
}

const printer = (state: SubDeviceState) => ({
  state,
  type: 'PRINTER' as const,
  label: 'Receipt printer',
  commands: ['reboot', 'print-test-page'],
});
const payment = (state: SubDeviceState) => ({ state, type: 'PAYMENT' as const, label: 'Card reader', commands: ['reboot', 'reconcile'] });

/**
 * acme: five devices (one without health, one without location) and a scenario; globex: a device sharing
 * words with acme's ("Lyon", "Station", version 1.0.0) and a scenario.
 */
function fixture(): SearchDocument[] {
  return [
    device({
      id: 'dev-1',
      serial: 'ACM-0001',
      location: 'Lyon Part-Dieu Station',
      state: 'CONNECTED',
      created: '2024-01-03T10:00:00.000Z',
      health: { mode: 'SERVER', versionCode: '100', versionName: '1.0.0', subDevices: [printer('NOMINAL'), payment('WARNING')] },
    }),
    device({
      id: 'dev-2',
      serial: 'ACM-0002',
      location: 'Paris Gare de Lyon',
      state: 'DISCONNECTED',
      created: '2024-01-01T10:00:00.000Z',
      health: { mode: 'EMBEDDED_PLATFORM_ANDROID', versionCode: '101', versionName: '1.0.1', subDevices: [printer('DOWN')] },
    }),
    device({ id: 'dev-3', serial: 'ACM-0003', state: 'UNKNOWN', created: '2024-01-05T10:00:00.000Z' }),
    device({
      id: 'dev-4',
      serial: 'ACM-0004',
      location: 'Berlin Hauptbahnhof',
      state: 'CONNECTED',
      created: '2024-01-02T10:00:00.000Z',
      health: {
        mode: 'EMBEDDED_PLATFORM_COMPUTER',
        versionCode: '101',
        versionName: '1.0.1',
        // `Reboot` differs from the printer's `reboot` only by case: another command.
        subDevices: [printer('NOMINAL'), { state: 'NOMINAL', type: 'MEDIA', label: 'Touch screen', commands: ['Reboot', 'show-image'] }],
      },
    }),
    device({
      id: 'dev-5',
      serial: 'ACM-0005',
      location: 'Lyon Saint-Exupery Airport',
      state: 'CONNECTED',
      created: '2024-01-04T10:00:00.000Z',
      health: {
        mode: 'SERVER',
        versionCode: '100',
        versionName: '1.0.0',
        subDevices: [{ state: 'WARNING', type: 'IOT', label: 'Locker bank' }],
      },
    }),
    scenario('welcome-kiosk', 'acme', 'Welcome kiosk'),
    device({
      id: 'dev-1',
      company: 'globex',
      serial: 'GLX-0001',
      location: 'Lyon Perrache Station',
      state: 'CONNECTED',
      health: { mode: 'SERVER', versionCode: '100', versionName: '1.0.0', subDevices: [printer('DOWN')] },
    }),
    scenario('timetable', 'globex', 'Timetable display'),
  ];
}

const ACME_DEVICES = ['dev-1', 'dev-2', 'dev-3', 'dev-4', 'dev-5'];
/** The filter field of the commands sub-devices advertise (a data field: its values are whatever devices report). */
const COMMAND = 'health.hubs.devices.commands.command';

/** A search of acme, sorted by serial, one big page, with what the test overrides. */
function query(overrides: Partial<SearchQuery> = {}): SearchQuery {
  return { companies: ['acme'], filters: new Map(), sort: { field: 'serial', direction: 'ASC' }, page: 1, pageSize: 100, ...overrides };
}

function filters(entries: Record<string, string[]>): Map<string, string[]> {
  return new Map(Object.entries(entries));
}

function global(text: string, overrides: Partial<SearchQuery> = {}): SearchQuery {
  return query({ global: text, sort: { field: 'relevance', direction: 'DESC' }, ...overrides });
}

/** `company/id` of each resource, in result order. */
function refs(result: SearchResult): string[] {
  return result.resources.map((resource) => `${resource.company}/${resource.id}`);
}

/** Ids of each resource, in result order. */
function ids(result: SearchResult): string[] {
  return result.resources.map((resource) => resource.id);
}

function counts(overrides: Partial<CountQuery> & Pick<CountQuery, 'fields'>): CountQuery {
  return { companies: ['acme'], type: 'DEVICE', filters: new Map(), ...overrides };
}

/**
 * Registers the SearchIndex contract suite for one adapter.
 * @param makeIndex returns an empty index; called before every test.
 * @param skipReason when given, the suite is reported as skipped, with this reason in its name (an adapter whose
 *   backend is not available here, e.g. OpenSearch without a cluster).
 */
export function describeSearchIndexContract(name: string, makeIndex: () => Promise<SearchIndex>, skipReason?: string): void {
  const title = `SearchIndex contract: ${name}${skipReason === undefined ? '' : ` (skipped: ${skipReason})`}`;
  describe.skipIf(skipReason !== undefined)(title, () => {
    let index: SearchIndex;

    beforeEach(async () => {
      index = await makeIndex();
      await index.upsert(fixture());
    });

    describe('company scoping', () => {
      it('returns only documents of the requested companies', async () => {
        const acme = await index.search(query());
        expect(acme.total).toBe(6);
        expect(acme.resources.every((resource) => resource.company === 'acme')).toBe(true);

        const globex = await index.search(query({ companies: ['globex'] }));
        expect(refs(globex)).toEqual(['globex/dev-1', 'globex/timetable']);

        const both = await index.search(query({ companies: ['acme', 'globex'] }));
        expect(both.total).toBe(8);
      });

      it('applies the companies together with filters', async () => {
        const connected = await index.search(query({ filters: filters({ 'connection.state': ['CONNECTED'] }) }));
        expect(refs(connected)).toEqual(['acme/dev-1', 'acme/dev-4', 'acme/dev-5']);
      });

      it('applies the companies in full-text mode', async () => {
        const acme = await index.search(global('lyon', { sort: { field: 'serial', direction: 'ASC' } }));
        expect(refs(acme)).toEqual(['acme/dev-1', 'acme/dev-2', 'acme/dev-5']);
        const globex = await index.search(global('lyon', { companies: ['globex'] }));
        expect(refs(globex)).toEqual(['globex/dev-1']);
      });

      it('counts only documents of the requested companies', async () => {
        const result = await index.countValues(counts({ fields: ['connection.state', 'company'] }));
        expect(result.get('connection.state')?.get('CONNECTED')).toEqual({ count: 3 });
        expect([...(result.get('company')?.entries() ?? [])]).toEqual([['acme', { count: 5 }]]);
      });

      it('returns nothing for a company without documents', async () => {
        expect(await index.search(query({ companies: ['initech'] }))).toEqual({ total: 0, resources: [] });
        expect(await index.search(global('lyon', { companies: ['initech'] }))).toEqual({ total: 0, resources: [] });
      });
    });

    describe('filters', () => {
      it('ORs the values of one field', async () => {
        const result = await index.search(query({ filters: filters({ 'connection.state': ['CONNECTED', 'UNKNOWN'] }) }));
        expect(ids(result)).toEqual(['dev-1', 'dev-3', 'dev-4', 'dev-5']);
      });

      it('ANDs different fields', async () => {
        const result = await index.search(query({ filters: filters({ 'connection.state': ['CONNECTED'], 'health.mode': ['SERVER'] }) }));
        expect(ids(result)).toEqual(['dev-1', 'dev-5']);
        const none = await index.search(query({ filters: filters({ 'connection.state': ['DISCONNECTED'], 'health.mode': ['SERVER'] }) }));
        expect(none).toEqual({ total: 0, resources: [] });
      });

      it('filters on type like any other field', async () => {
        const scenarios = await index.search(query({ filters: filters({ type: ['SCENARIO'] }) }));
        expect(ids(scenarios)).toEqual(['welcome-kiosk']);
        const devices = await index.search(query({ filters: filters({ type: ['DEVICE'] }) }));
        expect(ids(devices)).toEqual(ACME_DEVICES);
        const withState = await index.search(query({ filters: filters({ type: ['SCENARIO'], 'connection.state': ['CONNECTED'] }) }));
        expect(withState.total).toBe(0);
      });

      it('matches a multi-valued nested field when any sub-device has the value', async () => {
        const down = await index.search(query({ filters: filters({ 'health.hubs.devices.health.state': ['DOWN'] }) }));
        expect(ids(down)).toEqual(['dev-2']);
        const warning = await index.search(query({ filters: filters({ 'health.hubs.devices.health.state': ['WARNING'] }) }));
        expect(ids(warning)).toEqual(['dev-1', 'dev-5']);
        const either = await index.search(query({ filters: filters({ 'health.hubs.devices.health.state': ['DOWN', 'WARNING'] }) }));
        expect(ids(either)).toEqual(['dev-1', 'dev-2', 'dev-5']);
      });

      it('matches each nested field independently, not within one sub-device', async () => {
        // dev-1 has a NOMINAL printer and a WARNING card reader: it has a PRINTER and a WARNING sub-device.
        const result = await index.search(
          query({
            filters: filters({ 'health.hubs.devices.health.state': ['WARNING'], 'health.hubs.devices.capability.type': ['PRINTER'] }),
          }),
        );
        expect(ids(result)).toEqual(['dev-1']);
      });

      it('matches a device on a command any of its sub-devices advertises, exactly and case-sensitively', async () => {
        const byCommand = async (commands: string[], others: Record<string, string[]> = {}) =>
          ids(await index.search(query({ filters: filters({ [COMMAND]: commands, ...others }) })));
        expect(await byCommand(['print-test-page'])).toEqual(['dev-1', 'dev-2', 'dev-4']);
        expect(await byCommand(['Reboot'])).toEqual(['dev-4']);
        expect(await byCommand(['reconcile', 'show-image'])).toEqual(['dev-1', 'dev-4']);
        expect(await byCommand(['print-test-page'], { 'health.hubs.devices.health.state': ['DOWN'] })).toEqual(['dev-2']);
        // Neither a prefix nor another case of a value matches.
        expect(await byCommand(['print', 'PRINT-TEST-PAGE'])).toEqual([]);
        const globex = await index.search(query({ companies: ['globex'], filters: filters({ [COMMAND]: ['print-test-page'] }) }));
        expect(refs(globex)).toEqual(['globex/dev-1']);
      });

      it('matches nothing on a value no document has', async () => {
        const result = await index.search(query({ filters: filters({ 'health.versionCode': ['999'] }) }));
        expect(result).toEqual({ total: 0, resources: [] });
      });
    });

    describe('full text (global)', () => {
      it('finds a device by its serial', async () => {
        expect(ids(await index.search(global('ACM-0002')))).toEqual(['dev-2']);
        expect(ids(await index.search(global('acm-0004')))).toEqual(['dev-4']);
      });

      it('finds devices by location name, case-insensitively', async () => {
        expect(ids(await index.search(global('Berlin')))).toEqual(['dev-4']);
        const lyon = await index.search(global('LYON', { sort: { field: 'serial', direction: 'ASC' } }));
        expect(ids(lyon)).toEqual(['dev-1', 'dev-2', 'dev-5']);
      });

      it('matches word prefixes', async () => {
        expect(ids(await index.search(global('hauptb')))).toEqual(['dev-4']);
        const serials = await index.search(global('ACM-000', { sort: { field: 'serial', direction: 'ASC' } }));
        expect(ids(serials)).toEqual(ACME_DEVICES);
      });

      it('tolerates a typo in a longer word', async () => {
        expect(ids(await index.search(global('Berlim')))).toEqual(['dev-4']);
      });

      it('requires every word to match', async () => {
        expect(ids(await index.search(global('lyon station')))).toEqual(['dev-1']);
        expect(ids(await index.search(global('lyon airport')))).toEqual(['dev-5']);
        expect((await index.search(global('berlin airport'))).total).toBe(0);
      });

      it('searches sub-device labels, version names and scenarios', async () => {
        const printers = await index.search(global('receipt printer', { sort: { field: 'serial', direction: 'ASC' } }));
        expect(ids(printers)).toEqual(['dev-1', 'dev-2', 'dev-4']);
        const version = await index.search(global('1.0.1', { sort: { field: 'serial', direction: 'ASC' } }));
        expect(ids(version)).toEqual(['dev-2', 'dev-4']);
        expect(refs(await index.search(global('welcome')))).toEqual(['acme/welcome-kiosk']);
      });

      it('returns nothing when a word matches nothing', async () => {
        expect(await index.search(global('lyon zanzibar'))).toEqual({ total: 0, resources: [] });
      });

      it('ranks an exact word before a mere prefix match', async () => {
        await index.upsert([device({ id: 'dev-6', serial: 'ACM-0006', location: 'Berlinale Palace' })]);
        const result = await index.search(global('berlin'));
        expect(ids(result)).toEqual(['dev-4', 'dev-6']);
      });

      it('orders equal scores by document key', async () => {
        await index.upsert([
          device({ id: 'dev-8', serial: 'ACM-0008', location: 'Oslo Depot' }),
          device({ id: 'dev-7', serial: 'ACM-0007', location: 'Oslo Depot' }),
        ]);
        const result = await index.search(global('oslo'));
        expect(ids(result)).toEqual(['dev-7', 'dev-8']);
        const page2 = await index.search(global('oslo', { page: 2, pageSize: 1 }));
        expect(page2).toMatchObject({ total: 2, resources: [{ id: 'dev-8' }] });
      });

      it('sorts full-text results on a field when asked', async () => {
        const result = await index.search(global('lyon', { sort: { field: 'created', direction: 'DESC' } }));
        expect(ids(result)).toEqual(['dev-5', 'dev-1', 'dev-2']);
      });
    });

    describe('sorting', () => {
      const sorted = async (sort: SearchSort): Promise<string[]> =>
        ids(await index.search(query({ sort, filters: filters({ type: ['DEVICE'] }) })));

      it('sorts ascending and descending, ties by document key ascending, missing values last', async () => {
        // versionCode: dev-1 100, dev-2 101, dev-3 none, dev-4 101, dev-5 100.
        expect(await sorted({ field: 'health.versionCode', direction: 'ASC' })).toEqual(['dev-1', 'dev-5', 'dev-2', 'dev-4', 'dev-3']);
        expect(await sorted({ field: 'health.versionCode', direction: 'DESC' })).toEqual(['dev-2', 'dev-4', 'dev-1', 'dev-5', 'dev-3']);
      });

      it('puts documents missing the field last in both directions', async () => {
        expect(await sorted({ field: 'location.name', direction: 'ASC' })).toEqual(['dev-4', 'dev-1', 'dev-5', 'dev-2', 'dev-3']);
        expect(await sorted({ field: 'location.name', direction: 'DESC' })).toEqual(['dev-2', 'dev-5', 'dev-1', 'dev-4', 'dev-3']);
      });

      it('sorts strings by code point (UTF-8 byte order): upper case before lower, an emoji after U+FFFD', async () => {
        const named = (id: string, location: string) => device({ id, serial: `SN-${id}`, location });
        await index.upsert([
          named('dev-1', 'b kiosk'),
          named('dev-2', 'B kiosk'),
          named('dev-3', '\u{1F600} kiosk'),
          named('dev-4', '\uFFFD kiosk'),
          named('dev-5', '\uE000 kiosk'),
          named('dev-6', 'é kiosk'),
        ]);
        expect(await sorted({ field: 'location.name', direction: 'ASC' })).toEqual(['dev-2', 'dev-1', 'dev-6', 'dev-5', 'dev-4', 'dev-3']);
        expect(await sorted({ field: 'location.name', direction: 'DESC' })).toEqual(['dev-3', 'dev-4', 'dev-5', 'dev-6', 'dev-1', 'dev-2']);
      });

      it('sorts ISO dates chronologically', async () => {
        expect(await sorted({ field: 'created', direction: 'ASC' })).toEqual(['dev-2', 'dev-4', 'dev-1', 'dev-5', 'dev-3']);
        expect(await sorted({ field: 'created', direction: 'DESC' })).toEqual(['dev-3', 'dev-5', 'dev-1', 'dev-4', 'dev-2']);
      });

      it('breaks ties across companies and types by (type, company, id)', async () => {
        const result = await index.search(query({ companies: ['acme', 'globex'], sort: { field: 'health.mode', direction: 'ASC' } }));
        // EMBEDDED_PLATFORM_ANDROID, EMBEDDED_PLATFORM_COMPUTER, SERVER ×3, then no health: devices before scenarios.
        expect(refs(result)).toEqual([
          'acme/dev-2',
          'acme/dev-4',
          'acme/dev-1',
          'acme/dev-5',
          'globex/dev-1',
          'acme/dev-3',
          'acme/welcome-kiosk',
          'globex/timetable',
        ]);
      });
    });

    describe('paging', () => {
      const page = (number: number, pageSize = 2): Promise<SearchResult> =>
        index.search(query({ filters: filters({ type: ['DEVICE'] }), page: number, pageSize }));

      it('splits the results into pages in order, the last one partial', async () => {
        const pages = await Promise.all([page(1), page(2), page(3)]);
        expect(pages.map(ids)).toEqual([['dev-1', 'dev-2'], ['dev-3', 'dev-4'], ['dev-5']]);
        expect(pages.map((result) => result.total)).toEqual([5, 5, 5]);
      });

      it('returns no resources but the total past the last page', async () => {
        expect(await page(4)).toEqual({ total: 5, resources: [] });
        expect(await page(1000, 100)).toEqual({ total: 5, resources: [] });
      });

      it('pages in a stable order when sort values tie', async () => {
        const sort: SearchSort = { field: 'connection.state', direction: 'DESC' };
        const all = ids(await index.search(query({ sort, filters: filters({ type: ['DEVICE'] }) })));
        const paged: string[] = [];
        for (let number = 1; number <= 5; number += 1) {
          paged.push(...ids(await index.search(query({ sort, filters: filters({ type: ['DEVICE'] }), page: number, pageSize: 1 }))));
        }
        expect(paged).toEqual(all);
        expect(all).toEqual(['dev-3', 'dev-2', 'dev-1', 'dev-4', 'dev-5']);
      });
    });

    describe('counts', () => {
      it('equal the search totals for each value', async () => {
        const fields = ['connection.state', 'health.hubs.devices.health.state'];
        const result = await index.countValues(counts({ fields }));
        for (const [field, values] of [
          ['connection.state', CONNECTION_STATES],
          ['health.hubs.devices.health.state', SUB_DEVICE_HEALTH_STATES],
        ] as const) {
          for (const value of values) {
            const { total } = await index.search(query({ filters: filters({ type: ['DEVICE'], [field]: [value] }) }));
            expect(result.get(field)?.get(value)?.count ?? 0, `${field}=${value}`).toBe(total);
          }
        }
      });

      it('count a document once per distinct value it carries', async () => {
        // dev-4 has two NOMINAL sub-devices; dev-1 one NOMINAL and one WARNING.
        const result = await index.countValues(counts({ fields: ['health.hubs.devices.health.state'] }));
        expect(Object.fromEntries(result.get('health.hubs.devices.health.state') ?? [])).toEqual({
          DOWN: { count: 1 },
          NOMINAL: { count: 2 },
          WARNING: { count: 2 },
        });
      });

      it('apply the filters', async () => {
        const result = await index.countValues(
          counts({ fields: ['health.mode'], filters: filters({ 'connection.state': ['CONNECTED'] }) }),
        );
        expect(Object.fromEntries(result.get('health.mode') ?? [])).toEqual({
          EMBEDDED_PLATFORM_COMPUTER: { count: 1 },
          SERVER: { count: 2 },
        });
      });

      it('count each advertised command once per device that has it, in code point order, without labels', async () => {
        // dev-1 advertises `reboot` on its printer and on its card reader: it counts once.
        const result = await index.countValues(counts({ fields: [COMMAND] }));
        expect([...(result.get(COMMAND) ?? [])]).toEqual([
          ['Reboot', { count: 1 }],
          ['print-test-page', { count: 3 }],
          ['reboot', { count: 3 }],
          ['reconcile', { count: 1 }],
          ['show-image', { count: 1 }],
        ]);
        for (const [value, { count }] of result.get(COMMAND) ?? []) {
          const { total } = await index.search(query({ filters: filters({ type: ['DEVICE'], [COMMAND]: [value] }) }));
          expect(count, value).toBe(total);
        }
        const filtered = await index.countValues(
          counts({ fields: [COMMAND], filters: filters({ 'health.hubs.devices.health.state': ['WARNING'] }) }),
        );
        expect([...(filtered.get(COMMAND) ?? [])]).toEqual([
          ['print-test-page', { count: 1 }],
          ['reboot', { count: 1 }],
          ['reconcile', { count: 1 }],
        ]);
        const scenarios = await index.countValues(counts({ type: 'SCENARIO', fields: [COMMAND] }));
        expect(scenarios.get(COMMAND)).toEqual(new Map());
      });

      it('label data values with their label field', async () => {
        const result = await index.countValues(counts({ fields: ['health.versionCode'] }));
        expect(Object.fromEntries(result.get('health.versionCode') ?? [])).toEqual({
          100: { count: 2, label: '1.0.0' },
          101: { count: 2, label: '1.0.1' },
        });
      });

      it('label a data value from the matching document with the smallest key when its documents disagree', async () => {
        const versioned = (id: string, versionName: string) =>
          device({ id, serial: `SN-${id}`, health: { mode: 'SERVER', versionCode: '300', versionName, subDevices: [] } });
        // Written in an order unlike their keys', so that neither write order nor storage order picks the label.
        await index.upsert([versioned('dev-9', '3.0.0-nine'), versioned('dev-7', '3.0.0-seven')]);
        await index.upsert([versioned('dev-8', '3.0.0-eight')]);
        const result = await index.countValues(counts({ fields: ['health.versionCode'] }));
        expect(result.get('health.versionCode')?.get('300')).toEqual({ count: 3, label: '3.0.0-seven' });
      });

      it('restrict to the type and give an empty map to fields without values', async () => {
        const result = await index.countValues(counts({ type: 'SCENARIO', fields: ['health.mode', 'type'] }));
        expect(result.get('health.mode')).toEqual(new Map());
        expect(Object.fromEntries(result.get('type') ?? [])).toEqual({ SCENARIO: { count: 1 } });
        const anyType = await index.countValues({ companies: ['acme', 'globex'], filters: new Map(), fields: ['type'] });
        expect(Object.fromEntries(anyType.get('type') ?? [])).toEqual({ DEVICE: { count: 6 }, SCENARIO: { count: 2 } });
      });
    });

    describe('selectIds', () => {
      const select = (companies: string[], entries: Record<string, string[]> = {}, max = 100) =>
        index.selectIds({ companies, filters: filters(entries) }, max);

      it('selects the device ids of the companies, never scenarios, sorted by id, with the total', async () => {
        expect(await select(['acme'])).toEqual({ ids: ACME_DEVICES, total: 5 });
        expect(await select(['globex'])).toEqual({ ids: ['dev-1'], total: 1 });
        expect(await select(['acme', 'globex'])).toEqual({ ids: ['dev-1', ...ACME_DEVICES], total: 6 });
        expect(await select(['initech'])).toEqual({ ids: [], total: 0 });
        // Ids compare as strings: `dev-10` before `dev-2`, upper case before lower case.
        await index.upsert([device({ id: 'dev-10', serial: 'ACM-0010' }), device({ id: 'Zeta', serial: 'ACM-0011' })]);
        expect((await select(['acme'])).ids).toEqual(['Zeta', 'dev-1', 'dev-10', 'dev-2', 'dev-3', 'dev-4', 'dev-5']);
      });

      it('applies the filters as the search does: OR within a field, AND across fields', async () => {
        const cases: Record<string, string[]>[] = [
          { 'connection.state': ['CONNECTED', 'UNKNOWN'] },
          { 'connection.state': ['CONNECTED'], 'health.mode': ['SERVER'] },
          { 'health.hubs.devices.health.state': ['WARNING'], 'health.hubs.devices.capability.type': ['PRINTER'] },
          { [COMMAND]: ['print-test-page', 'Reboot'], 'connection.state': ['CONNECTED'] },
          { 'health.versionCode': ['999'] },
          { type: ['DEVICE'], 'health.versionCode': ['101'] },
        ];
        for (const entries of cases) {
          const searched = await index.search(query({ filters: filters(entries), sort: { field: 'id', direction: 'ASC' } }));
          expect(await select(['acme'], entries), JSON.stringify(entries)).toEqual({ ids: ids(searched), total: searched.total });
        }
        expect((await select(['acme'], { 'connection.state': ['CONNECTED'], 'health.mode': ['SERVER'] })).ids).toEqual(['dev-1', 'dev-5']);
      });

      it('returns at most max ids, the first in id order, and the total of every match', async () => {
        expect(await select(['acme'], {}, 2)).toEqual({ ids: ['dev-1', 'dev-2'], total: 5 });
        expect(await select(['acme'], { 'connection.state': ['CONNECTED'] }, 0)).toEqual({ ids: [], total: 3 });
      });
    });

    describe('writes', () => {
      it('upsert replaces a document with the same (type, company, id)', async () => {
        await index.upsert([device({ id: 'dev-1', serial: 'ACM-0001', location: 'Marseille Vieux-Port', state: 'DISCONNECTED' })]);
        const all = await index.search(query());
        expect(all.total).toBe(6);
        expect(all.resources.find((resource) => resource.id === 'dev-1')).toMatchObject({ connection: { state: 'DISCONNECTED' } });
        expect(ids(await index.search(query({ filters: filters({ 'connection.state': ['CONNECTED'] }) })))).toEqual(['dev-4', 'dev-5']);
        expect(ids(await index.search(global('Part-Dieu')))).toEqual([]);
        expect(ids(await index.search(global('marseille')))).toEqual(['dev-1']);
        const modes = await index.countValues(counts({ fields: ['health.mode'] }));
        expect(modes.get('health.mode')?.get('SERVER')).toEqual({ count: 1 });
        // The same id in another company or type is another document.
        expect(refs(await index.search(global('lyon', { companies: ['globex'] })))).toEqual(['globex/dev-1']);
      });

      it('upsert keeps the last of duplicates in one batch', async () => {
        await index.upsert([
          device({ id: 'dev-9', serial: 'ACM-0009', location: 'Wien Westbahnhof' }),
          device({ id: 'dev-9', serial: 'ACM-0009', location: 'Praha Hlavni' }),
        ]);
        expect(ids(await index.search(global('ACM-0009')))).toEqual(['dev-9']);
        expect((await index.search(global('wien'))).total).toBe(0);
        expect(ids(await index.search(global('praha')))).toEqual(['dev-9']);
      });

      it('remove deletes documents and ignores unknown keys', async () => {
        await index.remove([
          { type: 'DEVICE', company: 'acme', id: 'dev-2' },
          { type: 'DEVICE', company: 'acme', id: 'no-such-device' },
          { type: 'SCENARIO', company: 'acme', id: 'dev-1' },
        ]);
        expect(ids(await index.search(query({ filters: filters({ type: ['DEVICE'] }) })))).toEqual(['dev-1', 'dev-3', 'dev-4', 'dev-5']);
        expect(ids(await index.search(global('paris')))).toEqual([]);
        const states = await index.countValues(counts({ fields: ['connection.state'] }));
        expect(states.get('connection.state')?.get('DISCONNECTED')).toBeUndefined();
        await index.remove([{ type: 'DEVICE', company: 'acme', id: 'dev-2' }]);
      });

      it('is not altered by mutating inputs or results', async () => {
        const input = device({ id: 'dev-6', serial: 'ACM-0006', location: 'Oslo Depot' });
        await index.upsert([input]);
        input.serial = 'CHANGED';
        const [first] = (await index.search(global('oslo'))).resources as DeviceDocument[];
        expect(first?.serial).toBe('ACM-0006');
        // An adapter may return copies (OpenSearch) or read-only documents (embedded: frozen, the write throws).
        const attempt = (write: () => void) => {
          try {
            write();
          } catch (error) {
            expect(error).toBeInstanceOf(TypeError);
          }
        };
        attempt(() => {
          if (first !== undefined) first.serial = 'CHANGED';
        });
        attempt(() => {
          if (first?.location !== undefined) first.location.name = 'CHANGED';
        });
        const again = (await index.search(global('oslo'))).resources as DeviceDocument[];
        expect(again[0]?.serial).toBe('ACM-0006');
        expect(again[0]?.location?.name).toBe('Oslo Depot');
      });
    });
  });
}
