/**
 * The fleet page's two requests: the search (GET /resources/search) and the filter counts (GET
 * /resources/search/filters). Each change of a request's key (its query string) sends it once; a newer change aborts
 * the older request, so the last click wins. "Try again" sends both again.
 */
import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { api, problemText } from '../session.js';
import { type FilterDescriptor, type FiltersQuery, recordOf, type SearchQuery, type SearchResponse } from './search-query.js';

/** A failed request: what to say, and whether trying again may help (503, or the service not reached). */
export interface Failure {
  text: string;
  retry: boolean;
}

/** The failure of an answer (or of a request that threw: `status` undefined). */
export function failureOf(error: unknown, status: number | undefined): Failure {
  return { text: problemText(error, status), retry: status === undefined || status === 503 };
}

/** What the typed client answers: `data` on success, else the problem `error`; the HTTP response either way. */
interface Answer<T> {
  data?: T | undefined;
  error?: unknown;
  response: Response;
}

/** One request's state as the page shows it. */
export interface Requested<T> {
  /** The last successful answer (kept while a newer request runs, and after one failed), undefined before any. */
  value: T | undefined;
  /** The key (query string) `value` answers. */
  valueKey: string | undefined;
  /** A request is in flight. */
  busy: boolean;
  /** The last request failed; null once one succeeds. */
  failure: Failure | null;
}

/** Sends `send` once per `key` (a query string) and per `attempt`; the next one aborts it. */
function useLatest<T>(
  key: string,
  attempt: number,
  send: (params: URLSearchParams, signal: AbortSignal) => Promise<Answer<T>>,
): Requested<T> {
  const answered = useSignal<{ key: string; value: T } | undefined>(undefined);
  const busy = useSignal(true);
  const failure = useSignal<Failure | null>(null);
  useEffect(() => {
    const controller = new AbortController();
    busy.value = true;
    send(new URLSearchParams(key), controller.signal)
      .then(({ data, error, response }) => {
        if (controller.signal.aborted) return;
        if (data === undefined) failure.value = failureOf(error, response.status);
        else {
          answered.value = { key, value: data };
          failure.value = null;
        }
        busy.value = false;
      })
      .catch((error: unknown) => {
        if (controller.signal.aborted) return;
        failure.value = failureOf(error, undefined);
        busy.value = false;
      });
    return () => controller.abort();
  }, [key, attempt]);
  return { value: answered.value?.value, valueKey: answered.value?.key, busy: busy.value, failure: failure.value };
}

/** The page's requests: the search for `searchKey`, the filters for `filtersKey` (query strings), and "Try again". */
export interface FleetRequests {
  search: Requested<SearchResponse>;
  filters: Requested<FilterDescriptor[]>;
  /** Sends both requests again. */
  retry(): void;
}

/**
 * The search and the filters requests of the fleet page. The filters are asked for only when `filtersKey` changes
 * (their counts do not depend on full text, sort or paging).
 */
export function useFleetRequests(searchKey: string, filtersKey: string): FleetRequests {
  const attempt = useSignal(0);
  const search = useLatest<SearchResponse>(searchKey, attempt.value, (params, signal) =>
    api.main.GET('/resources/search', { params: { query: recordOf(params) as SearchQuery }, signal }),
  );
  const filters = useLatest<FilterDescriptor[]>(filtersKey, attempt.value, async (params, signal) => {
    const { data, error, response } = await api.main.GET('/resources/search/filters', {
      params: { query: recordOf(params) as FiltersQuery },
      signal,
    });
    return { data: data?.items, error, response };
  });
  return { search, filters, retry: () => attempt.value++ };
}
