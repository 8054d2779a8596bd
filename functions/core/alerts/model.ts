/**
 * Alert rules and alerts (docs/alerts.md): a rule is a device search query and a condition; an alert is raised once
 * per rule and device when the condition holds (for its minutes), and resolved when it stops holding.
 */

/** The kinds of condition a rule watches. */
export const ALERT_CONDITION_TYPES = ['DISCONNECTED_FOR', 'SUBDEVICE_STATE_FOR', 'BATTERY_BELOW'] as const;

/**
 * A rule's condition: the device DISCONNECTED for more than `minutes`; one of its sub-devices in one of `states`
 * (health.hubs.devices.health.state) for more than `minutes`; a hub's or sub-device's battery level below `percent`.
 */
export type AlertCondition =
  | { type: 'DISCONNECTED_FOR'; minutes: number }
  | { type: 'SUBDEVICE_STATE_FOR'; minutes: number; states: string[] }
  | { type: 'BATTERY_BELOW'; percent: number };

/** An alert rule as answered. */
export interface AlertRule {
  /** ULID. */
  id: string;
  company: string;
  name: string;
  /** The device search query string the rule watches (the fleet page's, e.g. `health.hubs.devices.capability.type=PRINTER`). */
  query: string;
  condition: AlertCondition;
  /** ISO-8601. */
  created: string;
  /** ISO-8601. */
  updated: string;
  by: string;
}

/** An alert's state. */
export type AlertState = 'OPEN' | 'RESOLVED';

/** An alert as answered. */
export interface Alert {
  /** ULID. */
  id: string;
  company: string;
  ruleId: string;
  ruleName: string;
  target: { type: 'DEVICE'; id: string; subId?: string };
  state: AlertState;
  /** ISO-8601. */
  raisedAt: string;
  /** ISO-8601, once RESOLVED. */
  resolvedAt?: string;
  /** What held, for a person (e.g. "Disconnected since 2026-12-06T10:00:00Z"). */
  detail: string;
}

/** Longest rule name, characters. */
export const MAX_ALERT_RULE_NAME_LENGTH = 128;
/** Shortest wait of a `…_FOR` condition, minutes. */
export const MIN_ALERT_MINUTES = 1;
/** Longest wait of a `…_FOR` condition, minutes (7 days). */
export const MAX_ALERT_MINUTES = 10_080;
/** Lowest `percent` of BATTERY_BELOW. */
export const MIN_ALERT_BATTERY_PERCENT = 1;
/** Highest `percent` of BATTERY_BELOW. */
export const MAX_ALERT_BATTERY_PERCENT = 100;
/** Most rules a company may have: every rule of a company is evaluated, in memory, on each change of its devices. */
export const MAX_ALERT_RULES_PER_COMPANY = 100;

/**
 * A rule as stored: the rule, the filters its query parses into (field → accepted values, as a continuous rollout
 * keeps them), and its `revision`, which changes when its query or condition does (not its name): what a device was
 * evaluated against, so that a watch or alert written for an older revision is refused (evaluation.ts).
 */
export interface StoredAlertRule extends AlertRule {
  filters: Record<string, string[]>;
  /** ULID of the last change of query or condition (the creation's at first). */
  revision: string;
  /**
   * ISO-8601: when the sweeper searches the rule's devices once more (RULE_RECHECK_MS after its creation or revision),
   * then cleared. The first search, at once, can miss a device that started holding just then: the search had not
   * indexed its change yet, or the devices' stream consumer evaluated it with the company's rules read before the rule.
   */
  recheckAt?: string;
}

/**
 * How long after a rule's creation or revision its devices are searched again, ms: beyond the devices' consumers'
 * rule cache (5 s, RuleCache) and the search index's lag behind the devices table (its indexer's batch window and
 * the engine's 1 s refresh), with room for a busy stream.
 */
export const RULE_RECHECK_MS = 30_000;

/**
 * A device for which a rule's condition holds (one per rule and device): since when, for which sub-device, and once
 * raised the open alert's id; until then `dueAt` (since + the rule's minutes), when the sweeper raises it.
 */
export interface AlertWatch {
  company: string;
  ruleId: string;
  /** The rule's revision it was started for. */
  revision: string;
  deviceId: string;
  /** ISO-8601: since when the condition holds. */
  since: string;
  /** `{hub uid}` or `{hub uid}/{sub-device uid}`: what holds the condition, when not the device itself. */
  subId?: string;
  /**
   * ISO-8601: the device's `updated` in the change that started the watch (the same on a replay of that change), part
   * of the alert's id so that each holding raises its own alert.
   */
  episode?: string;
  /** What holds, for a person. */
  detail: string;
  /** ISO-8601: when the alert is due, until raised. */
  dueAt?: string;
  /** The OPEN alert's id, once raised. */
  openAlertId?: string;
}

/** The minutes a condition must hold before it is raised (0: at once). */
export function waitMinutesOf(condition: AlertCondition): number {
  return condition.type === 'BATTERY_BELOW' ? 0 : condition.minutes;
}
