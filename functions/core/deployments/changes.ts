/**
 * What follows from a change of a deployment slot: its history entry and its event (DeploymentChanged for a DEPLOY
 * or UNDEPLOY, DeploymentStatusChanged for a device's status report). Both are derived from the durable change
 * itself (the old and new image of the slot, as the deployments table's stream delivers them), so every state change
 * has them eventually, whatever moment the process that made it died at. Everything derived here is keyed by the
 * action's or the report's id, so applying the same change twice writes the same entry.
 */
import pLimit from 'p-limit';
import { commandEventId } from '../commands/model.js';
import { type DesiredStateTagDependencies, refreshDesiredStateTag } from '../devices/desired-state.js';
import { deviceClientId } from '../devices/model.js';
import type { RolloutReport } from '../rollouts/model.js';
import type { RolloutRepository } from '../rollouts/ports.js';
import type { DeploymentEvent, DeploymentSlot, HistoryEntry } from './model.js';
import type { DeploymentRepository, EventPublisher } from './ports.js';

/** The derived consequences of one slot change. */
export interface DeploymentChange {
  entry: HistoryEntry;
  event: DeploymentEvent;
  /** Set for an UNDEPLOY: the undeployed slot to purge once the entry and the event are out. */
  purge?: { company: string; deviceId: string; scenarioId: string; version: string; undeployId: string };
  /** Set for an INSTALLED or FAILED report on a deployment a rollout made: the report its wave counts. */
  report?: RolloutReport;
}

const isActive = (slot: DeploymentSlot | undefined): slot is DeploymentSlot => slot !== undefined && slot.undeploy === undefined;

function change(
  slot: DeploymentSlot,
  action: 'DEPLOY' | 'UNDEPLOY',
  id: string,
  at: string,
  by: string,
  note: string | undefined,
  cause: string | null = null,
): DeploymentChange {
  const { company, deviceId, scenarioId, version } = slot;
  return {
    entry: {
      id,
      company,
      deviceId,
      deviceSubId: null,
      targetType: 'DEVICE',
      whatType: 'SCENARIO',
      scenarioId,
      version,
      action,
      state: 'SUCCESS',
      cause,
      at,
      by,
      ...(note === undefined ? {} : { note }),
    },
    event: { type: 'DeploymentChanged', company, deploymentId: id, action, deviceId, scenarioId, version, at, by, note: note ?? null },
  };
}

/** The status report an active slot received, as its history entry and DeploymentStatusChanged event. */
function statusChange(slot: DeploymentSlot & { deviceStatus: NonNullable<DeploymentSlot['deviceStatus']> }): DeploymentChange {
  const { company, deviceId, scenarioId, version, deviceStatus } = slot;
  const by = deviceClientId(company, deviceId);
  const { rollout } = slot;
  const terminal = deviceStatus.state === 'INSTALLED' || deviceStatus.state === 'FAILED';
  return {
    ...(rollout === undefined || !terminal
      ? {}
      : {
          report: {
            company,
            rolloutId: rollout.id,
            wave: rollout.wave,
            deviceId,
            state: deviceStatus.state as RolloutReport['state'],
            at: deviceStatus.updated,
          },
        }),
    entry: {
      kind: 'DEVICE_STATUS',
      id: deviceStatus.id,
      company,
      deviceId,
      deviceSubId: null,
      targetType: 'DEVICE',
      whatType: 'SCENARIO',
      scenarioId,
      version,
      deploymentId: slot.id,
      deviceStatus: { state: deviceStatus.state, ...(deviceStatus.message === undefined ? {} : { message: deviceStatus.message }) },
      at: deviceStatus.updated,
      by,
    },
    event: {
      type: 'DeploymentStatusChanged',
      company,
      statusId: deviceStatus.id,
      deploymentId: slot.id,
      deviceId,
      scenarioId,
      version,
      state: deviceStatus.state,
      message: deviceStatus.message ?? null,
      at: deviceStatus.updated,
      by,
    },
  };
}

/**
 * What identifies an event: a consumer (and the local bus) that sees the same id twice has seen one change. The
 * DEPLOY's or UNDEPLOY's id for DeploymentChanged, the report's id for DeploymentStatusChanged (whose `deploymentId`
 * names the deployment reported on, shared by all its reports), commandEventId for CommandStateChanged.
 */
export function deploymentEventId(event: DeploymentEvent): string {
  if (event.type === 'CommandStateChanged') return commandEventId(event);
  return event.type === 'DeploymentStatusChanged' ? event.statusId : event.deploymentId;
}

/**
 * The change between two images of one slot, or undefined when it is no deployment change: a slot that becomes
 * active (created, or replacing an undeployed one) is a DEPLOY; an active slot that gets its `undeploy` mark is an
 * UNDEPLOY; an active slot whose `deviceStatus.id` changed received a status report; the purge of an undeployed slot
 * changes nothing. Nor does a storage migration moving a slot to another key: the slot created under the new key
 * (no old image, `movedFrom` set) and the deletion of the old key's (no new image).
 */
export function deploymentChangeOf(
  oldImage: DeploymentSlot | undefined,
  newImage: DeploymentSlot | undefined,
): DeploymentChange | undefined {
  if (oldImage === undefined && newImage?.movedFrom !== undefined) return undefined;
  if (isActive(newImage) && !isActive(oldImage)) {
    return change(newImage, 'DEPLOY', newImage.id, newImage.deployedAt, newImage.deployedBy, newImage.note);
  }
  if (isActive(oldImage) && newImage?.undeploy !== undefined) {
    const { id, at, by, note, cause } = newImage.undeploy;
    const derived = change(newImage, 'UNDEPLOY', id, at, by, note, cause ?? null);
    const { company, deviceId, scenarioId, version } = newImage;
    return { ...derived, purge: { company, deviceId, scenarioId, version, undeployId: id } };
  }
  if (
    isActive(oldImage) &&
    isActive(newImage) &&
    newImage.deviceStatus !== undefined &&
    newImage.deviceStatus.id !== oldImage.deviceStatus?.id
  ) {
    return statusChange({ ...newImage, deviceStatus: newImage.deviceStatus });
  }
  return undefined;
}

/** Rollout reports counted at once (each one small transaction). */
const REPORT_CONCURRENCY = 8;

/** Devices whose desired state tag is refreshed at once (each a read, a query and a conditional write). */
const TAG_CONCURRENCY = 16;

/**
 * The devices (company, device id) whose set of active deployments a batch of changes altered (DEPLOY, UNDEPLOY;
 * not status reports), each once, in first-seen order.
 */
export function devicesWithNewDesiredState(changes: readonly DeploymentChange[]): { company: string; deviceId: string }[] {
  const devices = new Map<string, { company: string; deviceId: string }>();
  for (const { event } of changes) {
    if (event.type !== 'DeploymentChanged') continue;
    devices.set(`${event.company}#${event.deviceId}`, { company: event.company, deviceId: event.deviceId });
  }
  return [...devices.values()];
}

/**
 * Applies derived changes: history entries (idempotent puts), then events, then the rollout reports, then the purge
 * of undeployed slots; alongside, the desired state tag of each device whose active deployments changed
 * (refreshDesiredStateTag, once per device per batch: every change of the batch is committed before it runs). Safe
 * to repeat after a failure at any step: the entries are rewritten as they were, repeated events carry the same
 * `deploymentId`, a report counts only the first time its device reports in its rollout, a purge only deletes the
 * slot still marked with that UNDEPLOY, and a tag is recomputed from the deployments as they are.
 * @param dependencies `rollouts` counts the reports on rollout deployments (left out: they are not counted);
 *   `desiredStates` refreshes the devices' tags (left out: not refreshed).
 * @throws the first error of the history store, the bus, the rollout counts, the purge or a tag refresh (once both
 *   have settled); the caller retries the whole batch.
 */
export async function applyDeploymentChanges(
  dependencies: {
    deployments: Pick<DeploymentRepository, 'recordHistory' | 'purgeUndeployed'>;
    events: EventPublisher;
    rollouts?: Pick<RolloutRepository, 'recordReport'>;
    desiredStates?: DesiredStateTagDependencies;
  },
  changes: readonly DeploymentChange[],
): Promise<void> {
  if (changes.length === 0) return;
  const derive = async () => {
    await dependencies.deployments.recordHistory(changes.map((item) => item.entry));
    await dependencies.events.publish(changes.map((item) => item.event));
    const reports = changes.flatMap((item) => (item.report === undefined ? [] : [item.report]));
    const { rollouts } = dependencies;
    if (rollouts !== undefined && reports.length > 0) {
      const limit = pLimit(REPORT_CONCURRENCY);
      await Promise.all(reports.map((report) => limit(() => rollouts.recordReport(report))));
    }
    const purges = changes.flatMap((item) => (item.purge === undefined ? [] : [item.purge]));
    if (purges.length > 0) await dependencies.deployments.purgeUndeployed(purges);
  };
  const tags = async () => {
    const { desiredStates } = dependencies;
    if (desiredStates === undefined) return;
    const limit = pLimit(TAG_CONCURRENCY);
    await Promise.all(
      devicesWithNewDesiredState(changes).map(({ company, deviceId }) =>
        limit(() => refreshDesiredStateTag(desiredStates, company, deviceId)),
      ),
    );
  };
  // Neither waits for the other (the history is what operators read, the tag what devices poll); a failure of either
  // is thrown once both are done, so no work of a batch being retried still runs.
  const settled = await Promise.allSettled([derive(), tags()]);
  for (const outcome of settled) if (outcome.status === 'rejected') throw outcome.reason;
}
