/**
 * Zod schemas of path and query parameters shared by several routes, and the helpers that build them. Query schemas
 * receive the query string as an object (a parameter given once → its string, a repeated one → its values in order)
 * and refuse unknown names; messages name the parameter and what is allowed.
 */
import * as z from 'zod';
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT } from '../core/shared/paging.js';

/** Longest identifier accepted in a path or query parameter, characters. */
export const MAX_PARAMETER_LENGTH = 256;

/**
 * A query parameter that may be given at most once, as a string.
 * A repeated parameter fails with "'name' may be given only once."
 */
export function single(name: string): z.ZodString {
  return z.string({
    error: (issue) => (Array.isArray(issue.input) ? `'${name}' may be given only once.` : `'${name}' must be a single value.`),
  });
}

/**
 * The object a query schema receives from the (name, value) pairs of a query string: a parameter given once → its
 * value, a repeated one → its values in order. E.g. `a=1&b=2&a=3` → `{ a: ['1', '3'], b: '2' }`.
 */
export function parameterObject(pairs: Iterable<readonly [string, string]>): Record<string, string | string[]> {
  const values: Record<string, string | string[]> = Object.create(null);
  for (const [name, value] of pairs) {
    const previous = values[name];
    if (previous === undefined) values[name] = value;
    else if (Array.isArray(previous)) previous.push(value);
    else values[name] = [previous, value];
  }
  return values;
}

/** A query parameter given once, 1 to `maxLength` characters. */
export function text(name: string, maxLength = MAX_PARAMETER_LENGTH): z.ZodString {
  return single(name)
    .min(1, { error: `'${name}' needs a value.` })
    .max(maxLength, { error: `'${name}' must be 1 to ${maxLength} characters long.` });
}

/** A query parameter given once holding an integer from `min` to `max`, as a number. */
export function integer(name: string, min: number, max: number) {
  return (
    single(name)
      .refine((value) => /^(0|[1-9][0-9]{0,9})$/.test(value) && Number(value) >= min && Number(value) <= max, {
        error: (issue) => `'${name}' must be an integer from ${min} to ${max}; got '${String(issue.input)}'.`,
      })
      .transform(Number)
      // What the document says the parameter holds (the schema's input side is the query string's text).
      .meta({ type: 'integer', minimum: min, maximum: max })
  );
}

/** A query parameter given once holding `true` or `false`, as a boolean. */
export function boolean(name: string) {
  return single(name)
    .refine((value) => value === 'true' || value === 'false', {
      error: (issue) => `'${name}' must be true or false; got '${String(issue.input)}'.`,
    })
    .transform((value) => value === 'true')
    .meta({ type: 'boolean' });
}

/**
 * A query parameter given once holding one of `values`; the message names the value given and the allowed ones, or
 * is `message(value)`.
 */
export function oneOf<const T extends readonly [string, ...string[]]>(name: string, values: T, message?: (value: string) => string) {
  return single(name)
    .refine((value): value is T[number] => (values as readonly string[]).includes(value), {
      error: (issue) =>
        message?.(String(issue.input)) ?? `'${String(issue.input)}' is not a value of '${name}'. Allowed: ${values.join(', ')}.`,
    })
    .meta({ enum: [...values] }) as unknown as z.ZodType<T[number], string>;
}

/** A path parameter: an identifier of 1 to MAX_PARAMETER_LENGTH characters (already percent-decoded). */
export function pathId(name: string, description: string, maxLength = MAX_PARAMETER_LENGTH) {
  return z
    .string()
    .min(1, { error: `'${name}' is required.` })
    .max(maxLength, { error: `'${name}' must be at most ${maxLength} characters long.` })
    .meta({ description });
}

/** `{companyId}`: the company the call acts on; it must be one of the token's `companies`. */
export const companyId = pathId('companyId', "The company the call acts on; one of the token's `companies`.");

/** Path parameters of the routes under `/companies/{companyId}/…` with nothing else in the path. */
export const CompanyParams = z.object({ companyId });

/** A query string that must be empty. */
export const NoQuery = z.strictObject({});

/** A query string that is ignored: the public documents and the token endpoint accept cache-busters (`?v=2`). */
export const IgnoredQuery = z.object({});

/** `limit` and `cursor` of every cursor-paged listing. */
export const pagingParameters = {
  limit: integer('limit', 1, MAX_LIST_LIMIT)
    .optional()
    .transform((value) => value ?? DEFAULT_LIST_LIMIT)
    .meta({ description: `Page size, 1 to ${MAX_LIST_LIMIT}; default ${DEFAULT_LIST_LIMIT}.`, default: DEFAULT_LIST_LIMIT, example: 50 }),
  cursor: text('cursor', 2_048)
    .optional()
    .meta({ description: 'The `nextCursor` of the previous page of the same listing; omit it for the first page.' }),
};

/** The query of a cursor-paged listing: `limit` (default DEFAULT_LIST_LIMIT) and `cursor`. */
export const ListQuery = z.strictObject(pagingParameters);
