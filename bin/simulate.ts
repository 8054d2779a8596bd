#!/usr/bin/env node
/**
 * `npm run simulate -- --devices 1000 [--duration 60] [--failure-rate 0.05] [--command-failure-rate 0.1]`: a fleet of
 * simulated kiosks against a running service (`npm start` by default), through its public HTTP contract only
 * (simulator/fleet.ts): health reports, pulls, installs, and the commands operators run on them. Prints a live
 * one-line summary, then a table of request counts, errors and p50/p99 latency per endpoint. Exit code 1 when some
 * request failed, 2 on bad usage.
 */
import { resolve } from 'node:path';
import { SingleBar } from 'cli-progress';
import Table from 'cli-table3';
import { Command, InvalidArgumentError } from 'commander';
import { ENV, readEnvironment } from '../functions/contract/environment.js';
import { type FleetOptions, SimulatedFleet } from '../simulator/fleet.js';
import { fleetSummaryLine, fleetTable } from '../simulator/report.js';

const root = resolve(import.meta.dirname, '..');

function number(min: number, max: number, integer: boolean) {
  return (value: string): number => {
    const parsed = Number(value);
    if (!Number.isFinite(parsed) || parsed < min || parsed > max || (integer && !Number.isInteger(parsed))) {
      throw new InvalidArgumentError(`must be ${integer ? 'a whole number' : 'a number'} from ${min} to ${max}.`);
    }
    return parsed;
  };
}

const program = new Command('simulate')
  .description('Simulate a fleet of kiosks against the service: health reports, pulls, downloads, status reports and commands.')
  .option('--devices <n>', 'how many devices', number(1, 100_000, true), 100)
  .option('--duration <seconds>', 'how long to run, seconds (0: until Ctrl+C)', number(0, 604_800, true), 60)
  .option('--failure-rate <share>', 'share of installations reported FAILED, 0 to 1', number(0, 1, false), 0.05)
  .option('--health-interval <seconds>', 'mean seconds between health reports', number(0.1, 86_400, false), 10)
  .option('--pull-interval <seconds>', 'mean seconds between pulls', number(0.1, 86_400, false), 30)
  .option('--silence-rate <share>', 'chance per health tick that a device falls silent for --silence seconds', number(0, 1, false), 0.002)
  .option('--silence <seconds>', 'how long a silent device stays silent', number(0, 86_400, false), 120)
  .option('--command-failure-rate <share>', 'share of commands (reboots aside) reported FAILED, 0 to 1', number(0, 1, false), 0)
  .option('--command-delay <seconds>', 'mean seconds from receiving a command to reporting its result', number(0, 3_600, false), 1)
  .option('--reboot-downtime <seconds>', 'how long a kiosk running a reboot command stays quiet', number(0, 86_400, false), 30)
  .option('--company <id>', 'company of the devices', 'acme')
  .option('--user <username>', 'operator with devices:write on the company', 'alice')
  .option('--password <password>', "the operator's password", 'alice-demo-password')
  .option('--prefix <text>', 'device id prefix (ids are <prefix><5 digits>)')
  .option('--base-url <url>', '{base_url}', 'http://127.0.0.1:3000')
  .option('--auth-url <url>', '{auth_url}', 'http://127.0.0.1:3002')
  .option('--no-progress', 'no live line (e.g. when the output is a file)')
  .showHelpAfterError()
  .exitOverride((error) => process.exit(error.exitCode === 0 ? 0 : 2));
program.parse();
const options = program.opts<{
  devices: number;
  duration: number;
  failureRate: number;
  healthInterval: number;
  pullInterval: number;
  silenceRate: number;
  silence: number;
  commandFailureRate: number;
  commandDelay: number;
  rebootDowntime: number;
  company: string;
  user: string;
  password: string;
  prefix?: string;
  baseUrl: string;
  authUrl: string;
  progress: boolean;
}>();

const dataDirectory = resolve(root, readEnvironment('localData', process.env)[ENV.dataDir]);
const fleetOptions: FleetOptions = {
  baseUrl: options.baseUrl.replace(/\/$/, ''),
  authUrl: options.authUrl.replace(/\/$/, ''),
  username: options.user,
  password: options.password,
  company: options.company,
  devices: options.devices,
  ...(options.prefix === undefined ? {} : { idPrefix: options.prefix }),
  healthIntervalMs: options.healthInterval * 1000,
  pullIntervalMs: options.pullInterval * 1000,
  failureRate: options.failureRate,
  silenceRate: options.silenceRate,
  silenceMs: options.silence * 1000,
  commandFailureRate: options.commandFailureRate,
  commandDelayMs: options.commandDelay * 1000,
  rebootMs: options.rebootDowntime * 1000,
  credentialsFile: resolve(dataDirectory, 'simulator', `${options.company}-credentials.json`),
  log: (message) => process.stderr.write(`${message}\n`),
};
const fleet = new SimulatedFleet(fleetOptions);
const started = Date.now();
try {
  await fleet.start();
} catch (error) {
  process.stderr.write(`Could not set the fleet up: ${(error as Error).message}\n`);
  process.exit(1);
}
const running = Date.now();
const bar =
  options.progress && process.stderr.isTTY ? new SingleBar({ format: '{line}', hideCursor: true, clearOnComplete: false }) : undefined;
const line = () => fleetSummaryLine(fleet, (Date.now() - running) / 1000, options.duration);
bar?.start(1, 0, { line: line() });
const ticker = setInterval(
  () => {
    if (bar !== undefined) bar.update(0, { line: line() });
    else process.stderr.write(`${line()}\n`);
  },
  bar === undefined ? 10_000 : 500,
);

await new Promise<void>((done) => {
  if (options.duration > 0) setTimeout(done, options.duration * 1000);
  process.once('SIGINT', () => done());
  process.once('SIGTERM', () => done());
});
clearInterval(ticker);
await fleet.stop();
bar?.update(0, { line: line() });
bar?.stop();
process.stdout.write(
  `\nSet-up ${((running - started) / 1000).toFixed(1)} s, then ${((Date.now() - running) / 1000).toFixed(0)} s of traffic.\n`,
);
process.stdout.write(`${fleetTable(fleet, Table)}\n`);
process.exit(fleet.stats.totals().errors === 0 ? 0 : 1);
