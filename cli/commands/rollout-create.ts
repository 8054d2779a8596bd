/**
 * `dss rollout create`: a rollout of a scenario version (deploy or undeploy), or of a command run on every sub-device
 * that advertises it (`--command`), on the devices a query or a list selects; `--preview` says what it would do
 * without creating it (docs/rollouts.md).
 */
import { type Command, InvalidArgumentError } from 'commander';
import { type components, expectOk } from '../../client/index.js';
import { MAX_ROLLOUT_IDS } from '../../functions/core/rollouts/model.js';
import { finiteNumber, positiveInteger, positiveNumber } from '../arguments.js';
import { expiresInArgument, jsonArgument } from '../command-arguments.js';
import { invocationOf } from '../context.js';
import { readIds } from '../files.js';
import { note, printJson, printRecord, printTable, say, UsageError } from '../output.js';
import { parseScenarioRef } from '../scenario-ref.js';
import { addressOf, DEFAULT_WATCH_INTERVAL_SECONDS, printRollout, watch } from './rollout-output.js';

type RolloutCreateBody = components['schemas']['RolloutCreateBody'];
type RolloutPreview = components['schemas']['RolloutPreview'];

/** `dss rollout create`: creates a rollout from a scenario version or a command, and a target selection. */
export function registerRolloutCreate(rollout: Command): void {
  rollout
    .command('create')
    .description(
      'Create a rollout of a scenario version, or of a command (--command): the targets are resolved now, split into waves, and handled in the background',
    )
    .argument('[scenario@version]', 'the scenario version, e.g. acme-welcome@1.1.0 (not with --command)')
    .option(
      '--query <query>',
      "a device search's query string selecting the targets (e.g. 'connection.state=CONNECTED&health.mode=SERVER'); '' selects every device",
    )
    .option('--devices <ids>', `device ids, comma-separated (at most ${MAX_ROLLOUT_IDS.toLocaleString('en-US')})`)
    .option('--from <file>', 'device ids from a CSV (id column) or JSON file')
    .option('--command <name>', 'run this command on every sub-device of each target that advertises it, instead of deploying')
    .option('--arguments <json>', 'with --command: the JSON arguments sent with every command', jsonArgument)
    .option(
      '--expires-in <duration>',
      'with --command: how long each command may wait for its result: 90s, 10m, 2h, 7d (service default 1h)',
      expiresInArgument,
    )
    .option(
      '--waves <sizes>',
      'sizes of the first waves, comma-separated (e.g. 10,100); the rest of the targets form the last wave',
      waveSizes,
    )
    .option(
      '--failure-threshold <share>',
      'share of FAILED reports (with --command: of commands FAILED or EXPIRED) in a wave above which the rollout pauses, 0 to 1 (service default 0.1)',
      finiteNumber,
    )
    .option('--wave-timeout <seconds>', "how long a wave waits for its devices' reports, seconds (service default 3600)", positiveInteger)
    .option('--note <text>', 'why: the note of every deployment (or command) the rollout makes')
    .option('--undeploy', 'undeploy the version instead of deploying it')
    .option(
      '--start-at <time>',
      'start it then, not now: an ISO-8601 date-time with an offset (e.g. 2030-03-01T22:00:00+01:00), in the future, at most a year ahead; SCHEDULED until then',
      startTime,
    )
    .option(
      '--continuous',
      'keep going: devices that start matching --query later (registered, or changed into it) join and get the deployment (or the command), until the rollout is cancelled',
    )
    .option(
      '--preview',
      'say what the rollout would do (targets, waves; with --command, who advertises it, by sub-device type) and create nothing',
    )
    .option('--watch', 'then follow it until it is no longer SCHEDULED or RUNNING (as `dss rollout get --watch`)')
    .option('--interval <seconds>', `with --watch: seconds between two reads (default ${DEFAULT_WATCH_INTERVAL_SECONDS})`, positiveNumber)
    .addHelpText(
      'after',
      "\nExamples:\n  dss rollout create acme-welcome@1.1.0 --query 'connection.state=CONNECTED&health.hubs.devices.capability.type=PRINTER' --waves 10,100 --failure-threshold 0.05\n  dss rollout create acme-welcome@1.1.0 --devices kiosk-0001,kiosk-0002 --note 'Spring campaign'\n  dss rollout create acme-welcome@1.1.0 --from kiosks.csv --wave-timeout 600 --watch\n  dss rollout create acme-welcome@1.1.0 --query 'location.name=Lyon' --start-at 2030-03-01T22:00:00+01:00\n  dss rollout create acme-welcome@1.1.0 --query 'health.versionCode=4021' --continuous\n  dss rollout create --command reboot --query 'location.name=Lyon' --waves 5 --expires-in 10m --preview\n  dss rollout create --command print-test-page --arguments '{\"copies\":1}' --devices kiosk-0001,kiosk-0002 --watch",
    )
    .action(createRollout);
}

/**
 * Action of `dss rollout create`.
 * @throws UsageError on a bad reference, target selection or option mix; CommandFailed when, with --watch, it ends
 *   PAUSED or CANCELLED
 */
async function createRollout(reference: string | undefined, options: CreateOptions, command: Command): Promise<void> {
  const subject = subjectOf(reference, options);
  const targets = await targetsOf(options);
  const { dss, json, company, settings } = await invocationOf(command);
  const companyId = company();
  const body = {
    ...subject,
    targets,
    ...(options.waves === undefined ? {} : { waves: options.waves }),
    ...(options.failureThreshold === undefined ? {} : { failureThreshold: options.failureThreshold }),
    ...(options.waveTimeout === undefined ? {} : { waveTimeoutSeconds: options.waveTimeout }),
    ...(options.note === undefined ? {} : { note: options.note }),
    ...(options.startAt === undefined ? {} : { startAt: options.startAt }),
    ...(options.continuous === true ? { continuous: true } : {}),
  } as RolloutCreateBody;
  const params = { params: { path: { companyId } }, body };
  if (options.preview === true) {
    const preview = expectOk(await dss.main.POST('/companies/{companyId}/resources/rollouts/preview', params));
    if (json) printJson(preview);
    else printPreview(preview);
    return;
  }
  const result = await dss.main.POST('/companies/{companyId}/resources/rollouts', params);
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

/**
 * What the rollout does: `action` and `what` from SCENARIO@VERSION (and --undeploy), or `action` COMMAND and `command`
 * from --command (with --arguments and --expires-in).
 * @throws UsageError when neither or both are given, or options of the other kind are
 */
function subjectOf(reference: string | undefined, options: CreateOptions): Pick<RolloutCreateBody, 'action'> & Record<string, unknown> {
  if (options.command === undefined) {
    if (reference === undefined) throw new UsageError('Give the scenario version (SCENARIO@VERSION), or --command NAME.');
    if (options.arguments !== undefined || options.expiresIn !== undefined) {
      throw new UsageError('--arguments and --expires-in go with --command.');
    }
    const what = parseScenarioRef(reference);
    return {
      action: options.undeploy === true ? 'UNDEPLOY' : 'DEPLOY',
      what: { type: 'SCENARIO', id: what.scenarioId, subId: what.version },
    };
  }
  if (reference !== undefined) throw new UsageError(`Give either the scenario version '${reference}' or --command, not both.`);
  if (options.undeploy === true) throw new UsageError('--undeploy does not go with --command.');
  return {
    action: 'COMMAND',
    command: {
      command: options.command,
      ...(options.arguments === undefined ? {} : { arguments: options.arguments }),
      ...(options.expiresIn === undefined ? {} : { expiresInSeconds: options.expiresIn }),
    },
  };
}

/** A rollout's preview: its targets and waves, and (COMMAND) what they advertise, by sub-device type. */
function printPreview(preview: RolloutPreview): void {
  say(`Preview: nothing was created. ${preview.targets} devices in ${preview.waves.length} wave(s): ${preview.waves.join(', ')}.`);
  const command = preview.command;
  if (command === undefined) return;
  printRecord({
    advertising: command.advertising,
    notAdvertising: command.notAdvertising === 0 ? 0 : `${command.notAdvertising} (each a FAILURE: COMMAND_NOT_ADVERTISED)`,
    notFound: command.notFound === 0 ? undefined : `${command.notFound} (each a FAILURE: TARGET_NOT_FOUND)`,
    commands: command.commands,
  });
  printTable(
    Object.entries(command.bySubDeviceType).sort(([a], [b]) => (a < b ? -1 : 1)),
    [
      { head: 'SUB-DEVICE TYPE', value: ([type]) => type },
      { head: 'COMMANDS', value: ([, count]) => count },
    ],
    'No sub-device advertises the command.',
  );
}

interface CreateOptions {
  query?: string;
  devices?: string;
  from?: string;
  command?: string;
  arguments?: unknown;
  expiresIn?: number;
  waves?: number[];
  failureThreshold?: number;
  waveTimeout?: number;
  note?: string;
  undeploy?: boolean;
  startAt?: string;
  continuous?: boolean;
  preview?: boolean;
  watch?: boolean;
  interval?: number;
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
