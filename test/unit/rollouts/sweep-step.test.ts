/**
 * The sweeper's decision for one rollout (sweepStep), as a pure function of the rollout, its tallies and the time:
 * what it writes next (state, waves, events), which chunks it sends once written, or what it waits for. No storage,
 * no queue: the time is an argument.
 */
import { describe, expect, it } from 'vitest';
import type { RolloutWaveTally, StoredRollout, StoredRolloutWave } from '../../../functions/core/rollouts/model.js';
import { sweepIndexAt } from '../../../functions/core/rollouts/state.js';
import { type SweepStep, sweepNeedsTallies, sweepStep } from '../../../functions/core/rollouts/sweep-step.js';

const STARTED = '2034-03-01T08:00:00.000Z';
const LATER = new Date('2034-03-01T08:10:00.000Z');
const TIMEOUT_SECONDS = 3600;

/** A RUNNING rollout of two waves: wave 1 (chunks 0–1, 1,000 devices) RUNNING since STARTED, wave 2 (chunk 2) PENDING. */
function running(overrides: Partial<StoredRollout> = {}): StoredRollout {
  return {
    id: '01J0000000000000000000000A',
    company: 'acme',
    action: 'DEPLOY',
    what: { type: 'SCENARIO', id: 'lobby-loop', subId: '1.0.0' },
    targetsSpec: { query: 'location.name=Lyon' },
    targets: 1_200,
    waves: [
      { size: 1_000, state: 'RUNNING', startedAt: STARTED, chunks: [0, 1] },
      { size: 200, state: 'PENDING', chunks: [2, 2] },
    ],
    currentWave: 0,
    failureThreshold: 0.1,
    waveTimeoutSeconds: TIMEOUT_SECONDS,
    createdBy: 'alice',
    created: STARTED,
    updated: STARTED,
    state: 'RUNNING',
    events: [
      { at: STARTED, type: 'CREATED', by: 'alice' },
      { at: STARTED, type: 'WAVE_STARTED', wave: 1 },
    ],
    version: 3,
    ...overrides,
  };
}

/** Tallies with `wave`'s chunks done (`chunksDone`) and its counts. */
function tallies(wave: number, chunksDone: number, counts: Record<string, number>): Map<number, RolloutWaveTally> {
  return new Map([[wave, { chunksDone, counts }]]);
}

/** The rollout a step writes. @throws when the step writes nothing. */
function written(step: SweepStep): StoredRollout {
  if (!('next' in step)) throw new Error(`expected a write, got ${step.outcome}`);
  return step.next;
}

/** The chunks a step sends once its write is done. */
function sent(step: SweepStep): number[] {
  return 'messages' in step ? step.messages.flatMap((message) => ('chunk' in message ? [message.chunk] : [])) : [];
}

describe('sweepStep', () => {
  it('waits while the wave is short of reports, then completes it once they are in and starts the next wave', () => {
    const rollout = running();
    expect(sweepStep(rollout, tallies(0, 2, { SUCCESS: 1_000, INSTALLED: 999 }), LATER)).toEqual({ outcome: 'waiting' });

    const step = sweepStep(rollout, tallies(0, 2, { SUCCESS: 1_000, INSTALLED: 990, FAILED: 10 }), LATER);
    expect(step.outcome).toBe('started');
    const next = written(step);
    expect(next.state).toBe('RUNNING');
    expect(next.currentWave).toBe(1);
    expect(next.waves[0]).toMatchObject({ state: 'COMPLETED', completedAt: LATER.toISOString() });
    expect(next.waves[1]).toMatchObject({ state: 'RUNNING', startedAt: LATER.toISOString() });
    expect(next.events?.slice(2)).toEqual([
      { at: LATER.toISOString(), type: 'WAVE_COMPLETED', wave: 1, counts: { SUCCESS: 1_000, INSTALLED: 990, FAILED: 10 } },
      { at: LATER.toISOString(), type: 'WAVE_STARTED', wave: 2 },
    ]);
    // One write conditioned on the version read, then wave 2's one chunk.
    expect(next.version).toBe(4);
    expect(next.updated).toBe(LATER.toISOString());
    expect(sent(step)).toEqual([2]);
    expect(sweepIndexAt(next)).toBe(LATER.toISOString());
  });

  it('sends lost chunks again rather than completing a wave whose chunks have not all run', () => {
    expect(sweepStep(running(), tallies(0, 1, { SUCCESS: 500, INSTALLED: 500 }), LATER)).toEqual({ outcome: 'resend' });
    expect(sweepStep(running(), new Map(), LATER)).toEqual({ outcome: 'resend' });
  });

  it('pauses before the next wave when the share of FAILED reports is above the threshold, and not at it', () => {
    const step = sweepStep(running(), tallies(0, 2, { SUCCESS: 1_000, INSTALLED: 850, FAILED: 150 }), LATER);
    expect(step.outcome).toBe('paused');
    const next = written(step);
    expect(next.state).toBe('PAUSED');
    expect(next.currentWave).toBe(1);
    expect(next.waves.map((wave) => wave.state)).toEqual(['COMPLETED', 'PENDING']);
    expect(next.pausedReason).toBe(
      'Wave 1: 150 of 1000 devices reported FAILED (15 %), above the failure threshold of 10 %. Resume to go on with wave 2, or cancel.',
    );
    expect(next.events?.at(-1)).toEqual({ at: LATER.toISOString(), type: 'PAUSED', wave: 1, reason: next.pausedReason });
    expect(sent(step)).toEqual([]);
    expect(sweepIndexAt(next)).toBeUndefined();

    const atThreshold = sweepStep(running(), tallies(0, 2, { SUCCESS: 1_000, INSTALLED: 900, FAILED: 100 }), LATER);
    expect(atThreshold.outcome).toBe('started');
  });

  it('completes a wave whose reports never all came once its timeout has passed, not a millisecond before', () => {
    const counts = { SUCCESS: 1_000, INSTALLED: 400 };
    const deadline = Date.parse(STARTED) + TIMEOUT_SECONDS * 1000;
    expect(sweepStep(running(), tallies(0, 2, counts), new Date(deadline - 1)).outcome).toBe('waiting');
    const step = sweepStep(running(), tallies(0, 2, counts), new Date(deadline));
    expect(step.outcome).toBe('started');
    expect(written(step).waves[0]?.state).toBe('COMPLETED');
  });

  it('completes an UNDEPLOY wave as soon as its chunks have run: devices send no reports for it', () => {
    const step = sweepStep(running({ action: 'UNDEPLOY' }), tallies(0, 2, { SUCCESS: 1_000 }), LATER);
    expect(step.outcome).toBe('started');
  });

  it('completes the rollout with its last wave, even one above the failure threshold, and takes it out of the sweep', () => {
    const last = running({
      currentWave: 1,
      waves: [
        { size: 1_000, state: 'COMPLETED', startedAt: STARTED, completedAt: STARTED, chunks: [0, 1] },
        { size: 200, state: 'RUNNING', startedAt: STARTED, chunks: [2, 2] },
      ],
    });
    const step = sweepStep(last, tallies(1, 1, { SUCCESS: 200, INSTALLED: 100, FAILED: 100 }), LATER);
    expect(step.outcome).toBe('completed');
    const next = written(step);
    expect(next.state).toBe('COMPLETED');
    expect(next.waves.map((wave) => wave.state)).toEqual(['COMPLETED', 'COMPLETED']);
    expect(next.events?.slice(-2).map((event) => event.type)).toEqual(['WAVE_COMPLETED', 'COMPLETED']);
    expect(sent(step)).toEqual([]);
    expect(sweepIndexAt(next)).toBeUndefined();
  });

  it('leaves a paused, completed or cancelled rollout as it is', () => {
    const done = tallies(0, 2, { SUCCESS: 1_000, INSTALLED: 1_000 });
    for (const state of ['PAUSED', 'COMPLETED', 'CANCELLED'] as const) {
      expect(sweepStep(running({ state }), done, LATER)).toEqual({ outcome: 'skipped' });
    }
  });

  it('starts a scheduled rollout with its first wave once its startAt has come, not before', () => {
    const startAt = '2034-03-02T22:00:00.000Z';
    const scheduled = running({
      state: 'SCHEDULED',
      startAt,
      waves: [
        { size: 1_000, state: 'PENDING', chunks: [0, 1] },
        { size: 200, state: 'PENDING', chunks: [2, 2] },
      ],
      events: [{ at: STARTED, type: 'CREATED', by: 'alice', startAt }],
    });
    expect(sweepIndexAt(scheduled)).toBe(startAt);
    expect(sweepStep(scheduled, new Map(), new Date(Date.parse(startAt) - 1))).toEqual({ outcome: 'waiting' });

    const step = sweepStep(scheduled, new Map(), new Date(startAt));
    expect(step.outcome).toBe('started');
    const next = written(step);
    expect(next.state).toBe('RUNNING');
    expect(next.waves.map((wave) => wave.state)).toEqual(['RUNNING', 'PENDING']);
    expect(next.waves[0]?.startedAt).toBe(startAt);
    expect(next.events?.slice(1)).toEqual([
      { at: startAt, type: 'STARTED' },
      { at: startAt, type: 'WAVE_STARTED', wave: 1 },
    ]);
    expect(sent(step)).toEqual([0, 1]);
  });

  it('starts a running rollout whose current wave is still PENDING', () => {
    const pending = running({
      waves: [
        { size: 1_000, state: 'PENDING', chunks: [0, 1] },
        { size: 200, state: 'PENDING', chunks: [2, 2] },
      ],
    });
    const step = sweepStep(pending, new Map(), LATER);
    expect(step.outcome).toBe('started');
    expect(written(step).waves[0]).toMatchObject({ state: 'RUNNING', startedAt: LATER.toISOString() });
    expect(sent(step)).toEqual([0, 1]);
  });
});

describe('sweepStep on a continuous rollout', () => {
  const continuous = { filters: { 'location.name': ['Lyon'] }, chunkFirstIds: ['kiosk-00001'] };
  const lastWave = (wave: Partial<StoredRolloutWave> = {}) =>
    running({
      continuous,
      waves: [{ size: 500, state: 'RUNNING', startedAt: STARTED, chunks: [0, 0], ...wave }],
    });

  it('keeps it RUNNING after its last wave, for the devices that join, out of the sweep', () => {
    const step = sweepStep(lastWave(), tallies(0, 1, { SUCCESS: 500, INSTALLED: 500 }), LATER);
    expect(step.outcome).toBe('following');
    const next = written(step);
    expect(next.state).toBe('RUNNING');
    expect(next.waves[0]?.state).toBe('COMPLETED');
    expect(next.events?.slice(-2).map((event) => event.type)).toEqual(['WAVE_COMPLETED', 'FOLLOWING']);
    expect(sweepIndexAt(next)).toBeUndefined();
  });

  it('pauses on its last wave when it failed too often, staying on that wave', () => {
    const step = sweepStep(lastWave(), tallies(0, 1, { SUCCESS: 500, INSTALLED: 400, FAILED: 100 }), LATER);
    expect(step.outcome).toBe('paused');
    const next = written(step);
    expect(next.currentWave).toBe(0);
    expect(next.pausedReason).toContain('Resume to let devices that start matching join again, or cancel.');
  });

  it('completes the empty wave of one created without targets at once, whatever the devices that joined report', () => {
    const empty = lastWave({ size: 0, chunks: [0, -1] });
    const step = sweepStep(empty, tallies(0, 0, { SUCCESS: 3, FAILED: 3 }), LATER);
    expect(step.outcome).toBe('following');
    expect(sent(step)).toEqual([]);
  });

  it('takes one past its last wave out of the sweep, recording FOLLOWING once', () => {
    const past = lastWave({ state: 'COMPLETED', completedAt: STARTED });
    const first = written(sweepStep(past, new Map(), LATER));
    expect(first.events?.at(-1)).toEqual({ at: LATER.toISOString(), type: 'FOLLOWING' });
    const again = written(sweepStep(first, new Map(), LATER));
    expect(again.events).toEqual(first.events);
    expect(sweepIndexAt(again)).toBeUndefined();
  });
});

describe('sweepNeedsTallies', () => {
  it('asks for the tallies only when the current wave is RUNNING, so a scheduled start or a pending wave costs no tally read', () => {
    expect(sweepNeedsTallies(running())).toBe(true);
    expect(sweepNeedsTallies(running({ state: 'SCHEDULED', waves: [{ size: 1_200, state: 'PENDING', chunks: [0, 2] }] }))).toBe(false);
    expect(
      sweepNeedsTallies(
        running({
          currentWave: 1,
          waves: [
            { size: 1_000, state: 'COMPLETED', chunks: [0, 1] },
            { size: 200, state: 'PENDING', chunks: [2, 2] },
          ],
        }),
      ),
    ).toBe(false);
    expect(sweepNeedsTallies(running({ state: 'PAUSED' }))).toBe(false);
  });
});
