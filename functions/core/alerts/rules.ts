/**
 * The alert rules of a company (docs/alerts.md): create, list, read, change and delete. Each change is one conditional
 * write of the rule; what follows for its watches and alerts (a deleted rule's are resolved and removed, a changed
 * query or condition restarts them) is derived from the alerts table's stream (changes.ts).
 */
import { ulid } from 'ulid';
import { BadRequestError, ConflictError, NotFoundError, UnprocessableRequestError } from '../shared/errors.js';
import { authorizeCompany, type Principal } from '../shared/principal.js';
import { type AlertCondition, type AlertRule, MAX_ALERT_RULES_PER_COMPANY, RULE_RECHECK_MS, type StoredAlertRule } from './model.js';
import type { AlertRuleStore } from './ports.js';

/** What the rule use cases need. */
export interface AlertRuleDependencies {
  rules: AlertRuleStore;
  now?: () => Date;
}

/**
 * The selection a rule's query string parses into (the route parses it as a continuous rollout's query): filter
 * field → accepted values, and the `company` filter's values apart.
 */
export interface RuleSelection {
  filters: ReadonlyMap<string, readonly string[]>;
  companies: readonly string[];
}

/** A rule's create body, validated, with its query parsed. */
export interface AlertRuleInput {
  name: string;
  query: string;
  condition: AlertCondition;
}

/** A rule as answered (its stored filters, revision and recheck time left out). */
export function ruleView(rule: StoredAlertRule): AlertRule {
  const { filters: _filters, revision: _revision, recheckAt: _recheckAt, ...view } = rule;
  return view;
}

/** Who a principal is, as a rule's `by`. */
function actorOf(principal: Principal): string {
  return principal.username ?? principal.subject;
}

/** The filters of a selection, checked to stay within `company`. @throws BadRequestError naming another company. */
function filtersOf(company: string, selection: RuleSelection): Record<string, string[]> {
  const others = selection.companies.filter((candidate) => candidate !== company);
  if (others.length > 0) {
    throw new BadRequestError(
      `A rule of company '${company}' watches that company's devices only; the query names another company.`,
      others.map((other) => ({
        path: '/query/company',
        message: `'${other}' is not '${company}': drop the parameter, or give '${company}'.`,
      })),
    );
  }
  return Object.fromEntries([...selection.filters].map(([field, values]) => [field, [...values]]));
}

/**
 * Creates a rule (one transaction with the company's rule count).
 * @throws ForbiddenError for a company not the caller's; BadRequestError for a query naming another company;
 *   UnprocessableRequestError when the company has MAX_ALERT_RULES_PER_COMPANY rules already.
 */
export async function createAlertRule(
  deps: AlertRuleDependencies,
  principal: Principal,
  company: string,
  input: AlertRuleInput,
  selection: RuleSelection,
): Promise<AlertRule> {
  authorizeCompany(principal, company);
  const filters = filtersOf(company, selection);
  const now = deps.now?.() ?? new Date();
  const id = ulid(now.getTime());
  const at = now.toISOString();
  const rule: StoredAlertRule = {
    id,
    company,
    ...input,
    filters,
    revision: id,
    recheckAt: new Date(now.getTime() + RULE_RECHECK_MS).toISOString(),
    created: at,
    updated: at,
    by: actorOf(principal),
  };
  if ((await deps.rules.create(rule, MAX_ALERT_RULES_PER_COMPANY)) === 'full') {
    throw new UnprocessableRequestError(
      `Company '${company}' has ${MAX_ALERT_RULES_PER_COMPANY} alert rules, the most it may have; delete one it no longer needs, or widen one's query.`,
    );
  }
  return ruleView(rule);
}

/** A company's rules, oldest first. @throws ForbiddenError for a company not the caller's. */
export async function listAlertRules(
  deps: Pick<AlertRuleDependencies, 'rules'>,
  principal: Principal,
  company: string,
): Promise<AlertRule[]> {
  authorizeCompany(principal, company);
  return (await deps.rules.list(company)).map(ruleView);
}

/** The stored rule. @throws NotFoundError when the company has no such rule. */
async function storedRule(rules: AlertRuleStore, company: string, ruleId: string): Promise<StoredAlertRule> {
  const rule = await rules.get(company, ruleId);
  if (rule === undefined) throw new NotFoundError(`Company '${company}' has no alert rule '${ruleId}'.`);
  return rule;
}

/** One rule. @throws ForbiddenError for a company not the caller's; NotFoundError for an unknown rule. */
export async function getAlertRule(
  deps: Pick<AlertRuleDependencies, 'rules'>,
  principal: Principal,
  company: string,
  ruleId: string,
): Promise<AlertRule> {
  authorizeCompany(principal, company);
  return ruleView(await storedRule(deps.rules, company, ruleId));
}

/**
 * Changes a rule's name, query or condition (what is given). A new query or condition is a new revision: the rule's
 * watches and open alerts are ended (changes.ts) and start again from each device's next change.
 * @throws ForbiddenError; NotFoundError for an unknown rule; BadRequestError for a query naming another company;
 *   ConflictError when the rule changed meanwhile (another change won: read it again).
 */
export async function updateAlertRule(
  deps: AlertRuleDependencies,
  principal: Principal,
  company: string,
  ruleId: string,
  change: Partial<AlertRuleInput>,
  selection: RuleSelection | undefined,
): Promise<AlertRule> {
  authorizeCompany(principal, company);
  const rule = await storedRule(deps.rules, company, ruleId);
  const now = deps.now?.() ?? new Date();
  const filters = selection === undefined ? rule.filters : filtersOf(company, selection);
  const condition = change.condition ?? rule.condition;
  const query = change.query ?? rule.query;
  const evaluated =
    JSON.stringify(filters) !== JSON.stringify(rule.filters) || JSON.stringify(condition) !== JSON.stringify(rule.condition);
  const next: StoredAlertRule = {
    ...rule,
    name: change.name ?? rule.name,
    query,
    condition,
    filters,
    revision: evaluated ? ulid(now.getTime()) : rule.revision,
    ...(evaluated ? { recheckAt: new Date(now.getTime() + RULE_RECHECK_MS).toISOString() } : {}),
    updated: now.toISOString(),
    by: actorOf(principal),
  };
  if (!(await deps.rules.replace(next, rule.updated))) {
    throw new ConflictError(`Alert rule '${ruleId}' changed (or was deleted) while this change was made; read it again and retry.`);
  }
  return ruleView(next);
}

/**
 * Deletes a rule; its watches are removed and its open alerts resolved afterwards (changes.ts).
 * @throws ForbiddenError; NotFoundError for an unknown rule.
 */
export async function deleteAlertRule(
  deps: Pick<AlertRuleDependencies, 'rules'>,
  principal: Principal,
  company: string,
  ruleId: string,
): Promise<void> {
  authorizeCompany(principal, company);
  if ((await deps.rules.delete(company, ruleId)) === undefined)
    throw new NotFoundError(`Company '${company}' has no alert rule '${ruleId}'.`);
}
