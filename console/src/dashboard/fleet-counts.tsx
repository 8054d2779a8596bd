/**
 * The dashboard's fleet section: the devices by connection state, health mode, version and sub-device health, as
 * GET /resources/search/filters counts them (one request for every field), each value linked to the fleet page with
 * that filter applied, so that the number clicked is the number of devices the fleet then lists.
 */

import type { FilterDescriptor } from '../fleet/search-query.js';
import { count } from '../format.js';
import { hrefOf } from '../router.js';
import { UserText } from '../user-text.js';

/** The fields the dashboard shows, in its order, with the words of each table's caption. */
export const DASHBOARD_FIELDS = [
  { field: 'connection.state', caption: 'Devices by connection state' },
  { field: 'health.mode', caption: 'Devices by health mode' },
  { field: 'health.versionCode', caption: 'Devices by version' },
  {
    field: 'health.hubs.devices.health.state',
    caption: 'Devices by sub-device health (a device counts in each state one of its sub-devices is in)',
  },
] as const;

/** A share of `total` as a whole percentage (`12 %`); `0 %` when there is no device. */
function share(value: number, total: number): number {
  return total === 0 ? 0 : Math.round((value / total) * 100);
}

/**
 * One field's values: a table of value (linked to the fleet filtered on it; a value without devices is shown but not
 * linked, as there is nothing to list), device count, and share of the fleet as text with a bar drawn beside it.
 * `companies` are the URL's `company` values, carried into each link so that the fleet shows the same devices.
 */
function FieldTable(props: { descriptor: FilterDescriptor; caption: string; total: number; companies: string[] }) {
  const { descriptor, caption, total, companies } = props;
  return (
    <table class="dash-counts">
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">{descriptor.name}</th>
          <th scope="col">Devices</th>
          <th scope="col">Share of the fleet</th>
        </tr>
      </thead>
      <tbody>
        {descriptor.definition.parameters.map((parameter) => {
          const query = new URLSearchParams();
          for (const company of companies) query.append('company', company);
          query.append(descriptor.field, parameter.value);
          const percent = share(parameter.count, total);
          return (
            <tr key={parameter.value}>
              <th scope="row">
                {parameter.count === 0 ? (
                  <UserText text={parameter.name} />
                ) : (
                  <a href={hrefOf('/fleet', query)}>
                    <UserText text={parameter.name} />
                  </a>
                )}
              </th>
              <td class="dash-number">{count(parameter.count)}</td>
              <td>
                <div class="dash-share">
                  <span class="dash-percent">{percent} %</span>
                  {/* The bar repeats the percentage beside it: hidden from assistive technology. Its width is set
                    through the CSSOM (Preact's style prop), which the page's style-src policy allows. */}
                  <span class="dash-bar" aria-hidden="true">
                    <span class="dash-bar-fill" style={{ width: `${percent}%` }} />
                  </span>
                </div>
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/**
 * The fleet's counts: the device total (the `type` field's DEVICE count) and one table per DASHBOARD_FIELDS entry the
 * answer has. `descriptors` is the filters endpoint's `items` for `type=DEVICE` and the URL's companies.
 */
export function FleetCounts({ descriptors, companies }: { descriptors: FilterDescriptor[]; companies: string[] }) {
  const total =
    descriptors.find((descriptor) => descriptor.field === 'type')?.definition.parameters.find((p) => p.value === 'DEVICE')?.count ?? 0;
  return (
    <>
      <p class="dash-total">
        <a
          href={hrefOf(
            '/fleet',
            companies.length === 0 ? undefined : new URLSearchParams(companies.map((company) => ['company', company])),
          )}
        >
          {count(total)} {total === 1 ? 'device' : 'devices'}
        </a>{' '}
        in {companies.length === 0 ? 'the fleet' : <UserText text={companies.join(', ')} />}.
      </p>
      <div class="dash-grid">
        {DASHBOARD_FIELDS.map(({ field, caption }) => {
          const descriptor = descriptors.find((candidate) => candidate.field === field);
          return descriptor === undefined ? null : (
            <FieldTable key={field} descriptor={descriptor} caption={caption} total={total} companies={companies} />
          );
        })}
      </div>
    </>
  );
}
