/**
 * A rule created (or given a new revision) sees the devices already holding its condition: the alerts table's change
 * of the rule, handed to applyAlertTableChanges as the stream consumer hands it, with the real stores on DynamoDB
 * Local (rules, watches and alerts; the devices table read in batches) and the embedded search engine naming the
 * candidates. An injected clock.
 */
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CursorCodec } from '../../../functions/adapters/aws/cursor-codec.js';
import { DynamoDbAlertRuleStore } from '../../../functions/adapters/aws/dynamodb-alert-rule-store.js';
import { DynamoDbAlertStore } from '../../../functions/adapters/aws/dynamodb-alert-store.js';
import { DynamoDbDeviceRepository } from '../../../functions/adapters/aws/dynamodb-device-repository.js';
import { EmbeddedSearchIndex } from '../../../functions/adapters/embedded/search-engine.js';
import { listAlerts } from '../../../functions/core/alerts/alerts.js';
import { backfillFilters, type RuleBackfillResult } from '../../../functions/core/alerts/backfill.js';
import { applyAlertTableChanges } from '../../../functions/core/alerts/changes.js';
import { type AlertCondition, RULE_RECHECK_MS, type StoredAlertRule } from '../../../functions/core/alerts/model.js';
import { createAlertRule, updateAlertRule } from '../../../functions/core/alerts/rules.js';
import { sweepDueAlerts } from '../../../functions/core/alerts/sweeper.js';
import type { Device, SubDevice } from '../../../functions/core/devices/model.js';
import { deviceDocumentOf } from '../../../functions/core/search/documents.js';
import { ServiceUnavailableError } from '../../../functions/core/shared/errors.js';
import type { Principal } from '../../../functions/core/shared/principal.js';
import { LOCAL_TABLES } from '../../../functions/local/local-environment.js';
import { useLocalTables } from '../../support/local-tables.js';

const MINUTE = 60_000;
const START = Date.parse('2033-06-01T08:00:00.000Z');
const tables = useLocalTables('dss-alerts-backfill-');

let clock: Date;
let company: string;
let companyCount = 0;
let rules: DynamoDbAlertRuleStore;
let alerts: DynamoDbAlertStore;
let devices: DynamoDbDeviceRepository;
let search: EmbeddedSearchIndex;
const now = () => clock;
const at = (minutes: number) => new Date(START + minutes * MINUTE).toISOString();
const alice = (): Principal => ({ subject: 'alice-sub', username: 'alice', companies: [company], scopes: new Set(['alerts:write']) });

/** A kiosk with one sub-device: DISCONNECTED since `disconnectedSince` (minutes from START) or CONNECTED. */
function kiosk(
  id: string,
  options: {
    disconnectedSince?: number;
    type?: 'PRINTER' | 'PAYMENT';
    subState?: SubDevice['health']['state'];
    battery?: number;
    owner?: string;
  } = {},
): Device {
  const sub: SubDevice = {
    uid: 'sub-1',
    label: 'Peripheral',
    version: '1.0',
    health: { state: options.subState ?? 'NOMINAL', message: '', messages: [] },
    capability: { type: options.type ?? 'PRINTER', modes: [] },
    ...(options.battery === undefined
      ? {}
      : { battery: { health: { state: 'GOOD', plugged: 'USB', status: 'DISCHARGING', level: options.battery, cycle: 3 } } }),
    commands: [],
  };
  return {
    id,
    company: options.owner ?? company,
    serial: `SN-${id}`,
    created: at(-600),
    updated: at(-90),
    connection:
      options.disconnectedSince === undefined
        ? { state: 'CONNECTED', connectedSince: at(-600) }
        : { state: 'DISCONNECTED', disconnectedSince: at(options.disconnectedSince) },
    health: {
      updated: at(-90),
      versionCode: '7',
      versionName: '7.0',
      mode: 'SERVER',
      hubs: [{ uid: 'hub-1', label: 'Hub', version: '1', registeredSince: at(-600), type: 'x', devices: [sub] }],
    },
  };
}

/** Stores devices in the table and the index alike (as the indexer would from the table's stream). */
async function store(...fleet: Device[]): Promise<void> {
  await devices.put(fleet);
  await search.upsert(fleet.map((device) => deviceDocumentOf(device)));
}

async function rule(condition: AlertCondition, query = 'health.hubs.devices.capability.type=PRINTER'): Promise<StoredAlertRule> {
  const filters = new Map<string, string[]>();
  for (const [name, value] of new URLSearchParams(query)) filters.set(name, [...(filters.get(name) ?? []), value]);
  const created = await createAlertRule({ rules, now }, alice(), company, { name: 'Watch', query, condition }, { filters, companies: [] });
  return (await rules.get(company, created.id)) as StoredAlertRule;
}

/** Hands a rule's change to the alerts table's consumer, as its stream does. @returns the backfills it reported. */
async function ruleChanged(before: StoredAlertRule | undefined, after: StoredAlertRule | undefined): Promise<RuleBackfillResult[]> {
  const reported: RuleBackfillResult[] = [];
  const ruleId = (after ?? before)?.id as string;
  await applyAlertTableChanges(
    {
      events: { publish: async () => {} },
      alerts,
      backfill: { search, devices },
      onBackfill: (_rule, result) => void reported.push(result),
      now,
    },
    [{ kind: 'rule', company, ruleId, ...(before === undefined ? {} : { before }), ...(after === undefined ? {} : { after }) }],
  );
  return reported;
}

const openAlerts = async () => (await listAlerts({ alerts }, alice(), company, { limit: 100, state: 'OPEN' })).items;

beforeAll(() => {
  const cursors = new CursorCodec(() => Buffer.alloc(32, 9));
  rules = new DynamoDbAlertRuleStore(tables(), LOCAL_TABLES.alerts);
  alerts = new DynamoDbAlertStore(tables(), LOCAL_TABLES.alerts, cursors);
  devices = new DynamoDbDeviceRepository(tables(), LOCAL_TABLES);
});

beforeEach(() => {
  companyCount += 1;
  company = `backfill-${companyCount}`;
  clock = new Date(START);
  search = new EmbeddedSearchIndex();
});

describe('a new alert rule', () => {
  it('raises at once on a kiosk disconnected for longer than its minutes, watches one disconnected since less, and replays write nothing', async () => {
    await store(
      kiosk('k-long', { disconnectedSince: -60 }),
      kiosk('k-recent', { disconnectedSince: -5 }),
      kiosk('k-online'),
      kiosk('k-payment', { disconnectedSince: -60, type: 'PAYMENT' }),
      kiosk('k-other-company', { disconnectedSince: -60, owner: `${company}-other` }),
    );
    const created = await rule({ type: 'DISCONNECTED_FOR', minutes: 15 });
    expect(await ruleChanged(undefined, created)).toEqual([{ total: 2, evaluated: 2, started: 1, raised: 1, truncated: false }]);
    const [alert] = await openAlerts();
    expect(alert).toMatchObject({ target: { id: 'k-long' }, raisedAt: at(0), detail: `Disconnected since ${at(-60)}.` });
    expect(await openAlerts()).toHaveLength(1);
    expect(await alerts.watch(company, created.id, 'k-recent')).toMatchObject({ since: at(-5), dueAt: at(10) });
    expect(await alerts.watch(company, created.id, 'k-online')).toBeUndefined();

    clock = new Date(START + MINUTE);
    expect(await ruleChanged(undefined, created)).toEqual([{ total: 2, evaluated: 2, started: 0, raised: 0, truncated: false }]);
    expect((await openAlerts()).map((open) => open.id)).toEqual([alert?.id]);
  });

  it('resolves at once the alert of a kiosk that came back online between its read and the raise', async () => {
    await store(kiosk('k-back', { disconnectedSince: -60 }));
    const created = await rule({ type: 'DISCONNECTED_FOR', minutes: 15 });
    let reads = 0;
    // The kiosk reports right after the backfill read it: its change finds no watch of the new rule to end.
    const racing = {
      documentsOf: async (owner: string, ids: string[]) => {
        const read = await devices.documentsOf(owner, ids);
        reads += 1;
        if (reads === 1) await devices.put([kiosk('k-back')]);
        return read;
      },
    };
    await applyAlertTableChanges({ events: { publish: async () => {} }, alerts, backfill: { search, devices: racing }, now }, [
      { kind: 'rule', company, ruleId: created.id, after: created },
    ]);
    expect(await openAlerts()).toEqual([]);
    expect((await listAlerts({ alerts }, alice(), company, { limit: 100, state: 'RESOLVED' })).items).toMatchObject([
      { target: { id: 'k-back' } },
    ]);
    expect(await alerts.watch(company, created.id, 'k-back')).toBeUndefined();
  });

  it('goes by the devices table, not the index, for what holds now (a kiosk back online since it was indexed)', async () => {
    await store(kiosk('k-back', { disconnectedSince: -60 }));
    await devices.put([kiosk('k-back')]);
    const created = await rule({ type: 'DISCONNECTED_FOR', minutes: 15 });
    expect(await ruleChanged(undefined, created)).toEqual([{ total: 1, evaluated: 1, started: 0, raised: 0, truncated: false }]);
    expect(await openAlerts()).toEqual([]);
  });

  it('with a new condition, resolves what the old one raised and sees the devices holding the new one', async () => {
    await store(kiosk('k-down', { subState: 'DOWN' }), kiosk('k-off', { disconnectedSince: -60 }), kiosk('k-low', { battery: 5 }));
    const created = await rule({ type: 'DISCONNECTED_FOR', minutes: 15 });
    await ruleChanged(undefined, created);
    expect((await openAlerts()).map((open) => open.target.id)).toEqual(['k-off']);

    clock = new Date(START + MINUTE);
    await updateAlertRule(
      { rules, now },
      alice(),
      company,
      created.id,
      { condition: { type: 'SUBDEVICE_STATE_FOR', minutes: 60, states: ['DOWN'] } },
      undefined,
    );
    const revised = (await rules.get(company, created.id)) as StoredAlertRule;
    expect(await ruleChanged(created, revised)).toEqual([{ total: 1, evaluated: 1, started: 0, raised: 1, truncated: false }]);
    expect((await openAlerts()).map((open) => [open.target.id, open.target.subId])).toEqual([['k-down', 'hub-1/sub-1']]);
  });

  it('below a battery level: the index has no level, so every device of the query is read, and the low one raised', async () => {
    await store(kiosk('k-low', { battery: 5 }), kiosk('k-full', { battery: 90 }), kiosk('k-none'));
    const created = await rule({ type: 'BATTERY_BELOW', percent: 20 });
    expect(await ruleChanged(undefined, created)).toEqual([{ total: 3, evaluated: 3, started: 0, raised: 1, truncated: false }]);
    expect((await openAlerts()).map((open) => [open.target.id, open.detail])).toEqual([
      ['k-low', 'Sub-device hub-1/sub-1 battery at 5% (below 20%).'],
    ]);
  });

  it('without the search, evaluates nothing and does not fail, so the alert events of its batch are not held back', async () => {
    await store(kiosk('k-off', { disconnectedSince: -60 }));
    search = {
      selectIds: async () => Promise.reject(new ServiceUnavailableError('The search is unreachable.')),
    } as unknown as EmbeddedSearchIndex;
    const created = await rule({ type: 'DISCONNECTED_FOR', minutes: 15 });
    expect(await ruleChanged(undefined, created)).toEqual([
      { total: 0, evaluated: 0, started: 0, raised: 0, truncated: false, searchUnavailable: true },
    ]);
    expect(await alerts.watch(company, created.id, 'k-off')).toBeUndefined();
  });

  it('filters on the condition within its own filters, and no candidate when they cannot both hold', () => {
    const condition: AlertCondition = { type: 'DISCONNECTED_FOR', minutes: 5 };
    expect(backfillFilters({ filters: { 'connection.state': ['CONNECTED'] }, condition })).toBeUndefined();
    expect([...(backfillFilters({ filters: { 'location.name': ['Lyon'] }, condition }) ?? [])]).toEqual([
      ['location.name', ['Lyon']],
      ['connection.state', ['DISCONNECTED']],
    ]);
  });
});

describe("a new rule's recheck, half a minute after its creation", () => {
  const sweepAt = (ms: number) => {
    clock = new Date(START + ms);
    return sweepDueAlerts({ alerts, rules, devices, backfill: { search, devices }, now });
  };

  it('sees a kiosk the first search missed (not indexed yet), then is ended', async () => {
    // In the table, not yet in the index: the indexer has not caught up with its change when the rule is created.
    await devices.put([kiosk('k-late', { disconnectedSince: -60 })]);
    const created = await rule({ type: 'DISCONNECTED_FOR', minutes: 15 });
    expect(created.recheckAt).toBe(new Date(START + RULE_RECHECK_MS).toISOString());
    expect(await ruleChanged(undefined, created)).toEqual([{ total: 0, evaluated: 0, started: 0, raised: 0, truncated: false }]);
    await search.upsert([deviceDocumentOf(kiosk('k-late', { disconnectedSince: -60 }))]);
    await sweepAt(RULE_RECHECK_MS - 1);
    expect(await openAlerts()).toEqual([]);
    await sweepAt(RULE_RECHECK_MS);
    expect((await openAlerts()).map((open) => open.target.id)).toEqual(['k-late']);
    expect((await rules.get(company, created.id))?.recheckAt).toBeUndefined();
    // Ended: a kiosk indexed later is left to its own next change.
    await store(kiosk('k-later', { disconnectedSince: -60 }));
    await sweepAt(RULE_RECHECK_MS + MINUTE);
    expect((await openAlerts()).map((open) => open.target.id)).toEqual(['k-late']);
  });

  it('stays due while the search cannot be reached, and runs once it can', async () => {
    await store(kiosk('k-off', { disconnectedSince: -60 }));
    const created = await rule({ type: 'DISCONNECTED_FOR', minutes: 15 });
    const reachable = search;
    search = {
      selectIds: async () => Promise.reject(new ServiceUnavailableError('The search is unreachable.')),
    } as unknown as EmbeddedSearchIndex;
    await ruleChanged(undefined, created);
    await sweepAt(RULE_RECHECK_MS);
    expect(await openAlerts()).toEqual([]);
    expect((await rules.get(company, created.id))?.recheckAt).toBe(created.recheckAt);
    search = reachable;
    await sweepAt(RULE_RECHECK_MS + MINUTE);
    expect((await openAlerts()).map((open) => open.target.id)).toEqual(['k-off']);
    expect((await rules.get(company, created.id))?.recheckAt).toBeUndefined();
  });

  it("of a revision since replaced does nothing, and the new revision's recheck sees what it holds", async () => {
    await store(kiosk('k-down', { subState: 'DOWN' }));
    const created = await rule({ type: 'DISCONNECTED_FOR', minutes: 15 });
    clock = new Date(START + 10_000);
    await updateAlertRule(
      { rules, now },
      alice(),
      company,
      created.id,
      { condition: { type: 'SUBDEVICE_STATE_FOR', minutes: 60, states: ['DOWN'] } },
      undefined,
    );
    const revised = (await rules.get(company, created.id)) as StoredAlertRule;
    expect(revised.recheckAt).toBe(new Date(START + 10_000 + RULE_RECHECK_MS).toISOString());
    await sweepAt(RULE_RECHECK_MS);
    expect(await openAlerts()).toEqual([]);
    await sweepAt(10_000 + RULE_RECHECK_MS);
    expect((await openAlerts()).map((open) => [open.target.id, open.target.subId])).toEqual([['k-down', 'hub-1/sub-1']]);
  });
});
