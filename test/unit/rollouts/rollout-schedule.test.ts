/**
 * Scheduled rollouts below the HTTP layer, on DynamoDB Local (the real rollout repository and its sweep index) with an
 * injected clock: a rollout created with `startAt` is SCHEDULED and sends nothing, the sweeper starts it once its time
 * has come (once, however many sweepers race), cancel applies while it waits, pause and resume do not, and a `startAt`
 * in the past or more than MAX_ROLLOUT_SCHEDULE_DAYS ahead is refused.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { CursorCodec } from '../../../functions/adapters/aws/cursor-codec.js';
import { DynamoDbRolloutRepository } from '../../../functions/adapters/aws/dynamodb-rollout-repository.js';
import { rolloutCreate } from '../../../functions/contract/routes/rollouts.js';
import { createRollout, scheduledStart } from '../../../functions/core/rollouts/create.js';
import { MAX_ROLLOUT_SCHEDULE_DAYS, type RolloutCreateInput } from '../../../functions/core/rollouts/model.js';
import type { RolloutDependencies, RolloutRepository } from '../../../functions/core/rollouts/ports.js';
import { getRollout, listRollouts } from '../../../functions/core/rollouts/reads.js';
import { sweepRollouts } from '../../../functions/core/rollouts/sweeper.js';
import { cancelRollout, pauseRollout, resumeRollout } from '../../../functions/core/rollouts/transitions.js';
import { BadRequestError, ConflictError } from '../../../functions/core/shared/errors.js';
import type { Principal } from '../../../functions/core/shared/principal.js';
import { LOCAL_TABLES } from '../../../functions/local/runtime.js';
import { useLocalTables } from '../../support/local-tables.js';
import { everyVersionExists, RecordingQueue, readingTogether } from '../../support/rollout-fixtures.js';
import { bodyOf } from '../../support/route-input.js';

const HOUR = 60 * 60_000;
const DAY = 24 * HOUR;
const START = Date.parse('2033-06-01T08:00:00.000Z');
const SCENARIO = { type: 'SCENARIO' as const, id: 'lobby-loop', subId: '1.0.0' };

let client: DynamoDBDocumentClient;
let clock: Date;
let company: string;
let companyCount = 0;
let queue: RecordingQueue;
let rollouts: RolloutRepository;
let deps: RolloutDependencies;

const now = () => clock;
const advance = (ms: number) => {
  clock = new Date(clock.getTime() + ms);
};
const alice = (): Principal => ({ subject: 'alice', companies: [company], scopes: new Set(['deployments:write']) });
const devices = (count: number) => Array.from({ length: count }, (_, index) => `kiosk-${String(index + 1).padStart(5, '0')}`);
const fakeScenarios = everyVersionExists;

const create = (input: Partial<RolloutCreateInput>, targets: readonly string[] = devices(3)) =>
  createRollout(deps, alice(), company, { action: 'DEPLOY', what: SCENARIO, targets: { ids: [...targets] }, ...input }, targets);
const sweep = (repository: RolloutRepository = rollouts) => sweepRollouts({ rollouts: repository, queue, chunkTimeoutSeconds: 15, now });
const inAnHour = () => new Date(clock.getTime() + HOUR).toISOString();

const localTables = useLocalTables('rollout-schedule-');

beforeEach(() => {
  client = localTables();
  // Each test has its own company and a clock a week earlier than the previous test's: the sweep index is shared, and
  // what earlier tests left scheduled or running (at most a few hours after their clock) is not due for this one.
  companyCount += 1;
  company = `schedule-${companyCount}`;
  clock = new Date(START - companyCount * 7 * DAY);
  queue = new RecordingQueue();
  rollouts = new DynamoDbRolloutRepository(client, LOCAL_TABLES, new CursorCodec(() => Buffer.alloc(32, 7)));
  deps = { rollouts, queue, scenarios: fakeScenarios, now };
});

describe('a scheduled rollout', () => {
  it('is SCHEDULED with every wave PENDING and sends nothing; GET and the listing show its startAt', async () => {
    // An offset is kept as the instant it names, shown in UTC.
    const startAt = new Date(clock.getTime() + HOUR).toISOString().replace('Z', '+00:00');
    const view = await create({ startAt, waves: [1] });
    const utc = new Date(Date.parse(startAt)).toISOString();
    expect(view).toMatchObject({
      state: 'SCHEDULED',
      startAt: utc,
      targets: 3,
      waves: [
        { size: 1, state: 'PENDING', counts: {} },
        { size: 2, state: 'PENDING', counts: {} },
      ],
    });
    expect(view.waves[0]?.startedAt).toBeUndefined();
    expect(queue.sent).toEqual([]);
    expect(await getRollout(deps, alice(), company, view.id)).toEqual(view);
    expect((await listRollouts(deps, alice(), company, { limit: 10 })).items).toEqual([view]);
    // A rollout started at creation has no startAt.
    expect((await create({})).startAt).toBeUndefined();
  });

  it('is started by the sweeper once its startAt has come, not before, and only once', async () => {
    const view = await create({ startAt: inAnHour() });
    const key = `${company}/${view.id}`;
    advance(HOUR - 1_000);
    const early = await sweep();
    expect([...early.started, ...early.waiting]).not.toContain(key);
    expect(queue.sent).toEqual([]);
    expect((await getRollout(deps, alice(), company, view.id)).state).toBe('SCHEDULED');

    advance(1_000);
    expect((await sweep()).started).toEqual([key]);
    expect(queue.sent).toEqual([{ type: 'RolloutChunk', company, rolloutId: view.id, wave: 0, chunk: 0 }]);
    const started = await getRollout(deps, alice(), company, view.id);
    expect(started).toMatchObject({ state: 'RUNNING', startAt: view.startAt });
    expect(started.waves[0]).toMatchObject({ state: 'RUNNING', startedAt: clock.toISOString() });

    // The next sweep finds a RUNNING rollout waiting for its chunk, and sends nothing again.
    expect((await sweep()).waiting).toEqual([key]);
    expect(queue.sent).toHaveLength(1);
  });

  it('is started once by two sweepers racing: one writes SCHEDULED → RUNNING and sends, the other gets a conflict', async () => {
    const view = await create({ startAt: inAnHour() });
    advance(HOUR);
    // Both read the rollout before either writes.
    const racing = readingTogether(rollouts);
    const [one, two] = await Promise.all([sweep(racing), sweep(racing)]);
    const key = `${company}/${view.id}`;
    expect([...one.started, ...two.started]).toEqual([key]);
    expect([...one.conflict, ...two.conflict]).toEqual([key]);
    expect(queue.sent).toEqual([{ type: 'RolloutChunk', company, rolloutId: view.id, wave: 0, chunk: 0 }]);
    expect((await getRollout(deps, alice(), company, view.id)).state).toBe('RUNNING');
  });

  it('may be cancelled while it waits, and then never starts; pause and resume answer a conflict', async () => {
    const view = await create({ startAt: inAnHour(), waves: [1] });
    await expect(pauseRollout(deps, alice(), company, view.id)).rejects.toThrow(ConflictError);
    await expect(resumeRollout(deps, alice(), company, view.id)).rejects.toThrow(
      `Rollout '${view.id}' is SCHEDULED; only a PAUSED rollout can be resumed.`,
    );
    const cancelled = await cancelRollout(deps, alice(), company, view.id);
    expect(cancelled).toMatchObject({ state: 'CANCELLED', startAt: view.startAt });
    expect(cancelled.waves.map((wave) => [wave.state, wave.startedAt, wave.completedAt])).toEqual([
      ['CANCELLED', undefined, undefined],
      ['CANCELLED', undefined, undefined],
    ]);
    advance(2 * HOUR);
    const swept = await sweep();
    expect(Object.values(swept).flat()).not.toContain(`${company}/${view.id}`);
    expect(queue.sent).toEqual([]);
    expect((await getRollout(deps, alice(), company, view.id)).state).toBe('CANCELLED');
  });

  it(`refuses a startAt not in the future, or more than ${MAX_ROLLOUT_SCHEDULE_DAYS} days ahead, with a 400 saying what to do`, async () => {
    const refusal = async (startAt: string) => {
      try {
        await create({ startAt });
      } catch (error) {
        return error;
      }
      throw new Error(`${startAt} was accepted`);
    };
    const past = await refusal(new Date(clock.getTime() - 1_000).toISOString());
    expect(past).toBeInstanceOf(BadRequestError);
    expect((past as BadRequestError).message).toMatch(/is not in the future .*give a later time, or leave startAt out/);
    expect((past as BadRequestError).violations).toEqual([{ path: '/startAt', message: 'must be in the future' }]);
    expect(await refusal(clock.toISOString())).toBeInstanceOf(BadRequestError);

    const latest = clock.getTime() + MAX_ROLLOUT_SCHEDULE_DAYS * DAY;
    const far = await refusal(new Date(latest + 1_000).toISOString());
    expect(far).toBeInstanceOf(BadRequestError);
    expect((far as BadRequestError).message).toContain(`give a time until ${new Date(latest).toISOString()}`);
    expect((far as BadRequestError).violations[0]?.path).toBe('/startAt');
    expect((await listRollouts(deps, alice(), company, { limit: 10 })).items).toEqual([]);
    expect(queue.sent).toEqual([]);

    // The bound itself is accepted.
    expect(scheduledStart(new Date(latest).toISOString(), clock)).toBe(new Date(latest).toISOString());
  });
});

describe('the create body', () => {
  const body = { action: 'DEPLOY', what: SCENARIO, targets: { query: '' } };
  it('takes startAt as an ISO-8601 date-time with an offset, and refuses one without', () => {
    expect(bodyOf(rolloutCreate, { ...body, startAt: '2030-03-01T22:00:00+01:00' })).toMatchObject({
      startAt: '2030-03-01T22:00:00+01:00',
    });
    for (const startAt of ['2030-03-01T22:00:00', 'tonight', 1_900_000_000]) {
      let refused: unknown;
      try {
        bodyOf(rolloutCreate, { ...body, startAt });
      } catch (error) {
        refused = error;
      }
      expect(refused).toBeInstanceOf(BadRequestError);
      expect((refused as BadRequestError).violations.map((violation) => violation.path)).toEqual(['/startAt']);
    }
  });
});
