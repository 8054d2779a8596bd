import pLimit from 'p-limit';
import { monotonicFactory } from 'ulid';
import * as z from 'zod';
import { type DeviceStatusView, deviceStatusView } from '../devices/desired-state.js';
import type { DeviceRepository } from '../devices/ports.js';
import { SEMVER_PATTERN } from '../scenarios/manifest.js';
import type { ScenarioRepository } from '../scenarios/ports.js';
import { NotFoundError } from '../shared/errors.js';
import { IDENTIFIER_PATTERN } from '../shared/identifiers.js';
import type { ListParameters, Page } from '../shared/paging.js';
import { authorizeCompany, type Principal } from '../shared/principal.js';
import type { ActiveDeployment, DeploymentHistoryEntry } from './model.js';
import type { DeploymentRepository } from './ports.js';

/** Most entries accepted in one deployment request. */
export const MAX_DEPLOYMENT_ENTRIES = 5_000;
/** Conditional writes in flight at once for one request. */
export const DEPLOYMENT_WRITE_CONCURRENCY = 16;

/** Failure causes. */
export const DEPLOYMENT_CAUSES = [
  'NONE',
  'TARGET_NOT_FOUND',
  'WHAT_NOT_FOUND',
  'ALREADY_DEPLOYED',
  'ALREADY_UNDEPLOYED',
  'NOT_IMPLEMENTED',
] as const;
/** One failure cause. */
export type DeploymentCause = (typeof DEPLOYMENT_CAUSES)[number];

/**
 * Causes only history entries carry, never a result item: the cause of a SUCCESS that no deployment request asked
 * for (DEVICE_DELETED: the UNDEPLOY of each active deployment of a deleted device).
 */
export const HISTORY_ONLY_CAUSES = ['DEVICE_DELETED'] as const;

/** Deployment request body; the zod schema is also the 400 validator. */
export const DeploymentRequestBodySchema = z.object({
  requests: z
    .array(
      z.object({
        target: z.object({
          type: z.string().min(1).max(64),
          id: z.string().min(1).max(256),
          subId: z.string().max(256).nullable().optional(),
        }),
        what: z.object({ type: z.string().min(1).max(64), id: z.string().min(1).max(256), subId: z.string().min(1).max(256) }),
        action: z.enum(['DEPLOY', 'UNDEPLOY']),
      }),
    )
    .min(1)
    .max(MAX_DEPLOYMENT_ENTRIES),
  note: z.string().max(2_000).optional(),
});

/** A parsed deployment request body. */
export type DeploymentRequestBody = z.infer<typeof DeploymentRequestBodySchema>;

/** One result item. */
export interface DeploymentResultItem {
  /** ULID of this action. */
  id: string;
  target: { type: string; id: string; subId: string | null };
  what: { type: string; id: string; subId: string };
  action: 'DEPLOY' | 'UNDEPLOY';
  state: 'SUCCESS' | 'FAILURE';
  cause: DeploymentCause | null;
}

/** What the deployment use cases need. */
export interface DeploymentDependencies {
  devices: DeviceRepository;
  scenarios: ScenarioRepository;
  deployments: DeploymentRepository;
  now?: () => Date;
  /** Called with each unexpected backend error (the item is then reported FAILURE / NONE). */
  onError?: (error: unknown, context: Record<string, unknown>) => void;
}

/**
 * The 413 check of a deployment request, run on the parsed JSON before its schema: the `detail` when it holds more
 * than MAX_DEPLOYMENT_ENTRIES entries (the request is then refused whole, nothing changed), else undefined.
 */
export function deploymentRequestTooLarge(body: unknown): string | undefined {
  const requests = (body as { requests?: unknown } | null)?.requests;
  if (!Array.isArray(requests) || requests.length <= MAX_DEPLOYMENT_ENTRIES) return undefined;
  return `The request has ${requests.length} entries; at most ${MAX_DEPLOYMENT_ENTRIES} are accepted per request. Split it; nothing was changed.`;
}

/**
 * Deploys or undeploys scenario versions on devices. Every entry gets one result item, in request
 * order. Existence is checked with batched reads; writes are conditional, so of two racing identical DEPLOYs exactly
 * one succeeds. Entries with the same identity inside one request run one after another, in order.
 * Cause precedence: NOT_IMPLEMENTED, TARGET_NOT_FOUND, WHAT_NOT_FOUND, ALREADY_DEPLOYED / ALREADY_UNDEPLOYED, NONE.
 * With `dryRun`, returns the items that would result without writing anything (state read in one batch).
 * A SUCCESS is one conditional write carrying who, when and why; its history entry and DeploymentChanged event are
 * derived from that write by the deployments table's stream (changes.ts), so they exist even when this
 * process dies right after the write. FAILURE items with a definite cause changed nothing: they are appended to the
 * history here, best effort, once the writes are done (FAILURE / NONE, whose write may have been made, is only
 * logged through `onError`); a history write that fails after retries does not change the answer and is reported
 * through `onError` with the entries.
 * @param body a request body valid against DeploymentRequestBodySchema (the route validates it).
 * @param options a dry run, or a rollout's deterministic ids, instant and tag (ExecuteDeploymentsOptions).
 * @throws ForbiddenError for a company outside the token.
 */
export async function executeDeployments(
  dependencies: DeploymentDependencies,
  principal: Principal,
  companyId: string,
  body: DeploymentRequestBody,
  options: ExecuteDeploymentsOptions = {},
): Promise<{ items: DeploymentResultItem[]; dryRun: boolean }> {
  authorizeCompany(principal, companyId);
  const action: DeploymentAction = {
    companyId,
    at: options.at ?? (dependencies.now?.() ?? new Date()).toISOString(),
    by: principal.subject,
    note: body.note,
    ...(options.rollout === undefined ? {} : { rollout: options.rollout }),
  };
  const items = pendingItems(body, action.at, options.ids);
  const groups = await groupByIdentity(dependencies, companyId, markUnsupported(items));
  if (options.dryRun === true) {
    await predictOutcomes(dependencies, companyId, groups);
    return { items, dryRun: true };
  }
  await writeChanges(dependencies, action, groups);
  await recordFailures(dependencies, action, items);
  return { items, dryRun: false };
}

/**
 * How executeDeployments runs, besides an ordinary request (every option absent): a dry run, or the deployments of a
 * rollout wave, which must come out the same when a chunk is run again (same ids, same instant, so that a retried
 * DEPLOY finds its own write and reports SUCCESS, not ALREADY_DEPLOYED).
 */
export interface ExecuteDeploymentsOptions {
  /** Answer what would happen, write nothing. */
  dryRun?: boolean;
  /** ISO-8601: the actions' instant instead of now (`at`, `deployedAt`). The ids' time part must be this instant. */
  at?: string;
  /** One id (ULID) per request entry, in request order, instead of fresh ones. */
  ids?: readonly string[];
  /** The rollout and wave (0-based) the deployments belong to: stored on every slot a DEPLOY writes. */
  rollout?: { id: string; wave: number };
}

/** Who acts on which company, when (ISO-8601) and why: shared by every entry of one request. */
interface DeploymentAction {
  companyId: string;
  at: string;
  by: string;
  note: string | undefined;
  rollout?: { id: string; wave: number };
}

/**
 * One result item per entry, in request order, FAILURE / NONE until an outcome is known; ids are ULIDs of `at`, or
 * `ids` when given.
 */
function pendingItems(body: DeploymentRequestBody, at: string, ids: readonly string[] | undefined): DeploymentResultItem[] {
  const nextId = monotonicFactory();
  return body.requests.map((entry, index) => ({
    // The id's time part is the action's instant, so history bounds (`from`/`to`) and `at` agree exactly.
    id: ids?.[index] ?? nextId(Date.parse(at)),
    target: { type: entry.target.type, id: entry.target.id, subId: entry.target.subId ?? null },
    what: { type: entry.what.type, id: entry.what.id, subId: entry.what.subId },
    action: entry.action,
    state: 'FAILURE',
    cause: 'NONE',
  }));
}

/** Marks the items this service does not implement (NOT_IMPLEMENTED) and returns the others. */
function markUnsupported(items: DeploymentResultItem[]): DeploymentResultItem[] {
  return items.filter((item) => {
    const implemented = item.target.type === 'DEVICE' && item.target.subId === null && item.what.type === 'SCENARIO';
    if (!implemented) item.cause = 'NOT_IMPLEMENTED';
    return implemented;
  });
}

/**
 * Reads which devices and scenario versions exist (two batched reads), marks TARGET_NOT_FOUND and WHAT_NOT_FOUND, and
 * groups the remaining items by identity (`device#scenario#version`), each group in request order.
 */
async function groupByIdentity(
  dependencies: Pick<DeploymentDependencies, 'devices' | 'scenarios'>,
  companyId: string,
  supported: DeploymentResultItem[],
): Promise<Map<string, DeploymentResultItem[]>> {
  const deviceIds = [...new Set(supported.map((item) => item.target.id).filter((id) => IDENTIFIER_PATTERN.test(id)))];
  const references = [
    ...new Map(
      supported
        .filter((item) => IDENTIFIER_PATTERN.test(item.what.id) && SEMVER_PATTERN.test(item.what.subId) && item.what.subId.length <= 128)
        .map((item) => [`${item.what.id}#${item.what.subId}`, { scenarioId: item.what.id, version: item.what.subId }]),
    ).values(),
  ];
  const [existingDevices, existingVersions] = await Promise.all([
    dependencies.devices.existing(companyId, deviceIds),
    dependencies.scenarios.existingVersions(companyId, references),
  ]);
  const groups = new Map<string, DeploymentResultItem[]>();
  for (const item of supported) {
    if (!existingDevices.has(item.target.id)) {
      item.cause = 'TARGET_NOT_FOUND';
    } else if (!existingVersions.has(`${item.what.id}#${item.what.subId}`)) {
      item.cause = 'WHAT_NOT_FOUND';
    } else {
      const identity = `${item.target.id}#${item.what.id}#${item.what.subId}`;
      const group = groups.get(identity) ?? [];
      group.push(item);
      groups.set(identity, group);
    }
  }
  return groups;
}

/** Dry run: replays each identity's entries in order against its current state, read in one batch; writes nothing. */
async function predictOutcomes(
  dependencies: Pick<DeploymentDependencies, 'deployments'>,
  companyId: string,
  groups: Map<string, DeploymentResultItem[]>,
): Promise<void> {
  const active = await dependencies.deployments.activeAmong(
    companyId,
    [...groups.values()].flatMap(([first]) =>
      first === undefined ? [] : [{ deviceId: first.target.id, scenarioId: first.what.id, version: first.what.subId }],
    ),
  );
  for (const [identity, group] of groups) {
    let isActive = active.has(identity);
    for (const item of group) {
      if (item.action === 'DEPLOY' ? !isActive : isActive) {
        Object.assign(item, { state: 'SUCCESS', cause: null });
        isActive = !isActive;
      } else item.cause = item.action === 'DEPLOY' ? 'ALREADY_DEPLOYED' : 'ALREADY_UNDEPLOYED';
    }
  }
}

/**
 * One conditional write per item (DEPLOY: activate; UNDEPLOY: deactivate with the UNDEPLOY mark), groups in parallel
 * (DEPLOYMENT_WRITE_CONCURRENCY), each group's items in order. A write that throws leaves its item FAILURE / NONE.
 */
async function writeChanges(
  dependencies: DeploymentDependencies,
  action: DeploymentAction,
  groups: Map<string, DeploymentResultItem[]>,
): Promise<void> {
  const limit = pLimit(DEPLOYMENT_WRITE_CONCURRENCY);
  const note = action.note === undefined ? {} : { note: action.note };
  const rollout = action.rollout === undefined ? {} : { rollout: action.rollout };
  await Promise.all(
    [...groups.values()].map((group) =>
      limit(async () => {
        for (const item of group) {
          const identity = { company: action.companyId, deviceId: item.target.id, scenarioId: item.what.id, version: item.what.subId };
          try {
            if (item.action === 'DEPLOY') {
              const deployment: ActiveDeployment = {
                ...identity,
                id: item.id,
                deployedAt: action.at,
                deployedBy: action.by,
                ...note,
                ...rollout,
              };
              const outcome = await dependencies.deployments.activate(deployment);
              if (outcome === 'activated') Object.assign(item, { state: 'SUCCESS', cause: null });
              else item.cause = 'ALREADY_DEPLOYED';
            } else {
              const outcome = await dependencies.deployments.deactivate(identity, { id: item.id, at: action.at, by: action.by, ...note });
              if (outcome === 'deactivated') Object.assign(item, { state: 'SUCCESS', cause: null });
              else item.cause = 'ALREADY_UNDEPLOYED';
            }
          } catch (error) {
            item.cause = 'NONE';
            dependencies.onError?.(error, { deploymentId: item.id, ...identity, action: item.action });
          }
        }
      }),
    ),
  );
}

/**
 * The audit trail of the entries that changed nothing, appended in batches once the conditional writes are done
 * (best effort: no durable change carries them; SUCCESS entries come from the stream). NONE (a write whose outcome is
 * unknown: it may have been made) is left to the stream too, which records it if it happened; written here under the
 * same id, it could replace that SUCCESS entry. The error log keeps it either way. A failed write is reported through
 * `onError` with the entries; the answer stays truthful.
 */
async function recordFailures(
  dependencies: DeploymentDependencies,
  action: DeploymentAction,
  items: DeploymentResultItem[],
): Promise<void> {
  const entries = items
    .filter((item) => item.state === 'FAILURE' && item.cause !== 'NONE')
    .map(
      (item): DeploymentHistoryEntry => ({
        id: item.id,
        company: action.companyId,
        deviceId: item.target.id,
        deviceSubId: item.target.subId,
        targetType: item.target.type,
        whatType: item.what.type,
        scenarioId: item.what.id,
        version: item.what.subId,
        action: item.action,
        state: item.state,
        cause: item.cause,
        at: action.at,
        by: action.by,
        ...(action.note === undefined ? {} : { note: action.note }),
      }),
    );
  if (entries.length === 0) return;
  try {
    await dependencies.deployments.recordHistory(entries);
  } catch (error) {
    dependencies.onError?.(error, { operation: 'recordHistory', count: entries.length, entries });
  }
}

/** An active deployment as listed (docs/contract.md: result item fields plus deployedAt, deployedBy, note). */
export interface ActiveDeploymentView extends DeploymentResultItem {
  /** ISO-8601. */
  deployedAt: string;
  deployedBy: string;
  note: string | null;
  /** The device's latest status report on it, when it sent one. */
  deviceStatus?: DeviceStatusView;
}

export { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT } from '../shared/paging.js';

/**
 * Lists active deployments of one device (`deviceId`) or of every device of the company.
 * @param paging `limit` (1–1000) and `cursor`, validated by the route.
 * @throws ForbiddenError for a company outside the token.
 * @throws BadRequestError on a cursor not issued for this listing.
 * @throws NotFoundError when `deviceId` is not a device of the company.
 */
export async function listActiveDeployments(
  dependencies: Pick<DeploymentDependencies, 'devices' | 'deployments'>,
  principal: Principal,
  companyId: string,
  deviceId: string | undefined,
  { limit, cursor }: ListParameters,
): Promise<Page<ActiveDeploymentView>> {
  authorizeCompany(principal, companyId);
  if (deviceId !== undefined) {
    const found = IDENTIFIER_PATTERN.test(deviceId) ? await dependencies.devices.existing(companyId, [deviceId]) : new Set<string>();
    if (!found.has(deviceId)) throw new NotFoundError(`Device '${deviceId}' does not exist in company '${companyId}'.`);
  }
  const page = await dependencies.deployments.listActive(companyId, deviceId, limit, cursor);
  return {
    items: page.items.map((deployment) => ({
      id: deployment.id,
      target: { type: 'DEVICE', id: deployment.deviceId, subId: null },
      what: { type: 'SCENARIO', id: deployment.scenarioId, subId: deployment.version },
      action: 'DEPLOY',
      state: 'SUCCESS',
      cause: null,
      deployedAt: deployment.deployedAt,
      deployedBy: deployment.deployedBy,
      note: deployment.note ?? null,
      ...(deployment.deviceStatus === undefined ? {} : { deviceStatus: deviceStatusView(deployment.deviceStatus) }),
    })),
    nextCursor: page.nextCursor,
  };
}
