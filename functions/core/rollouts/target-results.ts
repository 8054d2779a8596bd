/**
 * A rollout's targets and why devices failed: each target device with its wave, the deployment result the rollout
 * recorded for it, and the latest status the device reported on the rollout's scenario version.
 *
 * Where it comes from, and why there: the targets are the rollout's chunks (`TARGETS#…` items, 500 sorted device ids
 * each, in wave order), and when the worker has run a chunk it stores, with the chunk's counts, the cause of each
 * device whose deployment was not made (RolloutChunk.failures). So a target's result is read with its id, in the
 * same item: no per-device item, no extra write per device, and no scan of the deployments' history (which keeps a
 * FAILURE entry only best effort, and no entry at all per rollout). The device's reported status is read from its
 * active deployment slot of the version (what the active deployments listing shows), in batches. The devices that
 * joined a continuous rollout follow its chunks, as members of its last wave, by device id, with their recorded result.
 */
import type { COMMAND_NOT_ADVERTISED } from '../commands/commands.js';
import type { DeploymentCause } from '../deployments/deployments.js';
import type { DeviceStatusState } from '../deployments/model.js';
import type { DeviceStatusView } from '../devices/desired-state.js';
import { BadRequestError, NotFoundError } from '../shared/errors.js';
import { ULID_PATTERN } from '../shared/identifiers.js';
import type { ListingCursors, Page } from '../shared/paging.js';
import { authorizeCompany, type Principal } from '../shared/principal.js';
import type { RolloutChunk, RolloutMember, StoredRollout } from './model.js';
import type { RolloutRepository } from './ports.js';
import {
  type AnnotatedTarget,
  type AnnotationReaders,
  annotationMatches,
  annotationsOf,
  checkAnnotationFilters,
  type RolloutTargetCommand,
} from './target-annotations.js';

/**
 * A target's deployment result: SUCCESS or FAILURE (with `cause`) once its chunk has run; PENDING while it has not
 * (its wave has not started or not reached it, or the rollout was paused or cancelled first); UNKNOWN when its chunk
 * ran before per-device outcomes were recorded and did not succeed on every device.
 */
export const TARGET_RESULT_STATES = ['SUCCESS', 'FAILURE', 'PENDING', 'UNKNOWN'] as const;
/** One of TARGET_RESULT_STATES. */
export type TargetResultState = (typeof TARGET_RESULT_STATES)[number];

/** Most chunks (of up to 500 targets) one page reads; a page whose filters keep few targets ends early, with a cursor. */
export const MAX_CHUNKS_PER_TARGET_PAGE = 4;

/** Targets whose statuses (or commands) are read in one go while filtering on them (about one BatchGetItem call). */
const STATUS_BATCH = 100;

/** One target of a rollout, as the targets listing answers it. */
export interface RolloutTargetView {
  deviceId: string;
  /** 1-based index of the wave that deploys (or deployed) to it. */
  wave: number;
  /** The result the rollout recorded for it; `cause` is null but on FAILURE. */
  result: { state: TargetResultState; cause: string | null };
  /** The device's latest report on its active deployment of the rollout's version; absent until it reports one. */
  deviceStatus?: DeviceStatusView;
  /** A COMMAND rollout's: the commands it queued on the target, with their states (empty while none). */
  commands?: RolloutTargetCommand[];
}

/** The filters of the targets listing, each optional (validated by the route), and its paging. */
export interface RolloutTargetsQuery {
  /** 1-based wave. */
  wave?: number | undefined;
  state?: TargetResultState | undefined;
  cause?: DeploymentCause | typeof COMMAND_NOT_ADVERTISED | undefined;
  /** DEPLOY and UNDEPLOY rollouts only. */
  deviceStatus?: DeviceStatusState | undefined;
  /** COMMAND rollouts only: the targets with a command in this state. */
  commandState?: RolloutTargetCommand['state'] | undefined;
  /** Page size, 1 to MAX_LIST_LIMIT. */
  limit: number;
  cursor?: string | undefined;
}

/** What listRolloutTargets needs (`commands` for a COMMAND rollout's). */
export interface RolloutTargetsDependencies extends AnnotationReaders {
  rollouts: Pick<RolloutRepository, 'get' | 'chunk' | 'members'>;
  cursors: ListingCursors;
}

/**
 * A position in the rollout's targets: chunk index and offset in its device ids; past the last chunk (`chunk` = its
 * index + 1), the members of a continuous rollout, after device id `after`.
 */
interface Position {
  chunk: number;
  offset: number;
  after?: string;
}

/** The result recorded for a member: PENDING until its deployment is made. */
function memberResult(member: RolloutMember): RolloutTargetView['result'] {
  if (member.result === undefined) return { state: 'PENDING', cause: null };
  return member.result === 'SUCCESS' ? { state: 'SUCCESS', cause: null } : { state: 'FAILURE', cause: member.result };
}

/** The result of one device of a chunk. */
function targetResult(chunk: RolloutChunk, deviceId: string): RolloutTargetView['result'] {
  if (chunk.done !== true) return { state: 'PENDING', cause: null };
  if (chunk.failures !== undefined) {
    const cause = chunk.failures[deviceId];
    return cause === undefined ? { state: 'SUCCESS', cause: null } : { state: 'FAILURE', cause };
  }
  // Done before `failures` was recorded: only a chunk whose every deployment succeeded says which result each had.
  const results = chunk.results ?? {};
  const allSucceeded = Object.entries(results).every(([cause, count]) => cause === 'SUCCESS' || count === 0);
  return allSucceeded ? { state: 'SUCCESS', cause: null } : { state: 'UNKNOWN', cause: null };
}

/** The listing a cursor is bound to: name, company, rollout and every filter, so that it continues only this one. */
function listing(companyId: string, rolloutId: string, query: RolloutTargetsQuery): string {
  return JSON.stringify([
    'rollout-targets',
    companyId,
    rolloutId,
    query.wave ?? null,
    query.state ?? null,
    query.cause ?? null,
    query.deviceStatus ?? null,
    // Appended so that a cursor issued before this filter existed still continues its listing.
    ...(query.commandState === undefined ? [] : [query.commandState]),
  ]);
}

/** The one 400 for a cursor whose position does not fit the rollout (it was signed, so it was not issued for it). */
function cursorMismatch(): BadRequestError {
  return new BadRequestError(
    "'cursor' is not a cursor this listing issued. Pass the 'nextCursor' of the previous page unchanged, with the same " +
      'filters, or start over without cursor.',
    [{ path: 'cursor', message: 'unknown, altered or issued for another listing' }],
  );
}

/**
 * A page of a rollout's targets in wave order (then device id), each with its wave (1-based), its result and the
 * device's latest reported status on the rollout's version, filtered by each filter given (AND-ed).
 *
 * A page reads at most MAX_CHUNKS_PER_TARGET_PAGE chunks (2,000 targets) and the statuses of the targets it looks at
 * (batched, 100 a call); when filters leave fewer than `limit` targets in them, the page ends early (possibly empty)
 * with a cursor. `nextCursor` is null once the last target (of the wave, with `wave`) has been looked at.
 * @throws ForbiddenError for a company outside the token.
 * @throws NotFoundError when the company has no such rollout.
 * @throws BadRequestError when `wave` is beyond the rollout's waves, or on a cursor not issued for this listing
 *   (company, rollout and filters).
 */
export async function listRolloutTargets(
  deps: RolloutTargetsDependencies,
  principal: Principal,
  companyId: string,
  rolloutId: string,
  query: RolloutTargetsQuery,
): Promise<Page<RolloutTargetView>> {
  authorizeCompany(principal, companyId);
  const rollout = ULID_PATTERN.test(rolloutId) ? await deps.rollouts.get(companyId, rolloutId) : undefined;
  if (rollout === undefined) throw new NotFoundError(`Rollout '${rolloutId}' does not exist in company '${companyId}'.`);
  checkAnnotationFilters(rollout, query);
  const [first, last] = chunkRange(rollout, query.wave);
  // A continuous rollout's members come after its chunks, with the last wave (or every wave).
  const withMembers = rollout.continuous !== undefined && (query.wave === undefined || query.wave === rollout.waves.length);
  const end = withMembers ? last + 1 : last;
  const bound = listing(companyId, rollout.id, query);
  let position: Position = { chunk: first, offset: 0 };
  if (query.cursor !== undefined) position = decodePosition(deps.cursors.decode(bound, query.cursor), first, end);

  const items: RolloutTargetView[] = [];
  let chunksRead = 0;
  while (position.chunk <= last && items.length < query.limit && chunksRead < MAX_CHUNKS_PER_TARGET_PAGE) {
    const chunk = await deps.rollouts.chunk(companyId, rollout.id, position.chunk);
    chunksRead += 1;
    // A chunk written by create always exists; a missing one (a create that crashed midway has no rollout item) is
    // simply skipped.
    const offset = chunk === undefined ? 0 : await listChunkTargets(deps, rollout, query, chunk, position.offset, items);
    position = offset < (chunk?.deviceIds.length ?? 0) ? { chunk: position.chunk, offset } : { chunk: position.chunk + 1, offset: 0 };
  }
  if (withMembers && position.chunk === end && chunksRead < MAX_CHUNKS_PER_TARGET_PAGE && items.length < query.limit) {
    position = await listMembers(deps, rollout, query, items, position, MAX_CHUNKS_PER_TARGET_PAGE - chunksRead);
  }
  const nextCursor =
    position.chunk <= end
      ? deps.cursors.encode(bound, {
          c: position.chunk,
          o: position.offset,
          ...(position.after === undefined ? {} : { a: position.after }),
        })
      : null;
  return { items, nextCursor };
}

/**
 * Adds to `items` the targets of `chunk` from `offset` on that pass the filters, until the page is full or the chunk
 * ends. @returns the offset the next page starts at (the chunk's length once it is all looked at).
 */
async function listChunkTargets(
  deps: RolloutTargetsDependencies,
  rollout: StoredRollout,
  query: RolloutTargetsQuery,
  chunk: RolloutChunk,
  offset: number,
  items: RolloutTargetView[],
): Promise<number> {
  let next = offset;
  while (next < chunk.deviceIds.length && items.length < query.limit) {
    // Without a filter on them every candidate goes on the page: annotate only as many as the page still takes.
    const take = filtersAnnotations(query) ? STATUS_BATCH : query.limit - items.length;
    const start = next;
    const slice = chunk.deviceIds.slice(start, start + take);
    const candidates = slice
      .map((deviceId, index) => ({
        deviceId,
        index: start + index,
        wave: chunk.wave,
        result: targetResult(chunk, deviceId),
        commandIds: chunk.commands?.[deviceId],
      }))
      .filter(({ result }) => matchesResult(result, query));
    next += slice.length;
    const full = await addAnnotated(deps, rollout, query, candidates, items);
    if (full !== undefined) return full.index + 1;
  }
  return next;
}

/** Whether the query filters on what annotationsOf reads: then candidates are annotated before they are kept. */
function filtersAnnotations(query: RolloutTargetsQuery): boolean {
  return query.deviceStatus !== undefined || query.commandState !== undefined;
}

/**
 * Annotates `candidates` (annotationsOf) and adds to `items` those that pass the annotation filters, in order, until
 * the page is full. @returns the candidate that filled the page, or undefined when it is not full.
 */
async function addAnnotated<Candidate extends AnnotatedTarget & { wave: number; result: RolloutTargetView['result'] }>(
  deps: RolloutTargetsDependencies,
  rollout: StoredRollout,
  query: RolloutTargetsQuery,
  candidates: readonly Candidate[],
  items: RolloutTargetView[],
): Promise<Candidate | undefined> {
  const annotations = await annotationsOf(deps, rollout, candidates);
  for (const candidate of candidates) {
    const annotation = annotations.get(candidate.deviceId);
    if (!annotationMatches(annotation, query)) continue;
    items.push({
      deviceId: candidate.deviceId,
      wave: candidate.wave + 1,
      result: candidate.result,
      ...(annotation?.deviceStatus === undefined ? {} : { deviceStatus: annotation.deviceStatus }),
      ...(rollout.action === 'COMMAND' ? { commands: annotation?.commands ?? [] } : {}),
    });
    if (items.length === query.limit) return candidate;
  }
  return undefined;
}

/** Members read per Query: as many as a chunk holds. */
const MEMBER_BATCH = 500;

/**
 * Adds to `items` the members after `position.after` that pass the filters, until the page is full or `reads`
 * Queries are done. @returns where the next page starts: after the last member looked at, or past the end.
 */
async function listMembers(
  deps: RolloutTargetsDependencies,
  rollout: StoredRollout,
  query: RolloutTargetsQuery,
  items: RolloutTargetView[],
  position: Position,
  reads: number,
): Promise<Position> {
  let after = position.after;
  for (let read = 0; read < reads && items.length < query.limit; read += 1) {
    const page = await deps.rollouts.members(rollout.company, rollout.id, after, MEMBER_BATCH);
    const candidates = page.items
      .map((member) => ({ deviceId: member.deviceId, wave: member.wave, result: memberResult(member), commandIds: member.commands }))
      .filter(({ result }) => matchesResult(result, query));
    let full = false;
    for (let start = 0; start < candidates.length && !full; start += STATUS_BATCH) {
      const filled = await addAnnotated(deps, rollout, query, candidates.slice(start, start + STATUS_BATCH), items);
      if (filled !== undefined) {
        after = filled.deviceId;
        full = true;
      }
    }
    if (full) return { chunk: position.chunk, offset: 0, after: after as string };
    after = page.items.at(-1)?.deviceId ?? after;
    if (!page.more) return { chunk: position.chunk + 1, offset: 0 };
  }
  return { chunk: position.chunk, offset: 0, ...(after === undefined ? {} : { after }) };
}

/** Whether a result passes the `state` and `cause` filters. */
function matchesResult(result: RolloutTargetView['result'], query: RolloutTargetsQuery): boolean {
  if (query.state !== undefined && result.state !== query.state) return false;
  return query.cause === undefined || result.cause === query.cause;
}

/**
 * The first and last chunk of the listing: the wave's with `wave`, else every chunk.
 * @throws BadRequestError when the rollout has fewer waves than `wave`.
 */
function chunkRange(rollout: StoredRollout, wave: number | undefined): [number, number] {
  if (wave === undefined) return [0, (rollout.waves.at(-1)?.chunks[1] ?? -1) as number];
  const stored = rollout.waves[wave - 1];
  if (stored === undefined) {
    const count = rollout.waves.length;
    throw new BadRequestError(`Rollout '${rollout.id}' has ${count} wave${count === 1 ? '' : 's'}: 'wave' must be 1 to ${count}.`, [
      { path: 'wave', message: `must be 1 to ${count}; got ${wave}` },
    ]);
  }
  return stored.chunks;
}

/**
 * A decoded cursor's position, checked to lie in the listing's chunks (or, `a` the last member looked at, in the
 * members that follow them). @throws BadRequestError otherwise.
 */
function decodePosition(key: Record<string, unknown>, first: number, last: number): Position {
  const { c, o, a } = key;
  const valid =
    Object.keys(key).length === (a === undefined ? 2 : 3) &&
    (a === undefined || (typeof a === 'string' && a !== '' && c === last)) &&
    Number.isInteger(c) &&
    Number.isInteger(o) &&
    (c as number) >= first &&
    (c as number) <= last &&
    (o as number) >= 0;
  if (!valid) throw cursorMismatch();
  return { chunk: c as number, offset: o as number, ...(typeof a === 'string' ? { after: a } : {}) };
}
