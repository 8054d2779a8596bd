import { BadRequestError, type ProblemViolation } from '../errors.js';
import type { CompanyRepository, SearchIndex } from '../ports.js';
import { authorize, type Principal } from '../principal.js';
import { RESOURCE_TYPES, type ResourceType, type SearchDocument } from './documents.js';
import { parseSearchQuery, type SearchSort } from './query.js';
import { FILTER_FIELDS, humanize } from './registry.js';

/** The search response (spec "Search response"). */
export interface SearchResponse {
  total: number;
  page: { page: number; pages: number; pageSize: number };
  sort: SearchSort;
  resources: SearchDocument[];
}

/**
 * Searches resources (spec endpoint 6) within the caller's companies.
 * @param parameters every query-string pair, repeats included.
 * @throws ForbiddenError (403) without `search:read`, or when `company` names a company outside the token.
 * @throws BadRequestError (400) on an unknown parameter or a bad value.
 * @throws ServiceUnavailableError (503) when the search backend is unreachable.
 */
export async function searchResources(index: SearchIndex, principal: Principal, parameters: [string, string][]): Promise<SearchResponse> {
  authorize(principal, 'search:read');
  const query = parseSearchQuery(parameters, principal);
  const result = await index.search(query);
  return {
    total: result.total,
    page: { page: query.page, pages: Math.ceil(result.total / query.pageSize), pageSize: query.pageSize },
    sort: query.sort,
    resources: result.resources,
  };
}

/** Data values in natural order ("v2" before "v10"); one collator, as `localeCompare` with options builds one per call. */
const NATURAL_ORDER = new Intl.Collator('en', { numeric: true });
/** Display names of the fixed enumeration values, computed once. */
const FIXED_VALUE_NAMES = new Map(
  FILTER_FIELDS.flatMap((field) => (field.values.kind === 'fixed' ? field.values.list.map((value) => [value, humanize(value)] as const) : [])),
);

/** A filter descriptor (spec "Filter descriptor"). */
export interface FilterDescriptor {
  field: string;
  scope: ResourceType | null;
  definition: { type: 'ENUMERATION'; parameters: { name: string; value: string; count: number }[] };
}

/**
 * Describes the search filters with live counts (spec endpoint 5), computed within the caller's companies.
 * `type` restricts to the fields (and counts) of one resource type. The search's filter parameters may also be given:
 * each field's counts are then computed as if that field's own selection were removed (disjunctive faceting).
 * Fixed enumerations list every value, with count 0 where nothing matches.
 * @throws ForbiddenError (403) without `search:read` or for a company outside the token.
 * @throws BadRequestError (400) on an unknown parameter or a bad `type`.
 */
export async function describeFilters(
  dependencies: { index: SearchIndex; companies: CompanyRepository },
  principal: Principal,
  parameters: [string, string][],
): Promise<{ items: FilterDescriptor[] }> {
  authorize(principal, 'search:read');
  const errors: ProblemViolation[] = [];
  let type: ResourceType | undefined;
  const searchParameters: [string, string][] = [];
  for (const [name, value] of parameters) {
    if (name === 'type' && type === undefined && (RESOURCE_TYPES as readonly string[]).includes(value)) type = value as ResourceType;
    else if (name === 'type' && type === undefined) errors.push({ path: 'type', message: `'type' must be one of ${RESOURCE_TYPES.join(', ')}; got '${value}'.` });
    else if (['page', 'pageSize', 'sort', 'direction', 'global'].includes(name)) {
      errors.push({ path: name, message: `'${name}' does not apply to filters. Allowed: type and the filter fields.` });
    } else searchParameters.push([name, value]);
  }
  if (errors.length > 0) throw new BadRequestError('The filters request has invalid parameters.', errors);
  const query = parseSearchQuery(searchParameters, principal);
  if (type !== undefined) query.filters.delete('type');

  const fields = FILTER_FIELDS.filter((field) => type === undefined || field.scope === null || field.scope === type);
  const countedFields = fields.filter((field) => field.values.kind !== 'companies').map((field) => field.field);
  const unselected = countedFields.filter((field) => !query.filters.has(field));
  const base = { companies: query.companies, ...(type === undefined ? {} : { type }) };
  const [shared, ...own] = await Promise.all([
    dependencies.index.countValues({ ...base, filters: query.filters, fields: [...unselected, 'company'] }),
    ...[...query.filters.keys()].filter((field) => countedFields.includes(field)).map((field) => {
      const filters = new Map(query.filters);
      filters.delete(field);
      return dependencies.index.countValues({ ...base, filters, fields: [field] });
    }),
  ]);
  const counts = new Map(shared);
  for (const result of own) for (const [field, values] of result) counts.set(field, values);
  if (query.companies.length !== principal.companies.length) {
    // The company field's own selection is removed for its counts, like every other field's.
    const all = await dependencies.index.countValues({ ...base, companies: [...principal.companies], filters: query.filters, fields: ['company'] });
    counts.set('company', all.get('company') ?? new Map());
  }

  const companyNames = new Map((await dependencies.companies.getMany(principal.companies)).map((company) => [company.id, company.name]));
  const items = fields.map((field): FilterDescriptor => {
    const valueCounts = counts.get(field.field === 'company' ? 'company' : field.field) ?? new Map();
    let parameters: FilterDescriptor['definition']['parameters'];
    switch (field.values.kind) {
      case 'fixed':
        parameters = field.values.list.map((value) => ({ name: FIXED_VALUE_NAMES.get(value) ?? humanize(value), value, count: valueCounts.get(value)?.count ?? 0 }));
        break;
      case 'companies':
        parameters = principal.companies.map((company) => ({
          name: companyNames.get(company) ?? company, value: company, count: valueCounts.get(company)?.count ?? 0,
        }));
        break;
      case 'data':
        parameters = [...valueCounts.entries()]
          .sort(([left], [right]) => NATURAL_ORDER.compare(left, right))
          .map(([value, { count, label }]) => ({ name: label ?? value, value, count }));
        break;
    }
    return { field: field.field, scope: field.scope, definition: { type: 'ENUMERATION', parameters } };
  });
  return { items };
}
