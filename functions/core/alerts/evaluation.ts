/**
 * Evaluation of device changes against their company's alert rules (docs/alerts.md), run by the devices table's
 * stream consumer: each rule is checked in memory on the device before and after the change (both images are in the
 * record), and only a flip of its holding writes anything: one that starts holding starts a watch (due at since + the
 * rule's minutes, raised by the sweeper) or raises the alert at once when already due; one that stops holding ends its
 * watch and resolves its alert. Every write is one conditional transaction and the alert's id is derived from the
 * holding's `since`, so a replayed change raises nothing twice.
 */
import { derivedId } from '../rollouts/derived-ids.js';
import type { DeviceDocument } from '../search/documents.js';
import { type Holding, holdingOf } from './conditions.js';
import { type Alert, type AlertWatch, type StoredAlertRule, waitMinutesOf } from './model.js';
import type { AlertStore, WatchOutcome } from './ports.js';

/** One change of a device, as the stream gives it: its document before and after (absent: none, or not a device). */
export interface DeviceImages {
  company: string;
  deviceId: string;
  before?: DeviceDocument;
  after?: DeviceDocument;
}

/** What evaluateDeviceChanges needs. */
export interface AlertEvaluationDependencies {
  /** The company's rules (a RuleCache's, read at most once per batch and company). */
  rulesOf(company: string): Promise<readonly StoredAlertRule[]>;
  alerts: Pick<AlertStore, 'watch' | 'startWatch' | 'raise' | 'resolve'>;
  now?: () => Date;
}

/** What the evaluation wrote, as `{ruleId}/{deviceId}` lists. */
export interface AlertEvaluationResult {
  started: string[];
  raised: string[];
  resolved: string[];
}

/**
 * The alert a watch raises at `raisedAt`: its id derived from the holding's since, the rule and its revision, the
 * device and the watch's episode, so that a replay raises the same alert while a new holding (after the rule changed,
 * or after the device left and re-entered the rule's query with the same `since`) raises a new one.
 */
export function alertOf(rule: Pick<StoredAlertRule, 'id' | 'name'>, watch: AlertWatch, raisedAt: string): Alert {
  return {
    id: derivedId(watch.since, `${rule.id}#${watch.revision}#${watch.deviceId}#${watch.episode ?? ''}`),
    company: watch.company,
    ruleId: rule.id,
    ruleName: rule.name,
    target: { type: 'DEVICE', id: watch.deviceId, ...(watch.subId === undefined ? {} : { subId: watch.subId }) },
    state: 'OPEN',
    raisedAt,
    detail: watch.detail,
  };
}

/**
 * Evaluates each change, in order, against its company's rules; writes only for a rule whose holding flips.
 * @throws Error on a backend failure: every write is idempotent, so evaluating the changes again is safe.
 */
export async function evaluateDeviceChanges(
  deps: AlertEvaluationDependencies,
  changes: readonly DeviceImages[],
): Promise<AlertEvaluationResult> {
  const result: AlertEvaluationResult = { started: [], raised: [], resolved: [] };
  for (const change of changes) {
    const rules = await deps.rulesOf(change.company);
    for (const rule of rules) {
      const before = holdingOf(rule, change.before);
      const after = holdingOf(rule, change.after);
      if (before === undefined && after !== undefined) {
        const outcome = await startHolding(deps, rule, change.deviceId, after, change.after?.updated);
        if (outcome !== undefined) result[outcome].push(`${rule.id}/${change.deviceId}`);
      } else if (before !== undefined && after === undefined) {
        if (await stopHolding(deps, rule, change.deviceId)) result.resolved.push(`${rule.id}/${change.deviceId}`);
      }
    }
  }
  return result;
}

/** A holding that starts: its watch, or its alert when already due. @returns what was written, if anything. */
async function startHolding(
  deps: AlertEvaluationDependencies,
  rule: StoredAlertRule,
  deviceId: string,
  holding: Holding,
  episode: string | undefined,
): Promise<'started' | 'raised' | undefined> {
  const now = deps.now?.() ?? new Date();
  const watch: AlertWatch = {
    company: rule.company,
    ruleId: rule.id,
    revision: rule.revision,
    deviceId,
    since: holding.since,
    ...(holding.subId === undefined ? {} : { subId: holding.subId }),
    ...(episode === undefined ? {} : { episode }),
    detail: holding.detail,
  };
  const dueAt = Date.parse(holding.since) + waitMinutesOf(rule.condition) * 60_000;
  if (dueAt <= now.getTime()) {
    return (await deps.alerts.raise(watch, alertOf(rule, watch, now.toISOString()), false)) === 'written' ? 'raised' : undefined;
  }
  const outcome: WatchOutcome = await deps.alerts.startWatch({ ...watch, dueAt: new Date(dueAt).toISOString() });
  return outcome === 'written' ? 'started' : undefined;
}

/** Attempts at ending a watch that changed between its read and its write (the sweeper raised it meanwhile). */
const STOP_ATTEMPTS = 3;

/**
 * A holding that stops: its watch (read again if the sweeper raised it meanwhile) is deleted and its open alert
 * resolved. @returns whether a watch was ended. @throws Error when the watch kept changing.
 */
async function stopHolding(deps: AlertEvaluationDependencies, rule: StoredAlertRule, deviceId: string): Promise<boolean> {
  for (let attempt = 0; attempt < STOP_ATTEMPTS; attempt += 1) {
    const watch = await deps.alerts.watch(rule.company, rule.id, deviceId);
    if (watch === undefined) return false;
    if ((await deps.alerts.resolve(watch, (deps.now?.() ?? new Date()).toISOString())) === 'written') return true;
  }
  throw new Error(`The watch of rule ${rule.id} on device ${deviceId} kept changing while it was being ended.`);
}

/**
 * The rules of each company for a few seconds (`ttlMs`), so that a stream consumer reads them at most once per
 * company per batch and a warm one less often: a rule created or changed applies to changes evaluated after that.
 * A watch or alert written for a rule's older revision is refused by the store (its writes check the revision).
 */
export class RuleCache {
  private readonly entries = new Map<string, { at: number; rules: Promise<readonly StoredAlertRule[]> }>();

  constructor(
    private readonly read: (company: string) => Promise<readonly StoredAlertRule[]>,
    private readonly ttlMs = 5_000,
    private readonly clock: () => number = Date.now,
  ) {}

  /** The company's rules, read again once older than the TTL (or after a failed read). */
  rulesOf(company: string): Promise<readonly StoredAlertRule[]> {
    const now = this.clock();
    const cached = this.entries.get(company);
    if (cached !== undefined && now - cached.at < this.ttlMs) return cached.rules;
    const rules = this.read(company);
    this.entries.set(company, { at: now, rules });
    rules.catch(() => this.entries.delete(company));
    return rules;
  }
}
