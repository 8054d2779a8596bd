/**
 * Continuous rollouts (docs/rollouts.md, "Continuous rollouts"): a device of the company that starts matching a
 * continuous rollout's query after its creation (registered later, or changed into the query) joins it and gets its
 * deployment, counted in the last wave, while the rollout is RUNNING. Driven by the devices table's stream: each
 * changed device is matched in memory against the company's running continuous rollouts (one index query per company
 * per batch of changes), never by a search over the fleet.
 *
 * Exactly once, whatever crashes or redeliveries happen: joining is one transaction (the rollout still RUNNING, the
 * member record written only if absent, the joined count added); the deployment (a COMMAND rollout's commands) is then
 * made with a deterministic id at the member's join time, so that making it again finds it made; its result is
 * recorded once, with its count.
 */
import type { CommandRepository } from '../commands/ports.js';
import { type DeploymentDependencies, executeDeployments } from '../deployments/deployments.js';
import type { DeviceDocument } from '../search/documents.js';
import { deviceDocumentOf, documentMatches } from '../search/documents.js';
import { cancelQueued, queueRolloutCommands } from './command-work.js';
import { rolloutDeploymentId } from './derived-ids.js';
import type { RolloutMember, StoredRollout } from './model.js';
import type { RolloutRepository } from './ports.js';

/**
 * What joinContinuousRollouts needs: the rollouts and what the deployment use case needs (`now`: the join time); for
 * COMMAND rollouts, the commands too (a member of one throws without them).
 */
export type ContinuousRolloutDependencies = DeploymentDependencies & {
  rollouts: Pick<RolloutRepository, 'continuousOf' | 'get' | 'member' | 'join' | 'recordJoinResult' | 'chunk'>;
  commands?: Pick<CommandRepository, 'createEach' | 'transition'>;
};

/**
 * A change could not be finished (a backend error): `change` is its index in the changes given, the changes before it
 * are complete; `cause` is the error. Handling the changes again from `change` finishes the work.
 */
export class ContinuousJoinIncompleteError extends Error {
  constructor(
    readonly change: number,
    override readonly cause: unknown,
  ) {
    super(`Change ${change} could not be finished: ${(cause as Error)?.message ?? String(cause)}`);
    this.name = new.target.name;
  }
}

/** What happened to one changed device for one continuous rollout of its company. */
export type JoinOutcome =
  /** It joined now and its deployment was made (`result`: SUCCESS or the cause). */
  | 'joined'
  /** It had joined before: nothing done (a redelivered record, or a later change). */
  | 'member'
  /** It is one of the targets resolved at creation: the waves deploy it. */
  | 'target'
  /**
   * The change matched, but the device as it is now does not (it changed since, or was deleted): the record was older
   * than the device (a consumer behind, or replaying). It did not join; a later change that matches joins it.
   */
  | 'stale'
  /**
   * The rollout stopped running meanwhile (paused, cancelled): it did not join, or it had joined but the deployment an
   * earlier run left unfinished is not made (until the rollout runs again and the device changes again).
   */
  | 'ended';

/** One changed device: its document after the change. */
export interface DeviceChange {
  device: DeviceDocument;
}

/** Devices handled, by rollout and outcome: `{ joined: [`rolloutId/deviceId`], … }`; devices that matched nothing are not listed. */
export type ContinuousJoinResult = Record<JoinOutcome, string[]>;

/**
 * Chunk device ids already read, by `company#rolloutId#index`: a chunk's ids never change, so a warm function reads
 * each chunk once. Bounded so that a long-lived process does not keep every chunk of every rollout.
 */
const chunkCache = new Map<string, readonly string[]>();
const CHUNK_CACHE_ENTRIES = 400;

/**
 * Joins each changed device to every RUNNING continuous rollout of its company whose query it matches, unless it is
 * one of the rollout's own targets, joined before, or no longer matches as it is now (one read of the device, only
 * for a device about to join); makes the deployment of each device that joined (in the rollout
 * creator's name, with its note, tagged with the last wave so that its reports count there) and records its result.
 * Changes are handled in order; the time a device joins (`deps.now`) is its deployment's instant.
 * @throws ContinuousJoinIncompleteError naming the first change not finished (a backend failure reading the rollouts,
 *   joining, or deploying: a deployment that met a backend error is not recorded); handling the changes again from
 *   there is safe and finishes what was left.
 */
export async function joinContinuousRollouts(
  deps: ContinuousRolloutDependencies,
  changes: readonly DeviceChange[],
): Promise<ContinuousJoinResult> {
  const result: ContinuousJoinResult = { joined: [], member: [], target: [], stale: [], ended: [] };
  const byCompany = new Map<string, StoredRollout[]>();
  for (const [index, { device }] of changes.entries()) {
    try {
      let rollouts = byCompany.get(device.company);
      if (rollouts === undefined) {
        rollouts = await deps.rollouts.continuousOf(device.company);
        byCompany.set(device.company, rollouts);
      }
      for (const rollout of rollouts) {
        if (rollout.continuous === undefined || !documentMatches(device, rollout.continuous.filters)) continue;
        const outcome = await joinOne(deps, rollout, device.id, (deps.now?.() ?? new Date()).toISOString());
        result[outcome].push(`${rollout.id}/${device.id}`);
      }
    } catch (error) {
      throw new ContinuousJoinIncompleteError(index, error);
    }
  }
  return result;
}

/** One device and one continuous rollout it matches (joinContinuousRollouts). */
async function joinOne(deps: ContinuousRolloutDependencies, rollout: StoredRollout, deviceId: string, now: string): Promise<JoinOutcome> {
  const existing = await deps.rollouts.member(rollout.company, rollout.id, deviceId);
  if (existing?.result !== undefined) return 'member';
  let member = existing;
  if (member === undefined) {
    if (await isTarget(deps, rollout, deviceId)) return 'target';
    if (!(await matchesNow(deps, rollout, deviceId))) return 'stale';
    const candidate: RolloutMember = { deviceId, wave: rollout.waves.length - 1, at: now };
    const joined = await deps.rollouts.join(rollout.company, rollout.id, candidate);
    if (joined === 'ended') return 'ended';
    // Another consumer run joined it first: finish its deployment with its own time (the same deployment id).
    member = joined === 'joined' ? candidate : await deps.rollouts.member(rollout.company, rollout.id, deviceId);
    if (member === undefined) throw new Error(`Member ${deviceId} of rollout ${rollout.id} vanished after joining.`);
    if (member.result !== undefined) return 'member';
  } else if ((await deps.rollouts.get(rollout.company, rollout.id))?.state !== 'RUNNING') {
    // A deployment an earlier run left unfinished (a backend error, a crash): the list read may be stale, and a paused
    // or cancelled rollout deploys nothing more.
    return 'ended';
  }
  if (rollout.action === 'COMMAND') await commandMember(deps, rollout, member);
  else await deployMember(deps, rollout, member);
  return 'joined';
}

/**
 * Queues a COMMAND rollout's commands on a member (ids derived from its join time: queued again, they are found
 * written) and records its result once, with the commands' ids; a rollout cancelled meanwhile has them cancelled at
 * once, since the cancel's work may have read the members before this one's result.
 * @throws Error when a write met a backend error (NONE): nothing is recorded, the next run queues them.
 */
async function commandMember(deps: ContinuousRolloutDependencies, rollout: StoredRollout, member: RolloutMember): Promise<void> {
  const { commands } = deps;
  if (commands === undefined) throw new Error('A COMMAND rollout needs the commands.');
  // The device as it is now (strongly consistent): a device registered a moment ago is found.
  const device = await deps.devices.get(rollout.company, member.deviceId);
  const health = new Map(device === undefined || device.deleting === true ? [] : [[member.deviceId, device]]);
  const queued = await queueRolloutCommands({ ...deps, commands }, rollout, member.wave, [member.deviceId], health, member.at);
  const cause = queued.failures[member.deviceId] ?? 'SUCCESS';
  if (cause === 'NONE') {
    throw new Error(`A command of rollout ${rollout.id} on device ${member.deviceId} met a backend error; it is queued again.`);
  }
  const ids = queued.commands[member.deviceId] ?? [];
  await deps.rollouts.recordJoinResult(rollout.company, rollout.id, { ...member, result: cause, commands: ids });
  if (ids.length > 0 && (await deps.rollouts.get(rollout.company, rollout.id))?.state === 'CANCELLED') {
    await cancelQueued({ ...deps, commands }, rollout.company, { [member.deviceId]: ids });
  }
}

/**
 * Makes a member's deployment (deterministic id at its join time: made again, it reports SUCCESS, not
 * ALREADY_DEPLOYED) and records its result once.
 * @throws Error when the deployment met a backend error (cause NONE): nothing is recorded, the next run makes it.
 */
async function deployMember(deps: ContinuousRolloutDependencies, rollout: StoredRollout, member: RolloutMember): Promise<void> {
  const { items } = await executeDeployments(
    deps,
    { subject: rollout.createdBy, companies: [rollout.company], scopes: new Set(['deployments:write']) },
    rollout.company,
    {
      requests: [
        {
          target: { type: 'DEVICE', id: member.deviceId, subId: null },
          what: rollout.what as NonNullable<StoredRollout['what']>,
          action: rollout.action as 'DEPLOY' | 'UNDEPLOY',
        },
      ],
      ...(rollout.note === undefined ? {} : { note: rollout.note }),
    },
    {
      at: member.at,
      ids: [rolloutDeploymentId(rollout.id, member.deviceId, member.at)],
      rollout: { id: rollout.id, wave: member.wave },
    },
  );
  const cause = items[0]?.cause ?? null;
  if (cause === 'NONE') {
    throw new Error(`The deployment of rollout ${rollout.id} on device ${member.deviceId} met a backend error; it is made again.`);
  }
  await deps.rollouts.recordJoinResult(rollout.company, rollout.id, { ...member, result: cause ?? 'SUCCESS' });
}

/**
 * Whether `deviceId` is one of the targets the rollout resolved at creation: the one chunk that could hold it is
 * found from the chunks' first ids (targets are sorted by id across chunks), then read (cached: chunks never change).
 */
async function isTarget(deps: ContinuousRolloutDependencies, rollout: StoredRollout, deviceId: string): Promise<boolean> {
  // The chunk that could hold it: the last whose first id is at or before it.
  const index = atOrBefore(rollout.continuous?.chunkFirstIds ?? [], deviceId) - 1;
  if (index < 0) return false;
  const key = `${rollout.company}#${rollout.id}#${index}`;
  let ids = chunkCache.get(key);
  if (ids === undefined) {
    ids = (await deps.rollouts.chunk(rollout.company, rollout.id, index))?.deviceIds ?? [];
    if (chunkCache.size >= CHUNK_CACHE_ENTRIES) chunkCache.delete(chunkCache.keys().next().value as string);
    chunkCache.set(key, ids);
  }
  const position = atOrBefore(ids, deviceId);
  return position > 0 && ids[position - 1] === deviceId;
}

/**
 * Whether the device, as it is now (a strongly consistent read), exists and matches the rollout's query: a stream record
 * handled late (a backlog, a batch retried for a while, a replay) may show a state the device has left since, and a
 * device that matched only before the rollout was created, then stopped matching, is neither a target nor a joiner.
 */
async function matchesNow(deps: ContinuousRolloutDependencies, rollout: StoredRollout, deviceId: string): Promise<boolean> {
  const current = await deps.devices.get(rollout.company, deviceId);
  return (
    current !== undefined && current.deleting !== true && documentMatches(deviceDocumentOf(current), rollout.continuous?.filters ?? {})
  );
}

/** How many of the sorted `ids` are at or before `id` (JavaScript's string order, the order the targets are sorted in). */
function atOrBefore(ids: readonly string[], id: string): number {
  let low = 0;
  let high = ids.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((ids[middle] as string) <= id) low = middle + 1;
    else high = middle;
  }
  return low;
}
