/**
 * Deployment history: every DEPLOY and UNDEPLOY ever attempted, successful or not, with who, when,
 * the request's note, the outcome and the cause; and every status a device reported on one of its deployments. Read through the `DeploymentHistory` port, newest first, filtered by
 * device, scenario, scenario version and time, with opaque cursors.
 */
import { encodeTime, TIME_LEN, TIME_MAX } from 'ulid';
import type { Page } from '../shared/paging.js';
import { authorizeCompany, type Principal } from '../shared/principal.js';
import type { DeploymentResultItem } from './deployments.js';
import type { DeviceStatusState, HistoryEntry } from './model.js';

/** One history listing, as the port receives it (parameters already validated). */
export interface DeploymentHistoryQuery {
  companyId: string;
  /** Only the actions whose target is this device (`target.id`). */
  deviceId?: string;
  /** Only the actions on this scenario (`what.id`). */
  scenarioId?: string;
  /** Only the actions on this version of `scenarioId` (`what.subId`); never given without `scenarioId`. */
  version?: string;
  /** Epoch milliseconds, inclusive: actions recorded at or after this instant. */
  from?: number;
  /** Epoch milliseconds, exclusive: actions recorded before this instant. */
  to?: number;
  /** Page size, 1 to MAX_LIST_LIMIT. */
  limit: number;
  /** `nextCursor` of the previous page of the same listing. */
  cursor?: string;
}

/**
 * The deployment history store (DynamoDB in AWS and locally). Every query shape is one DynamoDB Query, never a Scan.
 */
export interface DeploymentHistory {
  /**
   * One page of the company's history matching `query`, newest first (ids are ULIDs: time ordered).
   * @throws BadRequestError on a cursor this adapter did not issue for this company and query shape.
   */
  list(query: DeploymentHistoryQuery): Promise<Page<HistoryEntry>>;
}

/** An action's history entry as the API returns it: a deployment result item plus when, by whom and why. */
export interface ActionHistoryView extends Omit<DeploymentResultItem, 'cause'> {
  kind: 'ACTION';
  /** The result item's cause as recorded (entries written by older versions may carry causes no longer produced). */
  cause: string | null;
  /** ISO-8601. */
  at: string;
  /** `sub` of the caller. */
  by: string;
  /** The note of the deployment request, or null. */
  note: string | null;
}

/** A device's status report as the history lists it. */
export interface DeviceStatusHistoryView {
  kind: 'DEVICE_STATUS';
  /** ULID of the report. */
  id: string;
  target: { type: 'DEVICE'; id: string; subId: null };
  what: { type: 'SCENARIO'; id: string; subId: string };
  /** ULID of the deployment reported on (its DEPLOY's id). */
  deploymentId: string;
  deviceStatus: { state: DeviceStatusState; message: string | null };
  /** ISO-8601: when the service received the report. */
  at: string;
  /** The device's OAuth client id (`{company}~{deviceId}`). */
  by: string;
}

/** One history entry as the API returns it: an action, or a device's status report (told apart by `kind`). */
export type DeploymentHistoryView = ActionHistoryView | DeviceStatusHistoryView;

/** Longest `deviceId`, `scenarioId` or `version` accepted (the longest a deployment request may name). */
export const MAX_HISTORY_ID_LENGTH = 256;

/** Largest time a ULID can carry (48 bits of milliseconds). */
export const MAX_ULID_TIME = TIME_MAX;

/**
 * Inclusive ULID bounds selecting the ids created in [from, to): ULIDs sort by their time part, so the lowest id of
 * `from` is its time part followed by sixteen `0`, and the highest id before `to` is the time part of `to - 1 ms`
 * followed by sixteen `Z`. A missing bound is open (the smallest or largest ULID). Returns undefined when the range
 * is empty (`to` at or before `from`, or `to` at the epoch).
 */
export function ulidBounds(from: number | undefined, to: number | undefined): { lower: string; upper: string } | undefined {
  const low = Math.max(0, from ?? 0);
  const high = Math.min(MAX_ULID_TIME, to === undefined ? MAX_ULID_TIME : to - 1);
  if (high < low || low > MAX_ULID_TIME) return undefined;
  return { lower: `${encodeTime(low, TIME_LEN)}${'0'.repeat(16)}`, upper: `${encodeTime(high, TIME_LEN)}${'Z'.repeat(16)}` };
}

const INSTANT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-](\d{2}):(\d{2}))$/i;

/**
 * Parses an ISO-8601 instant (`2025-03-01T12:00:00Z`, `2025-03-01T13:00:00.250+01:00`; the offset is required) to
 * epoch milliseconds, truncating digits below the millisecond. Undefined when it is not one, or is not a real date.
 */
export function parseInstant(value: string): number | undefined {
  const match = INSTANT.exec(value);
  if (match === null) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map((part) => Number(part ?? 0)) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const milliseconds = Number(`${match[7] ?? ''}000`.slice(0, 3));
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined;
  const local = Date.UTC(year, month - 1, day, hour, minute, second, milliseconds);
  if (new Date(local).getUTCDate() !== day) return undefined;
  let offset = 0;
  if (match[8]?.toUpperCase() !== 'Z') {
    const offsetHours = Number(match[9]);
    const offsetMinutes = Number(match[10]);
    if (offsetHours > 23 || offsetMinutes > 59) return undefined;
    offset = (match[8]?.startsWith('-') ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  }
  return local - offset;
}

function toView(entry: HistoryEntry): DeploymentHistoryView {
  if (entry.kind === 'DEVICE_STATUS') {
    return {
      kind: 'DEVICE_STATUS',
      id: entry.id,
      target: { type: 'DEVICE', id: entry.deviceId, subId: null },
      what: { type: 'SCENARIO', id: entry.scenarioId, subId: entry.version },
      deploymentId: entry.deploymentId,
      deviceStatus: { state: entry.deviceStatus.state, message: entry.deviceStatus.message ?? null },
      at: entry.at,
      by: entry.by,
    };
  }
  return {
    kind: 'ACTION',
    id: entry.id,
    target: { type: entry.targetType, id: entry.deviceId, subId: entry.deviceSubId },
    what: { type: entry.whatType, id: entry.scenarioId, subId: entry.version },
    action: entry.action,
    state: entry.state,
    cause: entry.cause,
    at: entry.at,
    by: entry.by,
    note: entry.note ?? null,
  };
}

/**
 * Lists the company's deployment history, newest first.
 * @param filters the listing's filters and paging, validated by the route (HistoryQuery): `version` only with
 * `scenarioId`, `from` before `to`.
 * @throws ForbiddenError for a company outside the token.
 * @throws BadRequestError on a cursor not issued for this listing.
 */
export async function listDeploymentHistory(
  dependencies: { history: DeploymentHistory },
  principal: Principal,
  companyId: string,
  filters: Omit<DeploymentHistoryQuery, 'companyId'>,
): Promise<Page<DeploymentHistoryView>> {
  authorizeCompany(principal, companyId);
  const page = await dependencies.history.list({ ...filters, companyId });
  return { items: page.items.map(toView), nextCursor: page.nextCursor };
}
