/**
 * What a new rule (or a new revision of one) sees at once: the devices already holding its condition when it is
 * created, which no device change would bring to the evaluation until they change again (a kiosk disconnected for an
 * hour). The search index names the candidates (the rule's filters AND the condition's own filter where the index has
 * one), the devices table gives their current state, and each is evaluated as a device that has just started to
 * match: a watch is started, or the alert raised at once when already due, by the evaluation's own code. Nothing
 * scans the fleet, and every write is conditional (rule at the same revision, no watch yet), so a replay writes
 * nothing twice.
 */
import type { DeviceDocument } from '../search/documents.js';
import type { SearchIndex } from '../search/ports.js';
import { ServiceUnavailableError } from '../shared/errors.js';
import { evaluateDeviceChanges } from './evaluation.js';
import type { AlertCondition, StoredAlertRule } from './model.js';
import type { AlertStore } from './ports.js';

/** Most devices a rule's creation evaluates (the first ones by id); the others are seen from their next change. */
export const MAX_BACKFILL_DEVICES = 10_000;

/** Devices read from the devices table at once (BatchGetItem reads 100 keys a request). */
const BACKFILL_PAGE = 500;

/** Evaluations of a page run at once (each a sequence of conditional transactions). */
const BACKFILL_LANES = 10;

/** The devices' current state, as the devices table holds it. */
export interface DeviceDocumentReader {
  /**
   * The documents of those of `deviceIds` that exist in `company` and are not being deleted (others are left out),
   * read in batches. @throws Error on a backend failure.
   */
  documentsOf(company: string, deviceIds: readonly string[]): Promise<DeviceDocument[]>;
}

/** What backfillRule needs. */
export interface RuleBackfillDependencies {
  search: Pick<SearchIndex, 'selectIds'>;
  devices: DeviceDocumentReader;
  alerts: Pick<AlertStore, 'watch' | 'startWatch' | 'raise' | 'resolve'>;
  now?: () => Date;
}

/** What backfillRule did: candidates the index matched (`total`, also beyond the bound), those evaluated, writes. */
export interface RuleBackfillResult {
  total: number;
  evaluated: number;
  started: number;
  raised: number;
  /** Whether `total` exceeded MAX_BACKFILL_DEVICES (the devices beyond it were not evaluated). */
  truncated: boolean;
  /** Whether the search could not be reached: nothing was evaluated, the devices alert from their next change. */
  searchUnavailable?: boolean;
}

/** Whether a rule's change calls for a backfill: created, or a new revision (its query or condition changed). */
export function startsBackfill(before: StoredAlertRule | undefined, after: StoredAlertRule | undefined): boolean {
  return after !== undefined && (before === undefined || before.revision !== after.revision);
}

/** The filter the search index has for a condition, if any (BATTERY_BELOW: none, the index has no battery level). */
export function conditionFilter(condition: AlertCondition): [string, string[]] | undefined {
  switch (condition.type) {
    case 'DISCONNECTED_FOR':
      return ['connection.state', ['DISCONNECTED']];
    case 'SUBDEVICE_STATE_FOR':
      return ['health.hubs.devices.health.state', [...condition.states]];
    case 'BATTERY_BELOW':
      return undefined;
  }
}

/**
 * The search filters of a rule's candidates: its own AND its condition's (values intersected when the rule already
 * filters the same field). @returns undefined when no device can match (an empty intersection).
 */
export function backfillFilters(rule: Pick<StoredAlertRule, 'filters' | 'condition'>): Map<string, string[]> | undefined {
  const filters = new Map(Object.entries(rule.filters));
  const extra = conditionFilter(rule.condition);
  if (extra === undefined) return filters;
  const [field, values] = extra;
  const own = filters.get(field);
  const merged = own === undefined ? values : values.filter((value) => own.includes(value));
  if (merged.length === 0) return undefined;
  filters.set(field, merged);
  return filters;
}

/**
 * Reads again the devices whose alert was just raised at once and resolves the alert of each that no longer holds the
 * condition: one that recovered between its read and the raise changed while no watch of it existed yet, so the
 * devices' stream consumer had nothing to resolve (a watch not due yet needs nothing: the sweeper reads it again).
 */
async function resolveRecovered(
  deps: RuleBackfillDependencies,
  evaluation: Parameters<typeof evaluateDeviceChanges>[0],
  rule: StoredAlertRule,
  read: readonly DeviceDocument[],
  raised: readonly string[],
): Promise<void> {
  if (raised.length === 0) return;
  const before = new Map(read.map((document) => [document.id, document]));
  const now = await deps.devices.documentsOf(rule.company, [...raised]);
  const current = new Map(now.map((document) => [document.id, document]));
  const changes = raised.map((deviceId) => ({
    company: rule.company,
    deviceId,
    before: before.get(deviceId),
    after: current.get(deviceId),
  }));
  await evaluateDeviceChanges(evaluation, changes);
}

/**
 * Evaluates a rule on the devices of its company that may already hold its condition (at most MAX_BACKFILL_DEVICES,
 * read BACKFILL_PAGE at a time), as devices that have just started to match it.
 * When the search cannot be reached, nothing is evaluated (`searchUnavailable`): the alert events of the batch are not
 * held back for it, and the devices alert from their next change.
 * @throws Error on a table failure (safe to run again).
 */
export async function backfillRule(deps: RuleBackfillDependencies, rule: StoredAlertRule): Promise<RuleBackfillResult> {
  const result: RuleBackfillResult = { total: 0, evaluated: 0, started: 0, raised: 0, truncated: false };
  const filters = backfillFilters(rule);
  if (filters === undefined) return result;
  let selected: { ids: string[]; total: number };
  try {
    selected = await deps.search.selectIds({ companies: [rule.company], filters }, MAX_BACKFILL_DEVICES);
  } catch (error) {
    // Not retried: the batch's alert events would wait for the search to come back.
    if (error instanceof ServiceUnavailableError) return { ...result, searchUnavailable: true };
    throw error;
  }
  const { ids, total } = selected;
  result.total = total;
  result.truncated = total > MAX_BACKFILL_DEVICES;
  const evaluation = { rulesOf: async () => [rule], alerts: deps.alerts, ...(deps.now === undefined ? {} : { now: deps.now }) };
  for (let start = 0; start < ids.length; start += BACKFILL_PAGE) {
    const documents = await deps.devices.documentsOf(rule.company, ids.slice(start, start + BACKFILL_PAGE));
    const changes = documents.map((after) => ({ company: rule.company, deviceId: after.id, after }));
    // A few evaluations at once: one that writes waits for its transaction, and a fleet-wide outage writes for each.
    const lanes = Array.from({ length: BACKFILL_LANES }, (_, lane) => changes.filter((_, index) => index % BACKFILL_LANES === lane));
    const raised: string[] = [];
    for (const written of await Promise.all(lanes.map((lane) => evaluateDeviceChanges(evaluation, lane)))) {
      result.started += written.started.length;
      result.raised += written.raised.length;
      raised.push(...written.raised.map((entry) => entry.slice(rule.id.length + 1)));
    }
    await resolveRecovered(deps, evaluation, rule, documents, raised);
    result.evaluated += documents.length;
  }
  return result;
}
