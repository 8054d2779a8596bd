/**
 * The device side of deployments: what a device pulls (its desired state: every scenario version active on it, with
 * a download of each) and what it reports back about each one while it installs it. Both act only on the device the
 * caller's device token names (activeDevice), so a device never sees or touches another device's deployments.
 */
import { createHash } from 'node:crypto';
import { ulid } from 'ulid';
import { activeDevice } from './device-session.js';
import { NotFoundError } from './errors.js';
import type { ArchiveStore, DeploymentRepository, DeviceRepository, DeviceSlot, DeviceStatus, ScenarioCatalog } from './ports.js';
import { deviceOf, type Principal } from './principal.js';
import { IDENTIFIER_PATTERN, SEMVER_PATTERN } from './scenarios/versions.js';

/** What a device reports about one of its active deployments while it installs it. */
export const DEVICE_STATUS_STATES = ['DOWNLOADING', 'INSTALLING', 'INSTALLED', 'FAILED'] as const;

/** One state of DEVICE_STATUS_STATES. */
export type DeviceStatusState = (typeof DEVICE_STATUS_STATES)[number];

/** Longest `message` a status report may carry, characters. */
export const MAX_DEVICE_STATUS_MESSAGE_LENGTH = 1_000;

/**
 * Lifetime of the download URLs of the desired state, seconds (1 hour): long enough for a device on a slow link to
 * fetch a large archive; a device that starts later pulls again and gets fresh URLs.
 */
export const DESIRED_STATE_URL_LIFETIME_SECONDS = 3_600;

/** A status as the listings and the desired state show it: the report's state, message (or null) and receipt time. */
export interface DeviceStatusView {
  state: DeviceStatusState;
  message: string | null;
  /** ISO-8601. */
  updated: string;
}

/** The view of a stored DeviceStatus (its id stays internal). */
export function deviceStatusView(status: DeviceStatus): DeviceStatusView {
  return { state: status.state, message: status.message ?? null, updated: status.updated };
}

/** One scenario version the device should have installed. */
export interface DesiredDeploymentView {
  what: { type: 'SCENARIO'; id: string; subId: string };
  /** The version's scenario.json `name`. */
  name: string;
  /** Archive size, bytes. */
  size: number;
  /** Hex SHA-256 of the archive: what the device checks its download against. */
  sha256: string;
  /** GET it (no bearer token) before `downloadUrlExpiresAt` to download the archive. */
  downloadUrl: string;
  /** ISO-8601. */
  downloadUrlExpiresAt: string;
  /** ISO-8601: when the deployment was made. */
  deployedAt: string;
  /** The device's latest report on it, if any. */
  status?: DeviceStatusView;
}

/**
 * The version tag of a device's desired state: base64url of the first 16 bytes of the SHA-256 of the active
 * deployments' (scenario id, version, deployment id), sorted. It changes exactly when the set of active deployments
 * changes (a deploy, an undeploy, a redeploy under a new id), not when a status report or a download URL does, and
 * does not depend on the order the slots are given in.
 */
export function desiredStateTag(slots: readonly Pick<DeviceSlot, 'id' | 'scenarioId' | 'version'>[]): string {
  const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  const identities = slots
    .map((slot) => [slot.scenarioId, slot.version, slot.id] as const)
    .sort((a, b) => compare(a[0], b[0]) || compare(a[1], b[1]) || compare(a[2], b[2]));
  return createHash('sha256').update(JSON.stringify(identities)).digest().subarray(0, 16).toString('base64url');
}

/** What the desired-state use case needs. */
export interface DesiredStateDependencies {
  devices: Pick<DeviceRepository, 'get'>;
  deployments: Pick<DeploymentRepository, 'activeOnDevice'>;
  catalog: Pick<ScenarioCatalog, 'getVersions'>;
  archives: Pick<ArchiveStore, 'presignGet'>;
  now?: () => Date;
}

/** The desired state: its tag, and its items unless the caller already holds that tag. */
export type DesiredState = { tag: string; unchanged: true } | { tag: string; unchanged: false; items: DesiredDeploymentView[] };

/**
 * The calling device's desired state: one Query of its active deployments gives the tag; when `holds(tag)` (the
 * device already has this state) nothing else is read or signed. Otherwise the versions are read (batched) and each
 * archive gets a presigned download valid DESIRED_STATE_URL_LIFETIME_SECONDS. Items are ordered by (scenario, version).
 * @throws ForbiddenError (403) when the caller is not a device; UnauthorizedError (401) when its device is gone,
 *   being deleted, or its credential was replaced (activeDevice).
 */
export async function deviceDesiredState(
  dependencies: DesiredStateDependencies,
  principal: Principal,
  holds: (tag: string) => boolean,
): Promise<DesiredState> {
  // The token names the device, so its deployments are queried while the device read checks the token is still good:
  // a poll costs one round trip, not two (the query's result is dropped when the check refuses).
  const { company, deviceId } = deviceOf(principal);
  const [, slots] = await Promise.all([
    activeDevice(dependencies.devices, principal),
    dependencies.deployments.activeOnDevice(company, deviceId),
  ]);
  const tag = desiredStateTag(slots);
  if (holds(tag)) return { tag, unchanged: true };
  const versions = await dependencies.catalog.getVersions(company, slots);
  const byKey = new Map(versions.map((version) => [`${version.scenarioId}#${version.version}`, version]));
  const expiresAt = new Date((dependencies.now?.() ?? new Date()).getTime() + DESIRED_STATE_URL_LIFETIME_SECONDS * 1000).toISOString();
  const items = await Promise.all(
    slots.flatMap((slot) => {
      const version = byKey.get(`${slot.scenarioId}#${slot.version}`);
      // A deployment is only ever made of a stored version, and versions are never deleted; should one be missing,
      // the device is better served by the others than by an error.
      if (version === undefined) return [];
      return [
        (async (): Promise<DesiredDeploymentView> => ({
          what: { type: 'SCENARIO', id: slot.scenarioId, subId: slot.version },
          name: version.name,
          size: version.size,
          sha256: version.sha256,
          downloadUrl: await dependencies.archives.presignGet(
            version.archiveKey,
            DESIRED_STATE_URL_LIFETIME_SECONDS,
            `${slot.scenarioId}-${slot.version}.zip`,
          ),
          downloadUrlExpiresAt: expiresAt,
          deployedAt: slot.deployedAt,
          ...(slot.deviceStatus === undefined ? {} : { status: deviceStatusView(slot.deviceStatus) }),
        }))(),
      ];
    }),
  );
  return { tag, unchanged: false, items };
}

/** A device's report on one of its deployments (the request body, validated by the route). */
export interface DeviceStatusReport {
  scenarioId: string;
  version: string;
  state: DeviceStatusState;
  message?: string;
}

/** What the status-report use case needs. */
export interface StatusReportDependencies {
  devices: Pick<DeviceRepository, 'get'>;
  deployments: Pick<DeploymentRepository, 'recordDeviceStatus'>;
  now?: () => Date;
}

/**
 * Records the calling device's report on one of its active deployments as that deployment's latest status (a new
 * ULID per report, so that every report becomes its own history entry and event, derived from the table's stream).
 * @returns the stored status.
 * @throws ForbiddenError (403) / UnauthorizedError (401) as deviceDesiredState.
 * @throws NotFoundError (404) when that scenario version is not active on the device.
 */
export async function reportDeviceStatus(
  dependencies: StatusReportDependencies,
  principal: Principal,
  report: DeviceStatusReport,
): Promise<DeviceStatus> {
  const device = await activeDevice(dependencies.devices, principal);
  const now = dependencies.now?.() ?? new Date();
  const status: DeviceStatus = {
    id: ulid(now.getTime()),
    state: report.state,
    ...(report.message === undefined ? {} : { message: report.message }),
    updated: now.toISOString(),
  };
  // An id that could not be a scenario or version (e.g. one holding the key separator `#`) addresses nothing.
  const addressable = IDENTIFIER_PATTERN.test(report.scenarioId) && SEMVER_PATTERN.test(report.version);
  const recorded =
    addressable &&
    (await dependencies.deployments.recordDeviceStatus(
      { company: device.company, deviceId: device.id, scenarioId: report.scenarioId, version: report.version },
      status,
    ));
  if (!recorded) {
    throw new NotFoundError(`Scenario '${report.scenarioId}' version '${report.version}' is not deployed on this device.`);
  }
  return status;
}
