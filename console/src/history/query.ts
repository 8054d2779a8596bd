/**
 * The history page's state as its URL holds it (`#/history?company=acme&deviceId=…&scenarioId=…&version=…&from=…&to=…`):
 * the company, then the API's own filter parameters of GET …/deployments/history, as they are sent (from and to as
 * ISO-8601 UTC instants), and the page size `limit`. Also: the datetime-local fields' values to and from those instants,
 * and one entry as a CSV row.
 */
import type { operations } from '../../../client/index.js';
import type { HistoryEntry } from '../device/load.js';

/** One history entry (the device page's type: the same listing): an action or a status a device reported. */
export type { HistoryEntry };

/** The history listing's query, as the typed client takes it. */
export type HistoryQuery = NonNullable<operations['DeploymentsHistory']['parameters']['query']>;

/** The filter parameters, in the form's order; each is sent as the URL has it. */
export const FILTERS = ['deviceId', 'scenarioId', 'version', 'from', 'to'] as const;

/** The history query of the URL's filters and `limit` (1 to 1,000; the API's default without it), without a cursor. */
export function historyQueryOf(query: URLSearchParams): HistoryQuery {
  const result: Record<string, string | number> = {};
  for (const name of FILTERS) {
    const value = query.get(name);
    if (value !== null && value !== '') result[name] = value;
  }
  const limit = Number(query.get('limit'));
  if (Number.isInteger(limit) && limit >= 1 && limit <= 1000) result.limit = limit;
  return result as HistoryQuery;
}

const pad = (value: number) => String(value).padStart(2, '0');

/**
 * An ISO-8601 instant as a datetime-local field's value in the browser's time zone (`2026-11-27T09:30:05`), or ''
 * when it is absent or not an instant.
 */
export function localInputOf(iso: string | null): string {
  if (iso === null || iso === '') return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

/**
 * A datetime-local field's value (browser's time zone) as an ISO-8601 UTC instant (`2026-11-27T08:30:05.000Z`);
 * `previous` (the URL's instant) when the field still shows it, so that a resubmitted form keeps its milliseconds; ''
 * for an empty field, and the text as typed when it is no date (the service then says what is wrong with it).
 */
export function instantOf(local: string, previous: string | null): string {
  if (local === '') return '';
  if (previous !== null && localInputOf(previous) === local) return previous;
  const date = new Date(local);
  return Number.isNaN(date.getTime()) ? local : date.toISOString();
}

/** The CSV export's header row; `csvRow` gives each entry's cells in this order. */
export const CSV_HEAD = [
  'at',
  'kind',
  'deviceId',
  'scenarioId',
  'version',
  'action',
  'outcome',
  'cause',
  'by',
  'note',
  'message',
  'id',
  'deploymentId',
] as const;

/**
 * One entry as CSV cells (CSV_HEAD's columns): `outcome` is an action's state (SUCCESS, FAILURE) or the device's
 * reported state; `note` an action's, `message` a device status's; '' where a kind has none.
 */
export function csvRow(entry: HistoryEntry): string[] {
  const common = [entry.at, entry.kind, entry.target.id, entry.what.id, entry.what.subId];
  if (entry.kind === 'ACTION') {
    return [...common, entry.action, entry.state, entry.cause ?? '', entry.by, entry.note ?? '', '', entry.id, ''];
  }
  return [...common, '', entry.deviceStatus.state, '', entry.by, '', entry.deviceStatus.message ?? '', entry.id, entry.deploymentId];
}
