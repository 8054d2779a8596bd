/**
 * The fleet table's columns: each column's header, the API sort field it sorts on (when the API can sort on it), its
 * cell on the page and its cell in the CSV export, so that the table and the export always show the same columns.
 */
import type { ComponentChildren } from 'preact';
import { ago, count, dateTime, humanize } from '../format.js';
import { hrefOf } from '../router.js';
import { UserText } from '../user-text.js';
import { type DeviceResource, peripheralTrouble, type SearchResource } from './search-query.js';

/** One column of the fleet table. */
export interface Column {
  /** The header's words. */
  head: string;
  /** The cells keep to one line (ids, serials, dates): a long id or serial is cut with an ellipsis, whole in its title. */
  nowrap?: boolean;
  /** The search's `sort` value for this column, or undefined when the API cannot sort on it. */
  sort?: string;
  /** The cell on the page. */
  cell(resource: SearchResource, now: number): ComponentChildren;
  /** The cells in the CSV export (some columns give two: a state and since when). */
  csv(resource: SearchResource): string[];
  /** The CSV header cells, one per cell of `csv`. */
  csvHead: string[];
}

/** A device's cell, or an em dash for a scenario (full-text search also finds scenarios). */
const ofDevice =
  <T,>(read: (device: DeviceResource) => T, otherwise: T) =>
  (resource: SearchResource): T =>
    resource.type === 'DEVICE' ? read(resource) : otherwise;

/** Since when a device is in its connection state (ISO-8601), when it says. */
function connectionSince(device: DeviceResource): string | undefined {
  return device.connection.connectedSince ?? device.connection.disconnectedSince;
}

/** A device's connection state, and since when (relative to `now`, ms since the epoch; the date as a tooltip). */
function connectionCell(resource: SearchResource, now: number): ComponentChildren {
  if (resource.type !== 'DEVICE') return '—';
  const since = connectionSince(resource);
  return (
    <>
      {humanize(resource.connection.state)}
      {since === undefined ? null : (
        <span class="muted fleet-since" title={dateTime(since)}>
          {' '}
          since {ago(since, now)}
        </span>
      )}
    </>
  );
}

/** How many of a device's peripherals are in warning or down, and of which. */
function peripheralsCell(device: DeviceResource): ComponentChildren {
  const { warning, down } = peripheralTrouble(device);
  if (warning + down === 0) return <span class="muted">0</span>;
  return (
    <>
      <strong>{count(warning + down)}</strong>{' '}
      <span class="muted">({[warning > 0 ? `${warning} warning` : '', down > 0 ? `${down} down` : ''].filter(Boolean).join(', ')})</span>
    </>
  );
}

/** The ID column: a link to the device's page, or to the scenarios of a scenario's company. */
const ID_COLUMN: Column = {
  head: 'ID',
  sort: 'id',
  nowrap: true,
  cell: (resource) =>
    resource.type === 'DEVICE' ? (
      <a href={hrefOf(`/devices/${encodeURIComponent(resource.company)}/${encodeURIComponent(resource.id)}`)}>
        <UserText text={resource.id} truncate />
      </a>
    ) : (
      <a href={hrefOf('/scenarios', { company: resource.company })}>
        <UserText text={resource.id} truncate />
      </a>
    ),
  csv: (resource) => [resource.id],
  csvHead: ['ID'],
};

/** The company column (for users of several companies). */
const COMPANY_COLUMN: Column = {
  head: 'Company',
  sort: 'company',
  cell: (resource) => <UserText text={resource.company} />,
  csv: (resource) => [resource.company],
  csvHead: ['Company'],
};

/** The columns after ID and company. */
const OTHER_COLUMNS: Column[] = [
  {
    head: 'Serial',
    sort: 'serial',
    nowrap: true,
    cell: (resource) =>
      resource.type === 'DEVICE' ? (
        <span class="mono">
          <UserText text={resource.serial} truncate />
        </span>
      ) : (
        <>
          Scenario: <UserText text={resource.name} truncate />
        </>
      ),
    csv: (resource) => [resource.type === 'DEVICE' ? resource.serial : `Scenario: ${resource.name}`],
    csvHead: ['Serial'],
  },
  {
    head: 'Location',
    sort: 'location.name',
    cell: ofDevice<ComponentChildren>(
      (device) => (device.location?.name === undefined ? '—' : <UserText text={device.location.name} />),
      '—',
    ),
    csv: ofDevice((device) => [device.location?.name ?? ''], ['']),
    csvHead: ['Location'],
  },
  {
    head: 'Connection',
    sort: 'connection.state',
    cell: connectionCell,
    csv: ofDevice((device) => [humanize(device.connection.state), connectionSince(device) ?? ''], ['', '']),
    csvHead: ['Connection', 'Connection since'],
  },
  {
    head: 'Health mode',
    sort: 'health.mode',
    cell: ofDevice<ComponentChildren>((device) => (device.health === undefined ? '—' : humanize(device.health.mode)), '—'),
    csv: ofDevice((device) => [device.health === undefined ? '' : humanize(device.health.mode)], ['']),
    csvHead: ['Health mode'],
  },
  {
    head: 'Version',
    sort: 'health.versionCode',
    cell: ofDevice<ComponentChildren>((device) => (device.health === undefined ? '—' : <UserText text={device.health.versionName} />), '—'),
    csv: ofDevice((device) => [device.health?.versionName ?? '', device.health?.versionCode ?? ''], ['', '']),
    csvHead: ['Version', 'Version code'],
  },
  {
    head: 'Peripherals in warning or down',
    cell: ofDevice(peripheralsCell, '—'),
    csv: ofDevice(
      (device) => {
        const { warning, down } = peripheralTrouble(device);
        return [String(warning + down), String(warning), String(down)];
      },
      ['', '', ''],
    ),
    csvHead: ['Peripherals in warning or down', 'Peripherals in warning', 'Peripherals down'],
  },
  {
    head: 'Updated',
    sort: 'updated',
    nowrap: true,
    cell: (resource) => dateTime(resource.updated),
    csv: (resource) => [resource.updated],
    csvHead: ['Updated'],
  },
];

/** The columns; `withCompany` adds the company column (for users of several companies). */
export function columnsOf(withCompany: boolean): Column[] {
  return [ID_COLUMN, ...(withCompany ? [COMPANY_COLUMN] : []), ...OTHER_COLUMNS];
}
