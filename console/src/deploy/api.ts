/**
 * The calls the deploy flow makes through the typed client: a deployment request (dry run or keyed), the scenario
 * versions of a company, and the device ids of a search. Answers that ask for a retry (503 with `Retry-After`, 409 of a
 * key still being processed, 429) are retried a few times with backoff before being reported.
 */

import { type Attempt, CONSOLE_RETRY, type DeploymentEntry, type RetryOptions, retrying } from '../../../client/deployment-batch.js';
import type { DeploymentResultItem } from '../../../client/deployment-results.js';
import { SEARCH_MAX_PAGE_SIZE, SEARCH_RESULT_WINDOW } from '../../../client/limits.js';
import { api, problemText } from '../session.js';
import type { DeviceRef } from './selection.js';

/** A call the service refused or that could not be made: what to tell the user, and the status when there was one. */
export class DeployCallError extends Error {
  constructor(
    message: string,
    /** HTTP status, undefined when the service could not be reached. */
    readonly status?: number,
  ) {
    super(message);
    this.name = 'DeployCallError';
  }
}

/** Turns one call of the typed client into an Attempt for `retrying`; a network failure is final (no status). */
async function attemptOf<T>(
  call: () => Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<Attempt<{ data: T; response: Response }>> {
  let result: { data?: T; error?: unknown; response: Response };
  try {
    result = await call();
  } catch {
    return { ok: false, status: 0, retryAfter: null, failure: new DeployCallError(problemText(undefined)) };
  }
  const { data, error, response } = result;
  if (response.ok && data !== undefined) return { ok: true, value: { data, response } };
  return {
    ok: false,
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
    failure: new DeployCallError(problemText(error, response.status), response.status),
  };
}

/** What a deployment request answered. */
export interface DeploymentAnswer {
  /** One item per entry, in request order. */
  items: DeploymentResultItem[];
  /** true for a dry run: nothing was changed. */
  dryRun: boolean;
  /** The service replayed the stored answer of an earlier request with the same key (`Idempotent-Replayed: true`). */
  replayed: boolean;
}

/** Options of executeDeployments. */
export interface ExecuteOptions {
  /** `dryRun=true`: the service says what would happen and changes nothing. */
  dryRun?: boolean;
  /** 1 to MAX_IDEMPOTENCY_KEY_LENGTH characters; a retry (or a resend after a reload) with the same key and body is answered from the first. */
  idempotencyKey?: string;
  /** How 409/429/503 answers are retried (see retrying): CONSOLE_RETRY unless given. */
  retry?: RetryOptions;
}

/**
 * Sends one deployment request (POST /companies/{company}/resources/deployments) of at most MAX_DEPLOYMENT_ENTRIES
 * entries. @throws DeployCallError with the problem's detail when refused (400, 403, 413, 422, …) or still unavailable
 * after the retries
 */
export async function executeDeployments(
  company: string,
  entries: DeploymentEntry[],
  options: ExecuteOptions = {},
): Promise<DeploymentAnswer> {
  const { dryRun = false, idempotencyKey } = options;
  const { data, response } = await retrying(
    () =>
      attemptOf(() =>
        api.main.POST('/companies/{companyId}/resources/deployments', {
          params: {
            path: { companyId: company },
            ...(dryRun ? { query: { dryRun: true } } : {}),
            ...(idempotencyKey === undefined ? {} : { header: { 'Idempotency-Key': idempotencyKey } }),
          },
          body: { requests: entries },
        }),
      ),
    { ...CONSOLE_RETRY, ...options.retry },
  );
  if (data.items.length !== entries.length) {
    throw new DeployCallError(`The service answered ${data.items.length} items for ${entries.length} entries.`);
  }
  return { items: data.items, dryRun: data.dryRun, replayed: response.headers.get('idempotent-replayed') === 'true' };
}

/** A scenario of a company and its stored versions (upload order). */
export interface ScenarioChoice {
  company: string;
  id: string;
  name: string;
  versions: string[];
}

/** Every scenario of `company`, by id (GET /companies/{company}/resources/scenarios, all pages). @throws DeployCallError */
export async function scenariosOf(company: string, retry?: RetryOptions): Promise<ScenarioChoice[]> {
  const scenarios: ScenarioChoice[] = [];
  let cursor: string | undefined;
  do {
    const after = cursor;
    const { data } = await retrying(
      () =>
        attemptOf(() =>
          api.main.GET('/companies/{companyId}/resources/scenarios', {
            params: { path: { companyId: company }, query: { limit: 100, ...(after === undefined ? {} : { cursor: after }) } },
          }),
        ),
      { ...CONSOLE_RETRY, ...retry },
    );
    for (const item of data.items) scenarios.push({ company, id: item.id, name: item.name, versions: item.versions });
    cursor = data.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return scenarios;
}

// The search's page size and result window, for the pages that show how far paging reaches.
export { SEARCH_MAX_PAGE_SIZE, SEARCH_RESULT_WINDOW };

/** The devices a search reaches. */
export interface ResolvedDevices {
  devices: DeviceRef[];
  /** How many the search counted as matching (its `total` at the first page). */
  total: number;
  /** Matching devices beyond the result window: paging cannot reach them. */
  unreachable: number;
}

/** A URLSearchParams as the typed client's query object: each name with its values (repeated names as arrays). */
function queryObject(query: URLSearchParams): Record<string, string | string[]> {
  const object: Record<string, string | string[]> = {};
  for (const name of new Set(query.keys())) {
    const values = query.getAll(name);
    object[name] = values.length === 1 ? (values[0] as string) : values;
  }
  return object;
}

/**
 * The devices matching a search (GET /resources/search with the search's filters and/or `global`, `type=DEVICE`),
 * page after page at the largest page size, one request at a time, up to the result window.
 * @param onProgress told the number of devices found so far and the total
 * @throws DeployCallError
 */
export async function resolveMatching(
  query: URLSearchParams,
  onProgress?: (found: number, total: number) => void,
  retry?: RetryOptions,
): Promise<ResolvedDevices> {
  const base = new URLSearchParams(query);
  for (const name of ['page', 'pageSize', 'sort', 'direction', 'cursor']) base.delete(name);
  base.set('type', 'DEVICE');
  const seen = new Set<string>();
  const devices: DeviceRef[] = [];
  let total = 0;
  for (let page = 1; page * SEARCH_MAX_PAGE_SIZE <= SEARCH_RESULT_WINDOW; page++) {
    const params = new URLSearchParams(base);
    params.set('page', String(page));
    params.set('pageSize', String(SEARCH_MAX_PAGE_SIZE));
    const { data } = await retrying(
      // The query's names are the search's own parameters, checked by the service (a 400 names a bad one).
      () => attemptOf(() => api.main.GET('/resources/search', { params: { query: queryObject(params) as never } })),
      { ...CONSOLE_RETRY, ...retry },
    );
    if (page === 1) total = data.total;
    for (const resource of data.resources) {
      // With `global`, the service ignores the filters (type=DEVICE included): scenarios are dropped here.
      if (resource.type !== 'DEVICE') continue;
      const key = `${resource.company}\u0000${resource.id}`;
      if (seen.has(key)) continue;
      seen.add(key);
      devices.push({ company: resource.company, id: resource.id });
    }
    onProgress?.(devices.length, total);
    if (data.resources.length < SEARCH_MAX_PAGE_SIZE || page >= data.page.pages) break;
  }
  return { devices, total, unreachable: Math.max(0, total - SEARCH_RESULT_WINDOW) };
}
