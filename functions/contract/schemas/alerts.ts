/** Bodies of the alert rules and alerts routes (docs/alerts.md). */
import * as z from 'zod';
import {
  ALERT_CONDITION_TYPES,
  MAX_ALERT_BATTERY_PERCENT,
  MAX_ALERT_MINUTES,
  MAX_ALERT_RULE_NAME_LENGTH,
  MAX_ALERT_RULES_PER_COMPANY,
  MIN_ALERT_BATTERY_PERCENT,
  MIN_ALERT_MINUTES,
} from '../../core/alerts/model.js';
import { SUB_DEVICE_HEALTH_STATES } from '../../core/devices/model.js';
import type { TargetSelection } from '../../core/rollouts/targets.js';
import { displayText } from '../../core/shared/display-text.js';
import type { ProblemViolation } from '../../core/shared/errors.js';
import { ULID_PATTERN } from '../../core/shared/identifiers.js';
import { withThousandsSeparators as count } from '../../core/shared/thousands.js';
import { MAX_TARGET_QUERY_LENGTH, parseTargetQuery } from '../rollout-targets.js';

const dateTime = (description: string) => z.iso.datetime({ offset: true }).describe(description);

/** Search parameters a rule's query may not hold, with why. */
const REFUSED: Readonly<Record<string, string>> = {
  global:
    "'global' (full-text search) cannot select a rule's devices: select them with filter parameters, e.g. health.hubs.devices.capability.type=PRINTER.",
  sort: "'sort' orders search results; a rule watches every device its query matches. Remove it.",
  direction: "'direction' orders search results; a rule watches every device its query matches. Remove it.",
  page: "'page' pages search results; a rule watches every device its query matches. Remove it.",
  pageSize: "'pageSize' pages search results; a rule watches every device its query matches. Remove it.",
};

/**
 * Parses a rule's query as a continuous rollout's query is parsed (the device search's filter parameters, a leading
 * `?` allowed, empty: every device of the company), or lists what is wrong with it, each naming its parameter.
 */
export function parseRuleQuery(query: string): { selection: TargetSelection } | { violations: ProblemViolation[] } {
  const rest = new URLSearchParams();
  const violations: ProblemViolation[] = [];
  for (const [name, value] of new URLSearchParams(query)) {
    if (Object.hasOwn(REFUSED, name)) violations.push({ path: name, message: REFUSED[name] as string });
    else if (name === 'type' && value !== 'DEVICE')
      violations.push({ path: name, message: `A rule watches devices: 'type' may only be DEVICE; got '${value}'.` });
    else rest.append(name, value);
  }
  const parsed = parseTargetQuery(rest.toString());
  if ('violations' in parsed) violations.push(...parsed.violations);
  return violations.length === 0 && 'selection' in parsed ? parsed : { violations };
}

const minutes = z
  .int()
  .min(MIN_ALERT_MINUTES)
  .max(MAX_ALERT_MINUTES)
  .describe(`Minutes the condition must hold before the alert is raised, ${MIN_ALERT_MINUTES} to ${count(MAX_ALERT_MINUTES)} (7 days).`);

/** A rule's condition, one of three by `type` (core/alerts/model.ts, AlertCondition). */
export const AlertCondition = z
  .discriminatedUnion('type', [
    z.strictObject({ type: z.literal('DISCONNECTED_FOR'), minutes }),
    z.strictObject({
      type: z.literal('SUBDEVICE_STATE_FOR'),
      minutes,
      states: z
        .array(z.enum(SUB_DEVICE_HEALTH_STATES))
        .min(1)
        .max(SUB_DEVICE_HEALTH_STATES.length)
        .describe('Sub-device health states (`health.hubs.devices.health.state`) that hold the condition.'),
    }),
    z.strictObject({
      type: z.literal('BATTERY_BELOW'),
      percent: z
        .int()
        .min(MIN_ALERT_BATTERY_PERCENT)
        .max(MAX_ALERT_BATTERY_PERCENT)
        .describe('A hub’s or sub-device’s `battery.health.level` below this percent holds the condition, at once.'),
    }),
  ])
  .meta({
    id: 'AlertCondition',
    description: `What a rule watches (${ALERT_CONDITION_TYPES.join(', ')}): the device DISCONNECTED for more than \`minutes\`; one of its sub-devices in one of \`states\` for more than \`minutes\`; a hub's or sub-device's battery below \`percent\`.`,
  });

const ruleName = displayText(z.string().min(1).max(MAX_ALERT_RULE_NAME_LENGTH), 'line').describe(
  `A name for people, 1 to ${MAX_ALERT_RULE_NAME_LENGTH} characters.`,
);

const ruleQuery = z
  .string()
  .max(MAX_TARGET_QUERY_LENGTH, { error: `'query' has at most ${count(MAX_TARGET_QUERY_LENGTH)} characters.` })
  .superRefine((query, context) => {
    const parsed = parseRuleQuery(query);
    if ('violations' in parsed)
      for (const violation of parsed.violations) context.addIssue({ code: 'custom', path: [violation.path], message: violation.message });
  })
  .meta({
    description: `The query string of a device search (\`GET /resources/search\`, without the leading \`?\`): its filter parameters, values of one parameter OR-ed, different parameters AND-ed, within the rule's company; empty watches every device of the company. \`global\`, \`sort\`, \`direction\`, \`page\`, \`pageSize\`, \`type\` other than DEVICE and \`company\` other than the rule's are refused. At most ${count(MAX_TARGET_QUERY_LENGTH)} characters.`,
    examples: ['health.hubs.devices.capability.type=PRINTER'],
  });

/** The body of POST …/alert-rules. */
export const AlertRuleCreateBody = z.strictObject({ name: ruleName, query: ruleQuery, condition: AlertCondition }).meta({
  id: 'AlertRuleCreate',
  examples: [
    {
      name: 'Printer kiosks offline',
      query: 'health.hubs.devices.capability.type=PRINTER',
      condition: { type: 'DISCONNECTED_FOR', minutes: 15 },
    },
  ],
});

/** The body of PATCH …/alert-rules/{ruleId}: at least one member. */
export const AlertRulePatchBody = z
  .strictObject({ name: ruleName.optional(), query: ruleQuery.optional(), condition: AlertCondition.optional() })
  .refine((body) => body.name !== undefined || body.query !== undefined || body.condition !== undefined, {
    error: "Give at least one of 'name', 'query' or 'condition'.",
  })
  .meta({ id: 'AlertRulePatch', examples: [{ condition: { type: 'DISCONNECTED_FOR', minutes: 30 } }] });

/** A rule as answered (its parsed filters and revision are not shown). */
export const AlertRule = z
  .object({
    id: z.string().regex(ULID_PATTERN).describe('ULID.'),
    company: z.string(),
    name: z.string(),
    query: z.string().describe('The device search query string the rule watches.'),
    condition: AlertCondition,
    created: dateTime('ISO-8601.'),
    updated: dateTime('ISO-8601.'),
    by: z.string().describe('Who created or last changed it.'),
  })
  .strict()
  .meta({ id: 'AlertRule', description: 'An alert rule: the devices a query selects and a condition on them.' });

/** GET …/alert-rules: every rule of the company. */
export const AlertRuleList = z
  .object({ items: z.array(AlertRule).max(MAX_ALERT_RULES_PER_COMPANY).describe(`Oldest first; at most ${MAX_ALERT_RULES_PER_COMPANY}.`) })
  .strict()
  .meta({ id: 'AlertRuleList' });

/** OPEN or RESOLVED. */
export const AlertState = z
  .enum(['OPEN', 'RESOLVED'])
  .meta({ id: 'AlertState', description: 'OPEN while the condition holds, then RESOLVED.' });

/** An alert as answered. */
export const Alert = z
  .object({
    id: z.string().regex(ULID_PATTERN).describe('ULID whose time is when the condition started to hold.'),
    company: z.string(),
    ruleId: z.string(),
    ruleName: z.string().describe('The rule’s name when the alert was raised.'),
    target: z
      .object({
        type: z.literal('DEVICE'),
        id: z.string().describe('The device.'),
        subId: z.string().optional().describe('`{hub uid}` or `{hub uid}/{sub-device uid}`: what holds the condition.'),
      })
      .strict(),
    state: AlertState,
    raisedAt: dateTime('ISO-8601.'),
    resolvedAt: dateTime('ISO-8601, once RESOLVED.').optional(),
    detail: z.string().describe('What held, for a person (shown as text).'),
  })
  .strict()
  .meta({ id: 'Alert', description: 'An alert: raised once per rule and device while its condition holds.' });

/** A page of GET …/alerts. */
export const AlertPage = z
  .object({
    items: z.array(Alert).describe('Newest first (by when the condition started to hold).'),
    nextCursor: z.string().nullable().describe('Pass as `cursor` to get the next page; null on the last page.'),
  })
  .strict()
  .meta({ id: 'AlertPage' });
