/**
 * The command rollout composer's pure parts: the commands the search's devices advertise (the filters endpoint's
 * `health.hubs.devices.commands.command` values and counts, with the search applied), and the form's fields read back
 * as what a COMMAND rollout is given, or the first thing to fix with the field it is about. No DOM: the unit tests use
 * it as it is.
 */
import { parseArguments } from '../device/command-draft.js';
import type { FilterDescriptor } from '../fleet/search-query.js';
import { parseWaves } from './plan.js';

/** The facet of the commands devices' sub-devices advertise. */
export const COMMAND_FIELD = 'health.hubs.devices.commands.command';

/** A command the search's devices advertise, and how many of them do. */
export interface CommandSuggestion {
  command: string;
  devices: number;
}

/**
 * The commands the targets advertise, the most advertised first (then by name), from the filters endpoint's answer for
 * the search. A field's counts leave out its own selection (they are disjunctive): when the search selects commands,
 * only those values count targets, so only they are suggested.
 */
export function commandSuggestions(descriptors: readonly FilterDescriptor[], query: URLSearchParams): CommandSuggestion[] {
  const descriptor = descriptors.find((candidate) => candidate.field === COMMAND_FIELD);
  if (descriptor === undefined) return [];
  const selected = query.getAll(COMMAND_FIELD);
  return descriptor.definition.parameters
    .filter((parameter) => parameter.count > 0 && (selected.length === 0 || selected.includes(parameter.value)))
    .map((parameter) => ({ command: parameter.value, devices: parameter.count }))
    .sort((a, b) => b.devices - a.devices || a.command.localeCompare(b.command));
}

/** The command rollout form's fields, as typed. */
export interface CommandDraft {
  command: string;
  arguments: string;
  expiresInSeconds: number;
  waves: string;
  /** Percent, empty for the service's default. */
  threshold: string;
  note: string;
}

/** The fields of the form a problem is about (each has its message next to it). */
export type CommandDraftField = 'command' | 'arguments' | 'waves' | 'threshold';

/** What the draft gives a COMMAND rollout: its command, and the waves, threshold (0..1) and note when given. */
export interface CommandPlan {
  command: { command: string; arguments: unknown; expiresInSeconds: number };
  waves?: number[];
  failureThreshold?: number;
  note?: string;
}

/** The draft read back as a plan, or the first field to fix and what is wrong with it. */
export function commandPlanOf(draft: CommandDraft): { plan: CommandPlan } | { field: CommandDraftField; error: string } {
  const command = draft.command.trim();
  if (command === '') return { field: 'command', error: 'Give the name of the command to run (one the devices advertise).' };
  const parsed = parseArguments(draft.arguments);
  if ('error' in parsed) return { field: 'arguments', error: parsed.error };
  const waves = parseWaves(draft.waves);
  if ('error' in waves) return { field: 'waves', error: waves.error };
  const text = draft.threshold.trim();
  const threshold = text === '' ? undefined : Number(text);
  if (threshold !== undefined && !(threshold >= 0 && threshold <= 100)) {
    return { field: 'threshold', error: 'The failure threshold is a percentage from 0 to 100.' };
  }
  return {
    plan: {
      command: { command, arguments: parsed.value, expiresInSeconds: draft.expiresInSeconds },
      ...(waves.sizes.length > 0 ? { waves: waves.sizes } : {}),
      ...(threshold !== undefined ? { failureThreshold: threshold / 100 } : {}),
      ...(draft.note.trim() !== '' ? { note: draft.note } : {}),
    },
  };
}
