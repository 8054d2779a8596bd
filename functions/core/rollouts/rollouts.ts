/**
 * Rollouts: one scenario version deployed (or undeployed) on a fleet of devices, wave after wave (docs/contract.md,
 * "Rollouts"). The targets are resolved once, at creation, and stored in chunks of ROLLOUT_CHUNK_SIZE devices; each
 * chunk is one work message that the worker (runRolloutChunk) runs through the ordinary deployment use case; the
 * sweeper (sweepRollouts) starts waves, completes them on the devices' reports or their timeout, pauses the rollout
 * when too many devices failed, and sends again the work of messages that were lost. A rollout created with `startAt`
 * waits SCHEDULED, deploying nothing, until the sweeper starts it.
 *
 * Everything is idempotent and crash-safe: the state lives in the rollouts table (every state write is one write
 * conditioned on the rollout's `version`), a chunk run twice writes the very same deployments (deterministic ids, the
 * wave's start as their instant) and counts its results once, and a device's report counts once per rollout.
 */
import { createHash } from 'node:crypto';
import pLimit from 'p-limit';
import { encodeTime, ulid } from 'ulid';
import * as z from 'zod';
import { type DeploymentDependencies, type DeploymentResultItem, executeDeployments } from '../deployments/deployments.js';
import type { ScenarioRepository } from '../scenarios/ports.js';
import { BadRequestError, ConflictError, NotFoundError, UnprocessableRequestError } from '../shared/errors.js';
import { ULID_ALPHABET, ULID_PATTERN } from '../shared/identifiers.js';
import type { ListParameters, Page } from '../shared/paging.js';
import { authorizeCompany, type Principal } from '../shared/principal.js';
import {
  DEFAULT_FAILURE_THRESHOLD,
  DEFAULT_WAVE_TIMEOUT_SECONDS,
  MAX_ROLLOUT_SCHEDULE_DAYS,
  MAX_ROLLOUT_TARGETS,
  MAX_ROLLOUT_WAVES,
  MAX_WAVE_TIMEOUT_SECONDS,
  MIN_WAVE_TIMEOUT_SECONDS,
  ROLLOUT_CHUNK_SIZE,
  ROLLOUT_EVENTS_FIRST,
  ROLLOUT_EVENTS_NEWEST,
  type RolloutChunk,
  type RolloutCreateInput,
  type RolloutEvent,
  type RolloutView,
  type RolloutWaveTally,
  type RolloutWaveView,
  type RolloutWorkMessage,
  type StoredRollout,
  type StoredRolloutWave,
} from './model.js';
import type { RolloutRepository, WorkQueue } from './ports.js';

/** What the rollout use cases need. */
export interface RolloutDependencies {
  rollouts: RolloutRepository;
  queue: WorkQueue;
  scenarios: Pick<ScenarioRepository, 'existingVersions'>;
  /** Current time; injectable for tests. */
  now?: () => Date;
  /**
   * Called with an error the use case survives: sending work at creation or resumption (the sweeper sends it again
   * once ROLLOUT_CHUNK_TIMEOUT_SECONDS have passed).
   */
  onError?: (error: unknown, context: Record<string, unknown>) => void;
}

/** Attempts of a read-modify-write of the rollout item (pause, resume, cancel) racing the sweeper. */
const STATE_WRITE_ATTEMPTS = 5;

/** Rollouts whose tallies a listing reads at once. */
const LIST_TALLY_CONCURRENCY = 8;

/** The zod schema of a work message body (RolloutWorkMessage): the worker drops anything else. */
export const RolloutWorkMessageSchema = z.object({
  type: z.literal('RolloutChunk'),
  company: z.string().min(1).max(128),
  rolloutId: z.string().regex(ULID_PATTERN),
  wave: z.number().int().min(0).max(MAX_ROLLOUT_WAVES),
  chunk: z.number().int().min(0).max(999_999),
}) satisfies z.ZodType<RolloutWorkMessage>;

/**
 * The id of the deployment a rollout makes on a device: a ULID whose time part is the wave's start (`startedAt`,
 * ISO-8601) and whose 80 random bits are the first 10 bytes of sha256(rolloutId + deviceId). A chunk run again gets
 * the same ids, so a DEPLOY whose write was already made finds its own id stored and reports SUCCESS.
 */
export function rolloutDeploymentId(rolloutId: string, deviceId: string, startedAt: string): string {
  const digest = createHash('sha256')
    .update(rolloutId + deviceId)
    .digest();
  let random = '';
  let value = 0;
  let bits = 0;
  for (const byte of digest.subarray(0, 10)) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      random += ULID_ALPHABET[(value >> bits) & 31];
    }
    value &= (1 << bits) - 1;
  }
  return encodeTime(Date.parse(startedAt), 10) + random;
}

/**
 * The wave sizes of `targets` devices: the sizes asked for, in order, each trimmed to the devices left, then the rest
 * as the last wave; empty waves are dropped. Without sizes, one wave of every target.
 */
export function planWaves(targets: number, sizes: readonly number[] = []): number[] {
  const waves: number[] = [];
  let remaining = targets;
  for (const size of sizes) {
    const take = Math.min(size, remaining);
    if (take > 0) waves.push(take);
    remaining -= take;
  }
  if (remaining > 0) waves.push(remaining);
  return waves;
}

/**
 * Why a completed wave pauses the rollout, or undefined when it does not: its share of FAILED reports among the
 * devices it deployed to (FAILED / max(SUCCESS, 1)) is above the threshold. UNDEPLOY waves get no reports.
 */
export function failurePauseReason(rollout: StoredRollout, waveIndex: number, counts: Record<string, number>): string | undefined {
  if (rollout.action !== 'DEPLOY') return undefined;
  const failed = counts.FAILED ?? 0;
  const deployed = counts.SUCCESS ?? 0;
  const share = failed / Math.max(deployed, 1);
  if (share <= rollout.failureThreshold) return undefined;
  return (
    `Wave ${waveIndex + 1}: ${failed} of ${deployed} devices reported FAILED (${percent(share)} %), above the failure ` +
    `threshold of ${percent(rollout.failureThreshold)} %. ` +
    (waveIndex + 1 < rollout.waves.length
      ? `Resume to go on with wave ${waveIndex + 2}, or cancel.`
      : 'Resume to let devices that start matching join again, or cancel.')
  );
}

/** A share as a percentage with at most one decimal: 0.125 → "12.5", 0.2 → "20". */
function percent(share: number): string {
  return String(Math.round(share * 1000) / 10);
}

/**
 * Whether a RUNNING wave whose chunks are all done is complete: an UNDEPLOY wave at once; a DEPLOY wave when its
 * devices' first INSTALLED and FAILED reports are at least its successful deploys, or its timeout has passed.
 */
export function waveComplete(rollout: StoredRollout, wave: StoredRolloutWave, counts: Record<string, number>, now: Date): boolean {
  if (rollout.action === 'UNDEPLOY') return true;
  if ((counts.INSTALLED ?? 0) + (counts.FAILED ?? 0) >= (counts.SUCCESS ?? 0)) return true;
  return wave.startedAt !== undefined && now.getTime() >= Date.parse(wave.startedAt) + rollout.waveTimeoutSeconds * 1000;
}

/**
 * A stored rollout as every rollout route answers it, with each wave's counts from its tally. A CANCELLED rollout
 * stored before cancelling also cancelled its waves shows them CANCELLED all the same (without `completedAt`, which
 * it did not record).
 */
export function rolloutView(rollout: StoredRollout, tallies: ReadonlyMap<number, RolloutWaveTally>): RolloutView {
  const ended = (state: StoredRolloutWave['state']) => (rollout.state === 'CANCELLED' && state !== 'COMPLETED' ? 'CANCELLED' : state);
  const joined = [...tallies.values()].reduce((sum, tally) => sum + (tally.joined ?? 0), 0);
  return {
    id: rollout.id,
    state: rollout.state,
    action: rollout.action,
    what: rollout.what,
    targets: rollout.targets,
    waves: rollout.waves.map(
      (wave, index): RolloutWaveView => ({
        // Devices that joined a continuous rollout count in its last wave, which grows by them.
        size: wave.size + (tallies.get(index)?.joined ?? 0),
        state: ended(wave.state),
        counts: { ...(tallies.get(index)?.counts ?? {}) },
        ...(wave.startedAt === undefined ? {} : { startedAt: wave.startedAt }),
        ...(wave.completedAt === undefined ? {} : { completedAt: wave.completedAt }),
      }),
    ),
    failureThreshold: rollout.failureThreshold,
    waveTimeoutSeconds: rollout.waveTimeoutSeconds,
    note: rollout.note ?? null,
    createdBy: rollout.createdBy,
    created: rollout.created,
    updated: rollout.updated,
    ...(rollout.pausedReason === undefined ? {} : { pausedReason: rollout.pausedReason }),
    ...(rollout.startAt === undefined ? {} : { startAt: rollout.startAt }),
    continuous: rollout.continuous !== undefined,
    ...(rollout.continuous === undefined ? {} : { joined }),
    events: (rollout.events ?? []).map((event) => ({ ...event, ...(event.counts === undefined ? {} : { counts: { ...event.counts } }) })),
    eventsDropped: rollout.eventsDropped ?? 0,
  };
}

/**
 * The rollout with `added` appended to its events (oldest first), bounded: past ROLLOUT_EVENTS_FIRST +
 * ROLLOUT_EVENTS_NEWEST events, the first ROLLOUT_EVENTS_FIRST stay (how it was created and started) and the newest
 * ROLLOUT_EVENTS_NEWEST, the ones in between are dropped and added to `eventsDropped`. A rollout stored before events
 * were recorded starts its log with `added`. Pure: the caller writes the result in the same conditional write as the
 * transition the events record.
 */
export function withEvents(rollout: StoredRollout, ...added: RolloutEvent[]): StoredRollout {
  const all = [...(rollout.events ?? []), ...added];
  const excess = all.length - (ROLLOUT_EVENTS_FIRST + ROLLOUT_EVENTS_NEWEST);
  if (excess <= 0) return { ...rollout, events: all };
  return {
    ...rollout,
    events: [...all.slice(0, ROLLOUT_EVENTS_FIRST), ...all.slice(ROLLOUT_EVENTS_FIRST + excess)],
    eventsDropped: (rollout.eventsDropped ?? 0) + excess,
  };
}

/** The work messages of a wave's chunks (all of them, or those listed). */
function chunkMessages(rollout: StoredRollout, waveIndex: number, indexes?: readonly number[]): RolloutWorkMessage[] {
  const wave = rollout.waves[waveIndex] as StoredRolloutWave;
  const chunks = indexes ?? Array.from({ length: wave.chunks[1] - wave.chunks[0] + 1 }, (_, offset) => wave.chunks[0] + offset);
  return chunks.map((chunk) => ({ type: 'RolloutChunk', company: rollout.company, rolloutId: rollout.id, wave: waveIndex, chunk }));
}

/** Checks the create input's bounds (the route's schema checks them first). @throws BadRequestError listing each one. */
function checkCreateInput(input: RolloutCreateInput): void {
  const errors: { path: string; message: string }[] = [];
  const waves = input.waves ?? [];
  if (waves.length > MAX_ROLLOUT_WAVES) errors.push({ path: 'waves', message: `at most ${MAX_ROLLOUT_WAVES} waves may be listed` });
  if (waves.some((size) => !Number.isInteger(size) || size < 1)) errors.push({ path: 'waves', message: 'sizes must be whole numbers ≥ 1' });
  const threshold = input.failureThreshold ?? DEFAULT_FAILURE_THRESHOLD;
  if (!(threshold >= 0 && threshold <= 1)) errors.push({ path: 'failureThreshold', message: 'must be from 0 to 1' });
  const timeout = input.waveTimeoutSeconds ?? DEFAULT_WAVE_TIMEOUT_SECONDS;
  if (!Number.isInteger(timeout) || timeout < MIN_WAVE_TIMEOUT_SECONDS || timeout > MAX_WAVE_TIMEOUT_SECONDS) {
    errors.push({
      path: 'waveTimeoutSeconds',
      message: `must be whole seconds from ${MIN_WAVE_TIMEOUT_SECONDS} to ${MAX_WAVE_TIMEOUT_SECONDS}`,
    });
  }
  if (input.continuous === true && !('query' in input.targets)) {
    errors.push({
      path: 'continuous',
      message: 'a continuous rollout selects its devices with targets.query (devices that match it later join); listed ids never change',
    });
  }
  if (errors.length > 0) throw new BadRequestError('The rollout is not valid.', errors);
}

/**
 * The instant a scheduled rollout starts: `startAt` (ISO-8601 with any offset) as UTC ISO-8601 (`…Z`), since the sweep
 * index compares `sweepAt` as text and only one form orders as time does.
 * @throws BadRequestError (`/startAt`) when it is not after `now`, or more than MAX_ROLLOUT_SCHEDULE_DAYS after it;
 *   the detail says what to give instead.
 */
export function scheduledStart(startAt: string, now: Date): string {
  const at = Date.parse(startAt);
  const latest = now.getTime() + MAX_ROLLOUT_SCHEDULE_DAYS * 24 * 60 * 60_000;
  if (!Number.isFinite(at)) {
    throw new BadRequestError('startAt is not a date-time; nothing was created.', [
      { path: '/startAt', message: `'${startAt}' is not an ISO-8601 date-time with an offset, e.g. 2030-01-31T22:00:00+01:00.` },
    ]);
  }
  if (at <= now.getTime()) {
    throw new BadRequestError(
      `startAt ${startAt} is not in the future (now is ${now.toISOString()}): give a later time, or leave startAt out to start the rollout now. Nothing was created.`,
      [{ path: '/startAt', message: 'must be in the future' }],
    );
  }
  if (at > latest) {
    throw new BadRequestError(
      `startAt ${startAt} is more than ${MAX_ROLLOUT_SCHEDULE_DAYS} days ahead: give a time until ${new Date(latest).toISOString()}, or create the rollout closer to its date. Nothing was created.`,
      [{ path: '/startAt', message: `must be at most ${MAX_ROLLOUT_SCHEDULE_DAYS} days ahead` }],
    );
  }
  return new Date(at).toISOString();
}

/**
 * Creates a rollout of `input.what` on `targetIds` and starts its first wave, or schedules it. Writes the target
 * chunks, then the rollout item, then (started now) sends wave 1's work messages (best effort: a failure is reported
 * through `onError`, and the sweeper sends them again after ROLLOUT_CHUNK_TIMEOUT_SECONDS).
 * - Without `startAt`: RUNNING, wave 1 RUNNING since now, in the sweep index.
 * - With `startAt`: SCHEDULED, every wave PENDING, in the sweep index at `startAt`; nothing is sent or deployed until
 *   the sweeper starts it (sweepRollouts). The targets are resolved now all the same, not at the start: the caller
 *   learns at once whether they match no device or too many (422) instead of the rollout failing unattended at night,
 *   the rollout shows its target count while it waits, and the sweeper needs no search access.
 * @param targetIds the resolved targets, sorted by device id, unique (resolveRolloutTargets); the devices are
 *   deployed in this order, in waves of the sizes asked for, the rest forming the last wave.
 * @param selection the filters `targets.query` parsed into (field → accepted values): what a continuous rollout
 *   matches changed devices against. Required with `continuous`.
 * @returns the rollout as created (every count empty).
 * @throws ForbiddenError for a company outside the token.
 * @throws BadRequestError when a wave size, the threshold or the timeout is out of bounds, or `startAt` is not in the
 *   future or more than MAX_ROLLOUT_SCHEDULE_DAYS ahead (scheduledStart).
 * @throws UnprocessableRequestError when the scenario version does not exist in the company, or `targetIds` is
 *   empty or longer than MAX_ROLLOUT_TARGETS.
 */
export async function createRollout(
  deps: RolloutDependencies,
  principal: Principal,
  companyId: string,
  input: RolloutCreateInput,
  targetIds: readonly string[],
  selection?: ReadonlyMap<string, readonly string[]>,
): Promise<RolloutView> {
  authorizeCompany(principal, companyId);
  checkCreateInput(input);
  // Without its selection a continuous rollout would match every device of the company: a caller's mistake, refused.
  if (input.continuous === true && selection === undefined) throw new Error('A continuous rollout needs the selection of its query.');
  checkTargetCount(targetIds.length, input.continuous === true);
  await checkVersionExists(deps, companyId, input.what);
  const clock = deps.now?.() ?? new Date();
  const startAt = input.startAt === undefined ? undefined : scheduledStart(input.startAt, clock);
  const now = clock.toISOString();
  const { chunks, waves } = planChunks(targetIds, input.waves, startAt === undefined ? now : undefined);
  const rollout: StoredRollout = {
    id: ulid(Date.parse(now)),
    company: companyId,
    action: input.action,
    what: { type: 'SCENARIO', id: input.what.id, subId: input.what.subId },
    targetsSpec: 'query' in input.targets ? { query: input.targets.query } : { ids: input.targets.ids.length },
    targets: targetIds.length,
    waves,
    currentWave: 0,
    failureThreshold: input.failureThreshold ?? DEFAULT_FAILURE_THRESHOLD,
    waveTimeoutSeconds: input.waveTimeoutSeconds ?? DEFAULT_WAVE_TIMEOUT_SECONDS,
    ...(input.note === undefined ? {} : { note: input.note }),
    createdBy: principal.subject,
    created: now,
    updated: now,
    state: startAt === undefined ? 'RUNNING' : 'SCHEDULED',
    ...(startAt === undefined ? {} : { startAt }),
    ...(input.continuous === true
      ? {
          continuous: {
            filters: Object.fromEntries([...(selection ?? new Map())].map(([field, values]) => [field, [...values]])),
            chunkFirstIds: chunks.map((chunk) => chunk.deviceIds[0] as string),
          },
        }
      : {}),
    events: [
      { at: now, type: 'CREATED', by: principal.subject, ...(startAt === undefined ? {} : { startAt }) },
      ...(startAt === undefined ? [{ at: now, type: 'WAVE_STARTED' as const, wave: 1 }] : []),
    ],
    version: 1,
    sweepAt: startAt ?? now,
  };
  await deps.rollouts.create(rollout, chunks);
  const messages = chunkMessages(rollout, 0);
  if (startAt === undefined && messages.length > 0) await sendBestEffort(deps, messages, rollout);
  return rolloutView(rollout, new Map());
}

/**
 * Refuses a rollout that would target no device (unless continuous: devices join it later), or more than
 * MAX_ROLLOUT_TARGETS.
 * @throws UnprocessableRequestError saying which, and what to do.
 */
function checkTargetCount(count: number, continuous: boolean): void {
  if (count === 0 && !continuous) throw new UnprocessableRequestError('The targets match no device of the company: nothing to roll out.');
  if (count > MAX_ROLLOUT_TARGETS) {
    throw new UnprocessableRequestError(
      `The targets match ${count} devices; a rollout may target at most ${MAX_ROLLOUT_TARGETS}. Narrow the query.`,
    );
  }
}

/**
 * Refuses a rollout of a scenario version the company does not have.
 * @throws UnprocessableRequestError naming the version.
 */
async function checkVersionExists(deps: RolloutDependencies, companyId: string, what: RolloutCreateInput['what']): Promise<void> {
  const reference = { scenarioId: what.id, version: what.subId };
  const found = await deps.scenarios.existingVersions(companyId, [reference]);
  if (!found.has(`${reference.scenarioId}#${reference.version}`)) {
    throw new UnprocessableRequestError(
      `Scenario '${what.id}' version ${what.subId} does not exist in company '${companyId}': nothing to roll out.`,
    );
  }
}

/**
 * Splits the sorted targets into waves of the sizes asked for (planWaves), each wave into chunks of at most
 * ROLLOUT_CHUNK_SIZE devices numbered across the rollout; the first wave is RUNNING since `startedAt` (ISO-8601), or
 * PENDING when it is undefined (a scheduled rollout), the others PENDING, each knowing its first and last chunk.
 */
function planChunks(
  targetIds: readonly string[],
  sizes: RolloutCreateInput['waves'],
  startedAt: string | undefined,
): { chunks: RolloutChunk[]; waves: StoredRolloutWave[] } {
  const chunks: RolloutChunk[] = [];
  const waves: StoredRolloutWave[] = [];
  let offset = 0;
  for (const [wave, size] of planWaves(targetIds.length, sizes).entries()) {
    const first = chunks.length;
    for (let start = 0; start < size; start += ROLLOUT_CHUNK_SIZE) {
      const deviceIds = targetIds.slice(offset + start, offset + Math.min(size, start + ROLLOUT_CHUNK_SIZE));
      chunks.push({ index: chunks.length, wave, deviceIds });
    }
    offset += size;
    const starts = wave === 0 && startedAt !== undefined;
    waves.push({
      size,
      state: starts ? 'RUNNING' : 'PENDING',
      ...(starts ? { startedAt } : {}),
      chunks: [first, chunks.length - 1],
    });
  }
  // A continuous rollout without targets yet: one empty wave (no chunk), which the sweeper completes at once, and
  // which the devices that join count in.
  if (waves.length === 0) {
    waves.push({
      size: 0,
      state: startedAt === undefined ? 'PENDING' : 'RUNNING',
      ...(startedAt === undefined ? {} : { startedAt }),
      chunks: [0, -1],
    });
  }
  return { chunks, waves };
}

/** Sends work messages, reporting a failure through `onError` instead of throwing (the sweeper sends them again). */
async function sendBestEffort(deps: RolloutDependencies, messages: RolloutWorkMessage[], rollout: StoredRollout): Promise<void> {
  try {
    await deps.queue.send(messages);
  } catch (error) {
    deps.onError?.(error, { operation: 'sendRolloutWork', rolloutId: rollout.id, company: rollout.company, messages: messages.length });
  }
}

/** The stored rollout. @throws NotFoundError when the company has no such rollout. */
async function storedRollout(deps: Pick<RolloutDependencies, 'rollouts'>, companyId: string, rolloutId: string): Promise<StoredRollout> {
  const rollout = ULID_PATTERN.test(rolloutId) ? await deps.rollouts.get(companyId, rolloutId) : undefined;
  if (rollout === undefined) throw new NotFoundError(`Rollout '${rolloutId}' does not exist in company '${companyId}'.`);
  return rollout;
}

/**
 * One rollout with its waves' counts (deploy results by cause, first INSTALLED / FAILED reports).
 * @throws ForbiddenError for a company outside the token.
 * @throws NotFoundError when the company has no such rollout.
 */
export async function getRollout(
  deps: Pick<RolloutDependencies, 'rollouts'>,
  principal: Principal,
  companyId: string,
  rolloutId: string,
): Promise<RolloutView> {
  authorizeCompany(principal, companyId);
  const rollout = await storedRollout(deps, companyId, rolloutId);
  return rolloutView(rollout, await deps.rollouts.tallies(companyId, rollout.id));
}

/**
 * A page of the company's rollouts, newest first, each with its counts.
 * @param paging `limit` (1–1000) and `cursor`, validated by the route.
 * @throws ForbiddenError for a company outside the token.
 * @throws BadRequestError on a cursor not issued for this listing.
 */
export async function listRollouts(
  deps: Pick<RolloutDependencies, 'rollouts'>,
  principal: Principal,
  companyId: string,
  { limit, cursor }: ListParameters,
): Promise<Page<RolloutView>> {
  authorizeCompany(principal, companyId);
  const page = await deps.rollouts.list(companyId, limit, cursor);
  const tallies = pLimit(LIST_TALLY_CONCURRENCY);
  const items = await Promise.all(
    page.items.map((rollout) => tallies(async () => rolloutView(rollout, await deps.rollouts.tallies(companyId, rollout.id)))),
  );
  return { items, nextCursor: page.nextCursor };
}

/**
 * Applies `change` to the rollout if `allowed` accepts its state, as one write conditioned on the version read;
 * read again and retried when the sweeper wrote in between.
 * @throws NotFoundError; ConflictError naming the state when `allowed` refuses it.
 */
async function transition(
  deps: RolloutDependencies,
  principal: Principal,
  companyId: string,
  rolloutId: string,
  verb: string,
  allowed: readonly StoredRollout['state'][],
  change: (rollout: StoredRollout, now: string) => StoredRollout,
): Promise<{ before: StoredRollout; after: StoredRollout }> {
  authorizeCompany(principal, companyId);
  for (let attempt = 1; ; attempt += 1) {
    const before = await storedRollout(deps, companyId, rolloutId);
    if (!allowed.includes(before.state)) {
      const states = allowed.length > 1 ? `${allowed.slice(0, -1).join(', ')} or ${allowed.at(-1)}` : allowed.join('');
      throw new ConflictError(`Rollout '${rolloutId}' is ${before.state}; only a ${states} rollout can be ${verb}.`);
    }
    const now = (deps.now?.() ?? new Date()).toISOString();
    const after = { ...change(structuredClone(before), now), updated: now, version: before.version + 1 };
    if (await deps.rollouts.update(after)) return { before, after };
    if (attempt >= STATE_WRITE_ATTEMPTS) {
      throw new ConflictError(`Rollout '${rolloutId}' kept changing while it was being ${verb}; try again.`);
    }
  }
}

/** The view after a transition, with the counts read once the write is done. */
async function viewOf(deps: Pick<RolloutDependencies, 'rollouts'>, rollout: StoredRollout): Promise<RolloutView> {
  return rolloutView(rollout, await deps.rollouts.tallies(rollout.company, rollout.id));
}

/**
 * Pauses a RUNNING rollout (`pausedReason` "Paused by {sub}."): no further chunk runs (the worker checks the state
 * before each one); chunks already running finish.
 * @throws ForbiddenError, NotFoundError, ConflictError when it is not RUNNING.
 */
export async function pauseRollout(
  deps: RolloutDependencies,
  principal: Principal,
  companyId: string,
  rolloutId: string,
): Promise<RolloutView> {
  const { after } = await transition(deps, principal, companyId, rolloutId, 'paused', ['RUNNING'], (rollout, now) => {
    const { sweepAt: _sweepAt, ...rest } = rollout;
    return withEvents(
      { ...rest, state: 'PAUSED', pausedReason: `Paused by ${principal.subject}.` },
      { at: now, type: 'PAUSED', by: principal.subject },
    );
  });
  return viewOf(deps, after);
}

/**
 * Resumes a PAUSED rollout where it stopped: its current wave starts now if it had not started (a pause on failures
 * stops before the next wave), and the chunks of the current wave not run yet are sent again at once.
 * @throws ForbiddenError, NotFoundError, ConflictError when it is not PAUSED.
 */
export async function resumeRollout(
  deps: RolloutDependencies,
  principal: Principal,
  companyId: string,
  rolloutId: string,
): Promise<RolloutView> {
  const { after } = await transition(deps, principal, companyId, rolloutId, 'resumed', ['PAUSED'], (rollout, now) => {
    const { pausedReason: _reason, ...rest } = rollout;
    const waves = rollout.waves.map((wave, index) =>
      index === rollout.currentWave && wave.state === 'PENDING' ? { ...wave, state: 'RUNNING' as const, startedAt: now } : wave,
    );
    // A continuous rollout paused after its last wave has no wave left to sweep: it runs on for the devices that join.
    const left = hasWaveLeft(waves);
    const startsWave = rollout.waves[rollout.currentWave]?.state === 'PENDING';
    return withEvents(
      { ...rest, waves, state: 'RUNNING', ...(left ? { sweepAt: now } : {}) },
      { at: now, type: 'RESUMED', by: principal.subject },
      ...(startsWave ? [{ at: now, type: 'WAVE_STARTED' as const, wave: rollout.currentWave + 1 }] : []),
      ...(!left && rollout.continuous !== undefined ? [{ at: now, type: 'FOLLOWING' as const }] : []),
    );
  });
  try {
    await resendUnfinished(deps, after, after.updated, () => true);
  } catch (error) {
    deps.onError?.(error, { operation: 'resumeRollout', rolloutId, company: companyId });
  }
  return viewOf(deps, after);
}

/**
 * Cancels a SCHEDULED, RUNNING or PAUSED rollout: nothing more runs (a SCHEDULED one never starts: it leaves the sweep
 * index, and deployed nothing); the deployments it made stay. Every wave not COMPLETED becomes CANCELLED, the one that
 * was RUNNING with `completedAt` = now, so that no wave shows RUNNING for ever.
 * @throws ForbiddenError, NotFoundError, ConflictError when it has ended already.
 */
export async function cancelRollout(
  deps: RolloutDependencies,
  principal: Principal,
  companyId: string,
  rolloutId: string,
): Promise<RolloutView> {
  const { after } = await transition(
    deps,
    principal,
    companyId,
    rolloutId,
    'cancelled',
    ['SCHEDULED', 'RUNNING', 'PAUSED'],
    (rollout, now) => {
      const { sweepAt: _sweepAt, pausedReason: _reason, ...rest } = rollout;
      const waves = rollout.waves.map((wave) => {
        if (wave.state === 'COMPLETED') return wave;
        return { ...wave, state: 'CANCELLED' as const, ...(wave.state === 'RUNNING' ? { completedAt: now } : {}) };
      });
      return withEvents({ ...rest, waves, state: 'CANCELLED' }, { at: now, type: 'CANCELLED', by: principal.subject });
    },
  );
  return viewOf(deps, after);
}

/**
 * Sends again the current wave's chunks that are not done and that `due` selects (by their last dispatch, the wave's
 * start when never sent again), and records when. @returns how many were sent.
 */
async function resendUnfinished(
  deps: Pick<RolloutDependencies, 'rollouts' | 'queue'>,
  rollout: StoredRollout,
  now: string,
  due: (lastSent: string) => boolean,
): Promise<number> {
  const wave = rollout.waves[rollout.currentWave] as StoredRolloutWave;
  if (wave.chunks[1] < wave.chunks[0]) return 0; // the empty wave of a continuous rollout created without targets
  const chunks = await deps.rollouts.chunkStates(rollout.company, rollout.id, wave.chunks[0], wave.chunks[1]);
  const resend = chunks.filter((chunk) => chunk.done !== true && due(chunk.dispatchedAt ?? wave.startedAt ?? rollout.created));
  if (resend.length === 0) return 0;
  const indexes = resend.map((chunk) => chunk.index);
  await deps.queue.send(chunkMessages(rollout, rollout.currentWave, indexes));
  await deps.rollouts.markDispatched(rollout.company, rollout.id, indexes, now);
  return indexes.length;
}

/** What runRolloutChunk needs: the rollouts, and what the deployment use case needs. */
export type RolloutWorkerDependencies = DeploymentDependencies & { rollouts: RolloutRepository };

/** What running one chunk did: `done` with its results by cause, or `skipped` with why. */
export type RolloutChunkOutcome = { outcome: 'done'; results: Record<string, number> } | { outcome: 'skipped'; reason: string };

/** Thrown when some of a chunk's deployments met a backend error: the chunk is not marked done, its message is retried. */
export class RolloutChunkIncompleteError extends Error {}

/**
 * Runs one chunk of a rollout (the worker): unless the rollout is not RUNNING, the chunk's wave is not the running
 * one, or the chunk is done (then it is skipped, and the message acknowledged), deploys or undeploys the scenario
 * version on the chunk's devices through executeDeployments, in the creator's name with the rollout's note, each
 * with its deterministic id (rolloutDeploymentId) at the wave's start and the rollout tag on the slot; then marks the
 * chunk done with its results by cause, counted once in the wave's tally.
 * Run again (a redelivered message), it writes the same deployments: a DEPLOY already made reports SUCCESS again,
 * and the results are counted once. (An UNDEPLOY whose slot the stream has already purged reports ALREADY_UNDEPLOYED;
 * only the first run's results count.)
 * @param options `lastAttempt`: accept results with NONE causes (backend errors) instead of throwing, so that a
 *   message that keeps failing does not hold the wave forever.
 * @throws RolloutChunkIncompleteError when some deployments met a backend error (NONE) and this is not the last
 *   attempt: the chunk stays not done and its message should be retried.
 * @throws Error on backend failures reading or marking the chunk.
 */
export async function runRolloutChunk(
  deps: RolloutWorkerDependencies,
  message: RolloutWorkMessage,
  options: { lastAttempt?: boolean } = {},
): Promise<RolloutChunkOutcome> {
  const rollout = await deps.rollouts.get(message.company, message.rolloutId);
  if (rollout === undefined) return { outcome: 'skipped', reason: 'no such rollout' };
  if (rollout.state !== 'RUNNING') return { outcome: 'skipped', reason: `the rollout is ${rollout.state}` };
  const wave = rollout.waves[message.wave];
  if (rollout.currentWave !== message.wave || wave?.state !== 'RUNNING' || wave.startedAt === undefined) {
    return { outcome: 'skipped', reason: `wave ${message.wave + 1} is not the running wave` };
  }
  const chunk = await deps.rollouts.chunk(message.company, message.rolloutId, message.chunk);
  if (chunk === undefined || chunk.wave !== message.wave) return { outcome: 'skipped', reason: 'no such chunk in this wave' };
  if (chunk.done === true) return { outcome: 'skipped', reason: 'the chunk is done' };
  const startedAt = wave.startedAt;
  const { items } = await executeDeployments(
    deps,
    { subject: rollout.createdBy, companies: [rollout.company], scopes: new Set(['deployments:write']) },
    rollout.company,
    {
      requests: chunk.deviceIds.map((deviceId) => ({
        target: { type: 'DEVICE', id: deviceId, subId: null },
        what: rollout.what,
        action: rollout.action,
      })),
      ...(rollout.note === undefined ? {} : { note: rollout.note }),
    },
    {
      at: startedAt,
      ids: chunk.deviceIds.map((deviceId) => rolloutDeploymentId(rollout.id, deviceId, startedAt)),
      rollout: { id: rollout.id, wave: message.wave },
    },
  );
  const results = resultCounts(items);
  // Each device's cause is kept with the chunk (not only the counts), so that the targets listing can say which
  // devices failed and why without reading the deployments' history.
  const failures = Object.fromEntries(items.flatMap((item) => (item.cause === null ? [] : [[item.target.id, item.cause]])));
  if ((results.NONE ?? 0) > 0 && options.lastAttempt !== true) {
    throw new RolloutChunkIncompleteError(
      `${results.NONE} of ${items.length} deployments of chunk ${chunk.index} of rollout ${rollout.id} met a backend error; the chunk will run again.`,
    );
  }
  const marked = await deps.rollouts.markDone(rollout.company, rollout.id, chunk, results, failures);
  return marked ? { outcome: 'done', results } : { outcome: 'skipped', reason: 'the chunk was done meanwhile' };
}

/** Result items counted by cause, `SUCCESS` for a change made. */
function resultCounts(items: readonly DeploymentResultItem[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) {
    const key = item.cause ?? 'SUCCESS';
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

/** What sweepRollouts needs. */
export interface RolloutSweepDependencies {
  rollouts: RolloutRepository;
  queue: WorkQueue;
  /** A chunk of a running wave sent this long ago and not done is sent again (ROLLOUT_CHUNK_TIMEOUT_SECONDS). */
  chunkTimeoutSeconds: number;
  /** Current time; injectable for tests. */
  now?: () => Date;
  /** Most rollouts looked at per run; the next run goes on. @default 100 */
  maxPerRun?: number;
  /** Rollouts handled at once. @default 4 */
  concurrency?: number;
  /** Called with the error of one rollout; the others are still swept. */
  onError?: (error: unknown, context: Record<string, unknown>) => void;
}

/** What the sweeper did with one rollout. */
export type RolloutSweepOutcome =
  /** It started (a SCHEDULED rollout whose `startAt` has come), its wave started, or the next one (chunks sent). */
  | 'started'
  /** Some chunks were sent again (their message was lost). */
  | 'resent'
  /** Nothing to do yet (chunks running, reports awaited). */
  | 'waiting'
  /** Its wave completed and it paused on too many failures. */
  | 'paused'
  /** Its last wave completed. */
  | 'completed'
  /** A continuous rollout's last wave completed: it runs on for the devices that join, out of the sweep index. */
  | 'following'
  /** Another writer changed it since it was read: nothing done, the next run looks again. */
  | 'conflict'
  /** Not RUNNING any more (the index lags behind). */
  | 'skipped'
  /** Its handling threw (reported through onError). */
  | 'failed';

/** The rollouts a sweep looked at, by outcome (`company/rolloutId`). */
export type RolloutSweepResult = Record<RolloutSweepOutcome, string[]>;

/**
 * The rollout sweeper (every minute on AWS, every ROLLOUT_SWEEP_INTERVAL_MS locally): for each SCHEDULED or RUNNING
 * rollout due in the sweep index —
 * - SCHEDULED and its `startAt` has come: it becomes RUNNING, its first wave starts (RUNNING since now) and its chunks
 *   are sent; on AWS that is within a minute of `startAt`;
 * - current wave PENDING: it starts (RUNNING since now) and its chunks are sent;
 * - current wave RUNNING with chunks not done: those sent more than `chunkTimeoutSeconds` ago are sent again;
 * - every chunk done: when the wave is complete (waveComplete) it is marked COMPLETED; then, if its share of FAILED
 *   reports is above the threshold (failurePauseReason) and another wave follows, the rollout pauses with the reason
 *   before that wave; else the next wave starts at once, or the rollout is COMPLETED after its last wave.
 * Every state change is one write conditioned on the version read, so two sweepers racing change a rollout once (the
 * other gets `conflict` and sends nothing).
 */
export async function sweepRollouts(deps: RolloutSweepDependencies): Promise<RolloutSweepResult> {
  const now = deps.now?.() ?? new Date();
  const result: RolloutSweepResult = {
    started: [],
    resent: [],
    waiting: [],
    paused: [],
    completed: [],
    following: [],
    conflict: [],
    skipped: [],
    failed: [],
  };
  const due = await deps.rollouts.due(now.toISOString(), deps.maxPerRun ?? 100);
  const limit = pLimit(Math.max(1, deps.concurrency ?? 4));
  await Promise.all(
    due.map(({ company, rolloutId }) =>
      limit(async () => {
        let outcome: RolloutSweepOutcome;
        try {
          outcome = await sweepRollout(deps, company, rolloutId, now);
        } catch (error) {
          deps.onError?.(error, { operation: 'sweepRollout', company, rolloutId });
          outcome = 'failed';
        }
        result[outcome].push(`${company}/${rolloutId}`);
      }),
    ),
  );
  return result;
}

/** One rollout's sweep (sweepRollouts). */
async function sweepRollout(deps: RolloutSweepDependencies, company: string, rolloutId: string, now: Date): Promise<RolloutSweepOutcome> {
  const rollout = await deps.rollouts.get(company, rolloutId);
  if (rollout === undefined || (rollout.state !== 'RUNNING' && rollout.state !== 'SCHEDULED')) return 'skipped';
  const index = rollout.currentWave;
  const wave = rollout.waves[index] as StoredRolloutWave;
  const nowIso = now.toISOString();
  if (wave.state === 'COMPLETED') {
    // A continuous rollout past its last wave (resumed, or written so by an earlier version) has nothing to sweep.
    const { sweepAt: _sweepAt, ...rest } = rollout;
    const following = rollout.events?.at(-1)?.type === 'FOLLOWING' ? rest : withEvents(rest, { at: nowIso, type: 'FOLLOWING' });
    return (await writeThenSend(deps, rollout, following, nowIso)) ? 'following' : 'conflict';
  }
  if (rollout.state === 'SCHEDULED') {
    // The index holds it at its startAt, so it is due; the check keeps a rollout from starting early all the same.
    if (rollout.startAt !== undefined && Date.parse(rollout.startAt) > now.getTime()) return 'waiting';
    // One write conditioned on the version read: of two sweepers racing, one starts it and sends its chunks.
    const started = withEvents(
      { ...rollout, state: 'RUNNING', waves: replaceWave(rollout.waves, index, startedWave(wave, nowIso)) },
      { at: nowIso, type: 'STARTED' },
      { at: nowIso, type: 'WAVE_STARTED', wave: index + 1 },
    );
    return (await writeThenSend(deps, rollout, started, nowIso)) ? 'started' : 'conflict';
  }
  if (wave.state === 'PENDING') {
    const started = withEvents(
      { ...rollout, waves: replaceWave(rollout.waves, index, startedWave(wave, nowIso)) },
      { at: nowIso, type: 'WAVE_STARTED', wave: index + 1 },
    );
    return (await writeThenSend(deps, rollout, started, nowIso)) ? 'started' : 'conflict';
  }
  const tally = (await deps.rollouts.tallies(company, rolloutId)).get(index) ?? { counts: {}, chunksDone: 0 };
  if (tally.chunksDone < wave.chunks[1] - wave.chunks[0] + 1) {
    const timeoutMs = deps.chunkTimeoutSeconds * 1000;
    const sent = await resendUnfinished(deps, rollout, nowIso, (lastSent) => Date.parse(lastSent) + timeoutMs <= now.getTime());
    return sent > 0 ? 'resent' : 'waiting';
  }
  // The empty wave of a continuous rollout created without targets completes at once: the counts it holds are only
  // those of devices that joined, which neither hold it open until they report nor pause it.
  const empty = wave.chunks[1] < wave.chunks[0];
  if (!empty && !waveComplete(rollout, wave, tally.counts, now)) return 'waiting';
  const waves = replaceWave(rollout.waves, index, { ...wave, state: 'COMPLETED', completedAt: nowIso });
  const next = waves[index + 1];
  const completed: RolloutEvent = { at: nowIso, type: 'WAVE_COMPLETED', wave: index + 1, counts: { ...tally.counts } };
  const pausedEvent = (reason: string): RolloutEvent => ({ at: nowIso, type: 'PAUSED', wave: index + 1, reason });
  if (next === undefined && rollout.continuous !== undefined) {
    // A continuous rollout runs on after its last wave, for the devices that join, unless that wave failed too often.
    const { sweepAt: _sweepAt, ...rest } = rollout;
    const pausedReason = empty ? undefined : failurePauseReason(rollout, index, tally.counts);
    const after: StoredRollout =
      pausedReason === undefined
        ? withEvents({ ...rest, waves }, completed, { at: nowIso, type: 'FOLLOWING' })
        : withEvents({ ...rest, waves, state: 'PAUSED', pausedReason }, completed, pausedEvent(pausedReason));
    return (await writeThenSend(deps, rollout, after, nowIso)) ? (pausedReason === undefined ? 'following' : 'paused') : 'conflict';
  }
  if (next === undefined) {
    const { sweepAt: _sweepAt, ...rest } = rollout;
    const after = withEvents({ ...rest, waves, state: 'COMPLETED' }, completed, { at: nowIso, type: 'COMPLETED' });
    return (await writeThenSend(deps, rollout, after, nowIso)) ? 'completed' : 'conflict';
  }
  const pausedReason = failurePauseReason(rollout, index, tally.counts);
  if (pausedReason !== undefined) {
    const { sweepAt: _sweepAt, ...rest } = rollout;
    const paused = withEvents(
      { ...rest, waves, currentWave: index + 1, state: 'PAUSED', pausedReason },
      completed,
      pausedEvent(pausedReason),
    );
    return (await writeThenSend(deps, rollout, paused, nowIso)) ? 'paused' : 'conflict';
  }
  const advanced = withEvents(
    { ...rollout, waves: replaceWave(waves, index + 1, startedWave(next, nowIso)), currentWave: index + 1 },
    completed,
    { at: nowIso, type: 'WAVE_STARTED', wave: index + 2 },
  );
  return (await writeThenSend(deps, rollout, advanced, nowIso)) ? 'started' : 'conflict';
}

function startedWave(wave: StoredRolloutWave, now: string): StoredRolloutWave {
  return { ...wave, state: 'RUNNING', startedAt: now };
}

function replaceWave(waves: readonly StoredRolloutWave[], index: number, wave: StoredRolloutWave): StoredRolloutWave[] {
  return waves.map((current, position) => (position === index ? wave : current));
}

/**
 * Whether some wave has not completed: a RUNNING rollout is in the sweep index (has a `sweepAt`) only while so; a
 * continuous rollout past its last wave is not, and runs on for the devices that join.
 */
function hasWaveLeft(waves: readonly StoredRolloutWave[]): boolean {
  return waves.some((wave) => wave.state !== 'COMPLETED');
}

/**
 * Writes `next` (version + 1, `updated` now) if the rollout is still at the version read, then, when that write
 * started a wave, sends all its chunks. @returns false when another writer came first (nothing written or sent).
 */
async function writeThenSend(
  deps: Pick<RolloutSweepDependencies, 'rollouts' | 'queue'>,
  read: StoredRollout,
  next: StoredRollout,
  now: string,
): Promise<boolean> {
  const written: StoredRollout = {
    ...next,
    updated: now,
    version: read.version + 1,
    ...(next.state === 'RUNNING' && hasWaveLeft(next.waves) ? { sweepAt: now } : {}),
  };
  if (!(await deps.rollouts.update(written))) return false;
  const wave = written.waves[written.currentWave];
  const startedNow = written.state === 'RUNNING' && wave?.state === 'RUNNING' && wave.startedAt === now;
  const messages = startedNow ? chunkMessages(written, written.currentWave) : [];
  if (messages.length > 0) await deps.queue.send(messages);
  return true;
}
