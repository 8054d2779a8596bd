/**
 * The query string of a rollout's `targets.query`, read as `GET /resources/search` reads its own: the same parameters
 * (the filter registry's), the same values, the same parsing (URLSearchParams; a repeated parameter's values OR-ed),
 * without what a rollout has no use for: `global`, `sort`, `direction`, `page` and `pageSize` (a rollout targets every
 * match), and `type` other than DEVICE (a rollout targets devices). The company restriction is the use case's
 * (core/rollouts/targets.ts), which knows the rollout's company.
 */

import type { RolloutCreateInput } from '../core/rollouts/model.js';
import { type RolloutTargets, type TargetSelection, targetQueryPath } from '../core/rollouts/targets.js';
import { FILTER_FIELDS } from '../core/search/registry.js';
import { BadRequestError, type ProblemViolation } from '../core/shared/errors.js';
import { parameterObject } from './parameters.js';
import { SearchSelectionQuery } from './search-selection.js';

/** Longest `targets.query`, characters. */
export const MAX_TARGET_QUERY_LENGTH = 2_000;

/** Search parameters a target query may not hold, with why. */
const REFUSED: Readonly<Record<string, string>> = {
  global:
    "'global' (full-text search) cannot select a rollout's targets: select the devices with filter parameters, e.g. connection.state=CONNECTED.",
  sort: "'sort' orders search results; a rollout targets every device the query matches, in id order. Remove it.",
  direction: "'direction' orders search results; a rollout targets every device the query matches, in id order. Remove it.",
  page: "'page' pages search results; a rollout targets every device the query matches. Remove it.",
  pageSize: "'pageSize' pages search results; a rollout targets every device the query matches. Remove it.",
};

const ALLOWED = FILTER_FIELDS.map((field) => field.field).join(', ');

/**
 * Parses a target query (`connection.state=CONNECTED&health.mode=SERVER`, a leading `?` allowed; empty: every device
 * of the company) into the selection the search would make of it, or lists what is wrong with it.
 * @returns the selection (filters without `type`, and the `company` filter's values apart), or the violations, each
 *   naming its parameter (`path`), in the order the query gives them.
 */
export function parseTargetQuery(query: string): { selection: TargetSelection } | { violations: ProblemViolation[] } {
  const raw = parameterObject(new URLSearchParams(query));
  const violations: ProblemViolation[] = [];
  const filters: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (Object.hasOwn(REFUSED, name)) violations.push({ path: name, message: REFUSED[name] as string });
    else if (name === 'type') {
      for (const type of [value].flat()) {
        if (type !== 'DEVICE')
          violations.push({ path: name, message: `A rollout targets devices: 'type' may only be DEVICE; got '${type}'.` });
      }
    } else filters[name] = value;
  }
  const parsed = SearchSelectionQuery.safeParse(filters);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      if (issue.code === 'unrecognized_keys') {
        for (const key of issue.keys) violations.push({ path: key, message: `Unknown parameter '${key}'. Allowed: ${ALLOWED}.` });
      } else violations.push({ path: String(issue.path[0] ?? ''), message: issue.message });
    }
  }
  if (parsed.success && violations.length === 0) return { selection: parsed.data };
  const order = Object.keys(raw);
  return { violations: violations.sort((left, right) => order.indexOf(left.path) - order.indexOf(right.path)) };
}

/**
 * The targets of a create body for resolveRolloutTargets: the parsed query, or the ids.
 * @throws BadRequestError listing each violation of the query (`errors[].path` `/targets/query/<parameter>`); the
 *   route's body schema already refuses such a query, so a validated body never throws here.
 */
export function rolloutTargetsOf(targets: RolloutCreateInput['targets']): RolloutTargets {
  if ('ids' in targets) return { ids: targets.ids };
  const parsed = parseTargetQuery(targets.query);
  if ('violations' in parsed) {
    throw new BadRequestError(
      `targets.query has ${parsed.violations.length} invalid parameter(s): ${[...new Set(parsed.violations.map((violation) => violation.path))].join(', ')}.`,
      parsed.violations.map((violation) => ({ path: targetQueryPath(violation.path), message: violation.message })),
    );
  }
  return { selection: parsed.selection };
}
