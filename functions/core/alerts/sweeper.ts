/**
 * The alert sweeper (docs/alerts.md, "The sweep"): raises the alerts whose condition has held for the rule's minutes.
 * Run every minute (a schedule on AWS, a timer locally); the due watches are found by queries of the alerts table's
 * sparse `due` index by due time, never by a scan of the fleet. Each due device is read again: one that no longer
 * holds the condition has its watch ended instead (its recovery's change may still be on its way in the stream).
 */
import type { DeviceRepository } from '../devices/ports.js';
import { deviceDocumentOf } from '../search/documents.js';
import { holdingOf } from './conditions.js';
import { alertOf } from './evaluation.js';
import type { StoredAlertRule } from './model.js';
import type { AlertRuleStore, AlertStore, DueWatch } from './ports.js';

/** What sweepDueAlerts needs. */
export interface AlertSweepDependencies {
  alerts: Pick<AlertStore, 'due' | 'watch' | 'raise' | 'resolve'>;
  rules: Pick<AlertRuleStore, 'get'>;
  devices: Pick<DeviceRepository, 'get'>;
  now?: () => Date;
  /** Watches read per index round. @default 100 */
  batchSize?: number;
  /**
   * Most watches handled per run; the next run goes on. 100 at once, each four DynamoDB calls: about 8 s of a run's
   * 50 s at 10 ms a call. @default 20_000
   */
  maxPerRun?: number;
}

/** What a sweep did. */
export interface AlertSweepResult {
  raised: number;
  /** Watches ended: the device no longer holds the condition, or the rule changed or is gone. */
  ended: number;
}

/**
 * Raises every due watch whose device still holds its rule's condition (one transaction each, conditional on the rule's
 * revision and the watch being as read), ends the others. Idempotent: a watch raised twice is raised once.
 * @throws Error on backend failures (the next run retries).
 */
export async function sweepDueAlerts(deps: AlertSweepDependencies): Promise<AlertSweepResult> {
  const now = (deps.now?.() ?? new Date()).toISOString();
  const batchSize = deps.batchSize ?? 100;
  const maxPerRun = deps.maxPerRun ?? 20_000;
  const rules = new Map<string, Promise<StoredAlertRule | undefined>>();
  const ruleOf = (company: string, ruleId: string) => {
    const key = `${company}#${ruleId}`;
    let rule = rules.get(key);
    if (rule === undefined) {
      rule = deps.rules.get(company, ruleId);
      rules.set(key, rule);
    }
    return rule;
  };
  const result: AlertSweepResult = { raised: 0, ended: 0 };
  let handled = 0;
  while (handled < maxPerRun) {
    const batch = await deps.alerts.due(now, Math.min(batchSize, maxPerRun - handled));
    const outcomes = await Promise.all(batch.map(async (entry) => sweepOne(deps, await ruleOf(entry.company, entry.ruleId), entry, now)));
    for (const outcome of outcomes) if (outcome !== undefined) result[outcome] += 1;
    handled += batch.length;
    // The index lags behind the table: a round that changed nothing is one the index has not caught up with.
    if (batch.length < batchSize || outcomes.every((outcome) => outcome === undefined)) break;
  }
  return result;
}

/** One due watch: raised, ended, or left (changed meanwhile). */
async function sweepOne(
  deps: AlertSweepDependencies,
  rule: StoredAlertRule | undefined,
  entry: DueWatch,
  now: string,
): Promise<keyof AlertSweepResult | undefined> {
  const watch = await deps.alerts.watch(entry.company, entry.ruleId, entry.deviceId);
  if (watch === undefined || watch.openAlertId !== undefined || watch.since !== entry.since) return undefined;
  const stored = rule?.revision === watch.revision ? await deps.devices.get(entry.company, entry.deviceId) : undefined;
  const device = stored === undefined || stored.deleting === true ? undefined : deviceDocumentOf(stored);
  if (rule === undefined || device === undefined || holdingOf(rule, device) === undefined) {
    return (await deps.alerts.resolve(watch, now)) === 'written' ? 'ended' : undefined;
  }
  return (await deps.alerts.raise(watch, alertOf(rule, watch, now), true)) === 'written' ? 'raised' : undefined;
}
