/**
 * The search's filter parameters (one per field of the filter registry) and the selection they make: shared by the
 * search routes (routes/search.ts) and a rollout's `targets.query` (rollout-targets.ts), which thereby does not load
 * the search routes and their response schemas.
 */
import * as z from 'zod';
import type { SearchParameters } from '../core/search/query.js';
import { FILTER_FIELDS, type FilterField } from '../core/search/registry.js';
import { MAX_PARAMETER_LENGTH } from './parameters.js';

/** Most values one filter parameter may be given, repeats counted. */
export const MAX_FILTER_VALUES = 100;

/** One filter parameter: given once or repeated (values OR-ed), each value one of the field's when they are fixed. */
function filterValues(field: FilterField) {
  const name = field.field;
  const value =
    field.values.kind === 'fixed'
      ? z
          .string()
          .refine((candidate) => (field.values as { list: readonly string[] }).list.includes(candidate), {
            error: (issue) =>
              `'${String(issue.input)}' is not a value of '${name}'. Allowed: ${(field.values as { list: readonly string[] }).list.join(', ')}.`,
          })
          .meta({ enum: [...field.values.list] })
      : z
          .string()
          .min(1, { error: `'${name}' needs a value.` })
          .max(MAX_PARAMETER_LENGTH, { error: `A '${name}' value has at most ${MAX_PARAMETER_LENGTH} characters.` });
  return z
    .preprocess(
      (raw) => (typeof raw === 'string' ? [raw] : raw),
      z.array(value).max(MAX_FILTER_VALUES, { error: `'${name}' may be given at most ${MAX_FILTER_VALUES} times.` }),
    )
    .optional()
    .meta({
      description: `Filter on \`${name}\`${field.appliesTo === null ? '' : ` (${field.appliesTo} resources)`}; repeat it to accept several values (OR).`,
      ...(field.values.kind === 'fixed' ? { example: [field.values.list[0]] } : {}),
    });
}

/** One query schema per filter field of the registry, by parameter name. */
export const filterParameters = Object.fromEntries(FILTER_FIELDS.map((field) => [field.field, filterValues(field)]));

/** The selection of filter values of a query: each field's distinct values, and the `company` values apart. */
export function selection(query: Record<string, unknown>): Pick<SearchParameters, 'filters' | 'companies'> {
  const filters = new Map<string, string[]>();
  let companies: string[] = [];
  for (const field of FILTER_FIELDS) {
    const values = query[field.field] as string[] | undefined;
    if (values === undefined) continue;
    if (field.values.kind === 'companies') companies = [...new Set(values)];
    else filters.set(field.field, [...new Set(values)]);
  }
  return { filters, companies };
}

/**
 * The filter parameters of the search alone (no `global`, sort or paging), as the selection they make: what a
 * rollout's `targets.query` holds (rollout-targets.ts).
 */
export const SearchSelectionQuery = z.strictObject(filterParameters).transform((query) => selection(query));
