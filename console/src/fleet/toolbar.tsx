/**
 * The fleet page's toolbars: the full-text search form above everything, and the results' toolbar (copy the search
 * as a CLI or curl command, export it as CSV, the page size) with its status lines.
 */
import { useSignal } from '@preact/signals';
import { addresses } from '../session.js';
import { UserText } from '../user-text.js';
import type { Column } from './columns.js';
import { useCsvExport } from './export.js';
import { searchText } from './navigation.js';
import { PageSizeSelect } from './paging.js';
import { cliCommand, curlCommand, type SearchResponse } from './search-query.js';

/** The full-text search form: the URL's `global`; disabled while the selection is fixed (`locked`). */
export function SearchBar({ query, locked }: { query: URLSearchParams; locked: boolean }) {
  const text = query.get('global') ?? '';
  const submit = (event: Event) => {
    event.preventDefault();
    searchText(String(new FormData(event.currentTarget as HTMLFormElement).get('global') ?? ''));
  };
  return (
    <form class="toolbar" onSubmit={submit}>
      <label>
        Search
        {/* Keyed by the URL's text: back/forward and reload show the text of the URL. */}
        <input key={text} type="search" name="global" defaultValue={text} maxLength={1000} disabled={locked} />
      </label>
      <button type="submit" class="primary" disabled={locked}>
        Search
      </button>
      {query.has('global') ? (
        <button type="button" onClick={() => searchText('')} disabled={locked}>
          Clear search text
        </button>
      ) : null}
    </form>
  );
}

/** A copied command, for the query it was copied on. */
interface Copied {
  key: string;
  what: string;
  text: string;
  status: string;
}

/** Copies a command to the clipboard; what was copied is shown (in a box) for the same query only. */
function useCopy(query: URLSearchParams): { copy(what: string, text: string): Promise<void>; copied: Copied | null } {
  const copied = useSignal<Copied | null>(null);
  const copy = async (what: string, text: string) => {
    let status = 'Copied';
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      status = 'The clipboard is not available here: copy the command from the box.';
    }
    copied.value = { key: query.toString(), what, text, status };
  };
  const now = copied.value !== null && copied.value.key === query.toString() ? copied.value : null;
  return { copy, copied: now };
}

/** What the results' toolbar acts on: the URL's query, the table's columns, the answer shown and whether it is stale. */
export interface ResultsToolbarProps {
  query: URLSearchParams;
  columns: readonly Column[];
  data: SearchResponse | undefined;
  /** The search failed: the export is not offered for the rows of an earlier search. */
  stale: boolean;
}

/** Copy as CLI / curl, Export CSV, the page size; then the copied command and the status lines. */
export function ResultsToolbar({ query, columns, data, stale }: ResultsToolbarProps) {
  const { copy, copied } = useCopy(query);
  const csv = useCsvExport();
  return (
    <>
      <div class="toolbar">
        <button type="button" onClick={() => copy('CLI', cliCommand(query))}>
          Copy as CLI
        </button>
        <button type="button" onClick={() => copy('curl', curlCommand(addresses.main, query))}>
          Copy as curl
        </button>
        <button type="button" onClick={() => csv.run(query, columns)} disabled={csv.exporting || stale}>
          Export CSV
        </button>
        <PageSizeSelect query={query} data={data} />
      </div>
      {copied === null ? null : (
        <div class="fleet-copied">
          <label>
            Copied command ({copied.what})
            <textarea readOnly rows={3} value={copied.text} class="mono" />
          </label>
        </div>
      )}
      <p role="status" class="fleet-copy-status">
        {copied?.status ?? ''}
      </p>
      <p role="status" class="fleet-export-status">
        {csv.status === '' ? null : <UserText text={csv.status} />}
      </p>
    </>
  );
}
