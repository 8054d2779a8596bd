/**
 * Whether a rule's condition holds for a device, from its search document alone (no read): what the evaluation of a
 * device change compares before and after, and what the sweeper checks again before it raises.
 */
import type { DeviceDocument } from '../search/documents.js';
import { documentMatches } from '../search/documents.js';
import type { AlertCondition, StoredAlertRule } from './model.js';

/** A condition holding for a device: since when, what holds it (`subId`), and a sentence for a person. */
export interface Holding {
  /** ISO-8601. */
  since: string;
  /** `{hub uid}` or `{hub uid}/{sub-device uid}`, when a hub or sub-device holds it. */
  subId?: string;
  detail: string;
}

/**
 * Whether `rule` holds for `device` (undefined: no device, the rule's filters do not match it, or its condition does
 * not hold): DISCONNECTED_FOR since `connection.disconnectedSince`; SUBDEVICE_STATE_FOR when some sub-device is in one
 * of the states, since the health report that shows it (`health.updated`: the first one seen so, as the evaluation
 * keeps the holding's first `since`); BATTERY_BELOW when some hub's or sub-device's `battery.health.level` is below
 * the percent, since that report.
 */
export function holdingOf(rule: Pick<StoredAlertRule, 'filters' | 'condition'>, device: DeviceDocument | undefined): Holding | undefined {
  if (device === undefined) return undefined;
  // The condition first: it rarely holds (most devices are connected, their sub-devices nominal), and it is cheaper.
  const holding = conditionHolding(rule.condition, device);
  return holding !== undefined && documentMatches(device, rule.filters) ? holding : undefined;
}

/** The holding of a condition on a device, its filters aside (holdingOf). */
export function conditionHolding(condition: AlertCondition, device: DeviceDocument): Holding | undefined {
  switch (condition.type) {
    case 'DISCONNECTED_FOR': {
      const since = device.connection.disconnectedSince;
      if (device.connection.state !== 'DISCONNECTED' || since === undefined) return undefined;
      return { since, detail: `Disconnected since ${since}.` };
    }
    case 'SUBDEVICE_STATE_FOR': {
      for (const hub of device.health?.hubs ?? []) {
        const sub = hub.devices.find((candidate) => condition.states.includes(candidate.health.state));
        if (sub !== undefined && device.health !== undefined) {
          return {
            since: device.health.updated,
            subId: `${hub.uid}/${sub.uid}`,
            detail: `Sub-device ${hub.uid}/${sub.uid} (${sub.label}) is ${sub.health.state}.`,
          };
        }
      }
      return undefined;
    }
    case 'BATTERY_BELOW':
      return lowBattery(condition.percent, device);
  }
}

/** The first hub or sub-device whose battery level is below `percent`, in report order. */
function lowBattery(percent: number, device: DeviceDocument): Holding | undefined {
  const health = device.health;
  if (health === undefined) return undefined;
  const low = (level: number | undefined) => typeof level === 'number' && level < percent;
  for (const hub of health.hubs) {
    if (low(hub.battery?.health.level)) {
      return {
        since: health.updated,
        subId: hub.uid,
        detail: `Hub ${hub.uid} battery at ${hub.battery?.health.level}% (below ${percent}%).`,
      };
    }
    for (const sub of hub.devices) {
      if (low(sub.battery?.health.level)) {
        const subId = `${hub.uid}/${sub.uid}`;
        return {
          since: health.updated,
          subId,
          detail: `Sub-device ${subId} battery at ${sub.battery?.health.level}% (below ${percent}%).`,
        };
      }
    }
  }
  return undefined;
}
