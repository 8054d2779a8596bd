/**
 * What a simulated kiosk does with the commands its pull returns (docs/contract.md, "Commands"): each one is run once,
 * after a short delay, and its result reported with `POST /device/commands/{id}/status`. A reboot reports SUCCEEDED,
 * then the kiosk goes quiet (no health report, no pull) for a while and comes back with a health report; any other
 * command SUCCEEDS, or FAILS at the configured rate. A result the service did not take is sent again before each pull.
 */
import type { CommandReport, PendingCommand, SimulatedDevice } from './device.js';
import { jitter } from './fleet-settings.js';

/** How commands are run. */
export interface CommandSettings {
  /** Share of commands (reboots aside) reported FAILED, 0..1. */
  failureRate: number;
  /** Mean time from receiving a command to reporting its result, ms (each wait is jittered ±20 %). */
  delayMs: number;
  /** How long a rebooting kiosk stays quiet, ms. */
  rebootMs: number;
}

/** What the fleet lends the commands of its kiosks. */
export interface CommandHost {
  settings: CommandSettings;
  /**
   * Sends one result as the kiosk.
   * @returns true when the service took it (204) or never will (409: the command is final or expired; another 4xx),
   *   false when it should be sent again (no answer, 408, 429, 5xx)
   */
  report(device: SimulatedDevice, commandId: string, report: CommandReport): Promise<boolean>;
  /** Runs `run` once after `delayMs`, unless the fleet stops before (its failures are the fleet's to count). */
  later(device: SimulatedDevice, delayMs: number, run: () => Promise<void>): void;
  /** The kiosk is back from a reboot: it reports its health at once, as a kiosk does when it has started. */
  reconnected(device: SimulatedDevice): Promise<void>;
  /** Counts one command's end: SUCCEEDED, FAILED, or REBOOTED (reported SUCCEEDED, then quiet for a while). */
  counted(outcome: 'SUCCEEDED' | 'FAILED' | 'REBOOTED'): void;
}

/** Command names that restart what they run on (the demo's peripherals' `reboot` and the watchdog's `reboot-host`). */
const REBOOT_NAMES: ReadonlySet<string> = new Set(['reboot', 'reboot-host']);

/** A command name in lower case with `_` as `-`: `REBOOT_HOST` is `reboot-host`. */
function normalized(name: string): string {
  return name.toLowerCase().replaceAll('_', '-');
}

/** The capability modes of sub-device `hub`/`device` in a health report, or none when it has no such sub-device. */
function modesOf(health: Record<string, unknown>, hub: string, device: string): readonly string[] {
  const hubs = (health.hubs ?? []) as { uid?: string; devices?: { uid?: string; capability?: { modes?: string[] } }[] }[];
  const sub = hubs.find((candidate) => candidate.uid === hub)?.devices?.find((candidate) => candidate.uid === device);
  return sub?.capability?.modes ?? [];
}

/**
 * Whether a command reboots the kiosk: its name is `reboot` or `reboot-host` (case and `_`/`-` aside), or it names a
 * reboot (`…reboot…`) on a sub-device whose capability modes include GENERIC_REBOOT (a hardware watchdog). Another
 * command of such a sub-device (`blink-led`) does not.
 */
export function isReboot(command: Pick<PendingCommand, 'hub' | 'device' | 'command'>, health: Record<string, unknown>): boolean {
  const name = normalized(command.command);
  if (REBOOT_NAMES.has(name)) return true;
  return name.includes('reboot') && modesOf(health, command.hub, command.device).includes('GENERIC_REBOOT');
}

/**
 * Takes the commands of one pull: each one not received before is run once (runCommand) after the delay; ids past
 * their expiry are forgotten first (the service never lists an expired command).
 */
export function receiveCommands(host: CommandHost, device: SimulatedDevice, commands: readonly PendingCommand[]): void {
  const now = Date.now();
  for (const [id, expiresAt] of device.commands) if (expiresAt < now) device.commands.delete(id);
  for (const command of commands) {
    if (device.commands.has(command.id)) continue;
    device.commands.set(command.id, Date.parse(command.expiresAt));
    host.later(device, jitter(host.settings.delayMs), () => runCommand(host, device, command));
  }
}

/**
 * Runs one command and reports it: a reboot SUCCEEDED (then the kiosk is quiet for `rebootMs` and reports its health
 * when back); another SUCCEEDED, or FAILED with a message at `failureRate`.
 */
export async function runCommand(host: CommandHost, device: SimulatedDevice, command: PendingCommand): Promise<void> {
  const { failureRate, rebootMs } = host.settings;
  if (isReboot(command, device.health)) {
    host.counted('REBOOTED');
    const report: CommandReport = { state: 'SUCCEEDED', message: `Rebooting; back in ${Math.round(rebootMs / 1000)} s.` };
    // The result goes out before the kiosk goes quiet; one the service did not take is sent again once it is back.
    await deliver(host, device, command, report);
    device.silentUntil = Date.now() + rebootMs;
    host.later(device, rebootMs, () => host.reconnected(device));
    return;
  }
  const failed = Math.random() < failureRate;
  host.counted(failed ? 'FAILED' : 'SUCCEEDED');
  await deliver(
    host,
    device,
    command,
    failed
      ? { state: 'FAILED', message: `Simulated failure: ${command.command} did not complete on ${command.hub}/${command.device}.` }
      : { state: 'SUCCEEDED', message: `Simulated ${command.command}: done.`, output: { simulated: true } },
  );
}

/** Reports a result, keeping it to send again when the service did not take it. */
async function deliver(host: CommandHost, device: SimulatedDevice, command: PendingCommand, report: CommandReport): Promise<void> {
  const taken = await host.report(device, command.id, report).catch(() => false);
  if (!taken) device.unreported.set(command.id, { report, expiresAt: Date.parse(command.expiresAt) });
}

/** Sends again each result the service did not take, dropping those past their command's expiry (it refuses them). */
export async function sendUnreported(host: CommandHost, device: SimulatedDevice): Promise<void> {
  for (const [id, { report, expiresAt }] of device.unreported) {
    if (expiresAt < Date.now() || (await host.report(device, id, report).catch(() => false))) device.unreported.delete(id);
  }
}
