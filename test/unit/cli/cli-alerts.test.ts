/**
 * `dss alerts rules create`'s condition options, in-process: exactly one condition becomes the body's `condition`
 * (sub-device states upper-cased and each once), anything else is bad usage naming what to give; and how a rule's
 * condition reads in the tables. The CLI against the service is test/e2e/cli-webhooks-alerts.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { conditionOf, conditionText } from '../../../cli/commands/alerts.js';
import { UsageError } from '../../../cli/output.js';

describe('conditionOf', () => {
  it('makes the condition of each kind from its options', () => {
    expect(conditionOf({ disconnectedFor: 15 })).toEqual({ type: 'DISCONNECTED_FOR', minutes: 15 });
    expect(conditionOf({ batteryBelow: 20 })).toEqual({ type: 'BATTERY_BELOW', percent: 20 });
    expect(conditionOf({ subdeviceState: 'down, warning,DOWN', for: 5 })).toEqual({
      type: 'SUBDEVICE_STATE_FOR',
      minutes: 5,
      states: ['DOWN', 'WARNING'],
    });
  });

  it('refuses no condition, two, --for without --subdevice-state, and --subdevice-state without --for', () => {
    const refusals: [Parameters<typeof conditionOf>[0], RegExp][] = [
      [{}, /Give one condition/],
      [{ disconnectedFor: 15, batteryBelow: 20 }, /Give one condition/],
      [{ disconnectedFor: 15, for: 5 }, /--for goes with --subdevice-state/],
      [{ subdeviceState: 'DOWN' }, /needs --for/],
    ];
    for (const [options, message] of refusals) {
      expect(() => conditionOf(options), JSON.stringify(options)).toThrow(UsageError);
      expect(() => conditionOf(options)).toThrow(message);
    }
  });
});

describe('conditionText', () => {
  it('says each condition in a few words', () => {
    expect(conditionText({ type: 'DISCONNECTED_FOR', minutes: 15 })).toBe('disconnected for 15 min');
    expect(conditionText({ type: 'SUBDEVICE_STATE_FOR', minutes: 5, states: ['DOWN', 'WARNING'] })).toBe(
      'sub-device DOWN, WARNING for 5 min',
    );
    expect(conditionText({ type: 'BATTERY_BELOW', percent: 20 })).toBe('battery below 20 %');
  });
});
