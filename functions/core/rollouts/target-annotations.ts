/**
 * What the targets listing shows of each target beside its result, read in batches for the targets of a page: the
 * device's latest report on the rollout's scenario version (DEPLOY, UNDEPLOY), or the states of the commands a
 * COMMAND rollout queued on it; and the filters on them (`deviceStatus`, `commandState`).
 */
import type { CommandState } from '../commands/model.js';
import { commandSubId } from '../commands/model.js';
import type { CommandRepository } from '../commands/ports.js';
import type { DeviceStatusState } from '../deployments/model.js';
import { type DeviceStatusView, deviceStatusView } from '../devices/desired-state.js';
import { BadRequestError } from '../shared/errors.js';
import type { StoredRollout } from './model.js';
import type { TargetStatusReader } from './ports.js';

/** One command a COMMAND rollout queued on a target, as the targets listing shows it. */
export interface RolloutTargetCommand {
  /** The command's id (`GET …/devices/{deviceId}/commands/{id}`). */
  id: string;
  /** `{hub uid}/{sub-device uid}`: the sub-device it runs on. */
  subId: string;
  state: CommandState;
  /** ISO-8601: its last change of state. */
  updated: string;
  /** The device's message with its result, when it gave one. */
  message?: string;
}

/** What the listing shows of a target beside its result. */
export interface TargetAnnotation {
  /** DEPLOY, UNDEPLOY: the device's latest report on its active deployment of the version, once it reported one. */
  deviceStatus?: DeviceStatusView;
  /** COMMAND: the commands queued on it, in the order the rollout queued them (empty while none). */
  commands?: RolloutTargetCommand[];
}

/** One target of a page to annotate: its device, and the ids of the commands a COMMAND rollout queued on it. */
export interface AnnotatedTarget {
  deviceId: string;
  commandIds?: readonly string[] | undefined;
}

/** The readers the annotations need. */
export interface AnnotationReaders {
  statuses: TargetStatusReader;
  /** Needed for COMMAND rollouts only. */
  commands?: Pick<CommandRepository, 'getMany'>;
}

/** The filters on the annotations (validated by the route). */
export interface AnnotationFilters {
  deviceStatus?: DeviceStatusState | undefined;
  commandState?: CommandState | undefined;
}

/**
 * Refuses a filter that does not apply to the rollout's action: `deviceStatus` to a COMMAND rollout (it deploys no
 * version to report on), `commandState` to the others. @throws BadRequestError naming it.
 */
export function checkAnnotationFilters(rollout: StoredRollout, filters: AnnotationFilters): void {
  const command = rollout.action === 'COMMAND';
  const wrong = command
    ? filters.deviceStatus === undefined
      ? undefined
      : 'deviceStatus'
    : filters.commandState === undefined
      ? undefined
      : 'commandState';
  if (wrong === undefined) return;
  const instead = command ? "filter with 'commandState' (the states of its commands)" : "filter with 'deviceStatus' (the devices' reports)";
  throw new BadRequestError(`Rollout '${rollout.id}' is a ${rollout.action} rollout: '${wrong}' does not apply to it; ${instead}.`, [
    { path: wrong, message: `does not apply to a ${rollout.action} rollout` },
  ]);
}

/** Whether a target's annotation passes the filters (a filter given and nothing to match: it does not). */
export function annotationMatches(annotation: TargetAnnotation | undefined, filters: AnnotationFilters): boolean {
  if (filters.deviceStatus !== undefined && annotation?.deviceStatus?.state !== filters.deviceStatus) return false;
  return filters.commandState === undefined || (annotation?.commands ?? []).some((command) => command.state === filters.commandState);
}

/**
 * The annotations of `targets` by device id: the devices' reported statuses on the rollout's version (a device
 * without one is absent), or the states of their commands (one BatchGetItem per 100 commands; a command the table no
 * longer has is left out). @throws Error on a backend failure, or for a COMMAND rollout without `readers.commands`.
 */
export async function annotationsOf(
  readers: AnnotationReaders,
  rollout: StoredRollout,
  targets: readonly AnnotatedTarget[],
): Promise<Map<string, TargetAnnotation>> {
  if (targets.length === 0) return new Map();
  if (rollout.action !== 'COMMAND') {
    const what = rollout.what as NonNullable<StoredRollout['what']>;
    const statuses = await readers.statuses.deviceStatuses(
      rollout.company,
      what.id,
      what.subId,
      targets.map(({ deviceId }) => deviceId),
    );
    return new Map([...statuses].map(([deviceId, status]) => [deviceId, { deviceStatus: deviceStatusView(status) }]));
  }
  if (readers.commands === undefined) throw new Error('The targets of a COMMAND rollout need the commands.');
  const keys = targets.flatMap(({ deviceId, commandIds }) => (commandIds ?? []).map((commandId) => ({ deviceId, commandId })));
  const found = new Map(
    (keys.length === 0 ? [] : await readers.commands.getMany(rollout.company, keys)).map((command) => [command.id, command]),
  );
  return new Map(
    targets.map(({ deviceId, commandIds }) => [
      deviceId,
      {
        commands: (commandIds ?? []).flatMap((id) => {
          const command = found.get(id);
          if (command === undefined) return [];
          const message = command.result?.message;
          return [
            {
              id,
              subId: commandSubId(command),
              state: command.state,
              updated: command.updated,
              ...(message === undefined ? {} : { message }),
            },
          ];
        }),
      },
    ]),
  );
}
