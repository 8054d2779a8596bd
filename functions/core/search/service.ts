import type { CompanyRepository } from '../shared/companies.js';
import type { Principal } from '../shared/principal.js';
import type { ResourceType, SearchDocument } from './documents.js';
import type { SearchIndex } from './ports.js';
import { type SearchParameters, type SearchSort, searchQueryOf } from './query.js';
import { FILTER_FIELDS, humanize } from './registry.js';

/** The search response. */
export interface SearchResponse {
  total: number;
  page: { page: number; pages: number; pageSize: number };
  sort: SearchSort;
  resources: SearchDocument[];
}

/**
 * Searches resources within the caller's companies.
 * @param parameters the request's search parameters, validated by the route.
 * @throws ForbiddenError when `company` names a company outside the token.
 * @throws ServiceUnavailableError when the search backend is unreachable.
 */
export async function searchResources(index: SearchIndex, principal: Principal, parameters: SearchParameters): Promise<SearchResponse> {
  const query = searchQueryOf(parameters, principal);
  const result = await index.search(query);
  return {
    total: result.total,
    page: { page: query.page, pages: Math.ceil(result.total / query.pageSize), pageSize: query.pageSize },
    sort: query.sort,
    resources: result.resources,
  };
}

/**
 * Data values in natural order ("v2" before "v10"); one collator, as `localeCompare` with options builds one per call.
 * Built on first use: the first collator of a process loads ICU's collation data (~5 ms), which the functions that
 * import this module without describing filters (search) need not pay at cold start.
 */
let naturalOrder: Intl.Collator | undefined;
/** Display names of the fixed enumeration values, computed once. */
const FIXED_VALUE_NAMES = new Map(
  FILTER_FIELDS.flatMap((field) =>
    field.values.kind === 'fixed' ? field.values.list.map((value) => [value, humanize(value)] as const) : [],
  ),
);

/** A filter descriptor. */
export interface FilterDescriptor {
  field: string;
  /** The field's display name (FilterField.name). */
  name: string;
  /** The resource type the field applies to (FilterField.appliesTo); `scope` on the wire. */
  scope: ResourceType | null;
  definition: { type: 'ENUMERATION'; parameters: { name: string; value: string; count: number }[] };
}

/**
 * Describes the search filters with live counts, computed within the caller's companies.
 * `type` restricts to the fields (and counts) of one resource type. The search's filter parameters may also be given:
 * each field's counts are then computed as if that field's own selection were removed (disjunctive faceting).
 * Fixed enumerations list every value, with count 0 where nothing matches.
 * @param request `type` and the filter selection (`filters`, `companies`), validated by the route.
 * @throws ForbiddenError for a company outside the token.
 */
export async function describeFilters(
  dependencies: { index: SearchIndex; companies: CompanyRepository },
  principal: Principal,
  request: { type?: ResourceType | undefined; filters: Map<string, string[]>; companies: string[] },
): Promise<{ items: FilterDescriptor[] }> {
  const { type } = request;
  const query = searchQueryOf({ page: 1, pageSize: 1, filters: new Map(request.filters), companies: request.companies }, principal);
  if (type !== undefined) query.filters.delete('type');

  const fields = FILTER_FIELDS.filter((field) => type === undefined || field.appliesTo === null || field.appliesTo === type);
  const countedFields = fields.filter((field) => field.values.kind !== 'companies').map((field) => field.field);
  const base = { companies: query.companies, ...(type === undefined ? {} : { type }) };
  const counts = await disjunctiveCounts(dependencies.index, principal, query, countedFields, base);
  const companyNames = new Map((await dependencies.companies.getMany(principal.companies)).map((company) => [company.id, company.name]));
  const items = fields.map(
    (field): FilterDescriptor => ({
      field: field.field,
      name: field.name,
      scope: field.appliesTo,
      definition: {
        type: 'ENUMERATION',
        parameters: filterParameters(field, counts.get(field.field) ?? new Map(), principal, companyNames),
      },
    }),
  );
  return { items };
}

/** The count of each value of each counted field: what countValues answers, by field then value. */
type FieldCounts = Map<string, Map<string, { count: number; label?: string }>>;

/**
 * Counts every value of `countedFields` with the other fields' selections applied: the fields nothing selects in one
 * request, then each selected field without its own selection (disjunctive faceting); the company field over every
 * company of the token when the query names only some.
 */
async function disjunctiveCounts(
  index: SearchIndex,
  principal: Principal,
  query: ReturnType<typeof searchQueryOf>,
  countedFields: readonly string[],
  base: { companies: string[]; type?: ResourceType },
): Promise<FieldCounts> {
  const unselected = countedFields.filter((field) => !query.filters.has(field));
  const [shared, ...own] = await Promise.all([
    index.countValues({ ...base, filters: query.filters, fields: [...unselected, 'company'] }),
    ...[...query.filters.keys()]
      .filter((field) => countedFields.includes(field))
      .map((field) => {
        const filters = new Map(query.filters);
        filters.delete(field);
        return index.countValues({ ...base, filters, fields: [field] });
      }),
  ]);
  const counts: FieldCounts = new Map(shared);
  for (const result of own) for (const [field, values] of result) counts.set(field, values);
  if (query.companies.length !== principal.companies.length) {
    // The company field's own selection is removed for its counts, like every other field's.
    const all = await index.countValues({ ...base, companies: [...principal.companies], filters: query.filters, fields: ['company'] });
    counts.set('company', all.get('company') ?? new Map());
  }
  return counts;
}

/**
 * The values of one filter field with their display names and counts: a fixed enumeration lists every value (0 where
 * nothing matches), the company field every company of the token, a data field the values found, in natural order.
 */
function filterParameters(
  field: (typeof FILTER_FIELDS)[number],
  valueCounts: Map<string, { count: number; label?: string }>,
  principal: Principal,
  companyNames: Map<string, string>,
): FilterDescriptor['definition']['parameters'] {
  switch (field.values.kind) {
    case 'fixed':
      return field.values.list.map((value) => ({
        name: FIXED_VALUE_NAMES.get(value) ?? humanize(value),
        value,
        count: valueCounts.get(value)?.count ?? 0,
      }));
    case 'companies':
      return principal.companies.map((company) => ({
        name: companyNames.get(company) ?? company,
        value: company,
        count: valueCounts.get(company)?.count ?? 0,
      }));
    case 'data':
      return [...valueCounts.entries()]
        .sort(([left], [right]) => (naturalOrder ??= new Intl.Collator('en', { numeric: true })).compare(left, right))
        .map(([value, { count, label }]) => ({ name: label ?? value, value, count }));
  }
}
