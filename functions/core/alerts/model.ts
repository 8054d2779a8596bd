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
  /** The device search query string the rule watches (the fleet page's, e.g. `location.name=Lyon`). */
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
