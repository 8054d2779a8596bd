/**
 * What follows from the alerts table's stream: every alert that became OPEN or RESOLVED gets its AlertChanged event
 * (id `{alertId}:{state}`: a replayed record publishes the same event), and a rule deleted, or whose query or
 * condition changed (a new revision), has its watches ended and its open alerts resolved.
 */
import type { AlertChangedEvent } from '../webhooks/events.js';
import { backfillRule, type RuleBackfillDependencies, type RuleBackfillResult, startsBackfill } from './backfill.js';
import type { Alert, StoredAlertRule } from './model.js';
import type { AlertStore } from './ports.js';

/** One record of the alerts table: an alert's or a rule's images (absent: none); watches are not changes here. */
export type AlertTableChange =
  | { kind: 'alert'; before?: Alert; after?: Alert }
  | { kind: 'rule'; company: string; ruleId: string; before?: StoredAlertRule; after?: StoredAlertRule };

/** The bus, for alert events. */
export interface AlertEventPublisher {
  /** Publishes events in order (a repeat of an event's id is allowed). @throws when the bus refuses them. */
  publish(events: readonly AlertChangedEvent[]): Promise<void>;
}

/** What applyAlertTableChanges needs. */
export interface AlertChangesDependencies {
  events: AlertEventPublisher;
  alerts: Pick<AlertStore, 'watchesOf' | 'resolve' | 'watch' | 'startWatch' | 'raise'>;
  /**
   * The search and the devices' state, for the devices a new rule or revision sees at once (backfill.ts); absent, a
   * rule sees devices from their next change only (a caller that hands deleted rules alone).
   */
  backfill?: Pick<RuleBackfillDependencies, 'search' | 'devices'>;
  /** Told of each rule's backfill (for the log: how many candidates, whether it stopped at the bound). */
  onBackfill?: (rule: StoredAlertRule, result: RuleBackfillResult) => void;
  now?: () => Date;
}

/** The event of an alert's change, or undefined when its state did not change to OPEN or RESOLVED. */
export function alertChangedEventOf(before: Alert | undefined, after: Alert | undefined): AlertChangedEvent | undefined {
  if (after === undefined || before?.state === after.state) return undefined;
  const at = after.state === 'OPEN' ? after.raisedAt : (after.resolvedAt ?? after.raisedAt);
  return {
    type: 'AlertChanged',
    company: after.company,
    alertId: after.id,
    ruleId: after.ruleId,
    ruleName: after.ruleName,
    state: after.state,
    target: after.target,
    at,
    detail: after.detail,
  };
}

/** Whether a rule's change ends its watches: deleted, or a new revision (its query or condition changed). */
export function endsWatches(before: StoredAlertRule | undefined, after: StoredAlertRule | undefined): boolean {
  return before !== undefined && (after === undefined || after.revision !== before.revision);
}

/**
 * Publishes the alerts' events, ends the watches of rules deleted or changed (each watch deleted and its open alert
 * resolved: one transaction each, whose alert change comes back through this stream as its RESOLVED event), then
 * evaluates each rule created or changed on the devices already holding its condition (backfillRule).
 * Idempotent: a watch already ended is not found again, one already started is not started again (nor one of a
 * revision since replaced), an event published again has the same id.
 * @throws Error on a backend failure (the batch is retried).
 */
export async function applyAlertTableChanges(deps: AlertChangesDependencies, changes: readonly AlertTableChange[]): Promise<void> {
  const events = changes.flatMap((change) => (change.kind === 'alert' ? (alertChangedEventOf(change.before, change.after) ?? []) : []));
  for (const change of changes) {
    if (change.kind !== 'rule') continue;
    if (endsWatches(change.before, change.after)) await endWatches(deps, change.company, change.ruleId);
    if (deps.backfill !== undefined && change.after !== undefined && startsBackfill(change.before, change.after)) {
      const result = await backfillRule(
        { ...deps.backfill, alerts: deps.alerts, ...(deps.now === undefined ? {} : { now: deps.now }) },
        change.after,
      );
      deps.onBackfill?.(change.after, result);
    }
  }
  if (events.length > 0) await deps.events.publish(events);
}

/** Ends every watch of a rule, page by page. @returns how many were ended. */
export async function endWatches(deps: Pick<AlertChangesDependencies, 'alerts' | 'now'>, company: string, ruleId: string): Promise<number> {
  let ended = 0;
  let cursor: string | undefined;
  do {
    const page = await deps.alerts.watchesOf(company, ruleId, cursor);
    const at = (deps.now?.() ?? new Date()).toISOString();
    const outcomes = await Promise.all(page.items.map((watch) => deps.alerts.resolve(watch, at)));
    ended += outcomes.filter((outcome) => outcome === 'written').length;
    cursor = page.cursor;
  } while (cursor !== undefined);
  return ended;
}
