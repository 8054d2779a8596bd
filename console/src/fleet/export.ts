/**
 * The fleet page's CSV export: every page of the current search, fetched one after the other at the API's largest
 * page size (never a request per device), within the search's result window (page × pageSize ≤ 10,000), written as
 * RFC 4180 CSV with the table's columns and offered as a download named fleet.csv.
 */
import { useSignal } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';
import { csvText } from '../csv.js';
import { download } from '../download.js';
import { count } from '../format.js';
import { api, problemText } from '../session.js';
import type { Column } from './columns.js';
import { MAX_PAGE_SIZE, MAX_RESULT_WINDOW, recordOf, type SearchQuery, type SearchResource, searchParamsOf } from './search-query.js';

/** What an export gave: the rows written, the search's total, and how many matches the result window left out. */
export interface ExportResult {
  rows: number;
  total: number;
  leftOut: number;
}

/** An export that failed: the words to show. */
export class ExportError extends Error {}

/**
 * Fetches every page of the search `query` (the URL's; its own page and pageSize are replaced) and returns the CSV
 * text with `columns`, reporting progress after each page.
 * @throws ExportError when a page cannot be fetched (the problem's detail); DOMException AbortError when `signal` aborts
 */
export async function fetchCsv(
  query: URLSearchParams,
  columns: readonly Column[],
  onProgress: (fetched: number, total: number) => void,
  signal?: AbortSignal,
): Promise<{ csv: string; result: ExportResult }> {
  const rows: string[][] = [columns.flatMap((column) => column.csvHead)];
  const resources: SearchResource[] = [];
  const lastReachable = Math.floor(MAX_RESULT_WINDOW / MAX_PAGE_SIZE);
  let total = 0;
  let pages = 1;
  for (let page = 1; page <= Math.min(pages, lastReachable); page += 1) {
    const params = searchParamsOf(query);
    params.set('page', String(page));
    params.set('pageSize', String(MAX_PAGE_SIZE));
    const { data, error, response } = await api.main.GET('/resources/search', {
      params: { query: recordOf(params) as SearchQuery },
      ...(signal === undefined ? {} : { signal }),
    });
    if (data === undefined) throw new ExportError(problemText(error, response.status));
    total = data.total;
    pages = data.page.pages;
    resources.push(...data.resources);
    onProgress(resources.length, total);
  }
  for (const resource of resources) rows.push(columns.flatMap((column) => column.csv(resource)));
  return { csv: csvText(rows), result: { rows: resources.length, total, leftOut: Math.max(0, total - resources.length) } };
}

/** The words that say what an export wrote (and what the result window left out). */
export function exportSummary(result: ExportResult): string {
  const written = `Exported ${count(result.rows)} ${result.rows === 1 ? 'row' : 'rows'} to fleet.csv.`;
  if (result.leftOut === 0) return written;
  return `${written} ${count(result.leftOut)} more ${result.leftOut === 1 ? 'match was' : 'matches were'} left out: the search pages to its first ${count(MAX_RESULT_WINDOW)} results only; narrow the search with filters to export them.`;
}

/** An export's state: whether one runs, and its status words (progress, summary or failure). */
export interface CsvExport {
  exporting: boolean;
  status: string;
  /** Exports the search `query` with `columns`; an export still running is aborted first. */
  run(query: URLSearchParams, columns: readonly Column[]): Promise<void>;
}

/** The CSV export of the fleet page; an export in progress stops with the page. */
export function useCsvExport(): CsvExport {
  const exporting = useSignal(false);
  const status = useSignal('');
  const running = useRef<AbortController | null>(null);
  useEffect(() => () => running.current?.abort(), []);
  const run = async (query: URLSearchParams, columns: readonly Column[]) => {
    running.current?.abort();
    const controller = new AbortController();
    running.current = controller;
    exporting.value = true;
    status.value = 'Exporting…';
    try {
      const progress = (fetched: number, total: number) => {
        status.value = `Exporting… ${count(fetched)} of ${count(Math.min(total, MAX_RESULT_WINDOW))} rows fetched.`;
      };
      const { csv, result } = await fetchCsv(query, columns, progress, controller.signal);
      download(csv, 'fleet.csv');
      status.value = exportSummary(result);
    } catch (error) {
      if (controller.signal.aborted) return;
      status.value = `The export failed: ${error instanceof ExportError ? error.message : problemText(undefined)}`;
    } finally {
      if (running.current === controller) exporting.value = false;
    }
  };
  return { exporting: exporting.value, status: status.value, run };
}
