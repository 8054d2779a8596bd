/** The event log in words (client/rollout-events.ts), as the CLI and the console show it. */
import { describe, expect, it, vi } from 'vitest';
import { printRollout } from '../../../cli/commands/rollouts.js';
import { countsInWords, describeRolloutEvent, EVENTS_KEPT_FIRST, eventLogLines, rolloutSubject } from '../../../client/rollout-events.js';
import { ROLLOUT_EVENTS_FIRST } from '../../../functions/core/rollouts/model.js';

const at = '2030-01-01T10:00:00.000Z';
const words = (event: Parameters<typeof describeRolloutEvent>[0], action: 'DEPLOY' | 'UNDEPLOY' = 'DEPLOY') =>
  describeRolloutEvent(event, { action, time: (iso) => `<${iso}>` });

describe('describeRolloutEvent', () => {
  it('says what happened, who did it and why', () => {
    expect(words({ at, type: 'CREATED', by: 'alice' })).toBe('Created by alice');
    expect(words({ at, type: 'CREATED', by: 'alice', startAt: '2030-01-02T00:00:00.000Z' })).toBe(
      'Created by alice, scheduled for <2030-01-02T00:00:00.000Z>',
    );
    expect(words({ at, type: 'STARTED' })).toBe('Started');
    expect(words({ at, type: 'WAVE_STARTED', wave: 2 })).toBe('Wave 2 started');
    expect(words({ at, type: 'WAVE_COMPLETED', wave: 2, counts: { SUCCESS: 98, FAILED: 2, INSTALLED: 96 } })).toBe(
      'Wave 2 completed: 98 deployed, 96 installed, 2 failed',
    );
    expect(
      words({ at, type: 'WAVE_COMPLETED', wave: 1, counts: { SUCCESS: 1200, TARGET_NOT_FOUND: 3, ALREADY_DEPLOYED: 0 } }, 'UNDEPLOY'),
    ).toBe('Wave 1 completed: 1,200 undeployed, 3 target not found');
    expect(words({ at, type: 'WAVE_COMPLETED', wave: 1, counts: {} })).toBe('Wave 1 completed: nothing deployed');
    expect(words({ at, type: 'PAUSED', by: 'alice' })).toBe('Paused by alice');
    expect(words({ at, type: 'PAUSED', wave: 1, reason: 'Wave 1: 2 of 10 devices reported FAILED.' })).toBe(
      'Paused: Wave 1: 2 of 10 devices reported FAILED.',
    );
    expect(words({ at, type: 'RESUMED', by: 'bob' })).toBe('Resumed by bob');
    expect(words({ at, type: 'CANCELLED', by: 'bob' })).toBe('Cancelled by bob');
    expect(words({ at, type: 'COMPLETED' })).toBe('Completed');
    expect(words({ at, type: 'FOLLOWING' })).toBe('All waves done; following devices that join');
  });

  it('countsInWords orders deployed, installed, failed, then the causes by name', () => {
    expect(countsInWords({ WHAT_NOT_FOUND: 1, ALREADY_DEPLOYED: 2, SUCCESS: 3 })).toBe('3 deployed, 2 already deployed, 1 what not found');
  });

  it("countsInWords names a COMMAND wave's targets sent, its commands and their final states first", () => {
    expect(countsInWords({ COMMAND_NOT_ADVERTISED: 1, FAILED: 1, COMMANDS: 4, SUCCESS: 3, SUCCEEDED: 2, EXPIRED: 1 }, 'COMMAND')).toBe(
      '3 sent, 4 commands, 2 succeeded, 1 failed, 1 expired, 1 command not advertised',
    );
    expect(countsInWords({}, 'COMMAND')).toBe('nothing sent');
  });

  it('rolloutSubject says what a rollout does: its scenario version, or its command', () => {
    expect(rolloutSubject({ action: 'DEPLOY', what: { id: 'welcome', subId: '1.2.0' } })).toBe('welcome@1.2.0');
    expect(rolloutSubject({ action: 'COMMAND', command: { command: 'reboot' } })).toBe('command reboot');
  });
});

describe('eventLogLines', () => {
  it('keeps the service first events bound, and puts the dropped count between the first kept events and the newest', () => {
    expect(EVENTS_KEPT_FIRST).toBe(ROLLOUT_EVENTS_FIRST);
    const events = Array.from({ length: 12 }, (_, index) => ({ at, type: 'RESUMED' as const, by: `op-${index}` }));
    expect(eventLogLines({ events, eventsDropped: 0 }).every((line) => line.kind === 'event')).toBe(true);
    const lines = eventLogLines({ events, eventsDropped: 7 });
    expect(lines).toHaveLength(13);
    expect(lines[EVENTS_KEPT_FIRST]).toEqual({ kind: 'dropped', count: 7 });
    expect(lines[EVENTS_KEPT_FIRST + 1]).toEqual({ kind: 'event', event: events[EVENTS_KEPT_FIRST] });
  });
});

describe('dss rollout get', () => {
  it('prints the event log after the waves, with the dropped events in their place', () => {
    const events = Array.from({ length: 11 }, (_, index) => ({ at, type: 'PAUSED' as const, by: `op-${index}` }));
    const written: string[] = [];
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      written.push(String(chunk));
      return true;
    });
    try {
      printRollout(
        {
          id: '01M840XZ7Q7092F2K9K69CPWC3',
          state: 'PAUSED',
          action: 'DEPLOY',
          what: { type: 'SCENARIO', id: 'acme-welcome', subId: '1.1.0' },
          targets: 1,
          waves: [{ size: 1, state: 'RUNNING', counts: {} }],
          failureThreshold: 0.1,
          waveTimeoutSeconds: 3600,
          note: null,
          createdBy: 'alice',
          created: at,
          updated: at,
          continuous: false,
          events,
          eventsDropped: 42,
        },
        { events: true },
      );
    } finally {
      spy.mockRestore();
    }
    const lines = written.join('').split('\n');
    const log = lines.slice(lines.findIndex((line) => /TIME +│ EVENT/.test(line)) + 1).filter((line) => line.startsWith('│'));
    expect(log.map((line) => line.split('│')[2]?.trim())).toEqual([
      ...events.slice(0, EVENTS_KEPT_FIRST).map((event) => `Paused by ${event.by}`),
      '42 events not kept',
      'Paused by op-10',
    ]);
  });
});
