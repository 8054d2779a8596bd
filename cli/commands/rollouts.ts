/**
 * `dss rollout create|get|list|targets|pause|resume|cancel`: one scenario version deployed (or undeployed) on a fleet, wave
 * after wave (docs/contract.md, "Rollouts").
 */
import { type Command, InvalidArgumentError } from 'commander';
import { type components, type DssClient, expectOk, type operations } from '../../client/index.js';
import { describeRolloutEvent, eventLogLines } from '../../client/rollout-events.js';
import { MAX_ROLLOUT_IDS } from '../../functions/core/rollouts/model.js';
import { finiteNumber, positiveInteger, positiveNumber } from '../arguments.js';
import { invocationOf } from '../context.js';
import { readIds } from '../files.js';
import { CommandFailed, note, printJson, printRecord, printTable, say, UsageError, visible } from '../output.js';
import { pageQuery, printListing, readPages } from '../paging.js';
import { parseScenarioRef } from '../scenario-ref.js';

type Rollout = components['schemas']['Rollout'];
type RolloutWave = components['schemas']['RolloutWave'];
type RolloutCreateBody = components['schemas']['RolloutCreateBody'];
type RolloutTargetsFilters = NonNullable<operations['RolloutTargetsList']['parameters']['query']>;

/** Default of `--interval`, seconds between two reads of a watched rollout. */
const DEFAULT_WATCH_INTERVAL_SECONDS = 2;

/** Adds `dss rollout` and its subcommands. */
export function registerRolloutCommands(program: Command): void {
  const rollout = program
    .command('rollout')
    .description('Deploy a scenario version to a fleet wave by wave, and follow, pause, resume or cancel it');
  registerRolloutCreate(rollout);
  registerRolloutGet(rollout);
  registerRolloutList(rollout);
  registerRolloutTargets(rollout);
  for (const [verb, description] of [
    ['pause', 'Pause a RUNNING rollout: no further device is deployed to (those being deployed finish)'],
    ['resume', 'Resume a PAUSED rollout where it was'],
    ['cancel', 'Cancel a SCHEDULED, RUNNING or PAUSED rollout for good (the deployments made stay)'],
  ] as const) {
    registerRolloutTransition(rollout, verb, description);
  }
}

/** `dss rollout create`: creates a rollout from a scenario version and a target selection. */
function registerRolloutCreate(rollout: Command): void {
  rollout
    .command('create')
    .description('Create a rollout: the targets are resolved now, split into waves, and deployed to in the background')
    .argument('<scenario@version>', 'the scenario version, e.g. acme-welcome@1.1.0')
    .option(
      '--query <query>',
      "a device search's query string selecting the targets (e.g. 'connection.state=CONNECTED&health.mode=SERVER'); '' selects every device",
    )
    .option('--devices <ids>', `device ids, comma-separated (at most ${MAX_ROLLOUT_IDS.toLocaleString('en-US')})`)
    .option('--from <file>', 'device ids from a CSV (id column) or JSON file')
    .option(
      '--waves <sizes>',
      'sizes of the first waves, comma-separated (e.g. 10,100); the rest of the targets form the last wave',
      waveSizes,
    )
    .option(
      '--failure-threshold <share>',
      'share of FAILED reports in a wave above which the rollout pauses, 0 to 1 (service default 0.1)',
      finiteNumber,
    )
    .option('--wave-timeout <seconds>', "how long a wave waits for its devices' reports, seconds (service default 3600)", positiveInteger)
    .option('--note <text>', 'why: the note of every deployment the rollout makes')
    .option('--undeploy', 'undeploy the version instead of deploying it')
    .option(
      '--start-at <time>',
      'start it then, not now: an ISO-8601 date-time with an offset (e.g. 2030-03-01T22:00:00+01:00), in the future, at most a year ahead; SCHEDULED until then',
      startTime,
    )
    .option(
      '--continuous',
      'keep going: devices that start matching --query later (registered, or changed into it) join and get the deployment, until the rollout is cancelled',
    )
    .option('--watch', 'then follow it until it is no longer SCHEDULED or RUNNING (as `dss rollout get --watch`)')
    .option('--interval <seconds>', `with --watch: seconds between two reads (default ${DEFAULT_WATCH_INTERVAL_SECONDS})`, positiveNumber)
    .addHelpText(
      'after',
      "\nExamples:\n  dss rollout create acme-welcome@1.1.0 --query 'connection.state=CONNECTED&health.hubs.devices.capability.type=PRINTER' --waves 10,100 --failure-threshold 0.05\n  dss rollout create acme-welcome@1.1.0 --devices kiosk-0001,kiosk-0002 --note 'Spring campaign'\n  dss rollout create acme-welcome@1.1.0 --from kiosks.csv --wave-timeout 600 --watch\n  dss rollout create acme-welcome@1.1.0 --query 'location.name=Lyon' --start-at 2030-03-01T22:00:00+01:00\n  dss rollout create acme-welcome@1.1.0 --query 'health.versionCode=4021' --continuous",
    )
    .action(createRollout);
}

/**
 * Action of `dss rollout create`.
 * @throws UsageError on a bad reference or target selection; CommandFailed when, with --watch, it ends PAUSED or CANCELLED
 */
async function createRollout(reference: string, options: CreateOptions, command: Command): Promise<void> {
  const what = parseScenarioRef(reference);
  const targets = await targetsOf(options);
  const { dss, json, company, settings } = await invocationOf(command);
  const companyId = company();
  const body: RolloutCreateBody = {
    action: options.undeploy === true ? 'UNDEPLOY' : 'DEPLOY',
    what: { type: 'SCENARIO', id: what.scenarioId, subId: what.version },
    targets,
    ...(options.waves === undefined ? {} : { waves: options.waves }),
    ...(options.failureThreshold === undefined ? {} : { failureThreshold: options.failureThreshold }),
    ...(options.waveTimeout === undefined ? {} : { waveTimeoutSeconds: options.waveTimeout }),
    ...(options.note === undefined ? {} : { note: options.note }),
    ...(options.startAt === undefined ? {} : { startAt: options.startAt }),
    ...(options.continuous === true ? { continuous: true } : {}),
  };
  const result = await dss.main.POST('/companies/{companyId}/resources/rollouts', { params: { path: { companyId } }, body });
  const created = expectOk(result);
  const location = result.response.headers.get('location');
  if (options.watch === true) {
    if (!json) note(`Created rollout ${created.id}${location === null ? '' : ` (${addressOf(settings.baseUrl, location)})`}.`);
    await watch(dss, companyId, created, json, options.interval);
    return;
  }
  if (json) {
    printJson(created);
    return;
  }
  const when = created.startAt === undefined ? '' : `, scheduled to start at ${created.startAt}`;
  say(`Created rollout ${created.id}: ${created.targets} devices in ${created.waves.length} wave(s)${when}.`);
  printRollout(created);
  if (location !== null) note(`Follow it: dss rollout get ${created.id} --watch (${addressOf(settings.baseUrl, location)})`);
}

/** `dss rollout get`: shows a rollout, once or until it is no longer SCHEDULED or RUNNING. */
function registerRolloutGet(rollout: Command): void {
  rollout
    .command('get')
    .description('Show a rollout: its state and each wave with its counts')
    .argument('<rolloutId>', 'rollout id')
    .option(
      '--watch',
      'read it again until it is no longer SCHEDULED or RUNNING; exit code 0 when it COMPLETED, 1 when PAUSED or CANCELLED',
    )
    .option('--interval <seconds>', `with --watch: seconds between two reads (default ${DEFAULT_WATCH_INTERVAL_SECONDS})`, positiveNumber)
    .addHelpText(
      'after',
      '\nExamples:\n  dss rollout get 01JD2X3Y4Z5A6B7C8D9E0F1G2H\n  dss rollout get 01JD2X3Y4Z5A6B7C8D9E0F1G2H --watch --interval 5',
    )
    .action(getRollout);
}

/** Action of `dss rollout get`. @throws CommandFailed when, with --watch, it ends PAUSED or CANCELLED */
async function getRollout(rolloutId: string, options: WatchOptions, command: Command): Promise<void> {
  const { dss, json, company } = await invocationOf(command);
  const companyId = company();
  const current = await readRollout(dss, companyId, rolloutId);
  if (options.watch === true) {
    await watch(dss, companyId, current, json, options.interval);
    return;
  }
  if (json) printJson(current);
  else printRollout(current, { events: true });
}

/** `dss rollout list`: lists the company's rollouts, newest first. */
function registerRolloutList(rollout: Command): void {
  rollout
    .command('list')
    .description("List the company's rollouts, newest first")
    .option('--limit <n>', 'rollouts per page (1 to 1000; the service defaults to 100)', positiveInteger)
    .option('--cursor <cursor>', 'continue a listing from the cursor a previous page printed')
    .option('--all', 'follow every page')
    .addHelpText('after', '\nExamples:\n  dss rollout list\n  dss rollout list --all --json')
    .action(listRollouts);
}

/** Action of `dss rollout list`. */
async function listRollouts(options: ListOptions, command: Command): Promise<void> {
  const { dss, json, company } = await invocationOf(command);
  const companyId = company();
  const listing = await readPages(
    async (cursor) => {
      return expectOk(
        await dss.main.GET('/companies/{companyId}/resources/rollouts', {
          params: { path: { companyId }, query: pageQuery(options.limit, cursor) },
        }),
      );
    },
    options.all === true,
    options.cursor,
  );
  printListing(
    listing,
    json,
    [
      { head: 'ID', value: (item) => item.id },
      { head: 'STATE', value: (item) => item.state },
      { head: 'ACTION', value: (item) => item.action },
      { head: 'SCENARIO', value: (item) => `${item.what.id}@${item.what.subId}` },
      { head: 'TARGETS', value: (item) => item.targets },
      { head: 'WAVES', value: (item) => `${item.waves.filter((wave) => wave.state === 'COMPLETED').length}/${item.waves.length} done` },
      { head: 'CREATED', value: (item) => item.created },
      { head: 'START AT', value: (item) => item.startAt },
    ],
    { empty: 'No rollouts.', more: 'rollouts' },
  );
}

/** `dss rollout targets`: lists a rollout's targets with their wave, result and reported status. */
function registerRolloutTargets(rollout: Command): void {
  rollout
    .command('targets')
    .description("List a rollout's targets: each device's wave, deployment result and latest reported status (why devices failed)")
    .argument('<rolloutId>', 'rollout id')
    .option('--wave <n>', 'only the targets of this wave (1-based)', positiveInteger)
    .option('--state <state>', 'only this deployment result: SUCCESS, FAILURE, PENDING or UNKNOWN')
    .option('--cause <cause>', 'only this failure cause, e.g. TARGET_NOT_FOUND or ALREADY_DEPLOYED')
    .option('--device-status <state>', 'only this reported status: DOWNLOADING, INSTALLING, INSTALLED or FAILED')
    .option('--limit <n>', 'targets per page (1 to 1000; the service defaults to 100)', positiveInteger)
    .option('--cursor <cursor>', 'continue a listing from the cursor a previous page printed')
    .option('--all', 'follow every page')
    .addHelpText(
      'after',
      '\nExamples:\n  dss rollout targets 01JD2X3Y4Z5A6B7C8D9E0F1G2H --device-status FAILED --all\n  dss rollout targets 01JD2X3Y4Z5A6B7C8D9E0F1G2H --wave 1 --state FAILURE --json',
    )
    .action(listTargets);
}

/** Action of `dss rollout targets`: a table of DEVICE, WAVE, RESULT, CAUSE, STATUS, MESSAGE, UPDATED (or the page as JSON). */
async function listTargets(rolloutId: string, options: TargetsOptions, command: Command): Promise<void> {
  const { dss, json, company } = await invocationOf(command);
  const companyId = company();
  // The filters are checked by the service (a value it does not take is a 400 naming the allowed ones).
  const filters = {
    ...(options.wave === undefined ? {} : { wave: options.wave }),
    ...(options.state === undefined ? {} : { state: options.state as RolloutTargetsFilters['state'] }),
    ...(options.cause === undefined ? {} : { cause: options.cause as RolloutTargetsFilters['cause'] }),
    ...(options.deviceStatus === undefined ? {} : { deviceStatus: options.deviceStatus as RolloutTargetsFilters['deviceStatus'] }),
  };
  const listing = await readPages(
    async (cursor) =>
      expectOk(
        await dss.main.GET('/companies/{companyId}/resources/rollouts/{rolloutId}/targets', {
          params: { path: { companyId, rolloutId }, query: { ...filters, ...pageQuery(options.limit, cursor) } },
        }),
      ),
    options.all === true,
    options.cursor,
  );
  printListing(
    listing,
    json,
    [
      { head: 'DEVICE', value: (item) => item.deviceId },
      { head: 'WAVE', value: (item) => item.wave },
      { head: 'RESULT', value: (item) => item.result.state },
      { head: 'CAUSE', value: (item) => item.result.cause ?? undefined },
      { head: 'STATUS', value: (item) => item.deviceStatus?.state },
      { head: 'MESSAGE', value: (item) => item.deviceStatus?.message ?? undefined },
      { head: 'UPDATED', value: (item) => item.deviceStatus?.updated },
    ],
    { empty: 'No targets.', more: 'targets' },
  );
}

/** A verb that moves a rollout from one state to another. */
type RolloutVerb = 'pause' | 'resume' | 'cancel';

/** `dss rollout pause|resume|cancel`: moves a rollout to another state. */
function registerRolloutTransition(rollout: Command, verb: RolloutVerb, description: string): void {
  rollout
    .command(verb)
    .description(description)
    .argument('<rolloutId>', 'rollout id')
    .addHelpText(
      'after',
      `\nExample:\n  dss rollout ${verb} 01JD2X3Y4Z5A6B7C8D9E0F1G2H\n\nExit code 1 when the rollout is in a state it cannot ${verb} from (409, naming its state).`,
    )
    .action((rolloutId: string, _options: unknown, command: Command) => transitionRollout(verb, rolloutId, command));
}

/** Action of `dss rollout pause|resume|cancel`: prints the rollout in its new state. */
async function transitionRollout(verb: RolloutVerb, rolloutId: string, command: Command): Promise<void> {
  const { dss, json, company } = await invocationOf(command);
  const companyId = company();
  const params = { params: { path: { companyId, rolloutId } } };
  const changed = expectOk(
    verb === 'pause'
      ? await dss.main.POST('/companies/{companyId}/resources/rollouts/{rolloutId}/pause', params)
      : verb === 'resume'
        ? await dss.main.POST('/companies/{companyId}/resources/rollouts/{rolloutId}/resume', params)
        : await dss.main.POST('/companies/{companyId}/resources/rollouts/{rolloutId}/cancel', params),
  );
  if (json) printJson(changed);
  else {
    say(`Rollout ${changed.id} is ${changed.state}.`);
    printRollout(changed);
  }
}

interface WatchOptions {
  watch?: boolean;
  interval?: number;
}

interface CreateOptions extends WatchOptions {
  query?: string;
  devices?: string;
  from?: string;
  waves?: number[];
  failureThreshold?: number;
  waveTimeout?: number;
  note?: string;
  undeploy?: boolean;
  startAt?: string;
  continuous?: boolean;
}

interface ListOptions {
  limit?: number;
  cursor?: string;
  all?: boolean;
}

interface TargetsOptions extends ListOptions {
  wave?: number;
  state?: string;
  cause?: string;
  deviceStatus?: string;
}

/** `--waves 10,100`: wave sizes, each an integer of 1 or more. */
export function waveSizes(text: string): number[] {
  const sizes = text.split(',').map((part) => part.trim());
  if (sizes.some((size) => !/^[1-9]\d*$/.test(size))) {
    throw new UsageError(`--waves '${text}': give wave sizes as integers of 1 or more, comma-separated (e.g. 10,100).`);
  }
  return sizes.map(Number);
}

/**
 * `--start-at 2030-03-01T22:00:00+01:00`: an ISO-8601 date-time with an offset (`Z` or `±hh:mm`), passed on as given;
 * the service checks that it is in the future and within its bound.
 * @throws InvalidArgumentError when it is not such a date-time (commander reports it as a usage error)
 */
export function startTime(text: string): string {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(text) || Number.isNaN(Date.parse(text))) {
    throw new InvalidArgumentError('give an ISO-8601 date-time with an offset, e.g. 2030-03-01T22:00:00+01:00 or 2030-03-01T21:00:00Z.');
  }
  return text;
}

/**
 * The `targets` of a create body from `--query`, `--devices` or `--from` (exactly one).
 * @throws UsageError when none or several are given, a list is empty or longer than MAX_ROLLOUT_IDS, or the file cannot be read
 */
export async function targetsOf(options: Pick<CreateOptions, 'query' | 'devices' | 'from'>): Promise<RolloutCreateBody['targets']> {
  const given = [options.query, options.devices, options.from].filter((value) => value !== undefined).length;
  if (given !== 1) throw new UsageError('Give exactly one of --query, --devices or --from.');
  if (options.query !== undefined) return { query: options.query.replace(/^\?/, '') };
  const ids =
    options.devices !== undefined
      ? [
          ...new Set(
            options.devices
              .split(',')
              .map((id) => id.trim())
              .filter((id) => id !== ''),
          ),
        ]
      : await readIds(options.from as string);
  if (ids.length === 0) throw new UsageError('No device id given.');
  if (ids.length > MAX_ROLLOUT_IDS) {
    throw new UsageError(
      `${ids.length.toLocaleString('en-US')} device ids; a rollout lists at most ${MAX_ROLLOUT_IDS.toLocaleString('en-US')}: select them with --query, or split them into several rollouts.`,
    );
  }
  return { ids };
}

async function readRollout(dss: DssClient, companyId: string, rolloutId: string): Promise<Rollout> {
  return expectOk(
    await dss.main.GET('/companies/{companyId}/resources/rollouts/{rolloutId}', { params: { path: { companyId, rolloutId } } }),
  );
}

/**
 * Reads the rollout every `intervalSeconds` and prints it each time it changed, until it is no longer SCHEDULED or
 * RUNNING (a scheduled rollout is followed through its start).
 * @throws CommandFailed when it ends PAUSED or CANCELLED (a script waiting for it must not go on as if it completed)
 */
async function watch(
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

/**
 * A rollout as a record (state, scenario, settings) and a table of its waves with their counts; with `events`, then
 * its event log (time, what happened), oldest first.
 */
export function printRollout(rollout: Rollout, options: { events?: boolean } = {}): void {
  printRecord({
    id: rollout.id,
    state: rollout.state,
    pausedReason: rollout.pausedReason,
    startAt: rollout.startAt,
    continuous: rollout.continuous ? `yes, ${rollout.joined ?? 0} device(s) joined since creation` : undefined,
    action: rollout.action,
    scenario: `${rollout.what.id}@${rollout.what.subId}`,
    targets: rollout.targets,
    failureThreshold: rollout.failureThreshold,
    waveTimeoutSeconds: rollout.waveTimeoutSeconds,
    note: rollout.note ?? undefined,
    createdBy: rollout.createdBy,
    created: rollout.created,
    updated: rollout.updated,
  });
  printTable(
    rollout.waves.map((wave, index) => ({ wave, number: index + 1 })),
    [
      { head: 'WAVE', value: ({ number }) => number },
      { head: 'SIZE', value: ({ wave }) => wave.size },
      { head: 'STATE', value: ({ wave }) => wave.state },
      ...COUNT_COLUMNS.map((key) => ({ head: key, value: ({ wave }: { wave: RolloutWave }) => wave.counts[key] ?? 0 })),
      { head: 'OTHER', value: ({ wave }) => otherCounts(wave) },
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

function otherCounts(wave: RolloutWave): string {
  return Object.entries(wave.counts)
    .filter(([key, count]) => !(COUNT_COLUMNS as readonly string[]).includes(key) && count > 0)
    .map(([key, count]) => `${key} ${count}`)
    .join(', ');
}

/** A Location path as an address of the main API (kept whole when it is already absolute). */
function addressOf(baseUrl: string, location: string): string {
  return location.startsWith('/') ? `${baseUrl}${location}` : location;
}
