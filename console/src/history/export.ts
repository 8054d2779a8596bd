/**
 * The history page's CSV export: every entry matching the URL's filters, newest first, read page after page at the
 * API's largest page size following `nextCursor`, up to MAX_EXPORT_ROWS rows, written as RFC 4180 CSV (csv.ts, with
 * its formula guard) and offered as history.csv.
 */
import { useSignal } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';
import { csvText } from '../csv.js';
import { download } from '../download.js';
import { count } from '../format.js';
import { api, problemText } from '../session.js';
import { CSV_HEAD, csvRow, type HistoryEntry, type HistoryQuery } from './query.js';

/** Most rows one export writes; beyond them the export stops and says so. */
export const MAX_EXPORT_ROWS = 10_000;
/** The API's largest `limit`: one request per 1,000 entries. */
const PAGE_LIMIT = 1000;

/** An export that failed: the problem's detail. */
class ExportError extends Error {}

/**
 * Reads the entries of `company` matching `filters` (their own `limit` and `cursor` are replaced), at most
 * MAX_EXPORT_ROWS, reporting the count after each page.
 * @returns the entries, and whether more matched than were read (`capped`)
 * @throws ExportError with the problem's detail when a page is refused; DOMException AbortError when `signal` aborts
 */
async function readAll(
  company: string,
  filters: HistoryQuery,
  onProgress: (fetched: number) => void,
  signal: AbortSignal,
): Promise<{ entries: HistoryEntry[]; capped: boolean }> {
  const entries: HistoryEntry[] = [];
  let cursor: string | undefined;
  do {
    // The same `limit` on every page: a cursor belongs to its listing's query.
    const { data, error, response } = await api.main.GET('/companies/{companyId}/resources/deployments/history', {
      params: { path: { companyId: company }, query: { ...filters, limit: PAGE_LIMIT, ...(cursor === undefined ? {} : { cursor }) } },
      signal,
    });
    if (data === undefined) throw new ExportError(problemText(error, response.status));
    entries.push(...data.items);
    cursor = data.nextCursor ?? undefined;
    onProgress(Math.min(entries.length, MAX_EXPORT_ROWS));
  } while (cursor !== undefined && entries.length < MAX_EXPORT_ROWS);
  return { entries: entries.slice(0, MAX_EXPORT_ROWS), capped: cursor !== undefined || entries.length > MAX_EXPORT_ROWS };
}

/** An export's state: whether one runs, its status words (progress, summary), and its failure (for role="alert"). */
export interface HistoryExport {
  exporting: boolean;
  status: string;
  failure: string | null;
  /** Exports the entries of `company` matching `filters`; an export still running is aborted first. */
  run(company: string, filters: HistoryQuery): Promise<void>;
}

/** The history page's CSV export; an export in progress stops with the page. */
export function useHistoryExport(): HistoryExport {
  const exporting = useSignal(false);
  const status = useSignal('');
  const failure = useSignal<string | null>(null);
  const running = useRef<AbortController | null>(null);
  useEffect(() => () => running.current?.abort(), []);
  const run = async (company: string, filters: HistoryQuery) => {
    running.current?.abort();
    const controller = new AbortController();
    running.current = controller;
    exporting.value = true;
    failure.value = null;
    status.value = 'Exporting…';
    try {
      const progress = (fetched: number) => {
        status.value = `Exporting… ${count(fetched)} entries read.`;
      };
      const { entries, capped } = await readAll(company, filters, progress, controller.signal);
      download(csvText([CSV_HEAD, ...entries.map(csvRow)]), 'history.csv');
      const written = `Exported ${count(entries.length)} ${entries.length === 1 ? 'entry' : 'entries'} to history.csv.`;
      status.value = capped
        ? `${written} More entries may match: an export stops at ${count(MAX_EXPORT_ROWS)}; narrow the filters (From and To) to export the rest.`
        : written;
    } catch (error) {
      if (controller.signal.aborted) return;
      status.value = '';
      failure.value = `The export failed: ${error instanceof ExportError ? error.message : problemText(undefined)}`;
    } finally {
      if (running.current === controller) exporting.value = false;
    }
  };
  return { exporting: exporting.value, status: status.value, failure: failure.value, run };
}
