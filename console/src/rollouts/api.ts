/**
 * The rollout calls of the console: read a rollout, change its state, read its failed targets (every page of a
 * filtered targets listing) or a page of its targets, and roll the same version (or run the same command) out again
 * to given devices. Each answers `{ data }` or
 * `{ error, status }` (status undefined when the service could not be reached).
 */
import type { components } from '../../../client/index.js';
import { api, problemText } from '../session.js';

/** A rollout as the API answers it. */
export type Rollout = components['schemas']['Rollout'];
/** What a rollout's preview (`POST …/rollouts/preview`) answers: what creating it would do. */
export type RolloutPreview = components['schemas']['RolloutPreview'];
/** One target of a rollout: its wave, deployment result and reported device status. */
export type RolloutTarget = components['schemas']['RolloutTarget'];

/** A call's outcome: the answer, or the problem's text and the HTTP status (undefined: unreachable). */
export type Outcome<T> = { data: T } | { error: string; status?: number };

// Most device ids one rollout's `targets.ids` takes (above it the API answers 413): the most a retry may list.
export { MAX_ROLLOUT_IDS as MAX_RETRY_IDS } from '../../../client/limits.js';

/** GET the rollout `rolloutId` of `company`: one request. */
export async function readRollout(company: string, rolloutId: string): Promise<Outcome<Rollout>> {
  try {
    const { data, error, response } = await api.main.GET('/companies/{companyId}/resources/rollouts/{rolloutId}', {
      params: { path: { companyId: company, rolloutId } },
    });
    return data === undefined ? { error: problemText(error, response.status), status: response.status } : { data };
  } catch {
    return { error: problemText(undefined) };
  }
}

/** POST …/{rolloutId}/pause|resume|cancel: the rollout in its new state, or the problem (409 names its state). */
export async function transition(company: string, rolloutId: string, verb: 'pause' | 'resume' | 'cancel'): Promise<Outcome<Rollout>> {
  const params = { params: { path: { companyId: company, rolloutId } } };
  try {
    const answer =
      verb === 'pause'
        ? await api.main.POST('/companies/{companyId}/resources/rollouts/{rolloutId}/pause', params)
        : verb === 'resume'
          ? await api.main.POST('/companies/{companyId}/resources/rollouts/{rolloutId}/resume', params)
          : await api.main.POST('/companies/{companyId}/resources/rollouts/{rolloutId}/cancel', params);
    const { data, error, response } = answer;
    return data === undefined ? { error: problemText(error, response.status), status: response.status } : { data };
  } catch {
    return { error: problemText(undefined) };
  }
}

/**
 * The filter of a failed-targets read, in one wave (1-based) when given: devices that reported FAILED, or deployments
 * that failed; for a COMMAND rollout, targets with a command FAILED or EXPIRED, or that got none (`state` FAILURE).
 */
export type FailureFilter = ({ deviceStatus: 'FAILED' } | { state: 'FAILURE' } | { commandState: 'FAILED' | 'EXPIRED' }) & {
  wave?: number;
};

/** A filter of the targets listing (any of its own filters) and the size of a page. */
export type TargetsFilter = { state?: 'FAILURE'; commandState?: components['schemas']['CommandState']; cause?: string };

/** One page of the targets the filter keeps, from `cursor` (the first page without it). */
export async function readTargetsPage(
  company: string,
  rolloutId: string,
  filter: TargetsFilter,
  cursor: string | undefined,
  limit: number,
): Promise<Outcome<{ items: RolloutTarget[]; nextCursor: string | null }>> {
  try {
    const { data, error, response } = await api.main.GET('/companies/{companyId}/resources/rollouts/{rolloutId}/targets', {
      params: {
        path: { companyId: company, rolloutId },
        query: { ...(filter as Record<string, never>), limit, ...(cursor === undefined ? {} : { cursor }) },
      },
    });
    return data === undefined ? { error: problemText(error, response.status), status: response.status } : { data };
  } catch {
    return { error: problemText(undefined) };
  }
}

/**
 * Every target the filter keeps, following `nextCursor` until null (a page may be short, or empty, and still carry
 * one). One request per page of targets, never one per device.
 */
export async function readTargets(company: string, rolloutId: string, filter: FailureFilter): Promise<Outcome<RolloutTarget[]>> {
  const items: RolloutTarget[] = [];
  let cursor: string | undefined;
  try {
    do {
      const { data, error, response } = await api.main.GET('/companies/{companyId}/resources/rollouts/{rolloutId}/targets', {
        params: { path: { companyId: company, rolloutId }, query: { ...filter, limit: 1000, ...(cursor === undefined ? {} : { cursor }) } },
      });
      if (data === undefined) return { error: problemText(error, response.status), status: response.status };
      items.push(...data.items);
      cursor = data.nextCursor ?? undefined;
    } while (cursor !== undefined);
    return { data: items };
  } catch {
    return { error: problemText(undefined) };
  }
}

/** The body of a rollout doing what `of` does (its version and action, or its command) to the devices `ids`, one wave. */
function againBody(of: Rollout, ids: string[]): components['schemas']['RolloutCreateBody'] {
  const common = {
    targets: { ids },
    failureThreshold: of.failureThreshold,
    waveTimeoutSeconds: of.waveTimeoutSeconds,
    note: `Again to the devices that failed in rollout ${of.id}`,
  };
  if (of.action === 'COMMAND' && of.command !== undefined) {
    const { command, arguments: args, expiresInSeconds } = of.command;
    return {
      action: 'COMMAND',
      command: { command, expiresInSeconds, ...(args === null || args === undefined ? {} : { arguments: args }) },
      ...common,
    };
  }
  return { action: of.action === 'UNDEPLOY' ? 'UNDEPLOY' : 'DEPLOY', what: of.what as NonNullable<Rollout['what']>, ...common };
}

/** POSTs a new rollout doing what `of` does (its version and action, or its command) to the devices `ids`, noting why. */
export async function rollOutAgain(company: string, of: Rollout, ids: string[]): Promise<Outcome<Rollout>> {
  try {
    const { data, error, response } = await api.main.POST('/companies/{companyId}/resources/rollouts', {
      params: { path: { companyId: company } },
      body: againBody(of, ids),
    });
    return data === undefined ? { error: problemText(error, response.status), status: response.status } : { data };
  } catch {
    return { error: problemText(undefined) };
  }
}
