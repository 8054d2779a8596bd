/**
 * The alert sweeper (docs/alerts.md, "The sweep"): raises the alerts whose condition has held for the rule's minutes.
 * Run every minute (a schedule on AWS, a timer locally); the due watches are found by queries of the alerts table's
 * sparse `due` index by due time, never by a scan of the fleet. Each due device is read again: one that no longer
 * holds the condition has its watch ended instead (its recovery's change may still be on its way in the stream).
 * The same index lists the rules created or revised RULE_RECHECK_MS ago: each is evaluated once more on the devices
 * the search finds holding its condition (backfill.ts), for those its first evaluation could not see yet.
 */
import type { DeviceRepository } from '../devices/ports.js';
import { deviceDocumentOf } from '../search/documents.js';
import { backfillRule, type RuleBackfillDependencies } from './backfill.js';
import { holdingOf } from './conditions.js';
import { alertOf } from './evaluation.js';
import type { StoredAlertRule } from './model.js';
import type { AlertRuleStore, AlertStore, DueEntry, DueWatch } from './ports.js';

/** What sweepDueAlerts needs. */
export interface AlertSweepDependencies {
  alerts: Pick<AlertStore, 'due' | 'watch' | 'startWatch' | 'raise' | 'resolve'>;
  rules: Pick<AlertRuleStore, 'get' | 'rechecked'>;
  devices: Pick<DeviceRepository, 'get'>;
  /** The search and the devices' documents, for the rules' rechecks. */
  backfill: Pick<RuleBackfillDependencies, 'search' | 'devices'>;
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
  /** Rules evaluated once more on the devices holding their condition (their rechecks). */
  rechecked: number;
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
  const result: AlertSweepResult = { raised: 0, ended: 0, rechecked: 0 };
  let handled = 0;
  while (handled < maxPerRun) {
    const batch = await deps.alerts.due(now, Math.min(batchSize, maxPerRun - handled));
    const outcomes = await Promise.all(batch.map(async (entry) => sweepEntry(deps, await ruleOf(entry.company, entry.ruleId), entry, now)));
    for (const outcome of outcomes) if (outcome !== undefined) result[outcome] += 1;
    handled += batch.length;
    // The index lags behind the table: a round that changed nothing is one the index has not caught up with.
    if (batch.length < batchSize || outcomes.every((outcome) => outcome === undefined)) break;
  }
  return result;
}

/** One due entry of the index: a watch or a rule's recheck. */
function sweepEntry(
  deps: AlertSweepDependencies,
  rule: StoredAlertRule | undefined,
  entry: DueEntry,
  now: string,
): Promise<keyof AlertSweepResult | undefined> {
  return entry.kind === 'recheck' ? recheckRule(deps, rule, entry.revision) : sweepOne(deps, rule, entry, now);
}

/**
 * A rule's recheck: evaluated on the devices the search finds holding its condition, then its recheck ended. Left due
 * when the search cannot be reached (the next run tries again); nothing when the rule changed revision or is gone
 * (a new revision has its own recheck).
 */
async function recheckRule(
  deps: AlertSweepDependencies,
  rule: StoredAlertRule | undefined,
  revision: string,
): Promise<'rechecked' | undefined> {
  if (rule === undefined || rule.revision !== revision || rule.recheckAt === undefined) return undefined;
  const evaluated = await backfillRule(
    { ...deps.backfill, alerts: deps.alerts, ...(deps.now === undefined ? {} : { now: deps.now }) },
    rule,
  );
  if (evaluated.searchUnavailable) return undefined;
  return (await deps.rules.rechecked(rule.company, rule.id, revision)) ? 'rechecked' : undefined;
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
