/** `dss deploy`, `dss undeploy` (chunked, resumable batches: cli/batch.ts), `dss deployments`, `dss history`. */
import { type Command, Option } from 'commander';
import { type components, type DssClient, expectOk } from '../../client/index.js';
import { MAX_LIST_LIMIT } from '../../client/limits.js';
import { integerArgument } from '../arguments.js';
import {
  type BatchInput,
  type BatchOutcome,
  CAUSE_MESSAGES,
  checkDeviceIds,
  chunksOf,
  DEFAULT_CHUNK_SIZE,
  type DeploymentAction,
  MAX_CHUNK_SIZE,
  MAX_LISTED_DEVICES,
  MAX_NOTE_LENGTH,
  parseDeviceList,
  runBatch,
  type SendChunk,
  summarize,
} from '../batch.js';
import { invocationOf } from '../context.js';
import { readIds } from '../files.js';
import { CommandFailed, note, type Progress, printJson, printTable, say, startProgress, UsageError } from '../output.js';
import { pageQuery, readPages } from '../paging.js';
import { parseScenarioRef } from '../scenario-ref.js';
import { configDirectory } from '../settings.js';

/** Failed items listed under a batch's summary; `--json` gives every item. */
export const MAX_LISTED_FAILURES = 50;
/** Most entries a listing page may hold (the API's `limit`). */
const MAX_LIMIT = MAX_LIST_LIMIT;

type ActiveDeployment = components['schemas']['ActiveDeployment'];

/** Adds the deployment commands. */
export function registerDeploymentCommands(program: Command): void {
  registerBatchCommand(program, 'deploy', 'DEPLOY');
  registerBatchCommand(program, 'undeploy', 'UNDEPLOY');
  registerDeploymentsList(program);
  registerHistory(program);
}

/** `dss deployments`: lists active deployments, the company's or one device's. */
function registerDeploymentsList(program: Command): void {
  program
    .command('deployments')
    .description("List active deployments: the company's, or one device's (--device)")
    .option('--device <id>', "only this device's deployments")
    .option('--limit <n>', `deployments per page (the API's limit), 1 to ${MAX_LIMIT}; default 100`, integerArgument(1, MAX_LIMIT))
    .option('--all', 'follow nextCursor and list every page')
    .addHelpText('after', '\nExamples:\n  dss deployments --device acme-kiosk-0001\n  dss deployments --all --json > deployments.json')
    .action(listDeployments);
}

/** Action of `dss deployments`. */
async function listDeployments(options: { device?: string; limit?: number; all?: boolean }, command: Command): Promise<void> {
  const { dss, json, company } = await invocationOf(command);
  const companyId = company();
  const device = options.device;
  const listing = await readPages(
    async (cursor) =>
      device === undefined
        ? expectOk(
            await dss.main.GET('/companies/{companyId}/resources/DEVICE/deployments', {
              params: { path: { companyId }, query: pageQuery(options.limit, cursor) },
            }),
          )
        : expectOk(
            await dss.main.GET('/companies/{companyId}/resources/{deviceId}/deployments', {
              params: { path: { companyId, deviceId: device }, query: pageQuery(options.limit, cursor) },
            }),
          ),
    options.all === true,
  );
  if (json) {
    printJson(options.all ? listing.items : listing.first);
    return;
  }
  printTable(
    listing.items,
    [
      { head: 'Device', value: (item) => item.target.id },
      { head: 'Scenario', value: (item) => item.what.id },
      { head: 'Version', value: (item) => item.what.subId },
      { head: 'Deployed at', value: (item) => item.deployedAt },
      { head: 'Deployed by', value: (item) => item.deployedBy },
      { head: 'Device status', value: (item) => deviceStatusText(item.deviceStatus) },
      { head: 'Note', value: (item) => item.note },
    ],
    'No active deployment.',
  );
  moreNote(listing.nextCursor, 'deployments');
}

/** `dss history`: lists the deployment history, newest first. */
function registerHistory(program: Command): void {
  program
    .command('history')
    .description('List the deployment history, newest first: every DEPLOY and UNDEPLOY attempted, and the status reports of devices')
    .option('--device <id>', 'only this device')
    .option('--scenario <id>', 'only this scenario')
    .option('--version <version>', 'only this version of --scenario')
    .option('--since <instant>', "from this ISO-8601 instant with a time zone, inclusive (the API's from), e.g. 2026-03-01T00:00:00Z")
    .option('--until <instant>', "up to this ISO-8601 instant with a time zone, exclusive (the API's to)")
    .option('--limit <n>', `entries per page (the API's limit), 1 to ${MAX_LIMIT}; default 100`, integerArgument(1, MAX_LIMIT))
    .option('--all', 'follow nextCursor and list every page')
    .addHelpText(
      'after',
      '\nExamples:\n  dss history --device acme-kiosk-0001\n  dss history --scenario acme-welcome --version 1.1.0 --since 2026-03-01T00:00:00Z --all --json',
    )
    .action(listHistory);
}

/** Action of `dss history`. @throws UsageError on --version without --scenario */
async function listHistory(options: HistoryOptions, command: Command): Promise<void> {
  if (options.version !== undefined && options.scenario === undefined) {
    throw new UsageError('--version filters the versions of one scenario: give --scenario too.');
  }
  const { dss, json, company } = await invocationOf(command);
  const companyId = company();
  const filters = {
    ...(options.device === undefined ? {} : { deviceId: options.device }),
    ...(options.scenario === undefined ? {} : { scenarioId: options.scenario }),
    ...(options.version === undefined ? {} : { version: options.version }),
    ...(options.since === undefined ? {} : { from: options.since }),
    ...(options.until === undefined ? {} : { to: options.until }),
  };
  const listing = await readPages(
    async (cursor) =>
      expectOk(
        await dss.main.GET('/companies/{companyId}/resources/deployments/history', {
          params: { path: { companyId }, query: { ...filters, ...pageQuery(options.limit, cursor) } },
        }),
      ),
    options.all === true,
  );
  if (json) {
    printJson(options.all ? listing.items : listing.first);
    return;
  }
  printTable(
    listing.items,
    [
      { head: 'At', value: (entry) => entry.at },
      { head: 'Device', value: (entry) => entry.target.id },
      { head: 'Scenario', value: (entry) => entry.what.id },
      { head: 'Version', value: (entry) => entry.what.subId },
      { head: 'Action', value: (entry) => (entry.kind === 'ACTION' ? entry.action : 'STATUS') },
      { head: 'State', value: (entry) => (entry.kind === 'ACTION' ? entry.state : entry.deviceStatus.state) },
      { head: 'Cause', value: (entry) => (entry.kind === 'ACTION' ? entry.cause : null) },
      { head: 'By', value: (entry) => entry.by },
      { head: 'Note', value: (entry) => (entry.kind === 'ACTION' ? entry.note : entry.deviceStatus.message) },
    ],
    'No history entry.',
  );
  moreNote(listing.nextCursor, 'entries');
}

interface HistoryOptions {
  device?: string;
  scenario?: string;
  version?: string;
  since?: string;
  until?: string;
  limit?: number;
  all?: boolean;
}

interface BatchCommandOptions {
  devices?: string;
  from?: string;
  dryRun?: boolean;
  note?: string;
  chunkSize: number;
}

/** `dss deploy` or `dss undeploy`. */
function registerBatchCommand(program: Command, name: 'deploy' | 'undeploy', action: DeploymentAction): void {
  const verb = action === 'DEPLOY' ? 'Deploy' : 'Undeploy';
  program
    .command(name)
    .description(
      `${verb} a scenario version ${action === 'DEPLOY' ? 'on' : 'from'} devices, in chunks of at most ${MAX_CHUNK_SIZE.toLocaleString('en-US')} per request; rerunning an interrupted run resumes it safely`,
    )
    .argument('<scenario@version>', 'the scenario id and its version, e.g. acme-welcome@1.2.0')
    .addOption(
      new Option('--devices <ids>', `device ids separated by commas (at most ${MAX_LISTED_DEVICES.toLocaleString('en-US')})`).conflicts(
        'from',
      ),
    )
    .option(
      '--from <file>',
      'file of device ids: CSV with an id (or deviceId) column or a single column, or JSON array of ids or of { id }',
    )
    .option('--dry-run', 'report what would happen, change nothing')
    .option('--note <text>', `why, kept in the history (at most ${MAX_NOTE_LENGTH.toLocaleString('en-US')} characters)`)
    .option(
      '--chunk-size <n>',
      `entries per request, 1 to ${MAX_CHUNK_SIZE.toLocaleString('en-US')}`,
      integerArgument(1, MAX_CHUNK_SIZE),
      DEFAULT_CHUNK_SIZE,
    )
    .addHelpText(
      'after',
      `
Prints a summary (items per state and cause) and the failed items; --json prints { summary, items } with every
result item. Exit code 1 when any item failed.

Each request carries an Idempotency-Key from a journal in the configuration folder (batches/), kept until every
chunk is answered: after an interruption (Ctrl-C, a lost connection, an expired token), run the same command again;
chunks answered before are replayed by the service, not executed twice. A later run of the same command executes anew.

Examples:
  dss ${name} acme-welcome@1.2.0 --devices acme-kiosk-0001,acme-kiosk-0002 --note "Spring campaign"
  dss ${name} acme-welcome@1.2.0 --from devices.csv --dry-run
  dss ${name} acme-welcome@1.2.0 --from devices.json --chunk-size 1000 --json > result.json`,
    )
    .action((target: string, options: BatchCommandOptions, command: Command) => runBatchCommand(action, target, options, command));
}

/**
 * Action of `dss deploy` and `dss undeploy`: sends the batch in journaled chunks and prints its report.
 * @throws UsageError on a bad reference, device list or --note; CommandFailed when any item failed
 */
async function runBatchCommand(action: DeploymentAction, target: string, options: BatchCommandOptions, command: Command): Promise<void> {
  const verb = action === 'DEPLOY' ? 'Deploy' : 'Undeploy';
  const { scenarioId: scenario, version } = parseScenarioRef(target);
  const ids = await deviceIdsOf(options);
  if (options.note !== undefined && options.note.length > MAX_NOTE_LENGTH) {
    throw new UsageError(`--note has ${options.note.length} characters; at most ${MAX_NOTE_LENGTH} are kept.`);
  }
  const { settings, dss, json, company } = await invocationOf(command);
  const companyId = company();
  const dryRun = options.dryRun === true;
  const input: BatchInput = {
    baseUrl: settings.baseUrl,
    company: companyId,
    action,
    scenario,
    version,
    ids,
    chunkSize: options.chunkSize,
    ...(options.note === undefined ? {} : { note: options.note }),
  };
  const send = chunkSender(dss, companyId, dryRun, options.note);
  const chunks = chunksOf(ids, options.chunkSize).length;
  note(
    `${verb}ing ${scenario}@${version} ${action === 'DEPLOY' ? 'on' : 'from'} ${count(ids.length, 'device')} in ${count(chunks, 'chunk')} of at most ${options.chunkSize.toLocaleString('en-US')}${dryRun ? ' (dry run: nothing is changed)' : ''}.`,
  );
  const outcome = await runBatchShowingProgress(input, send, dryRun, dryRun ? 'Dry run' : `${verb}ing`);
  const failed = reportBatch(outcome, { action, scenario, version }, json);
  if (failed > 0) {
    throw new CommandFailed(
      `${count(failed, 'item')} of ${outcome.items.length.toLocaleString('en-US')} ${dryRun ? 'would fail' : 'failed'}.`,
    );
  }
}

/** Sends one chunk of a batch as a deployment request (a dry run with `dryRun`), keyed when a key is given. */
function chunkSender(dss: DssClient, companyId: string, dryRun: boolean, batchNote: string | undefined): SendChunk {
  return async (requests, key) => {
    const result = await dss.main.POST('/companies/{companyId}/resources/deployments', {
      params: {
        path: { companyId },
        ...(dryRun ? { query: { dryRun: true } } : {}),
        ...(key === undefined ? {} : { header: { 'Idempotency-Key': key } }),
      },
      body: { requests, ...(batchNote === undefined ? {} : { note: batchNote }) },
    });
    return { items: expectOk(result).items, replayed: result.response.headers.get('idempotent-replayed') === 'true' };
  };
}

/** Runs a batch with the journal of the configuration folder, with a progress bar shown from the first answer on. */
async function runBatchShowingProgress(input: BatchInput, send: SendChunk, dryRun: boolean, label: string): Promise<BatchOutcome> {
  let progress: Progress | undefined;
  try {
    return await runBatch(input, {
      directory: configDirectory(),
      dryRun,
      send,
      note,
      progress: (done) => {
        progress ??= startProgress(label, input.ids.length, 'items');
        progress.update(done);
      },
    });
  } finally {
    progress?.stop();
  }
}

/** The ids of `--devices` or `--from`. @throws UsageError when neither (or an empty file) is given */
async function deviceIdsOf(options: BatchCommandOptions): Promise<string[]> {
  if (options.devices !== undefined) return parseDeviceList(options.devices);
  if (options.from !== undefined) {
    const ids = await readIds(options.from);
    if (ids.length === 0) throw new UsageError(`${options.from} holds no device id.`);
    checkDeviceIds(ids);
    return ids;
  }
  throw new UsageError('Name the devices: --devices id,id,… or --from file.csv|file.json.');
}

/**
 * Prints a batch's outcome: `--json` `{ summary, items }`, else the counts per state and cause and the failed items
 * (at most MAX_LISTED_FAILURES). @returns the number of failed items
 */
function reportBatch(outcome: BatchOutcome, what: { action: DeploymentAction; scenario: string; version: string }, json: boolean): number {
  const counts = summarize(outcome.items);
  const failures = outcome.items.filter((item) => item.state === 'FAILURE');
  const summary = {
    ...what,
    dryRun: outcome.dryRun,
    ...(outcome.runId === undefined ? {} : { runId: outcome.runId }),
    resumed: outcome.resumed,
    chunks: outcome.chunks,
    replayedChunks: outcome.replayedChunks,
    total: outcome.items.length,
    succeeded: outcome.items.length - failures.length,
    failed: failures.length,
    counts,
  };
  if (outcome.replayedChunks > 0) {
    note(`${count(outcome.replayedChunks, 'chunk')} of ${outcome.chunks} had been answered before: the service replayed their answers.`);
  }
  if (outcome.dryRun) note('Dry run: nothing was changed.');
  if (json) {
    printJson({ summary, items: outcome.items });
    return failures.length;
  }
  printTable(counts, [
    { head: 'State', value: (line) => line.state },
    { head: 'Cause', value: (line) => line.cause },
    { head: 'Items', value: (line) => line.count.toLocaleString('en-US') },
  ]);
  if (failures.length > 0) {
    say();
    say('Failed items:');
    printTable(failures.slice(0, MAX_LISTED_FAILURES), [
      { head: 'Device', value: (item) => item.target.id },
      { head: 'Cause', value: (item) => item.cause },
      { head: 'Message', value: (item) => CAUSE_MESSAGES[item.cause ?? 'NONE'] },
    ]);
    if (failures.length > MAX_LISTED_FAILURES) {
      say(`… ${(failures.length - MAX_LISTED_FAILURES).toLocaleString('en-US')} more (--json lists every item).`);
    }
  }
  return failures.length;
}

function moreNote(nextCursor: string | null, what: string): void {
  if (nextCursor !== null) note(`More ${what} follow: add --all to list every page.`);
}

function deviceStatusText(status: ActiveDeployment['deviceStatus']): string {
  if (status === undefined) return '';
  return status.message === null ? status.state : `${status.state}: ${status.message}`;
}

/** `1 device`, `2,000 devices`. */
function count(value: number, noun: string): string {
  return `${value.toLocaleString('en-US')} ${noun}${value === 1 ? '' : 's'}`;
}
