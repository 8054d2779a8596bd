/**
 * Alert rules and alerts below the HTTP layer, on DynamoDB Local: the real rule and alert stores (the rule count's
 * transaction, the watch and alert transactions, the `due` index), a fake device registry, an injected clock. Device
 * changes are handed to evaluateDeviceChanges as the devices stream's consumer hands them (both images).
 */
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CursorCodec } from '../../../functions/adapters/aws/cursor-codec.js';
import { DynamoDbAlertRuleStore } from '../../../functions/adapters/aws/dynamodb-alert-rule-store.js';
import { DynamoDbAlertStore } from '../../../functions/adapters/aws/dynamodb-alert-store.js';
import { listAlerts } from '../../../functions/core/alerts/alerts.js';
import { alertChangedEventOf, applyAlertTableChanges } from '../../../functions/core/alerts/changes.js';
import { type DeviceImages, evaluateDeviceChanges, RuleCache } from '../../../functions/core/alerts/evaluation.js';
import type { AlertCondition, StoredAlertRule } from '../../../functions/core/alerts/model.js';
import { createAlertRule, deleteAlertRule, listAlertRules, updateAlertRule } from '../../../functions/core/alerts/rules.js';
import { sweepDueAlerts } from '../../../functions/core/alerts/sweeper.js';
import { connectionChangedEventOf } from '../../../functions/core/devices/connection-changes.js';
import type { StoredDevice, SubDevice } from '../../../functions/core/devices/model.js';
import type { DeviceRepository } from '../../../functions/core/devices/ports.js';
import type { DeviceDocument } from '../../../functions/core/search/documents.js';
import { BadRequestError, NotFoundError, UnprocessableRequestError } from '../../../functions/core/shared/errors.js';
import type { Principal } from '../../../functions/core/shared/principal.js';
import type { AlertChangedEvent } from '../../../functions/core/webhooks/events.js';
import { LOCAL_TABLES } from '../../../functions/local/local-environment.js';
import { useLocalTables } from '../../support/local-tables.js';

const MINUTE = 60_000;
const START = Date.parse('2033-05-02T08:00:00.000Z');
const tables = useLocalTables('dss-alerts-');

let clock: Date;
let company: string;
let companyCount = 0;
let rules: DynamoDbAlertRuleStore;
let alerts: DynamoDbAlertStore;
const now = () => clock;
const at = (minutes: number) => new Date(START + minutes * MINUTE).toISOString();
const advanceTo = (minutes: number) => {
  clock = new Date(START + minutes * MINUTE);
};
const alice = (): Principal => ({ subject: 'alice-sub', username: 'alice', companies: [company], scopes: new Set(['alerts:write']) });

/** The devices as they are now, for the sweeper's reads. */
const current = new Map<string, StoredDevice>();
const devices = { get: async (owner: string, id: string) => current.get(`${owner}#${id}`) } as unknown as DeviceRepository;

/** A device document; `connection` DISCONNECTED since `since` (ISO) or CONNECTED. */
function device(
  id: string,
  options: {
    disconnectedSince?: string;
    location?: string;
    subState?: SubDevice['health']['state'];
    battery?: number;
    updated?: string;
  } = {},
): DeviceDocument {
  const updated = options.updated ?? clock.toISOString();
  const sub: SubDevice = {
    uid: 'printer-1',
    label: 'Receipt printer',
    version: '1.0',
    health: { state: options.subState ?? 'NOMINAL', message: '', messages: [] },
    capability: { type: 'PRINTER', modes: ['PRINTER_PRINT'] },
    ...(options.battery === undefined
      ? {}
      : { battery: { health: { state: 'GOOD', plugged: 'USB', status: 'DISCHARGING', level: options.battery, cycle: 3 } } }),
    commands: [],
  };
  const document: DeviceDocument = {
    type: 'DEVICE',
    id,
    company,
    serial: `SN-${id}`,
    created: at(-600),
    updated,
    location: { name: options.location ?? 'Lyon' },
    connection:
      options.disconnectedSince === undefined
        ? { state: 'CONNECTED', connectedSince: at(-600) }
        : { state: 'DISCONNECTED', disconnectedSince: options.disconnectedSince },
    health: {
      updated,
      versionCode: '7',
      versionName: '7.0',
      mode: 'SERVER',
      hubs: [{ uid: 'hub-1', label: 'Hub', version: '1', registeredSince: at(-600), type: 'x', devices: [sub] }],
    },
  };
  return document;
}

/** Hands one change (before → after) to the evaluation, as the stream consumer does; the device is now `after`. */
async function change(before: DeviceDocument | undefined, after: DeviceDocument | undefined) {
  const id = (after ?? before)?.id as string;
  if (after === undefined) current.delete(`${company}#${id}`);
  else current.set(`${company}#${id}`, after as StoredDevice);
  const images: DeviceImages = { company, deviceId: id, ...(before ? { before } : {}), ...(after ? { after } : {}) };
  return evaluateDeviceChanges({ rulesOf: (owner) => rules.list(owner), alerts, now }, [images]);
}

async function rule(condition: AlertCondition, query = 'location.name=Lyon'): Promise<StoredAlertRule> {
  const filters = new Map<string, string[]>();
  for (const [name, value] of new URLSearchParams(query)) filters.set(name, [...(filters.get(name) ?? []), value]);
  const created = await createAlertRule({ rules, now }, alice(), company, { name: 'Watch', query, condition }, { filters, companies: [] });
  // The rule's recheck by the search is backfill.test.ts's subject: ended here, so that sweeps count watches only.
  const stored = (await rules.get(company, created.id)) as StoredAlertRule;
  await rules.rechecked(company, stored.id, stored.revision);
  return (await rules.get(company, created.id)) as StoredAlertRule;
}

/** The search and device documents of a rule's recheck: never reached here (every rule's recheck is ended at once). */
const noRecheck = {
  search: { selectIds: async () => Promise.reject(new Error('No recheck is expected in these tests.')) },
  devices: { documentsOf: async () => Promise.reject(new Error('No recheck is expected in these tests.')) },
};

const alertsOf = async (state?: 'OPEN' | 'RESOLVED') => (await listAlerts({ alerts }, alice(), company, { limit: 100, state })).items;
const sweep = () => sweepDueAlerts({ alerts, rules, devices, backfill: noRecheck, now });

beforeAll(() => {
  const cursors = new CursorCodec(() => Buffer.alloc(32, 9));
  rules = new DynamoDbAlertRuleStore(tables(), LOCAL_TABLES.alerts);
  alerts = new DynamoDbAlertStore(tables(), LOCAL_TABLES.alerts, cursors);
});

beforeEach(() => {
  companyCount += 1;
  company = `alerts-${companyCount}`;
  clock = new Date(START);
  current.clear();
});

describe('alert rules', () => {
  it('are created, listed, renamed without a new revision, and given a new one when the condition changes', async () => {
    const created = await rule({ type: 'DISCONNECTED_FOR', minutes: 15 });
    expect((await listAlertRules({ rules }, alice(), company)).map((item) => item.id)).toEqual([created.id]);
    advanceTo(1);
    const renamed = await updateAlertRule({ rules, now }, alice(), company, created.id, { name: 'Lyon offline' }, undefined);
    expect(renamed.name).toBe('Lyon offline');
    expect(await rules.get(company, created.id)).toMatchObject({ revision: created.revision });
    // A rename is not searched again: the rule's query and condition, what the search looks for, are unchanged.
    expect((await rules.get(company, created.id))?.recheckAt).toBeUndefined();
    advanceTo(2);
    await updateAlertRule(
      { rules, now },
      alice(),
      company,
      created.id,
      { condition: { type: 'DISCONNECTED_FOR', minutes: 30 } },
      undefined,
    );
    const revised = (await rules.get(company, created.id)) as StoredAlertRule;
    expect(revised.revision).not.toBe(created.revision);
    expect(revised.recheckAt).toBe(new Date(START + 2 * MINUTE + 30_000).toISOString());
    expect(await rules.rechecked(company, created.id, created.revision)).toBe(false);
    expect(await rules.rechecked(company, created.id, revised.revision)).toBe(true);
  });

  it('refuses a query naming another company, a stale change, and an unknown rule', async () => {
    await expect(
      createAlertRule(
        { rules, now },
        alice(),
        company,
        { name: 'x', query: 'company=other', condition: { type: 'BATTERY_BELOW', percent: 10 } },
        {
          filters: new Map(),
          companies: ['other'],
        },
      ),
    ).rejects.toBeInstanceOf(BadRequestError);
    const created = await rule({ type: 'BATTERY_BELOW', percent: 10 });
    expect(await rules.replace({ ...created, name: 'late' }, at(-5))).toBe(false);
    await expect(
      updateAlertRule({ rules, now }, alice(), company, '01HZZZZZZZZZZZZZZZZZZZZZZZ', { name: 'y' }, undefined),
    ).rejects.toBeInstanceOf(NotFoundError);
    await deleteAlertRule({ rules }, alice(), company, created.id);
    await expect(deleteAlertRule({ rules }, alice(), company, created.id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('are at most 100 per company, counted again once one is deleted', async () => {
    const made: StoredAlertRule[] = [];
    for (let index = 0; index < 100; index += 1) {
      clock = new Date(START + index);
      made.push(await rule({ type: 'BATTERY_BELOW', percent: 10 }));
    }
    await expect(rule({ type: 'BATTERY_BELOW', percent: 10 })).rejects.toBeInstanceOf(UnprocessableRequestError);
    await deleteAlertRule({ rules }, alice(), company, (made[0] as StoredAlertRule).id);
    await expect(rule({ type: 'BATTERY_BELOW', percent: 10 })).resolves.toBeDefined();
  }, 60_000);
});

describe('DISCONNECTED_FOR', () => {
  it('watches from the disconnection, raises one alert once the minutes have passed, and resolves it on reconnection', async () => {
    const watching = await rule({ type: 'DISCONNECTED_FOR', minutes: 15 });
    const online = device('k1');
    const offline = device('k1', { disconnectedSince: at(0) });
    expect((await change(online, offline)).started).toEqual([`${watching.id}/k1`]);
    advanceTo(14);
    expect(await sweep()).toEqual({ raised: 0, ended: 0, rechecked: 0 });
    expect(await alertsOf()).toEqual([]);
    advanceTo(15);
    expect(await sweep()).toEqual({ raised: 1, ended: 0, rechecked: 0 });
    expect(await sweep()).toEqual({ raised: 0, ended: 0, rechecked: 0 });
    const [raised] = await alertsOf('OPEN');
    expect(raised).toMatchObject({ ruleId: watching.id, target: { type: 'DEVICE', id: 'k1' }, state: 'OPEN', raisedAt: at(15) });
    expect(raised?.detail).toContain(at(0));
    advanceTo(20);
    const back = device('k1');
    expect((await change(offline, back)).resolved).toEqual([`${watching.id}/k1`]);
    expect(await alertsOf('OPEN')).toEqual([]);
    expect(await alertsOf('RESOLVED')).toMatchObject([{ id: raised?.id, resolvedAt: at(20) }]);
    // The stream delivers the same records again (a retried batch): nothing is raised twice, nothing stays watched.
    advanceTo(40);
    await change(online, offline);
    await change(offline, back);
    expect(await sweep()).toEqual({ raised: 0, ended: 0, rechecked: 0 });
    expect(await alertsOf()).toHaveLength(1);
  });

  it('raises at once a device that enters the query already disconnected for longer, and writes nothing for one outside it', async () => {
    await rule({ type: 'DISCONNECTED_FOR', minutes: 15 });
    advanceTo(30);
    const paris = device('k2', { disconnectedSince: at(0), location: 'Paris' });
    expect(await change(undefined, paris)).toEqual({ started: [], raised: [], resolved: [] });
    const moved = device('k2', { disconnectedSince: at(0), location: 'Lyon' });
    expect((await change(paris, moved)).raised).toHaveLength(1);
    expect(await change(paris, moved)).toEqual({ started: [], raised: [], resolved: [] });
    expect(await alertsOf('OPEN')).toHaveLength(1);
  });

  it('raises a new alert for a device that leaves the query and comes back still disconnected since the same time', async () => {
    await rule({ type: 'DISCONNECTED_FOR', minutes: 15 });
    advanceTo(30);
    const inLyon = device('k6', { disconnectedSince: at(0), location: 'Lyon' });
    const inParis = device('k6', { disconnectedSince: at(0), location: 'Paris', updated: at(31) });
    expect((await change(device('k6', { disconnectedSince: at(0), location: 'Paris', updated: at(29) }), inLyon)).raised).toHaveLength(1);
    advanceTo(31);
    expect((await change(inLyon, inParis)).resolved).toHaveLength(1);
    advanceTo(40);
    const backInLyon = device('k6', { disconnectedSince: at(0), location: 'Lyon' });
    expect((await change(inParis, backInLyon)).raised).toHaveLength(1);
    // The same change delivered again raises nothing more.
    expect((await change(inParis, backInLyon)).raised).toHaveLength(0);
    expect(await alertsOf('RESOLVED')).toHaveLength(1);
    expect(await alertsOf('OPEN')).toMatchObject([{ target: { id: 'k6' }, raisedAt: at(40) }]);
  });

  it('has the sweeper end the watch of a device that recovered before its change reached the evaluation', async () => {
    await rule({ type: 'DISCONNECTED_FOR', minutes: 5 });
    await change(device('k3'), device('k3', { disconnectedSince: at(0) }));
    current.set(`${company}#k3`, device('k3') as StoredDevice);
    advanceTo(6);
    expect(await sweep()).toEqual({ raised: 0, ended: 1, rechecked: 0 });
    expect(await alertsOf()).toEqual([]);
  });
});

describe('SUBDEVICE_STATE_FOR and BATTERY_BELOW', () => {
  it('names the sub-device, and counts from the first report that showed it, not the later ones', async () => {
    await rule({ type: 'SUBDEVICE_STATE_FOR', minutes: 10, states: ['DOWN', 'WARNING'] });
    const first = device('k4', { subState: 'DOWN', updated: at(0) });
    await change(device('k4', { updated: at(-1) }), first);
    advanceTo(5);
    // A later report still DOWN does not move the watch's start.
    expect(await change(first, device('k4', { subState: 'WARNING', updated: at(5) }))).toEqual({ started: [], raised: [], resolved: [] });
    advanceTo(10);
    expect((await sweep()).raised).toBe(1);
    expect((await alertsOf('OPEN'))[0]?.target).toEqual({ type: 'DEVICE', id: 'k4', subId: 'hub-1/printer-1' });
  });

  it('raises a low battery at once, once, and resolves it when the level is back', async () => {
    await rule({ type: 'BATTERY_BELOW', percent: 20 });
    const low = device('k5', { battery: 12 });
    expect((await change(device('k5', { battery: 40, updated: at(-1) }), low)).raised).toHaveLength(1);
    expect((await change(device('k5', { battery: 40, updated: at(-1) }), low)).raised).toHaveLength(0);
    expect((await alertsOf('OPEN'))[0]).toMatchObject({ target: { subId: 'hub-1/printer-1' } });
    advanceTo(3);
    expect((await change(low, device('k5', { battery: 60 }))).resolved).toHaveLength(1);
    expect(await alertsOf('OPEN')).toEqual([]);
  });
  it('ends the watch of an alert deleted by hand instead of refusing the change for ever', async () => {
    const watching = await rule({ type: 'BATTERY_BELOW', percent: 20 });
    const low = device('k9', { battery: 5 });
    await change(device('k9', { battery: 50, updated: at(-1) }), low);
    const [raised] = await alertsOf('OPEN');
    await tables().send(new DeleteCommand({ TableName: LOCAL_TABLES.alerts, Key: { pk: `ALERT#${company}`, sk: raised?.id } }));
    expect((await change(low, device('k9', { battery: 90 }))).resolved).toEqual([`${watching.id}/k9`]);
    expect(await alerts.watch(company, watching.id, 'k9')).toBeUndefined();
  });
});

describe('the alerts table changes', () => {
  it('publish one AlertChanged per state reached, and a deleted rule ends its watches and resolves its alerts', async () => {
    const watching = await rule({ type: 'DISCONNECTED_FOR', minutes: 1 });
    await change(device('k6'), device('k6', { disconnectedSince: at(0) }));
    await change(device('k7', { battery: 50 }), device('k7', { disconnectedSince: at(0) }));
    advanceTo(2);
    expect((await sweep()).raised).toBe(2);
    await deleteAlertRule({ rules }, alice(), company, watching.id);
    const published: AlertChangedEvent[] = [];
    advanceTo(3);
    await applyAlertTableChanges({ events: { publish: async (events) => void published.push(...events) }, alerts, now }, [
      { kind: 'rule', company, ruleId: watching.id, before: watching },
    ]);
    expect((await alertsOf('RESOLVED')).map((alert) => alert.resolvedAt)).toEqual([at(3), at(3)]);
    expect(await alertsOf('OPEN')).toEqual([]);
    const [resolved] = await alertsOf('RESOLVED');
    const open = { ...(resolved as NonNullable<typeof resolved>), state: 'OPEN' as const, resolvedAt: undefined };
    expect(alertChangedEventOf(undefined, open)?.state).toBe('OPEN');
    expect(alertChangedEventOf(open, resolved)).toMatchObject({ state: 'RESOLVED', at: at(3), alertId: resolved?.id });
    expect(alertChangedEventOf(resolved, resolved)).toBeUndefined();
  });
});

describe('the alerts listing', () => {
  it('pages a state at a time, newest first, through alerts of the other state', async () => {
    await rule({ type: 'BATTERY_BELOW', percent: 20 });
    for (const [index, id] of ['a1', 'a2', 'a3', 'a4'].entries()) {
      advanceTo(index);
      await change(device(id, { battery: 50, updated: at(index - 0.5) }), device(id, { battery: 5 }));
    }
    advanceTo(10);
    await change(device('a3', { battery: 5, updated: at(2) }), device('a3', { battery: 80 }));
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await listAlerts({ alerts }, alice(), company, { limit: 1, state: 'OPEN', cursor });
      expect(page.items.length).toBeLessThanOrEqual(1);
      seen.push(...page.items.map((alert) => alert.target.id));
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
    expect(seen).toEqual(['a4', 'a2', 'a1']);
    expect((await alertsOf('RESOLVED')).map((alert) => alert.target.id)).toEqual(['a3']);
    await expect(listAlerts({ alerts }, alice(), company, { limit: 1, state: 'RESOLVED', cursor: 'forged' })).rejects.toBeInstanceOf(
      BadRequestError,
    );
  });
});

describe('connection events', () => {
  it('are published for a change to CONNECTED or DISCONNECTED only, at the connection time', () => {
    clock = new Date(START);
    company = 'acme';
    const online = device('k8');
    const offline = device('k8', { disconnectedSince: at(3) });
    expect(connectionChangedEventOf(online, offline)).toEqual({
      type: 'DeviceConnectionChanged',
      company: 'acme',
      deviceId: 'k8',
      serial: 'SN-k8',
      state: 'DISCONNECTED',
      at: at(3),
    });
    expect(connectionChangedEventOf(offline, online)?.at).toBe(at(-600));
    expect(connectionChangedEventOf(online, { ...online, location: { name: 'Paris' } })).toBeUndefined();
    expect(connectionChangedEventOf(offline, undefined)).toBeUndefined();
  });
});

describe('RuleCache', () => {
  it('reads a company once within its TTL and again after it', async () => {
    let reads = 0;
    let time = 0;
    const cache = new RuleCache(
      async () => {
        reads += 1;
        return [];
      },
      5_000,
      () => time,
    );
    await cache.rulesOf('acme');
    time = 4_999;
    await cache.rulesOf('acme');
    expect(reads).toBe(1);
    time = 5_000;
    await cache.rulesOf('acme');
    expect(reads).toBe(2);
  });
});
