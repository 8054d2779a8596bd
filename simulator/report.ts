/** How the simulator shows what its fleet did: a live one-line summary and a final table per endpoint. */
import type Table from 'cli-table3';
import { ENDPOINTS, type FleetProgress, type SimulatedFleet } from './fleet.js';

const ms = (value: number | undefined): string => (value === undefined || Number.isNaN(value) ? '-' : value.toFixed(1));

/**
 * One line: time, devices reporting / silent / lost, requests, errors, health p99 and 304-pull p50 (ms), installs, and
 * commands once some were run.
 * @param elapsedSeconds seconds of traffic so far; @param durationSeconds the planned total (0: open-ended).
 */
export function fleetSummaryLine(fleet: SimulatedFleet, elapsedSeconds: number, durationSeconds: number): string {
  const progress = fleet.progress();
  const { requests, errors } = fleet.stats.totals();
  const time = durationSeconds > 0 ? `${elapsedSeconds.toFixed(0)}/${durationSeconds} s` : `${elapsedSeconds.toFixed(0)} s`;
  return [
    time,
    `devices ${progress.reporting} reporting, ${progress.silent} silent${progress.lost > 0 ? `, ${progress.lost} lost` : ''}`,
    `requests ${requests}`,
    `errors ${errors}`,
    `health p99 ${ms(fleet.stats.of(ENDPOINTS.health)?.p99)} ms`,
    `304 p50 ${ms(fleet.stats.of(ENDPOINTS.pull304)?.p50)} ms`,
    `installed ${progress.installed}, failed ${progress.failed}`,
    ...(commandsRun(progress) > 0 ? [commandLine(progress)] : []),
  ].join(' | ');
}

/** The final table: one row per endpoint (requests, errors, p50 and p99 in ms), as text. */
export function fleetTable(fleet: SimulatedFleet, TableClass: typeof Table): string {
  const table = new TableClass({
    head: ['endpoint', 'requests', 'errors', 'p50 ms', 'p99 ms'],
    colAligns: ['left', 'right', 'right', 'right', 'right'],
  });
  for (const row of fleet.stats.figures()) table.push([row.endpoint, row.requests, row.errors, ms(row.p50), ms(row.p99)]);
  const progress = fleet.progress();
  table.push([
    {
      colSpan: 5,
      content: `installed ${progress.installed}, failed ${progress.failed} (sha256 mismatches ${progress.checksumMismatches}); ${commandLine(progress)}`,
    },
  ]);
  return table.toString();
}

function commandsRun(progress: FleetProgress): number {
  return progress.commandsSucceeded + progress.commandsFailed + progress.reboots;
}

/** `commands 5 succeeded, 1 failed, 2 reboots`. */
function commandLine(progress: FleetProgress): string {
  return `commands ${progress.commandsSucceeded} succeeded, ${progress.commandsFailed} failed, ${progress.reboots} reboots`;
}
