/**
 * How the console writes alert rules and alerts for people: a condition in words (and the rule form's fields read
 * back as one), the sub-device health states a rule may watch, a rule's query, the dashboard's count of open alerts.
 */

import type { components } from '../../../client/index.js';
import { MAX_ALERT_MINUTES, MIN_ALERT_MINUTES } from '../../../client/limits.js';
import { count } from '../format.js';

// The types from the client itself, not from ./api.js: this module is pure, for the unit tests without a browser.
type AlertCondition = components['schemas']['AlertCondition'];
type SubDeviceState = Extract<AlertCondition, { type: 'SUBDEVICE_STATE_FOR' }>['states'][number];

/** The sub-device health states, in the order the form offers them; the check below fails the build when they differ. */
export const SUB_DEVICE_STATES = ['DOWN', 'WARNING', 'BOOTING', 'HIBERNATION', 'NOMINAL'] as const satisfies readonly SubDeviceState[];

/** True when every state of the API is offered: the assignment below fails to compile otherwise. */
type EveryStateOffered = Exclude<SubDeviceState, (typeof SUB_DEVICE_STATES)[number]> extends never ? true : false;
const everyStateOffered: EveryStateOffered = true;
void everyStateOffered;

/** `n minute(s)`. */
function minutesText(minutes: number): string {
  return `${count(minutes)} ${minutes === 1 ? 'minute' : 'minutes'}`;
}

/** A rule's condition in words (`Disconnected for more than 15 minutes`). */
export function conditionText(condition: AlertCondition): string {
  switch (condition.type) {
    case 'DISCONNECTED_FOR':
      return `Disconnected for more than ${minutesText(condition.minutes)}`;
    case 'SUBDEVICE_STATE_FOR':
      return `A sub-device ${condition.states.join(' or ')} for more than ${minutesText(condition.minutes)}`;
    case 'BATTERY_BELOW':
      return `A battery below ${count(condition.percent)} %`;
  }
}

/** A query string as a person reads it (`location.name=Lyon & connection.state=CONNECTED`); '' when it has none. */
export function readableQuery(query: string): string {
  return [...new URLSearchParams(query)].map(([name, value]) => `${name}=${value}`).join(' & ');
}

/**
 * A count of open alerts read with one page of `limit`: exact below it, "N+" when the listing has more (the API has
 * no count), e.g. `No open alert`, `1 open alert`, `100+ open alerts`.
 */
export function openAlertsText(open: number, more: boolean): string {
  if (open === 0) return 'No open alert';
  return `${count(open)}${more ? '+' : ''} open ${open === 1 && !more ? 'alert' : 'alerts'}`;
}

/** What the rule form's fields hold, as typed: the kind chosen, the minutes, the percent and the states ticked. */
export interface ConditionDraft {
  kind: AlertCondition['type'];
  minutes: string;
  percent: string;
  states: readonly string[];
}

/** A whole number typed in a field within [min, max], or undefined. */
function wholeNumber(text: string, min: number, max: number): number | undefined {
  const value = Number(text.trim());
  return text.trim() !== '' && Number.isInteger(value) && value >= min && value <= max ? value : undefined;
}

/**
 * The condition the rule form describes (only the fields its kind needs), or what to fix first, in words. The bounds
 * are the service's (client/limits.ts): 1 to 10,080 minutes (7 days), 1 to 100 %.
 */
export function conditionOf(draft: ConditionDraft): { condition: AlertCondition } | { error: string } {
  if (draft.kind === 'BATTERY_BELOW') {
    const percent = wholeNumber(draft.percent, 1, 100);
    return percent === undefined
      ? { error: 'The battery level is a whole percent from 1 to 100.' }
      : { condition: { type: draft.kind, percent } };
  }
  const minutes = wholeNumber(draft.minutes, MIN_ALERT_MINUTES, MAX_ALERT_MINUTES);
  if (minutes === undefined)
    return { error: `The minutes are a whole number from ${count(MIN_ALERT_MINUTES)} to ${count(MAX_ALERT_MINUTES)} (7 days).` };
  if (draft.kind === 'DISCONNECTED_FOR') return { condition: { type: draft.kind, minutes } };
  const states = SUB_DEVICE_STATES.filter((state) => draft.states.includes(state));
  if (states.length === 0) return { error: 'Choose at least one sub-device state.' };
  return { condition: { type: draft.kind, minutes, states } };
}
