/**
 * A COMMAND rollout's page without a browser: its wave counts as the page reads them (targets done, which waves to read
 * for failures, when to read them again) and its failed devices grouped by the device's message.
 */
import { describe, expect, it } from 'vitest';
import type { components } from '../../../client/index.js';
import {
  commandFailureKey,
  commandFailureReadsOf,
  groupByCommandMessage,
  targetResultKeys,
  targetsDone,
} from '../../../console/src/rollouts/command-rollout.js';
import { doneOf } from '../../../console/src/rollouts/progress.js';

type Rollout = components['schemas']['Rollout'];

/** A COMMAND rollout's waves, from their counts. */
const waves = (...counts: Record<string, number>[]) => ({ waves: counts.map((wave) => ({ counts: wave })) });

describe("a COMMAND rollout's counts", () => {
  const rollout = waves(
    { SUCCESS: 2, COMMAND_NOT_ADVERTISED: 1, COMMANDS: 3, SUCCEEDED: 1, FAILED: 2 },
    { SUCCESS: 5, COMMANDS: 6, SUCCEEDED: 4, EXPIRED: 1, CANCELLED: 1 },
    {},
  );

  it('counts a target done once its wave reached it (commands queued, or none and why), not per command', () => {
    expect(targetsDone(rollout)).toBe(8);
    const whole = { ...rollout, action: 'COMMAND', targets: 10, joined: 0 } as unknown as Rollout;
    expect(doneOf(whole)).toBe(8);
    expect(targetResultKeys(rollout)).toEqual(['SUCCESS', 'COMMAND_NOT_ADVERTISED']);
  });

  it('reads only the waves whose counts show failed or expired commands, or targets that got none', () => {
    expect(commandFailureReadsOf(rollout)).toEqual({ failed: [1], expired: [2], results: [1] });
    expect(commandFailureReadsOf(waves({ SUCCESS: 100, COMMANDS: 100, SUCCEEDED: 99, CANCELLED: 1 }))).toEqual({
      failed: [],
      expired: [],
      results: [],
    });
  });

  it('reads them again when the failure figures change, not when commands succeed', () => {
    const before = commandFailureKey(rollout);
    expect(commandFailureKey(waves({ ...rollout.waves[0]?.counts, SUCCEEDED: 3 }, rollout.waves[1]?.counts ?? {}, {}))).toBe(before);
    expect(commandFailureKey(waves({ ...rollout.waves[0]?.counts, FAILED: 3 }, rollout.waves[1]?.counts ?? {}, {}))).not.toBe(before);
  });

  it('groups the devices whose command failed by what they said, each device once per message', () => {
    const targets = [
      {
        deviceId: 'k1',
        commands: [
          { state: 'FAILED', message: 'Paper jam' },
          { state: 'FAILED', message: 'Paper jam' },
        ],
      },
      {
        deviceId: 'k2',
        commands: [
          { state: 'FAILED', message: 'Paper jam' },
          { state: 'SUCCEEDED', message: 'OK' },
        ],
      },
      { deviceId: 'k3', commands: [{ state: 'FAILED' }] },
      { deviceId: 'k4', commands: [{ state: 'EXPIRED' }] },
    ];
    expect(groupByCommandMessage(targets, 'FAILED')).toEqual([
      { reason: 'Paper jam', deviceIds: ['k1', 'k2'] },
      { reason: 'No message', deviceIds: ['k3'] },
    ]);
  });
});
