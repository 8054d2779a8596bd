/**
 * The fleet page's command rollout composer without a browser: its suggestions (what the search's devices advertise,
 * with the filters endpoint's disjunctive counts) and its fields read back as the rollout's command, or the field to fix.
 */
import { describe, expect, it } from 'vitest';
import type { components } from '../../../client/index.js';
import { type CommandDraft, commandPlanOf, commandSuggestions } from '../../../console/src/compose/command-plan.js';

type FilterDescriptor = components['schemas']['FilterDescriptor'];

/** The filters endpoint's descriptor of the advertised commands, with `counts` by command. */
const advertised = (counts: Record<string, number>): FilterDescriptor => ({
  field: 'health.hubs.devices.commands.command',
  name: 'Advertised command',
  scope: 'DEVICE',
  definition: { type: 'ENUMERATION', parameters: Object.entries(counts).map(([value, count]) => ({ name: value, value, count })) },
});

const draft = (changes: Partial<CommandDraft>): CommandDraft => ({
  command: 'reboot',
  arguments: 'null',
  expiresInSeconds: 600,
  waves: '',
  threshold: '',
  note: '',
  ...changes,
});

describe('the command rollout composer', () => {
  it('suggests what the targets advertise, the most advertised first, leaving out what none of them does', () => {
    const descriptors = [advertised({ beep: 1, reboot: 57, 'print-test-page': 12, compact: 0, reconcile: 12 })];
    expect(commandSuggestions(descriptors, new URLSearchParams('health.mode=SERVER'))).toEqual([
      { command: 'reboot', devices: 57 },
      { command: 'print-test-page', devices: 12 },
      { command: 'reconcile', devices: 12 },
      { command: 'beep', devices: 1 },
    ]);
    expect(commandSuggestions([], new URLSearchParams())).toEqual([]);
  });

  it('suggests only the commands the search selects: the others’ counts are of devices outside it', () => {
    const descriptors = [advertised({ beep: 1, reboot: 57 })];
    expect(commandSuggestions(descriptors, new URLSearchParams('health.hubs.devices.commands.command=beep'))).toEqual([
      { command: 'beep', devices: 1 },
    ]);
  });

  it('reads the fields back as the rollout’s command, waves, threshold (a share) and note', () => {
    expect(
      commandPlanOf(draft({ command: ' reboot ', arguments: '{"delay": 5}', waves: '2, 10', threshold: '25', note: 'Weekly' })),
    ).toEqual({
      plan: {
        command: { command: 'reboot', arguments: { delay: 5 }, expiresInSeconds: 600 },
        waves: [2, 10],
        failureThreshold: 0.25,
        note: 'Weekly',
      },
    });
    expect(commandPlanOf(draft({}))).toEqual({ plan: { command: { command: 'reboot', arguments: null, expiresInSeconds: 600 } } });
  });

  it('names the field to fix first, and why', () => {
    expect(commandPlanOf(draft({ command: '  ' }))).toMatchObject({ field: 'command' });
    expect(commandPlanOf(draft({ arguments: '{ nope' }))).toMatchObject({
      field: 'arguments',
      error: expect.stringMatching(/not valid JSON/),
    });
    expect(commandPlanOf(draft({ waves: '3, x' }))).toEqual({
      field: 'waves',
      error: '"x" is not a number of devices (a whole number from 1).',
    });
    expect(commandPlanOf(draft({ threshold: '120' }))).toEqual({
      field: 'threshold',
      error: 'The failure threshold is a percentage from 0 to 100.',
    });
  });
});
