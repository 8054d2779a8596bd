/**
 * How `dss rollout` shows a rollout, shared by its subcommands: a record and a table of its waves (with its event log
 * on request), and following it until it is no longer SCHEDULED or RUNNING.
 */
import { type components, type DssClient, expectOk } from '../../client/index.js';
import { describeRolloutEvent, eventLogLines, rolloutSubject } from '../../client/rollout-events.js';
import { CommandFailed, printJson, printRecord, printTable, say, visible } from '../output.js';

type Rollout = components['schemas']['Rollout'];
type RolloutWave = components['schemas']['RolloutWave'];

/** Default of `--interval`, seconds between two reads of a watched rollout. */
export const DEFAULT_WATCH_INTERVAL_SECONDS = 2;

/** The rollout, read now. @throws ApiError on a refused request. */
export async function readRollout(dss: DssClient, companyId: string, rolloutId: string): Promise<Rollout> {
  return expectOk(
    await dss.main.GET('/companies/{companyId}/resources/rollouts/{rolloutId}', { params: { path: { companyId, rolloutId } } }),
  );
}

/**
 * Reads the rollout every `intervalSeconds` and prints it each time it changed, until it is no longer SCHEDULED or
 * RUNNING (a scheduled rollout is followed through its start).
 * @throws CommandFailed when it ends PAUSED or CANCELLED (a script waiting for it must not go on as if it completed)
 */
export async function watch(
  dss: DssClient,
  companyId: string,
  first: Rollout,
  json: boolean,
  intervalSeconds = DEFAULT_WATCH_INTERVAL_SECONDS,
): Promise<void> {
  let current = first;
  let shown = '';
  for (;;) {
    const picture = JSON.stringify([current.state, current.waves, current.pausedReason]);
    if (picture !== shown && !json) {
      if (shown !== '') say();
      say(new Date().toISOString());
      printRollout(current);
    }
    shown = picture;
    if (current.state !== 'RUNNING' && current.state !== 'SCHEDULED') break;
    // A continuous rollout runs until cancelled: following it ends once its waves are done, as a completed one's does.
    if (current.continuous && current.waves.every((wave) => wave.state === 'COMPLETED')) break;
    await new Promise((done) => setTimeout(done, intervalSeconds * 1000));
    current = await readRollout(dss, companyId, current.id);
  }
  if (json) printJson(current);
  if (current.state === 'PAUSED')
    throw new CommandFailed(`Rollout ${current.id} is PAUSED: ${visible(current.pausedReason ?? 'no reason given')}`);
  if (current.state === 'CANCELLED') throw new CommandFailed(`Rollout ${current.id} was CANCELLED.`);
}

/** The counts shown in columns of their own; any other (failure causes) go in OTHER. */
const COUNT_COLUMNS = ['SUCCESS', 'INSTALLED', 'FAILED'] as const;
/** A COMMAND rollout's: targets reached, commands queued, and the final states that count against the threshold. */
const COMMAND_COUNT_COLUMNS = ['SUCCESS', 'COMMANDS', 'SUCCEEDED', 'FAILED', 'EXPIRED'] as const;

/** The counts of a rollout's waves shown in columns of their own. */
function countColumns(rollout: Rollout): readonly string[] {
  return rollout.action === 'COMMAND' ? COMMAND_COUNT_COLUMNS : COUNT_COLUMNS;
}

/**
 * A rollout as a record (state, scenario or command, settings) and a table of its waves with their counts; with
 * `events`, then its event log (time, what happened), oldest first.
 */
export function printRollout(rollout: Rollout, options: { events?: boolean } = {}): void {
  printRecord({
    id: rollout.id,
    state: rollout.state,
    pausedReason: rollout.pausedReason,
    startAt: rollout.startAt,
    continuous: rollout.continuous ? `yes, ${rollout.joined ?? 0} device(s) joined since creation` : undefined,
    action: rollout.action,
    scenario: rollout.what === undefined ? undefined : rolloutSubject(rollout),
    command: rollout.command?.command,
    arguments: rollout.command === undefined || rollout.command.arguments === null ? undefined : JSON.stringify(rollout.command.arguments),
    expiresInSeconds: rollout.command?.expiresInSeconds,
    targets: rollout.targets,
    failureThreshold: rollout.failureThreshold,
    waveTimeoutSeconds: rollout.waveTimeoutSeconds,
    note: rollout.note ?? undefined,
    createdBy: rollout.createdBy,
    created: rollout.created,
    updated: rollout.updated,
  });
  const columns = countColumns(rollout);
  printTable(
    rollout.waves.map((wave, index) => ({ wave, number: index + 1 })),
    [
      { head: 'WAVE', value: ({ number }) => number },
      { head: 'SIZE', value: ({ wave }) => wave.size },
      { head: 'STATE', value: ({ wave }) => wave.state },
      ...columns.map((key) => ({ head: key, value: ({ wave }: { wave: RolloutWave }) => wave.counts[key] ?? 0 })),
      { head: 'OTHER', value: ({ wave }) => otherCounts(wave, columns) },
      { head: 'STARTED', value: ({ wave }) => wave.startedAt },
      { head: 'COMPLETED', value: ({ wave }) => wave.completedAt },
    ],
  );
  if (options.events === true) printEventLog(rollout);
}

/** The rollout's event log as a table; the events dropped from its middle (to bound it) are one row saying how many. */
function printEventLog(rollout: Rollout): void {
  const rows = eventLogLines(rollout).map((line) =>
    line.kind === 'event'
      ? { time: line.event.at, what: describeRolloutEvent(line.event, { action: rollout.action }) }
      : { time: '…', what: `${line.count} events not kept` },
  );
  say();
  printTable(
    rows,
    [
      { head: 'TIME', value: ({ time }) => time },
      { head: 'EVENT', value: ({ what }) => what },
    ],
    'No event recorded (the rollout was created before events were recorded).',
  );
}

/** The counts of a wave that have no column of their own, as `KEY n, …`. */
function otherCounts(wave: RolloutWave, columns: readonly string[]): string {
  return Object.entries(wave.counts)
    .filter(([key, count]) => !columns.includes(key) && count > 0)
    .map(([key, count]) => `${key} ${count}`)
    .join(', ');
}

/** A Location path as an address of the main API (kept whole when it is already absolute). */
export function addressOf(baseUrl: string, location: string): string {
  return location.startsWith('/') ? `${baseUrl}${location}` : location;
}
