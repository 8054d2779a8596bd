import { alertRuleCreate, alertRuleDelete, alertRuleGet, alertRulesList, alertRuleUpdate } from '../contract/routes/alerts.js';
import { parseRuleQuery } from '../contract/schemas/alerts.js';
import {
  createAlertRule,
  deleteAlertRule,
  getAlertRule,
  listAlertRules,
  type RuleSelection,
  updateAlertRule,
} from '../core/alerts/rules.js';
import { alertStorage } from '../platform/composition/alerts.js';
import { jsonResponse, routeHandler } from '../platform/http.js';
import { routeDispatcher } from '../platform/router.js';

/** The selection of a query the route's schema accepted. @throws Error if it does not parse (the schema refuses it first). */
function selectionOf(query: string): RuleSelection {
  const parsed = parseRuleQuery(query);
  if ('violations' in parsed) throw new Error('A rule query the body schema accepted did not parse.');
  return parsed.selection;
}

const create = routeHandler(alertRuleCreate, async ({ params, body }, { principal }) => {
  const rule = await createAlertRule(alertStorage(), principal, params.companyId, body, selectionOf(body.query));
  return jsonResponse(201, rule, { location: `/companies/${encodeURIComponent(params.companyId)}/alert-rules/${rule.id}` });
});

const list = routeHandler(alertRulesList, async ({ params }, { principal }) =>
  jsonResponse(200, { items: await listAlertRules(alertStorage(), principal, params.companyId) }),
);

const get = routeHandler(alertRuleGet, async ({ params }, { principal }) =>
  jsonResponse(200, await getAlertRule(alertStorage(), principal, params.companyId, params.ruleId)),
);

const update = routeHandler(alertRuleUpdate, async ({ params, body }, { principal }) => {
  const selection = body.query === undefined ? undefined : selectionOf(body.query);
  return jsonResponse(200, await updateAlertRule(alertStorage(), principal, params.companyId, params.ruleId, body, selection));
});

const remove = routeHandler(alertRuleDelete, async ({ params }, { principal }) => {
  await deleteAlertRule(alertStorage(), principal, params.companyId, params.ruleId);
  return { statusCode: 204 };
});

/**
 * The alert rules routes, one function for the five: POST …/alert-rules (201 with `Location`; 422 past the limit),
 * GET …/alert-rules (`{ items }`), GET, PATCH (409 when it changed meanwhile) and DELETE (204) …/alert-rules/{ruleId}.
 */
export const handler = routeDispatcher([
  [alertRuleCreate, create],
  [alertRulesList, list],
  [alertRuleGet, get],
  [alertRuleUpdate, update],
  [alertRuleDelete, remove],
]);
