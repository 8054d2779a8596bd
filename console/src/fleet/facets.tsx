/**
 * The fleet page's facet panel: one fieldset per filter field of GET /resources/search/filters, one checkbox per
 * value labelled `{name} ({count})`. The counts are the API's disjunctive counts (each field counted as if its own
 * selection were removed), so a checked value's count says how many devices it adds or keeps.
 */
import { count } from '../format.js';
import { UserText } from '../user-text.js';
import { clearFilters, toggleFacet } from './navigation.js';
import type { Requested } from './requests.js';
import { type FilterDescriptor, isFilter } from './search-query.js';

/** What the panel shows and how it changes the search. */
export interface FacetsProps {
  /** The counts are being asked for again (the previous ones stay shown meanwhile). */
  busy: boolean;
  /** The descriptors, or undefined before the first answer. */
  descriptors: FilterDescriptor[] | undefined;
  /** The URL's query: which values are selected. */
  query: URLSearchParams;
  /** Full text is searched: the filters are kept but set aside (dimmed, disabled). */
  setAside: boolean;
  /** The selection is fixed (a deploy is open): the filters, which define "every match", are disabled. */
  locked: boolean;
  /** Whether the company field is shown (only for users of several companies). */
  showCompany: boolean;
  /** Selects or clears one value of one field. */
  onToggle(field: string, value: string, selected: boolean): void;
}

/** One value of a field as the panel lists it. */
interface FacetValue {
  name: string;
  value: string;
  count: number;
}

/** The facet panel. */
export function Facets({ busy, descriptors, query, setAside, locked, showCompany, onToggle }: FacetsProps) {
  const shown = (descriptors ?? []).filter(
    // The page lists devices only: no resource type facet.
    (descriptor) => descriptor.field !== 'type' && (descriptor.field !== 'company' || showCompany),
  );
  return (
    <div class={setAside ? 'fleet-facets fleet-set-aside' : 'fleet-facets'} aria-busy={busy ? 'true' : 'false'}>
      {descriptors === undefined ? <p class="muted">Loading the filters…</p> : null}
      {shown.map((descriptor) => {
        const selected = query.getAll(descriptor.field);
        const values: FacetValue[] = [...descriptor.definition.parameters];
        // A selected value no device has any more is still listed, so that it can be cleared.
        for (const value of selected) {
          if (!values.some((candidate) => candidate.value === value)) values.push({ name: value, value, count: 0 });
        }
        return (
          <fieldset key={descriptor.field} class="facet" disabled={setAside || locked}>
            <legend>{descriptor.name}</legend>
            {values.map((parameter) => {
              const checked = selected.includes(parameter.value);
              const disabled = setAside || locked || (parameter.count === 0 && !checked);
              return (
                <label key={parameter.value} class={disabled ? 'disabled' : undefined}>
                  <input
                    type="checkbox"
                    name={descriptor.field}
                    value={parameter.value}
                    checked={checked}
                    disabled={disabled}
                    onChange={(event) => onToggle(descriptor.field, parameter.value, (event.currentTarget as HTMLInputElement).checked)}
                  />
                  {/* One flex item: the value (a device's text, for versions) and its count. */}
                  <span>
                    <UserText text={parameter.name} /> ({count(parameter.count)})
                  </span>
                </label>
              );
            })}
          </fieldset>
        );
      })}
    </div>
  );
}

/** What the filters panel shows: the URL's query, the filters request, and how the page constrains them. */
export interface FiltersPanelProps {
  query: URLSearchParams;
  filters: Requested<FilterDescriptor[]>;
  /** Full text is searched: the filters are set aside. */
  fullText: boolean;
  showCompany: boolean;
  /** The selection is fixed (a deploy is open). */
  locked: boolean;
  /** Sends the requests again. */
  onRetry(): void;
}

/** The filters panel: its failure (with "Try the filters again" when that may help), the facets, "Clear filters". */
export function FiltersPanel({ query, filters, fullText, showCompany, locked, onRetry }: FiltersPanelProps) {
  const anyFilter = [...query.keys()].some(isFilter);
  return (
    <section aria-labelledby="fleet-filters-title">
      <h2 id="fleet-filters-title">Filters</h2>
      {fullText ? <p class="muted">Set aside while searching full text.</p> : null}
      {filters.failure === null ? null : (
        <div role="alert" class="error">
          <p>
            The filters could not be loaded: <UserText text={filters.failure.text} />
          </p>
          {filters.failure.retry ? (
            <button type="button" onClick={onRetry}>
              Try the filters again
            </button>
          ) : null}
        </div>
      )}
      <Facets
        busy={filters.busy}
        descriptors={filters.value}
        query={query}
        setAside={fullText}
        locked={locked}
        showCompany={showCompany}
        onToggle={toggleFacet}
      />
      {anyFilter && !fullText ? (
        <button type="button" onClick={clearFilters} disabled={locked}>
          Clear filters
        </button>
      ) : null}
    </section>
  );
}
