/**
 * A rollout's targets: the device ids its create request names, resolved once, when the rollout is created, and kept
 * (docs/contract.md, "Rollouts"). A device that matches the query later is not added to them (a continuous rollout
 * takes it as a member: continuous.ts); one that stops matching stays.
 */

import type { SearchIndex } from '../search/ports.js';
import type { SearchParameters } from '../search/query.js';
import { BadRequestError, UnprocessableRequestError } from '../shared/errors.js';
import { withThousandsSeparators } from '../shared/thousands.js';
import { MAX_ROLLOUT_TARGETS } from './model.js';

/**
 * The selection a device search's query string makes, as the search route parses it: filter field → accepted values
 * (`type` left out: a rollout targets devices), and the `company` filter's values apart.
 */
export type TargetSelection = Pick<SearchParameters, 'filters' | 'companies'>;

/** A rollout's targets as the route parsed them: the selection of its `targets.query`, or device ids. */
export type RolloutTargets = { selection: TargetSelection } | { ids: readonly string[] };

/** Where the violations of a target query point in the create body: `/targets/query/<parameter>`. */
export function targetQueryPath(parameter: string): string {
  return `/targets/query/${parameter}`;
}

/**
 * The device ids a rollout of `companyId` targets, sorted by id, without duplicates, 1 to MAX_ROLLOUT_TARGETS of them.
 * A selection matches the company's devices as the search would (values of one filter OR-ed, filters AND-ed; the
 * company's devices only: a `company` filter may name that company, and no other); ids are taken as given, without a
 * search (a device that does not exist is reported by its deployment, TARGET_NOT_FOUND).
 * @param options `allowNone`: a query matching no device resolves to no target (a continuous rollout, which devices
 *   join later) instead of being refused.
 * @throws BadRequestError when the selection's `company` filter names another company (`errors[].path`
 *   `/targets/query/company`); UnprocessableRequestError when nothing matches, or more than MAX_ROLLOUT_TARGETS
 *   devices do (the detail names the count); ServiceUnavailableError when the search backend cannot be reached.
 */
export async function resolveRolloutTargets(
  search: Pick<SearchIndex, 'selectIds'>,
  companyId: string,
  targets: RolloutTargets,
  options: { allowNone?: boolean } = {},
): Promise<string[]> {
  if ('ids' in targets) {
    const ids = [...new Set(targets.ids)].sort();
    if (ids.length === 0) throw new UnprocessableRequestError('The rollout names no device; give at least one id in targets.ids.');
    if (ids.length > MAX_ROLLOUT_TARGETS) throw tooMany(ids.length, 'The rollout names');
    return ids;
  }
  const others = targets.selection.companies.filter((company) => company !== companyId);
  if (others.length > 0) {
    throw new BadRequestError(
      `A rollout of company '${companyId}' targets that company's devices only; the query names another company.`,
      others.map((company) => ({
        path: targetQueryPath('company'),
        message: `'${company}' is not the company of this rollout ('${companyId}'): drop the parameter, or give '${companyId}'.`,
      })),
    );
  }
  const { ids, total } = await search.selectIds({ companies: [companyId], filters: targets.selection.filters }, MAX_ROLLOUT_TARGETS);
  if (total > MAX_ROLLOUT_TARGETS) throw tooMany(total, `The query matches`);
  // The index held no duplicate within one company; a Set keeps the promise should an adapter ever repeat one.
  const unique = [...new Set(ids)].sort();
  if (unique.length === 0 && options.allowNone !== true) {
    throw new UnprocessableRequestError(
      `The query matches no device of company '${companyId}'; a rollout needs at least one. A device search with the same query shows what it matches.`,
    );
  }
  return unique;
}

function tooMany(count: number, subject: string): UnprocessableRequestError {
  return new UnprocessableRequestError(
    `${subject} ${withThousandsSeparators(count)} devices; a rollout targets at most ${withThousandsSeparators(MAX_ROLLOUT_TARGETS)}. Narrow the query with more filters, or split the devices into several rollouts (e.g. by location or version).`,
  );
}
