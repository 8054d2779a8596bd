/**
 * Alert rules and alerts (docs/alerts.md): a company's rules (a device search query and a condition), and the alerts
 * they raise and resolve.
 */
import * as z from 'zod';
import { MAX_ALERT_RULES_PER_COMPANY } from '../../core/alerts/model.js';
import { CompanyParams, companyId, NoQuery, oneOf, pagingParameters, pathId } from '../parameters.js';
import { defineRoute, type FunctionAccess } from '../route.js';
import { Alert, AlertPage, AlertRule, AlertRuleCreateBody, AlertRuleList, AlertRulePatchBody } from '../schemas/alerts.js';
import { ConflictProblem, UnprocessableRequestProblem } from '../schemas/problems.js';
import { AUTHENTICATED_PROBLEMS, HEADERS, PROBLEM_RESPONSES, problem } from '../schemas/responses.js';

const ruleId = pathId('ruleId', 'An alert rule of the company (its ULID).');
const alertId = pathId('alertId', 'An alert of the company (its ULID).');
const RuleParams = z.object({ companyId, ruleId });
const AlertParams = z.object({ companyId, alertId });

const RULES_PATH = '/companies/{companyId}/alert-rules';
const RULE_PATH = `${RULES_PATH}/{ruleId}`;
const RULES_ENTRY = 'functions/handlers/alert-rules.ts';
const ALERTS_ENTRY = 'functions/handlers/alerts.ts';
// The five rule routes share one function: the rules' items (and their count) in the alerts table.
const RULES_ACCESS: FunctionAccess = { storage: true, tables: { alerts: 'RW' } };
const ALERTS_ACCESS: FunctionAccess = { storage: true, pagesListings: true, tables: { alerts: 'R' } };
const ruleNotFound = problem('NotFound', 'The company has no such alert rule.');
const HOW =
  'An alert is raised once per rule and device when the condition holds (for its minutes), and resolved when it stops holding; each is an `alert.raised` / `alert.resolved` event (docs/alerts.md).';

/** POST /companies/{companyId}/alert-rules */
export const alertRuleCreate = defineRoute({
  id: 'AlertRuleCreate',
  api: 'main',
  method: 'POST',
  path: RULES_PATH,
  summary: 'Create an alert rule',
  description: `A rule watches the devices of the company its \`query\` selects (a device search's query string, as a continuous rollout's) for its \`condition\`: within seconds of its creation, the devices that already hold it (the first 10,000 the search finds), then each device from its next change on. ${HOW} At most ${MAX_ALERT_RULES_PER_COMPANY} rules per company (422 beyond). Answers 201 with the rule and its address in \`Location\`. Needs \`alerts:write\` on the company.`,
  tags: ['Alerts'],
  scope: 'alerts:write',
  companyParameter: 'companyId',
  request: {
    params: CompanyParams,
    query: NoQuery,
    body: { kind: 'json', schema: AlertRuleCreateBody, invalidDetail: 'The alert rule is invalid; nothing was created.' },
  },
  access: RULES_ACCESS,
  entry: RULES_ENTRY,
  responses: {
    415: PROBLEM_RESPONSES.UnsupportedMediaType,
    201: {
      description: 'Created: the rule.',
      schema: AlertRule,
      headers: { Location: { ...HEADERS.Location, description: 'Address of the rule.' } },
    },
    ...AUTHENTICATED_PROBLEMS,
    422: {
      description: `Unprocessable: the company has ${MAX_ALERT_RULES_PER_COMPANY} rules already; nothing was created.`,
      schema: UnprocessableRequestProblem,
    },
  },
});

/** GET /companies/{companyId}/alert-rules */
export const alertRulesList = defineRoute({
  id: 'AlertRulesList',
  api: 'main',
  method: 'GET',
  path: RULES_PATH,
  summary: 'List the alert rules of a company',
  description: `Every rule of the company (at most ${MAX_ALERT_RULES_PER_COMPANY}), oldest first. Needs \`alerts:read\` on the company.`,
  tags: ['Alerts'],
  scope: 'alerts:read',
  companyParameter: 'companyId',
  request: { params: CompanyParams, query: NoQuery },
  access: RULES_ACCESS,
  entry: RULES_ENTRY,
  responses: { 200: { description: 'The rules.', schema: AlertRuleList }, ...AUTHENTICATED_PROBLEMS },
});

/** GET /companies/{companyId}/alert-rules/{ruleId} */
export const alertRuleGet = defineRoute({
  id: 'AlertRuleGet',
  api: 'main',
  method: 'GET',
  path: RULE_PATH,
  summary: 'Get an alert rule',
  description: 'The rule. Needs `alerts:read` on the company.',
  tags: ['Alerts'],
  scope: 'alerts:read',
  companyParameter: 'companyId',
  request: { params: RuleParams, query: NoQuery },
  access: RULES_ACCESS,
  entry: RULES_ENTRY,
  responses: { 200: { description: 'The rule.', schema: AlertRule }, ...AUTHENTICATED_PROBLEMS, 404: ruleNotFound },
});

/** PATCH /companies/{companyId}/alert-rules/{ruleId} */
export const alertRuleUpdate = defineRoute({
  id: 'AlertRuleUpdate',
  api: 'main',
  method: 'PATCH',
  path: RULE_PATH,
  summary: 'Change an alert rule',
  description:
    'Changes what is given of `name`, `query` and `condition`. A new query or condition ends what the rule watched: its open alerts are resolved, the devices already holding the new condition are found within seconds (as at creation), and every other device is watched from its next change. A new name alone keeps them (alerts keep the name they were raised with). Needs `alerts:write` on the company.',
  tags: ['Alerts'],
  scope: 'alerts:write',
  companyParameter: 'companyId',
  request: {
    params: RuleParams,
    query: NoQuery,
    body: { kind: 'json', schema: AlertRulePatchBody, invalidDetail: 'The alert rule change is invalid; nothing was changed.' },
  },
  access: RULES_ACCESS,
  entry: RULES_ENTRY,
  responses: {
    415: PROBLEM_RESPONSES.UnsupportedMediaType,
    200: { description: 'The rule as changed.', schema: AlertRule },
    ...AUTHENTICATED_PROBLEMS,
    404: ruleNotFound,
    409: { description: 'Conflict: the rule changed meanwhile; read it again and retry. Nothing was changed.', schema: ConflictProblem },
  },
});

/** DELETE /companies/{companyId}/alert-rules/{ruleId} */
export const alertRuleDelete = defineRoute({
  id: 'AlertRuleDelete',
  api: 'main',
  method: 'DELETE',
  path: RULE_PATH,
  summary: 'Delete an alert rule',
  description:
    'Deletes the rule; its open alerts are resolved and what it watched is removed within seconds (the alerts stay listed, RESOLVED). Needs `alerts:write` on the company.',
  tags: ['Alerts'],
  scope: 'alerts:write',
  companyParameter: 'companyId',
  request: { params: RuleParams, query: NoQuery },
  access: RULES_ACCESS,
  entry: RULES_ENTRY,
  responses: { 204: { description: 'Deleted.' }, ...AUTHENTICATED_PROBLEMS, 404: ruleNotFound },
});

const AlertsQuery = z.strictObject({
  ...pagingParameters,
  state: oneOf('state', ['OPEN', 'RESOLVED'] as const)
    .optional()
    .meta({ description: 'Only the alerts in this state.', example: 'OPEN' }),
});

/** GET /companies/{companyId}/alerts */
export const alertsList = defineRoute({
  id: 'AlertsList',
  api: 'main',
  method: 'GET',
  path: '/companies/{companyId}/alerts',
  summary: 'List the alerts of a company',
  description: `The company's alerts, newest first (by when their condition started to hold), only OPEN or RESOLVED ones with \`state\`. ${HOW} Needs \`alerts:read\` on the company.`,
  tags: ['Alerts'],
  scope: 'alerts:read',
  companyParameter: 'companyId',
  request: { params: CompanyParams, query: AlertsQuery },
  access: ALERTS_ACCESS,
  entry: ALERTS_ENTRY,
  responses: { 200: { description: 'A page of alerts, newest first.', schema: AlertPage }, ...AUTHENTICATED_PROBLEMS },
});

/** GET /companies/{companyId}/alerts/{alertId} */
export const alertGet = defineRoute({
  id: 'AlertGet',
  api: 'main',
  method: 'GET',
  path: '/companies/{companyId}/alerts/{alertId}',
  summary: 'Get an alert',
  description: 'The alert. Needs `alerts:read` on the company.',
  tags: ['Alerts'],
  scope: 'alerts:read',
  companyParameter: 'companyId',
  request: { params: AlertParams, query: NoQuery },
  access: ALERTS_ACCESS,
  entry: ALERTS_ENTRY,
  responses: {
    200: { description: 'The alert.', schema: Alert },
    ...AUTHENTICATED_PROBLEMS,
    404: problem('NotFound', 'The company has no such alert.'),
  },
});
