/**
 * The device page's commands without a browser: the run form's arguments text (prefilled from what the device
 * advertised, read back or refused with a reason), and the history as the page keeps it while it polls (a fresh first
 * page merged into what is shown, a late answer never undoing a later state, and which commands became final).
 */
import { describe, expect, it } from 'vitest';
import type { components } from '../../../client/index.js';
import { MAX_COMMAND_JSON_BYTES } from '../../../client/limits.js';
import { argumentsText, parseArguments } from '../../../console/src/device/command-draft.js';
import { appendPage, isCancellable, isPending, mergeFirstPage, newlyFinal, withCommand } from '../../../console/src/device/command-list.js';

type Command = components['schemas']['Command'];
type State = Command['state'];

/** A command of id `id` (ULIDs sort by creation: a later id is a newer command) in `state`. */
const command = (id: string, state: State): Command => ({
  id,
  target: { type: 'DEVICE', id: 'kiosk-1', subId: 'hub-1/printer-1' },
  command: 'print-test-page',
  arguments: null,
  state,
  created: '2026-12-01T10:00:00.000Z',
  updated: '2026-12-01T10:00:00.000Z',
  expiresAt: '2026-12-01T11:00:00.000Z',
  by: 'alice',
});

const view = (commands: Command[]) => commands.map((each) => `${each.id}:${each.state}`);

describe('the arguments text', () => {
  it('is what the device advertised, pretty-printed, or null when it advertised nothing', () => {
    expect(argumentsText([{ name: 'url', type: 'string' }])).toBe('[\n  {\n    "name": "url",\n    "type": "string"\n  }\n]');
    expect(argumentsText({ copies: 1 })).toBe('{\n  "copies": 1\n}');
    for (const nothing of [undefined, null, '', [], {}]) expect(argumentsText(nothing)).toBe('null');
    expect(argumentsText(0)).toBe('0');
  });

  it('reads back as the JSON it holds, an empty text as null', () => {
    expect(parseArguments('{ "copies": 2 }')).toEqual({ value: { copies: 2 } });
    expect(parseArguments('null')).toEqual({ value: null });
    expect(parseArguments('  \n')).toEqual({ value: null });
  });

  it('is refused when it is not JSON, saying so and how to send none', () => {
    const parsed = parseArguments('{ copies: 2 }');
    expect(parsed).toHaveProperty('error');
    expect((parsed as { error: string }).error).toMatch(/^The arguments are not valid JSON \(.+\)\. Write null for none\.$/);
  });

  it('is refused above the service’s size, measured without white space as the service measures it', () => {
    const fits = JSON.stringify({ text: 'x'.repeat(MAX_COMMAND_JSON_BYTES - 11) });
    expect(new TextEncoder().encode(fits).length).toBe(MAX_COMMAND_JSON_BYTES);
    // Pretty-printed it is longer, and still fits: the white space is not counted.
    expect(parseArguments(JSON.stringify(JSON.parse(fits), null, 8))).toEqual({ value: JSON.parse(fits) });
    const over = JSON.stringify({ text: 'x'.repeat(MAX_COMMAND_JSON_BYTES - 10) });
    expect(parseArguments(over)).toEqual({ error: 'The arguments are 8,193 bytes of JSON; a command takes at most 8,192.' });
  });
});

describe('the command history as the page keeps it', () => {
  it('says which states are pending, and which can be cancelled', () => {
    expect((['QUEUED', 'DELIVERED', 'SUCCEEDED', 'FAILED', 'EXPIRED', 'CANCELLED'] as const).filter(isPending)).toEqual([
      'QUEUED',
      'DELIVERED',
    ]);
    // Only a command the device has not fetched can be cancelled: a DELIVERED one may be running.
    expect((['QUEUED', 'DELIVERED', 'SUCCEEDED', 'FAILED', 'EXPIRED', 'CANCELLED'] as const).filter(isCancellable)).toEqual(['QUEUED']);
  });

  it('shows a fresh first page in place of the old states, and keeps the older commands shown, newest first, each once', () => {
    const shown = [command('05', 'QUEUED'), command('04', 'DELIVERED'), command('02', 'SUCCEEDED')];
    const firstPage = [command('06', 'QUEUED'), command('05', 'DELIVERED'), command('04', 'FAILED')];
    expect(view(mergeFirstPage(shown, firstPage))).toEqual(['06:QUEUED', '05:DELIVERED', '04:FAILED', '02:SUCCEEDED']);
    expect(view(mergeFirstPage(undefined, firstPage))).toEqual(view(firstPage));
  });

  it('never takes a state back: an answer read before a cancel does not undo it', () => {
    const shown = [command('05', 'CANCELLED'), command('04', 'DELIVERED')];
    const readBeforeTheCancel = [command('05', 'DELIVERED'), command('04', 'QUEUED')];
    expect(view(mergeFirstPage(shown, readBeforeTheCancel))).toEqual(['05:CANCELLED', '04:DELIVERED']);
    expect(view(withCommand(shown, command('05', 'QUEUED')))).toEqual(['05:CANCELLED', '04:DELIVERED']);
  });

  it('puts a command just run at the top, and a new state of one in its place', () => {
    const shown = [command('04', 'QUEUED'), command('02', 'SUCCEEDED')];
    expect(view(withCommand(shown, command('07', 'QUEUED')))).toEqual(['07:QUEUED', '04:QUEUED', '02:SUCCEEDED']);
    expect(view(withCommand(shown, command('04', 'CANCELLED')))).toEqual(['04:CANCELLED', '02:SUCCEEDED']);
    expect(view(withCommand(undefined, command('01', 'QUEUED')))).toEqual(['01:QUEUED']);
  });

  it('adds a next page without the commands already shown', () => {
    const shown = [command('06', 'QUEUED'), command('05', 'QUEUED')];
    expect(view(appendPage(shown, [command('05', 'QUEUED'), command('03', 'FAILED')]))).toEqual(['06:QUEUED', '05:QUEUED', '03:FAILED']);
  });

  it('names the commands that became final since the last read, not those final before nor those still pending', () => {
    const before = [command('05', 'QUEUED'), command('04', 'DELIVERED'), command('03', 'QUEUED'), command('02', 'FAILED')];
    const after = [command('05', 'SUCCEEDED'), command('04', 'DELIVERED'), command('03', 'EXPIRED'), command('02', 'FAILED')];
    expect(view(newlyFinal(before, after))).toEqual(['05:SUCCEEDED', '03:EXPIRED']);
    expect(newlyFinal(undefined, after)).toEqual([]);
  });
});
