/**
 * What the device page reads from the API, each call as one function answering either its data or the message to
 * show: the device, its active deployments (every page), a page of its history, and the company's scenario versions.
 */
import { api, problemText } from '../session.js';
import type { Device } from './facts.js';

/** One page of the device's active deployments, as the typed client answers it. */
const activePage = (company: string, deviceId: string, cursor: string | undefined) =>
  api.main.GET('/companies/{companyId}/resources/{deviceId}/deployments', {
    params: { path: { companyId: company, deviceId }, query: { limit: 100, ...(cursor === undefined ? {} : { cursor }) } },
  });

/** One page of the device's history, newest first, as the typed client answers it. */
const historyPage = (company: string, deviceId: string, cursor: string | undefined) =>
  api.main.GET('/companies/{companyId}/resources/deployments/history', {
    params: { path: { companyId: company }, query: { deviceId, limit: HISTORY_PAGE, ...(cursor === undefined ? {} : { cursor }) } },
  });

// The types as the client reads them (openapi-fetch drops members typed `null` alone, e.g. an active deployment's `cause`).
/** An active deployment of the device, with the status the device reported. */
export type ActiveDeployment = NonNullable<Awaited<ReturnType<typeof activePage>>['data']>['items'][number];
/** A history entry: an ACTION or a DEVICE_STATUS. */
export type HistoryEntry = NonNullable<Awaited<ReturnType<typeof historyPage>>['data']>['items'][number];

/** A call's outcome: its data, or what to tell the user (`status` the HTTP status when there was an answer). */
export type Loaded<T> = { ok: true; data: T } | { ok: false; message: string; status?: number };

/** Runs one typed-client call and turns its answer (or a network failure) into a Loaded. */
export async function attempt<T>(call: () => Promise<{ data?: T; error?: unknown; response: Response }>): Promise<Loaded<T>> {
  try {
    const { data, error, response } = await call();
    if (data !== undefined) return { ok: true, data };
    return { ok: false, message: problemText(error, response.status), status: response.status };
  } catch {
    return { ok: false, message: problemText(undefined) };
  }
}

/** The device resource; a 404 has `status` 404. */
export function loadDevice(company: string, deviceId: string): Promise<Loaded<Device>> {
  return attempt(() =>
    api.main.GET('/companies/{companyId}/resources/devices/{deviceId}', { params: { path: { companyId: company, deviceId } } }),
  );
}

/** Pages a cursor listing to its end (a device has few active deployments; a company few scenarios). */
async function allPages<T>(
  page: (cursor: string | undefined) => Promise<Loaded<{ items: T[]; nextCursor: string | null }>>,
): Promise<Loaded<T[]>> {
  const items: T[] = [];
  let cursor: string | undefined;
  do {
    const loaded = await page(cursor);
    if (!loaded.ok) return loaded;
    items.push(...loaded.data.items);
    cursor = loaded.data.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return { ok: true, data: items };
}

/** Every active deployment of the device, ordered by (scenario, version). */
export function loadActive(company: string, deviceId: string): Promise<Loaded<ActiveDeployment[]>> {
  return allPages((cursor) => attempt(() => activePage(company, deviceId, cursor)));
}

/** How many history entries one "Show more" adds. */
export const HISTORY_PAGE = 20;

/** A page of the device's history, newest first, from `cursor` (the first page without it). */
export function loadHistory(
  company: string,
  deviceId: string,
  cursor?: string,
): Promise<Loaded<{ items: HistoryEntry[]; nextCursor: string | null }>> {
  return attempt(() => historyPage(company, deviceId, cursor));
}

/** A scenario version that can be deployed. */
export interface ScenarioVersion {
  scenario: string;
  version: string;
}

/** Every stored version of every scenario of the company, by scenario id, newest upload first within a scenario. */
export async function loadScenarioVersions(company: string): Promise<Loaded<ScenarioVersion[]>> {
  const scenarios = await allPages((cursor) =>
    attempt(() =>
      api.main.GET('/companies/{companyId}/resources/scenarios', {
        params: { path: { companyId: company }, query: { limit: 100, ...(cursor === undefined ? {} : { cursor }) } },
      }),
    ),
  );
  if (!scenarios.ok) return scenarios;
  return {
    ok: true,
    data: scenarios.data.flatMap((scenario) => [...scenario.versions].reverse().map((version) => ({ scenario: scenario.id, version }))),
  };
}

/** The outcome of one deploy or undeploy entry, as the page reports it. */
export interface ActionOutcome {
  /** The result item's id, which its history entry has too. */
  id: string;
  action: 'DEPLOY' | 'UNDEPLOY';
  scenario: string;
  version: string;
  state: 'SUCCESS' | 'FAILURE';
  cause: string | null;
}

/** Deploys or undeploys one scenario version on the device: one request entry, its one result item. */
export async function deployOne(
  company: string,
  deviceId: string,
  action: 'DEPLOY' | 'UNDEPLOY',
  target: ScenarioVersion,
): Promise<Loaded<ActionOutcome>> {
  const result = await attempt(() =>
    api.main.POST('/companies/{companyId}/resources/deployments', {
      params: { path: { companyId: company } },
      body: {
        requests: [
          {
            target: { type: 'DEVICE', id: deviceId, subId: null },
            what: { type: 'SCENARIO', id: target.scenario, subId: target.version },
            action,
          },
        ],
      },
    }),
  );
  if (!result.ok) return result;
  const item = result.data.items[0];
  if (item === undefined) return { ok: false, message: 'The service answered no result for the request.' };
  return {
    ok: true,
    data: { id: item.id, action, scenario: target.scenario, version: target.version, state: item.state, cause: item.cause },
  };
}
