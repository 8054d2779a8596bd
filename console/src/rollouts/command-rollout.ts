/**
 * What the rollout pages read of a COMMAND rollout's wave counts. Its counts hold, per wave, each target's result
 * (SUCCESS: its commands were queued, or a cause such as COMMAND_NOT_ADVERTISED), how many commands were queued
 * (COMMANDS), and how many of those reached each final state (SUCCEEDED, FAILED, EXPIRED, CANCELLED). The failures
 * section reads the targets listing only for the waves whose counts show failed or expired commands, or failed targets,
 * and again only when those figures change (as failure-reads.ts does for deployments). No DOM: the unit tests use it.
 */

/** What the module reads of a rollout: its waves' counts. */
interface Waves {
  waves: readonly { counts: Readonly<Record<string, number>> }[];
}

/** What the module reads of a target of the targets listing: its device and its commands' states and messages. */
interface CommandTarget {
  deviceId: string;
  commands?: readonly { state: string; message?: string }[];
}

/** The count of commands queued in a wave. */
export const COMMANDS_KEY = 'COMMANDS';

/** The final states of a command rollout's commands, in the order the pages show them. */
export const COMMAND_FINAL_KEYS = ['SUCCEEDED', 'FAILED', 'EXPIRED', 'CANCELLED'] as const;

/** Whether a count key of a COMMAND rollout's wave is a target's result (SUCCESS or a cause), not a command count. */
export function isTargetResultKey(key: string): boolean {
  return key !== COMMANDS_KEY && !(COMMAND_FINAL_KEYS as readonly string[]).includes(key);
}

/** Whether a count key is a target's failure cause (COMMAND_NOT_ADVERTISED, TARGET_NOT_FOUND, …). */
function isCause(key: string): boolean {
  return key !== 'SUCCESS' && isTargetResultKey(key);
}

/** The targets' result keys any wave counts: SUCCESS first, then the causes by name. */
export function targetResultKeys(rollout: Waves): string[] {
  const keys = new Set<string>();
  for (const wave of rollout.waves) for (const key of Object.keys(wave.counts)) if (isTargetResultKey(key)) keys.add(key);
  return [...keys].sort((a, b) => (a === 'SUCCESS' ? -1 : b === 'SUCCESS' ? 1 : a.localeCompare(b)));
}

/** Targets whose wave's work has reached them: their results (SUCCESS and every cause), summed over the waves. */
export function targetsDone(rollout: Waves): number {
  let done = 0;
  for (const wave of rollout.waves) for (const [key, value] of Object.entries(wave.counts)) if (isTargetResultKey(key)) done += value;
  return done;
}

/** The waves (1-based, ascending) to read, per filter of the targets listing. */
export interface CommandFailureReads {
  /** Waves with FAILED commands: read with `commandState=FAILED`. */
  failed: number[];
  /** Waves with EXPIRED commands: read with `commandState=EXPIRED`. */
  expired: number[];
  /** Waves with targets that got no command (a cause): read with `state=FAILURE`. */
  results: number[];
}

/** The waves whose counts show failures, per filter; all empty when nothing failed (nothing to read). */
export function commandFailureReadsOf(rollout: Waves): CommandFailureReads {
  const reads: CommandFailureReads = { failed: [], expired: [], results: [] };
  rollout.waves.forEach((wave, index) => {
    if ((wave.counts.FAILED ?? 0) > 0) reads.failed.push(index + 1);
    if ((wave.counts.EXPIRED ?? 0) > 0) reads.expired.push(index + 1);
    if (Object.entries(wave.counts).some(([key, value]) => isCause(key) && value > 0)) reads.results.push(index + 1);
  });
  return reads;
}

/** The failure figures (per wave: FAILED, EXPIRED and each cause), as a string that changes exactly when they do. */
export function commandFailureKey(rollout: Waves): string {
  return JSON.stringify(
    rollout.waves.map((wave) =>
      Object.entries(wave.counts)
        .filter(([key, value]) => (key === 'FAILED' || key === 'EXPIRED' || isCause(key)) && value > 0)
        .sort(([a], [b]) => a.localeCompare(b)),
    ),
  );
}

/**
 * The targets with a command in `state`, grouped by what the device said with it (a target with several such
 * commands, on several sub-devices, is in the group of each of their messages, once), the biggest group first.
 */
export function groupByCommandMessage(
  targets: readonly CommandTarget[],
  state: 'FAILED' | 'EXPIRED',
): { reason: string; deviceIds: string[] }[] {
  const groups = new Map<string, Set<string>>();
  for (const target of targets) {
    for (const command of target.commands ?? []) {
      if (command.state !== state) continue;
      const message = command.message === undefined || command.message === '' ? 'No message' : command.message;
      groups.set(message, (groups.get(message) ?? new Set<string>()).add(target.deviceId));
    }
  }
  return [...groups]
    .map(([reason, deviceIds]) => ({ reason, deviceIds: [...deviceIds] }))
    .sort((a, b) => b.deviceIds.length - a.deviceIds.length || a.reason.localeCompare(b.reason));
}
