/**
 * The fleet page's results table: one row per result (devices; full text also finds scenarios), the columns of
 * columns.tsx with their sort buttons, and for users who may deploy a checkbox per device row.
 */
import { count } from '../format.js';
import { UserText, visibleText } from '../user-text.js';
import type { Column } from './columns.js';
import { sortBy } from './navigation.js';
import type { SearchResource, SearchResponse } from './search-query.js';
import type { Selection } from './selection.js';

/** The search's sort: its field and direction. */
type Sort = { field: string; direction: 'ASC' | 'DESC' };

/** A column's header: a sort button when the API sorts on it, with aria-sort on the sorted one. */
function ColumnHeader({ column, sort }: { column: Column; sort: Sort }) {
  const sorted = column.sort !== undefined && sort.field === column.sort;
  const field = column.sort;
  return (
    <th scope="col" aria-sort={sorted ? (sort.direction === 'ASC' ? 'ascending' : 'descending') : undefined}>
      {field === undefined ? (
        column.head
      ) : (
        <button type="button" onClick={() => sortBy(field, sort)}>
          {column.head}
          <span aria-hidden="true" class="fleet-sort-mark">
            {sorted ? (sort.direction === 'ASC' ? ' ▲' : ' ▼') : ' ↕'}
          </span>
        </button>
      )}
    </th>
  );
}

/** How the rows are selected: absent for users who may not deploy; `fixed` disables the checkboxes. */
export interface RowSelection {
  selection: Selection;
  fixed: boolean;
}

/** One result's row; a device's row has its checkbox when `rows` is given. */
function ResultRow({ resource, columns, rows }: { resource: SearchResource; columns: readonly Column[]; rows?: RowSelection }) {
  const device = resource.type === 'DEVICE' ? resource : undefined;
  const checked = device === undefined ? false : (rows?.selection.has(device) ?? false);
  return (
    <tr aria-selected={rows !== undefined && device !== undefined ? (checked ? 'true' : 'false') : undefined}>
      {rows === undefined ? null : (
        <td>
          {device === undefined ? null : (
            <label class="fleet-row-select">
              <input
                type="checkbox"
                checked={checked}
                disabled={rows.fixed || rows.selection.matching !== null}
                onChange={(event) => rows.selection.select([device], (event.currentTarget as HTMLInputElement).checked)}
              />
              <span class="visually-hidden">Select {visibleText(device.id)}</span>
            </label>
          )}
        </td>
      )}
      {columns.map((column) => (
        <td key={column.head} class={column.nowrap ? 'fleet-nowrap' : undefined}>
          {column.cell(resource, Date.now())}
        </td>
      ))}
    </tr>
  );
}

/** What the table shows. */
export interface ResultsTableProps {
  data: SearchResponse | undefined;
  columns: readonly Column[];
  sort: Sort;
  /** The full text searched, if any (the caption names it). */
  fullText: string | undefined;
  /** A search is in flight (the table is marked busy). */
  busy: boolean;
  /** The rows are those of an earlier search (the newer one failed): the caption says so. */
  stale: boolean;
  rows?: RowSelection;
}

/** The results table, captioned with the search, the page and the sort. */
export function ResultsTable({ data, columns, sort, fullText, busy, stale, rows }: ResultsTableProps) {
  const pages = data?.page.pages ?? 0;
  return (
    <div class="fleet-table" aria-busy={busy ? 'true' : 'false'}>
      <table>
        <caption>
          {stale ? (
            'Results of the previous search'
          ) : fullText === undefined ? (
            'Devices'
          ) : (
            <>
              Devices and scenarios matching “<UserText text={fullText} />”
            </>
          )}
          {data !== undefined && pages > 0 ? `, page ${count(data.page.page)} of ${count(pages)}` : ''}
          {sort.field === 'relevance' ? ', by relevance' : ''}
        </caption>
        <thead>
          <tr>
            {rows === undefined ? null : (
              <th scope="col">
                <span class="visually-hidden">Selected</span>
              </th>
            )}
            {columns.map((column) => (
              <ColumnHeader key={column.head} column={column} sort={sort} />
            ))}
          </tr>
        </thead>
        <tbody>
          {(data?.resources ?? []).map((resource) => (
            <ResultRow key={`${resource.type}/${resource.company}/${resource.id}`} resource={resource} columns={columns} rows={rows} />
          ))}
        </tbody>
      </table>
      {data !== undefined && data.resources.length === 0 ? (
        <p class="muted">{data.total === 0 ? 'No device matches this search.' : 'No result on this page.'}</p>
      ) : null}
    </div>
  );
}
