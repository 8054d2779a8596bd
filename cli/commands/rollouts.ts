/**
 * `dss rollout create|get|list|targets|pause|resume|cancel`: one scenario version deployed (or undeployed), or one
 * command run, on a fleet, wave after wave (docs/contract.md, "Rollouts"). `create` is in rollout-create.ts, how a
 * rollout is shown in rollout-output.ts.
 */
import type { Command } from 'commander';
import { expectOk, type operations } from '../../client/index.js';
import { rolloutSubject } from '../../client/rollout-events.js';
import { positiveInteger, positiveNumber } from '../arguments.js';
import { invocationOf } from '../context.js';
import { type Column, printJson, say } from '../output.js';
import { pageQuery, printListing, readPages } from '../paging.js';
import { registerRolloutCreate } from './rollout-create.js';
import { DEFAULT_WATCH_INTERVAL_SECONDS, printRollout, readRollout, watch } from './rollout-output.js';

export { startTime, targetsOf, waveSizes } from './rollout-create.js';
export { printRollout } from './rollout-output.js';

type RolloutTargetsFilters = NonNullable<operations['RolloutTargetsList']['parameters']['query']>;

/** Adds `dss rollout` and its subcommands. */
export function registerRolloutCommands(program: Command): void {
  const rollout = program
    .command('rollout')
    .description('Deploy a scenario version to a fleet, or run a command on it, wave by wave, and follow, pause, resume or cancel it');
  registerRolloutCreate(rollout);
  registerRolloutGet(rollout);
  registerRolloutList(rollout);
  registerRolloutTargets(rollout);
  for (const [verb, description] of [
    ['pause', 'Pause a RUNNING rollout: no further device is deployed to (those being deployed finish)'],
    ['resume', 'Resume a PAUSED rollout where it was'],
    [
      'cancel',
      "Cancel a SCHEDULED, RUNNING or PAUSED rollout for good (the deployments made stay; a command rollout's QUEUED commands are cancelled)",
    ],
  ] as const) {
    registerRolloutTransition(rollout, verb, description);
  }
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
      { head: 'WHAT', value: (item) => rolloutSubject(item) },
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
    .option(
      '--command-state <state>',
      'a command rollout: only the targets with a command in this state (QUEUED, DELIVERED, SUCCEEDED, FAILED, EXPIRED, CANCELLED)',
    )
    .option('--limit <n>', 'targets per page (1 to 1000; the service defaults to 100)', positiveInteger)
    .option('--cursor <cursor>', 'continue a listing from the cursor a previous page printed')
    .option('--all', 'follow every page')
    .addHelpText(
      'after',
      '\nExamples:\n  dss rollout targets 01JD2X3Y4Z5A6B7C8D9E0F1G2H --device-status FAILED --all\n  dss rollout targets 01JD2X3Y4Z5A6B7C8D9E0F1G2H --wave 1 --state FAILURE --json\n  dss rollout targets 01JD2X3Y4Z5A6B7C8D9E0F1G2H --command-state FAILED --all\n  dss rollout targets 01JD2X3Y4Z5A6B7C8D9E0F1G2H --cause COMMAND_NOT_ADVERTISED',
    )
    .action(listTargets);
}

/**
 * Action of `dss rollout targets`: a table of DEVICE, WAVE, RESULT, CAUSE, STATUS, MESSAGE, UPDATED; of a command
 * rollout's targets DEVICE, WAVE, RESULT, CAUSE, COMMANDS (each `hub/sub-device STATE: message`); or the page as JSON.
 */
async function listTargets(rolloutId: string, options: TargetsOptions, command: Command): Promise<void> {
  const { dss, json, company } = await invocationOf(command);
  const companyId = company();
  // The filters are checked by the service (a value it does not take is a 400 naming the allowed ones).
  const filters = {
    ...(options.wave === undefined ? {} : { wave: options.wave }),
    ...(options.state === undefined ? {} : { state: options.state as RolloutTargetsFilters['state'] }),
    ...(options.cause === undefined ? {} : { cause: options.cause as RolloutTargetsFilters['cause'] }),
    ...(options.deviceStatus === undefined ? {} : { deviceStatus: options.deviceStatus as RolloutTargetsFilters['deviceStatus'] }),
    ...(options.commandState === undefined ? {} : { commandState: options.commandState as RolloutTargetsFilters['commandState'] }),
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
  type Target = (typeof listing.items)[number];
  const first: Column<Target>[] = [
    { head: 'DEVICE', value: (item) => item.deviceId },
    { head: 'WAVE', value: (item) => item.wave },
    { head: 'RESULT', value: (item) => item.result.state },
    { head: 'CAUSE', value: (item) => item.result.cause ?? undefined },
  ];
  // Only a command rollout's targets carry `commands`.
  const rest: Column<Target>[] = listing.items.some((item) => item.commands !== undefined)
    ? [
        {
          head: 'COMMANDS',
          value: (item) =>
            (item.commands ?? [])
              .map((one) => `${one.subId} ${one.state}${one.message === undefined ? '' : `: ${one.message}`}`)
              .join(', '),
        },
      ]
    : [
        { head: 'STATUS', value: (item) => item.deviceStatus?.state },
        { head: 'MESSAGE', value: (item) => item.deviceStatus?.message ?? undefined },
        { head: 'UPDATED', value: (item) => item.deviceStatus?.updated },
      ];
  printListing(listing, json, [...first, ...rest], { empty: 'No targets.', more: 'targets' });
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
  commandState?: string;
}
