/**
 * A rollout that paused or completed becomes one RolloutStateChanged bus event, read from the rollouts table's stream:
 * which pairs of images give one (and which give none), what it carries (who paused it and why, from the rollout's
 * newest event), that a replayed record gives the same event id (so the local bus writes it once), that only
 * `ROLLOUT#` items are read as rollouts, and that the local stream stand-in passes only those records on.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { rolloutItem } from '../../../functions/adapters/aws/rollout-items.js';
import { rolloutFromImage, type StreamImage } from '../../../functions/adapters/aws/stream-images.js';
import { LocalEventBus } from '../../../functions/adapters/embedded/local-event-bus.js';
import { rolloutChanges } from '../../../functions/contract/functions.js';
import { publishRolloutStateChanges, rolloutStateChangeOf } from '../../../functions/core/rollouts/changes.js';
import type { StoredRollout } from '../../../functions/core/rollouts/model.js';
import { withEvents } from '../../../functions/core/rollouts/state.js';
import { busEventId, webhookEventOf } from '../../../functions/core/webhooks/events.js';
import { recordsFilter } from '../../../functions/local/event-functions.js';

const CREATED = '2033-06-01T08:00:00.000Z';
const PAUSED_AT = '2033-06-01T08:20:00.000Z';
const REASON =
  'Wave 1: 2 of 10 devices reported FAILED (20 %), above the failure threshold of 10 %. Resume to go on with wave 2, or cancel.';

/** A RUNNING two-wave DEPLOY rollout, as the create use case stores it. */
function running(): StoredRollout {
  return withEvents(
    {
      id: '01JZ0000000000000000000000',
      company: 'acme',
      action: 'DEPLOY',
      what: { type: 'SCENARIO', id: 'lobby-loop', subId: '1.2.0' },
      targetsSpec: { query: 'location.name=Lyon' },
      targets: 20,
      waves: [
        { size: 10, state: 'RUNNING', startedAt: CREATED, chunks: [0, 0] },
        { size: 10, state: 'PENDING', chunks: [1, 1] },
      ],
      currentWave: 0,
      failureThreshold: 0.1,
      waveTimeoutSeconds: 3600,
      createdBy: 'alice',
      created: CREATED,
      updated: CREATED,
      state: 'RUNNING',
      version: 1,
    },
    { at: CREATED, type: 'CREATED', by: 'alice' },
    { at: CREATED, type: 'WAVE_STARTED', wave: 1 },
  );
}

/** The rollout paused by the sweeper on wave 1's failures. */
function pausedOnFailures(before: StoredRollout): StoredRollout {
  return withEvents(
    { ...before, state: 'PAUSED', pausedReason: REASON, updated: PAUSED_AT, version: before.version + 1 },
    { at: PAUSED_AT, type: 'WAVE_COMPLETED', wave: 1, counts: { SUCCESS: 10, INSTALLED: 8, FAILED: 2 } },
    { at: PAUSED_AT, type: 'PAUSED', wave: 1, reason: REASON },
  );
}

describe('rolloutStateChangeOf', () => {
  it('gives one PAUSED event with the wave and the reason when the sweeper pauses a rollout on failures', () => {
    const before = running();
    expect(rolloutStateChangeOf(before, pausedOnFailures(before))).toEqual({
      type: 'RolloutStateChanged',
      company: 'acme',
      rolloutId: before.id,
      action: 'DEPLOY',
      what: { type: 'SCENARIO', id: 'lobby-loop', subId: '1.2.0' },
      state: 'PAUSED',
      at: PAUSED_AT,
      wave: 1,
      reason: REASON,
    });
  });

  it("names the operator who paused it, and the rollout's newest pause when it was paused before", () => {
    const first = pausedOnFailures(running());
    const resumed = withEvents(
      { ...first, state: 'RUNNING', version: 3 },
      { at: '2033-06-01T09:00:00.000Z', type: 'RESUMED', by: 'olivia' },
    );
    const paused = withEvents(
      { ...resumed, state: 'PAUSED', pausedReason: 'Paused by alice.', version: 4 },
      { at: '2033-06-01T09:05:00.000Z', type: 'PAUSED', by: 'alice' },
    );
    const event = rolloutStateChangeOf(resumed, paused);
    expect(event).toMatchObject({ state: 'PAUSED', at: '2033-06-01T09:05:00.000Z', by: 'alice' });
    expect(event).not.toHaveProperty('reason');
    expect(event).not.toHaveProperty('wave');
    // Two pauses of one rollout are two events.
    expect(busEventId(event as NonNullable<typeof event>)).not.toBe(
      busEventId(rolloutStateChangeOf(running(), first) as NonNullable<typeof event>),
    );
  });

  it('gives one COMPLETED event, naming the command of a COMMAND rollout', () => {
    const { what: _what, ...deploy } = running();
    const before: StoredRollout = {
      ...deploy,
      action: 'COMMAND',
      command: { command: 'reboot', arguments: null, expiresInSeconds: 600 },
      commandBy: 'alice',
    };
    const done = withEvents(
      { ...before, state: 'COMPLETED', version: 2 },
      { at: '2033-06-01T10:00:00.000Z', type: 'WAVE_COMPLETED', wave: 2, counts: {} },
      { at: '2033-06-01T10:00:00.000Z', type: 'COMPLETED' },
    );
    expect(rolloutStateChangeOf(before, done)).toEqual({
      type: 'RolloutStateChanged',
      company: 'acme',
      rolloutId: before.id,
      action: 'COMMAND',
      command: 'reboot',
      state: 'COMPLETED',
      at: '2033-06-01T10:00:00.000Z',
    });
  });

  it('gives nothing when the state did not become PAUSED or COMPLETED', () => {
    const before = running();
    const paused = pausedOnFailures(before);
    // A wave started, the tallies moved, the rollout was created, resumed, cancelled or deleted.
    expect(rolloutStateChangeOf(before, { ...before, currentWave: 1, version: 2 })).toBeUndefined();
    expect(rolloutStateChangeOf(undefined, before)).toBeUndefined();
    expect(rolloutStateChangeOf(paused, { ...paused, state: 'RUNNING' })).toBeUndefined();
    expect(rolloutStateChangeOf(before, { ...before, state: 'CANCELLED' })).toBeUndefined();
    expect(rolloutStateChangeOf(paused, undefined)).toBeUndefined();
    // A paused rollout written again (a note, an index attribute) is no second pause.
    expect(rolloutStateChangeOf(paused, { ...paused, version: paused.version + 1 })).toBeUndefined();
  });

  it('falls back on the time of the write for a rollout stored before events were recorded', () => {
    const { events: _events, ...before } = running();
    const event = rolloutStateChangeOf(before, { ...before, state: 'COMPLETED', updated: '2033-06-02T00:00:00.000Z' });
    expect(event?.at).toBe('2033-06-02T00:00:00.000Z');
  });

  it('is rollout.paused to webhooks, with the reason and without the bus fields', () => {
    const before = running();
    const event = rolloutStateChangeOf(before, pausedOnFailures(before));
    expect(webhookEventOf(event as NonNullable<typeof event>)).toEqual({
      company: 'acme',
      eventId: `${before.id}:PAUSED:${PAUSED_AT}`,
      type: 'rollout.paused',
      timestamp: PAUSED_AT,
      data: {
        rolloutId: before.id,
        action: 'DEPLOY',
        what: { type: 'SCENARIO', id: 'lobby-loop', subId: '1.2.0' },
        state: 'PAUSED',
        wave: 1,
        reason: REASON,
      },
    });
  });
});

/** A stream record of the rollouts table, both images as DynamoDB writes them. */
function record(oldItem: Record<string, unknown> | undefined, newItem: Record<string, unknown> | undefined, id: string): DynamoDBRecord {
  const image = (item: Record<string, unknown> | undefined) =>
    item === undefined
      ? undefined
      : (marshall(item, { removeUndefinedValues: true }) as NonNullable<DynamoDBRecord['dynamodb']>['NewImage']);
  return { eventID: id, eventName: 'MODIFY', dynamodb: { OldImage: image(oldItem), NewImage: image(newItem) } };
}

/** A record's new image, as the handler reads it. */
const newImage = (change: DynamoDBRecord) => change.dynamodb?.NewImage as StreamImage;

describe('the rollouts stream', () => {
  let folder: string | undefined;
  afterEach(async () => {
    if (folder !== undefined) await rm(folder, { recursive: true, force: true });
  });

  it('reads rollout items as rollouts, and no other item of the table', () => {
    const rollout = running();
    expect(rolloutFromImage(newImage(record(undefined, rolloutItem(rollout), '1')))).toEqual(rollout);
    const tally = { pk: `COUNTS#acme#${rollout.id}#3`, sk: '0', FAILED: 2 };
    expect(rolloutFromImage(newImage(record(undefined, tally, '2')))).toBeUndefined();
    expect(rolloutFromImage(newImage(record(undefined, { pk: 'STREAM#ANCHOR', sk: 'STREAM#ANCHOR' }, '3')))).toBeUndefined();
    expect(rolloutFromImage(undefined)).toBeUndefined();
  });

  it('writes a replayed pause once to the local bus', async () => {
    folder = await mkdtemp(join(tmpdir(), 'rollout-changes-'));
    const bus = new LocalEventBus(join(folder, 'events.jsonl'));
    const before = running();
    const change = record(rolloutItem(before), rolloutItem(pausedOnFailures(before)), '1');
    const events = () => [
      rolloutStateChangeOf(rolloutFromImage(change.dynamodb?.OldImage as StreamImage), rolloutFromImage(newImage(change))),
    ];
    const [first] = events();
    const [again] = events();
    expect(busEventId(again as NonNullable<typeof again>)).toBe(busEventId(first as NonNullable<typeof first>));
    await publishRolloutStateChanges({ events: bus }, events() as NonNullable<typeof first>[]);
    await publishRolloutStateChanges({ events: bus }, events() as NonNullable<typeof first>[]);
    const lines = (await readFile(join(folder, 'events.jsonl'), 'utf8')).trim().split('\n');
    expect(lines.map((line) => JSON.parse(line).type)).toEqual(['RolloutStateChanged']);
  });

  it("passes the local consumer only the rollout items' records, and invokes it for none when a batch has none", async () => {
    const filter = recordsFilter(rolloutChanges.trigger);
    const rollout = rolloutItem(running());
    const tally = { pk: 'COUNTS#acme#r#3', sk: '0', FAILED: 2 };
    const received: DynamoDBStreamEvent[] = [];
    const invoke = async (event: DynamoDBStreamEvent) => {
      received.push(event);
      return { batchItemFailures: [] };
    };
    await filter({ Records: [record(undefined, tally, '1'), record(rollout, rollout, '2'), record(rollout, undefined, '3')] }, invoke);
    expect(received.map((event) => event.Records.map((kept) => kept.eventID))).toEqual([['2']]);
    await filter({ Records: [record(undefined, tally, '4')] }, invoke);
    expect(received).toHaveLength(1);
  });
});
