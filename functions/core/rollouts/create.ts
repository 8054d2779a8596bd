/**
 * Creating a rollout: the input checked, the targets (resolved by the caller: targets.ts) split into waves and chunks
 * of ROLLOUT_CHUNK_SIZE devices, written with the rollout item, and the first wave's work sent at once, or the
 * rollout left SCHEDULED until its `startAt` (the sweeper starts it).
 */
import { ulid } from 'ulid';
import { DEFAULT_COMMAND_EXPIRY_SECONDS, MAX_COMMAND_EXPIRY_SECONDS, MIN_COMMAND_EXPIRY_SECONDS } from '../commands/model.js';
import { BadRequestError, UnprocessableRequestError } from '../shared/errors.js';
import { authorize, authorizeCompany, type Principal } from '../shared/principal.js';
import { chunkMessages } from './dispatch.js';
import {
  DEFAULT_FAILURE_THRESHOLD,
  DEFAULT_WAVE_TIMEOUT_SECONDS,
  MAX_ROLLOUT_SCHEDULE_DAYS,
  MAX_ROLLOUT_TARGETS,
  MAX_ROLLOUT_WAVES,
  MAX_WAVE_TIMEOUT_SECONDS,
  MIN_WAVE_TIMEOUT_SECONDS,
  ROLLOUT_CHUNK_SIZE,
  type RolloutChunk,
  type RolloutCreateInput,
  type RolloutView,
  type RolloutWorkMessage,
  type StoredRollout,
  type StoredRolloutWave,
} from './model.js';
import type { RolloutDependencies } from './ports.js';
import { rolloutView } from './reads.js';

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

/** Checks the create input's bounds (the route's schema checks them first). @throws BadRequestError listing each one. */
export function checkCreateInput(input: RolloutCreateInput): void {
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
  errors.push(...subjectErrors(input));
  if (input.continuous === true && !('query' in input.targets)) {
    errors.push({
      path: 'continuous',
      message: 'a continuous rollout selects its devices with targets.query (devices that match it later join); listed ids never change',
    });
  }
  if (errors.length > 0) throw new BadRequestError('The rollout is not valid.', errors);
}

/** What is wrong with the input's `what` or `command` for its action (the route's schema checks them first). */
function subjectErrors(input: RolloutCreateInput): { path: string; message: string }[] {
  if (input.action !== 'COMMAND') {
    return input.what === undefined || input.command !== undefined
      ? [{ path: 'what', message: `a ${input.action} rollout gives 'what' (the scenario version), and no 'command'` }]
      : [];
  }
  if (input.command === undefined || input.what !== undefined) {
    return [{ path: 'command', message: "a COMMAND rollout gives 'command' (the command to run), and no 'what'" }];
  }
  const expires = input.command.expiresInSeconds ?? DEFAULT_COMMAND_EXPIRY_SECONDS;
  if (!Number.isInteger(expires) || expires < MIN_COMMAND_EXPIRY_SECONDS || expires > MAX_COMMAND_EXPIRY_SECONDS) {
    return [
      {
        path: 'command/expiresInSeconds',
        message: `must be whole seconds from ${MIN_COMMAND_EXPIRY_SECONDS} to ${MAX_COMMAND_EXPIRY_SECONDS}`,
      },
    ];
  }
  return [];
}

/**
 * What the rollout does on each target, as stored: the scenario version (checked to exist), or the command with who
 * runs it (the caller's username).
 * @throws ForbiddenError for a COMMAND rollout when the caller lacks `devices:write` (running commands writes to
 *   devices); UnprocessableRequestError when the scenario version does not exist.
 */
export async function subjectOf(
  deps: Pick<RolloutDependencies, 'scenarios'>,
  principal: Principal,
  companyId: string,
  input: RolloutCreateInput,
): Promise<Pick<StoredRollout, 'what' | 'command' | 'commandBy'>> {
  if (input.action !== 'COMMAND') {
    const what = input.what as NonNullable<RolloutCreateInput['what']>;
    await checkVersionExists(deps, companyId, what);
    return { what: { type: 'SCENARIO', id: what.id, subId: what.subId } };
  }
  authorize(principal, 'devices:write');
  const command = input.command as NonNullable<RolloutCreateInput['command']>;
  return {
    command: {
      command: command.command,
      arguments: command.arguments ?? null,
      expiresInSeconds: command.expiresInSeconds ?? DEFAULT_COMMAND_EXPIRY_SECONDS,
    },
    commandBy: principal.username ?? principal.subject,
  };
}

/**
 * The instant a scheduled rollout starts: `startAt` (ISO-8601 with any offset) as UTC ISO-8601 (`…Z`), since the sweep
 * index compares its times as text and only one form orders as time does.
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
 * Creates a rollout of `input.what` (or, action COMMAND, of `input.command`) on `targetIds` and starts its first wave,
 * or schedules it. Writes the target
 * chunks, then the rollout item, then (started now) sends wave 1's work messages (best effort: a failure is reported
 * through `onError`, and the sweeper sends them again after ROLLOUT_CHUNK_TIMEOUT_SECONDS).
 * - Without `startAt`: RUNNING, wave 1 RUNNING since now, in the sweep index.
 * - With `startAt`: SCHEDULED, every wave PENDING, in the sweep index at `startAt`; nothing is sent or deployed until
 *   the sweeper starts it (sweepRollouts, sweeper.ts). The targets are resolved now all the same, not at the start:
 *   the caller learns at once whether they match no device or too many (422) instead of the rollout failing unattended
 *   at night, the rollout shows its target count while it waits, and the sweeper needs no search access.
 * @param targetIds the resolved targets, sorted by device id, unique (resolveRolloutTargets); the devices are
 *   deployed in this order, in waves of the sizes asked for, the rest forming the last wave.
 * @param selection the filters `targets.query` parsed into (field → accepted values): what a continuous rollout
 *   matches changed devices against. Required with `continuous`.
 * @returns the rollout as created (every count empty).
 * @throws ForbiddenError for a company outside the token, or a COMMAND rollout without `devices:write`.
 * @throws BadRequestError when a wave size, the threshold, the timeout or a command's expiry is out of bounds, `what`
 *   or `command` does not fit the action, or `startAt` is not in the
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
  const subject = await subjectOf(deps, principal, companyId, input);
  const clock = deps.now?.() ?? new Date();
  const startAt = input.startAt === undefined ? undefined : scheduledStart(input.startAt, clock);
  const now = clock.toISOString();
  const { chunks, waves } = planChunks(targetIds, input.waves, startAt === undefined ? now : undefined);
  const rollout: StoredRollout = {
    id: ulid(Date.parse(now)),
    company: companyId,
    action: input.action,
    ...subject,
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
export function checkTargetCount(count: number, continuous: boolean): void {
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
async function checkVersionExists(
  deps: Pick<RolloutDependencies, 'scenarios'>,
  companyId: string,
  what: NonNullable<RolloutCreateInput['what']>,
): Promise<void> {
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
