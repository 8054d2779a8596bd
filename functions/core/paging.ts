import { BadRequestError, type ProblemViolation } from './errors.js';

/** Default and maximum `limit` of every cursor-paged listing (docs/contract.md, "Deployments"). */
export const DEFAULT_LIST_LIMIT = 100;
export const MAX_LIST_LIMIT = 1_000;

/**
 * Parses the `limit` (1–1000, default 100) and `cursor` parameters of a cursor-paged listing.
 * @param parameters the query string pairs.
 * @throws BadRequestError (400) listing every unknown, repeated or bad parameter at once.
 */
export function parseListParameters(parameters: readonly [string, string][]): { limit: number; cursor: string | undefined } {
  const errors: ProblemViolation[] = [];
  let limit = DEFAULT_LIST_LIMIT;
  let cursor: string | undefined;
  const seen = new Set<string>();
  for (const [name, value] of parameters) {
    if (seen.has(name)) {
      errors.push({ path: name, message: `'${name}' may be given only once.` });
      continue;
    }
    seen.add(name);
    if (name === 'limit') {
      if (!/^[1-9][0-9]{0,3}$/.test(value) || Number(value) > MAX_LIST_LIMIT) {
        errors.push({ path: 'limit', message: `'limit' must be an integer from 1 to ${MAX_LIST_LIMIT}; got '${value}'.` });
      } else limit = Number(value);
    } else if (name === 'cursor') {
      if (value === '') errors.push({ path: 'cursor', message: "'cursor' must be the nextCursor of a previous page." });
      else cursor = value;
    } else errors.push({ path: name, message: `Unknown parameter '${name}'. Allowed: limit, cursor.` });
  }
  if (errors.length > 0) throw new BadRequestError('The listing request has invalid parameters.', errors);
  return { limit, cursor };
}
