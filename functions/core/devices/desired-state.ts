/**
 * The device side of deployments: what a device pulls (its desired state: every scenario version active on it, with
 * a download of each) and what it reports back about each one while it installs it. Both act only on the device the
 * caller's device token names (activeDevice), so a device never sees or touches another device's deployments.
 */
import { createHash } from 'node:crypto';
import { ulid } from 'ulid';
import { deliverPendingCommands } from '../commands/device-side.js';
import { type Command, type PendingCommandView, pendingCommandView } from '../commands/model.js';
import type { CommandRepository } from '../commands/ports.js';
import type { DeviceSlot, DeviceStatus, DeviceStatusState } from '../deployments/model.js';
import type { DeploymentRepository } from '../deployments/ports.js';
import type { ArchiveStore, ScenarioCatalog } from '../scenarios/ports.js';
import { SEMVER_PATTERN } from '../scenarios/versions.js';
import { NotFoundError } from '../shared/errors.js';
import { IDENTIFIER_PATTERN } from '../shared/identifiers.js';
import { deviceOf, type Principal } from '../shared/principal.js';
import type { DeviceRepository } from './ports.js';
import { activeDevice } from './session.js';

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
 * deployments' (scenario id, version, deployment id), sorted, and of the ids of its pending commands (QUEUED or
 * DELIVERED), sorted. It changes exactly when the set of active deployments changes (a deploy, an undeploy, a
 * redeploy under a new id) or a command is queued or leaves the pending set (a result, a cancel, an expiry), not when
 * a status report, a command's delivery or a download URL does, and does not depend on the order of either list. A
 * device with no pending command has the tag its deployments alone give (as before commands existed).
 */
export function desiredStateTag(
  slots: readonly Pick<DeviceSlot, 'id' | 'scenarioId' | 'version'>[],
  commandIds: readonly string[] = [],
): string {
  const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  const identities = slots
    .map((slot) => [slot.scenarioId, slot.version, slot.id] as const)
    .sort((a, b) => compare(a[0], b[0]) || compare(a[1], b[1]) || compare(a[2], b[2]));
  const hash = createHash('sha256').update(JSON.stringify(identities));
  if (commandIds.length > 0) hash.update(`\ncommands:${JSON.stringify([...commandIds].sort(compare))}`);
  return hash.digest().subarray(0, 16).toString('base64url');
}

/** The tag of a device's slots and pending commands. */
function tagOf(slots: readonly DeviceSlot[], pending: readonly Command[]): string {
  return desiredStateTag(
    slots,
    pending.map((command) => command.id),
  );
}

/** What the desired-state use case needs. */
export interface DesiredStateDependencies {
  devices: Pick<DeviceRepository, 'get' | 'setDesiredState'>;
  deployments: Pick<DeploymentRepository, 'activeOnDevice'>;
  commands: Pick<CommandRepository, 'pending' | 'transition'>;
  catalog: Pick<ScenarioCatalog, 'getVersions'>;
  archives: Pick<ArchiveStore, 'presignGet'>;
  now?: () => Date;
  /**
   * Whether this poll checks the stored tag against the device's deployments even when the device holds it.
   * @default one poll in STORED_TAG_CHECK_ONE_IN, at random
   */
  checkStoredTag?: () => boolean;
}

/**
 * One poll in this many that hold the stored tag checks it against the device's deployments (one Query more) and
 * corrects it when it differs. A stored tag can only be stale if a refresh was lost (a deployments stream record
 * dropped after its retention, a deploy handled by a consumer of an older version during an upgrade or a rollback):
 * the check bounds how long such a device is told nothing changed, to about this many polls (10 minutes at one poll
 * every 30 s), for 5 % more reads and no write unless the tag was wrong.
 */
export const STORED_TAG_CHECK_ONE_IN = 20;

/** The desired state: its tag, and its items unless the caller already holds that tag. */
export type DesiredState =
  | { tag: string; unchanged: true }
  | { tag: string; unchanged: false; items: DesiredDeploymentView[]; commands: PendingCommandView[] };

/**
 * The calling device's desired state: its active deployments and its pending commands (those still QUEUED become
 * DELIVERED as they are answered, deliverPendingCommands). With `holds` (the device sent `If-None-Match`), the device item is read first
 * (the token check, one strongly consistent GetItem): when `holds` its stored tag (StoredDevice.desiredState), that is
 * the whole answer: one read. Otherwise (no tag stored yet, or another one) its active deployments and pending commands are queried and the
 * tag computed from them; a device without a stored tag, or with another one, gets it stored (a compare-and-set on the
 * generation read, which loses to any other writer, see refreshDesiredStateTag). Without `holds`, the device and its
 * deployments are read at once (one round trip). When the device holds the computed tag nothing else is read or signed;
 * otherwise the versions are read (batched) and each archive gets a presigned download valid
 * DESIRED_STATE_URL_LIFETIME_SECONDS. Items are ordered by (scenario, version). One poll in STORED_TAG_CHECK_ONE_IN
 * that holds the stored tag is checked against the deployments all the same, and a stored tag found wrong is corrected
 * (compare-and-set on its generation).
 *
 * The stored tag follows the active deployments through the deployments table's stream (refreshDesiredStateTag, run by
 * the deployment changes consumer), so for as long as that consumer lags behind a deploy or an undeploy (under a second
 * or two locally; its iterator age is alarmed on AWS) a device that holds the previous tag is still answered 304; its
 * first poll after the consumer caught up gets the change. Should a refresh be lost, the sampled check
 * (STORED_TAG_CHECK_ONE_IN) corrects the tag within about that many polls.
 * @throws ForbiddenError when the caller is not a device; UnauthorizedError when its device is gone, being
 *   deleted, or its credential was replaced (activeDevice).
 */
export async function deviceDesiredState(
  dependencies: DesiredStateDependencies,
  principal: Principal,
  holds?: (tag: string) => boolean,
): Promise<DesiredState> {
  const { company, deviceId } = deviceOf(principal);
  let slots: DeviceSlot[];
  let pending: Command[];
  if (holds === undefined) {
    // Nothing to compare: the deployments and commands are queried while the device read checks the token is still
    // good (the queries' results are dropped when the check refuses).
    [, slots, pending] = await Promise.all([
      activeDevice(dependencies.devices, principal),
      dependencies.deployments.activeOnDevice(company, deviceId),
      dependencies.commands.pending(company, deviceId),
    ]);
  } else {
    const device = await activeDevice(dependencies.devices, principal);
    const stored = device.desiredState;
    const check = dependencies.checkStoredTag ?? (() => Math.random() < 1 / STORED_TAG_CHECK_ONE_IN);
    if (stored !== undefined && holds(stored.tag) && !check()) return { tag: stored.tag, unchanged: true };
    [slots, pending] = await Promise.all([
      dependencies.deployments.activeOnDevice(company, deviceId),
      dependencies.commands.pending(company, deviceId),
    ]);
    // Queried after the device was read: safe to store with a compare-and-set on the generation read (a refresh
    // written meanwhile wins, see refreshDesiredStateTag). Written when there is none, or it differs (a lost refresh).
    const current = tagOf(slots, pending);
    if (stored?.tag !== current) await dependencies.devices.setDesiredState(company, deviceId, current, stored?.generation);
  }
  const tag = tagOf(slots, pending);
  if (holds?.(tag) === true) return { tag, unchanged: true };
  const now = dependencies.now?.() ?? new Date();
  const commands = (await deliverPendingCommands(dependencies.commands, pending, now)).map(pendingCommandView);
  const versions = await dependencies.catalog.getVersions(company, slots);
  const byKey = new Map(versions.map((version) => [`${version.scenarioId}#${version.version}`, version]));
  const expiresAt = new Date(now.getTime() + DESIRED_STATE_URL_LIFETIME_SECONDS * 1000).toISOString();
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
  return { tag, unchanged: false, items, commands };
}

/** Compare-and-set rounds of refreshDesiredStateTag before it gives up (only writers racing on one device conflict). */
const DESIRED_STATE_WRITE_ATTEMPTS = 5;

/** What refreshDesiredStateTag needs. */
export interface DesiredStateTagDependencies {
  devices: Pick<DeviceRepository, 'get' | 'setDesiredState'>;
  deployments: Pick<DeploymentRepository, 'activeOnDevice'>;
  commands: Pick<CommandRepository, 'pending'>;
}

/**
 * Brings the device's stored desired state tag (StoredDevice.desiredState) up to date after a change of its active
 * deployments or pending commands: reads the device (its generation), then queries its active deployments and pending
 * commands, then writes their tag with
 * the next generation on condition that the generation is still the one read; on a conflict, all over again. It
 * always writes, even a tag equal to the stored one, so that the last successful write is always one whose query
 * came after every change committed before its read: run after a change is committed (by the stream consumer), the
 * stored tag is current once it returns, whatever other writers did with staler reads in between (each of their
 * writes either came before this one, or read this one's generation and so queried after it). A device that does not
 * exist (deleted since) is left alone.
 * @throws Error when DESIRED_STATE_WRITE_ATTEMPTS rounds all conflicted, or a read or write fails (the caller retries).
 */
export async function refreshDesiredStateTag(dependencies: DesiredStateTagDependencies, company: string, deviceId: string): Promise<void> {
  for (let attempt = 1; attempt <= DESIRED_STATE_WRITE_ATTEMPTS; attempt += 1) {
    const device = await dependencies.devices.get(company, deviceId);
    if (device === undefined) return;
    const [slots, pending] = await Promise.all([
      dependencies.deployments.activeOnDevice(company, deviceId),
      dependencies.commands.pending(company, deviceId),
    ]);
    const tag = tagOf(slots, pending);
    const outcome = await dependencies.devices.setDesiredState(company, deviceId, tag, device.desiredState?.generation);
    if (outcome !== 'conflict') return;
  }
  throw new Error(
    `The desired state tag of device '${deviceId}' (${company}) kept changing under ${DESIRED_STATE_WRITE_ATTEMPTS} attempts; retry.`,
  );
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
 * @throws ForbiddenError / UnauthorizedError as deviceDesiredState.
 * @throws NotFoundError when that scenario version is not active on the device.
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
