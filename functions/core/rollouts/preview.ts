/**
 * A rollout's dry run (`POST …/rollouts?dryRun=true`): what creating it would do, without writing anything. The
 * targets are resolved and the request checked as a create checks them (the same 400, 403 and 422); for a COMMAND
 * rollout, each target's latest health report is read, as the worker will read it when its chunk runs, to count the
 * targets that advertise the command (and will get it), those that do not (FAILURE COMMAND_NOT_ADVERTISED), and the
 * commands it would queue by sub-device type. A preview, not a promise: a health report between the dry run and the
 * chunk's run changes what the chunk finds.
 */
import pLimit from 'p-limit';
import type { StoredDevice } from '../devices/model.js';
import { authorizeCompany, type Principal } from '../shared/principal.js';
import { checkCreateInput, checkTargetCount, planWaves, scheduledStart, subjectOf } from './create.js';
import type { RolloutAction, RolloutCreateInput } from './model.js';
import type { RolloutDependencies, TargetHealthReader } from './ports.js';

/** Targets whose health one read of the preview asks for (five BatchGetItem calls), and such reads at once. */
const PREVIEW_SLICE = 500;
const PREVIEW_CONCURRENCY = 4;

/** What a COMMAND rollout would do on its targets, as their latest health reports say now. */
export interface CommandPreview {
  /** Targets with at least one sub-device advertising the command: each would get it (SUCCESS). */
  advertising: number;
  /** Targets that exist and advertise it nowhere: each would be a FAILURE with cause COMMAND_NOT_ADVERTISED. */
  notAdvertising: number;
  /** Listed ids no device of the company has (or being deleted): each would be a FAILURE with cause TARGET_NOT_FOUND. */
  notFound: number;
  /** Commands it would queue: one per advertising sub-device. */
  commands: number;
  /** Those commands by the sub-device's `capability.type` (e.g. `{ PRINTER: 12, SCANNER: 3 }`). */
  bySubDeviceType: Record<string, number>;
}

/** A rollout's dry run: what it would target, in which waves, and (COMMAND) what its targets advertise. */
export interface RolloutPreview {
  dryRun: true;
  action: RolloutAction;
  /** How many devices the targets resolve to now. */
  targets: number;
  /** The sizes of the waves it would run, in order. */
  waves: number[];
  /** COMMAND only. */
  command?: CommandPreview;
}

/**
 * What creating the rollout would do, without writing or sending anything.
 * @param targetIds the resolved targets (resolveRolloutTargets), as for createRollout.
 * @throws as createRollout does for the same input (ForbiddenError, BadRequestError, UnprocessableRequestError), and
 *   Error on a backend failure reading the targets' health.
 */
export async function previewRollout(
  deps: Pick<RolloutDependencies, 'scenarios' | 'now'> & { targetHealth: TargetHealthReader },
  principal: Principal,
  companyId: string,
  input: RolloutCreateInput,
  targetIds: readonly string[],
): Promise<RolloutPreview> {
  authorizeCompany(principal, companyId);
  checkCreateInput(input);
  checkTargetCount(targetIds.length, input.continuous === true);
  const subject = await subjectOf(deps, principal, companyId, input);
  if (input.startAt !== undefined) scheduledStart(input.startAt, deps.now?.() ?? new Date());
  const preview: RolloutPreview = {
    dryRun: true,
    action: input.action,
    targets: targetIds.length,
    waves: planWaves(targetIds.length, input.waves),
  };
  if (subject.command === undefined) return preview;
  return { ...preview, command: await commandPreview(deps.targetHealth, companyId, targetIds, subject.command.command) };
}

/** Reads the targets' health in slices, a few at once, and counts what they advertise of `command`. */
async function commandPreview(
  health: TargetHealthReader,
  companyId: string,
  targetIds: readonly string[],
  command: string,
): Promise<CommandPreview> {
  const counts: CommandPreview = { advertising: 0, notAdvertising: 0, notFound: 0, commands: 0, bySubDeviceType: {} };
  const limit = pLimit(PREVIEW_CONCURRENCY);
  const slices: (readonly string[])[] = [];
  for (let start = 0; start < targetIds.length; start += PREVIEW_SLICE) slices.push(targetIds.slice(start, start + PREVIEW_SLICE));
  await Promise.all(
    slices.map((ids) =>
      limit(async () => {
        const found = await health.healthOf(companyId, ids);
        for (const id of ids) countTarget(counts, found.get(id), command);
      }),
    ),
  );
  return counts;
}

/** Adds one target to the counts: absent, advertising nowhere, or each sub-device advertising `command` by its type. */
function countTarget(counts: CommandPreview, device: Pick<StoredDevice, 'health'> | undefined, command: string): void {
  if (device === undefined) {
    counts.notFound += 1;
    return;
  }
  // By hub and sub-device uid, as the worker queues them: a sub-device a report names twice gets one command.
  const advertising = new Map(
    (device.health?.hubs ?? []).flatMap((hub) =>
      hub.devices
        .filter((sub) => sub.commands.some((advertised) => advertised.command === command))
        .map((sub) => [JSON.stringify([hub.uid, sub.uid]), sub.capability.type] as const),
    ),
  );
  const types = [...advertising.values()];
  if (types.length === 0) counts.notAdvertising += 1;
  else counts.advertising += 1;
  counts.commands += types.length;
  for (const type of types) counts.bySubDeviceType[type] = (counts.bySubDeviceType[type] ?? 0) + 1;
}
