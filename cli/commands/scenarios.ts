/** `dss skeleton`, `dss upload`, `dss scenarios`, `dss usage`: scenario packages (docs/contract.md, "Scenario packages"). */
import { stat, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { expectOk } from '../../client/index.js';
import { MAX_DIRECT_UPLOAD_BYTES } from '../../functions/contract/archives.js';
import { unzipInto, zipFolder } from '../archives.js';
import { positiveInteger, positiveNumber } from '../arguments.js';
import { type Invocation, invocationOf } from '../context.js';
import { formatBytes, note, printJson, printRecord, printTable, say, UsageError } from '../output.js';
import { pageQuery, printListing, readPages } from '../paging.js';
import { type ArchiveSource, archiveFile, rejection, type StoredScenario, uploadDirect, uploadPresigned } from '../upload.js';

/** Default of `dss upload --wait-timeout`, seconds. */
const DEFAULT_WAIT_TIMEOUT_SECONDS = 300;

/** Adds the scenario commands. */
export function registerScenarioCommands(program: Command): void {
  registerSkeleton(program);
  registerUpload(program);
  registerScenarios(program);
  registerUsage(program);
}

/** `dss skeleton`: downloads a skeleton scenario into a folder or a .zip file. */
function registerSkeleton(program: Command): void {
  program
    .command('skeleton')
    .description('Download a skeleton scenario (scenario.json with a fresh id, resources/, a README) and unzip it into a folder')
    .option('--version <semver>', 'version written into scenario.json (the service defaults to 1.0.0)')
    .option('-o, --output <folder>', 'folder to unzip into (created; must be empty unless --force)')
    .option('--zip <file>', 'write the ZIP archive as it is to this file instead of unzipping it')
    .option('--force', 'write into a folder that holds files, or replace an existing --zip file')
    .addHelpText(
      'after',
      '\nExamples:\n  dss skeleton --version 1.0.0 -o lobby/\n  dss skeleton --zip lobby.zip\n\nThen edit lobby/scenario.json and lobby/resources/, and run `dss upload lobby/`.',
    )
    .action(downloadSkeleton);
}

/**
 * Action of `dss skeleton`.
 * @throws UsageError unless exactly one of -o and --zip is given, or when --zip names a file and --force is absent
 */
async function downloadSkeleton(options: SkeletonOptions, command: Command): Promise<void> {
  if ((options.output === undefined) === (options.zip === undefined))
    throw new UsageError('Give exactly one of -o <folder> or --zip <file>.');
  const { dss, json, company } = await invocationOf(command);
  const companyId = company();
  const result = await dss.main.GET('/companies/{companyId}/resources/scenarios/skeleton.zip', {
    params: { path: { companyId }, query: options.version === undefined ? {} : { version: options.version } },
    parseAs: 'arrayBuffer',
  });
  const bytes = new Uint8Array(expectOk(result) as unknown as ArrayBuffer);
  if (options.zip !== undefined) {
    if (options.force !== true && (await stat(options.zip).catch(() => undefined)) !== undefined) {
      throw new UsageError(`${options.zip} exists: choose another name, or pass --force to replace it.`);
    }
    await writeFile(options.zip, bytes);
    if (json) printJson({ zip: resolve(options.zip), bytes: bytes.byteLength });
    else say(`Wrote ${options.zip} (${formatBytes(bytes.byteLength)}).`);
    return;
  }
  const folder = options.output as string;
  const files = await unzipInto(bytes, folder, { force: options.force === true });
  if (json) printJson({ folder: resolve(folder), files });
  else {
    say(`Wrote ${files.length} files into ${folder}:`);
    for (const file of files) say(`  ${file}`);
  }
}

/** `dss upload`: uploads a scenario folder or .zip file, directly or through a presigned slot. */
function registerUpload(program: Command): void {
  program
    .command('upload')
    .description(
      `Upload a scenario: a folder (zipped on the fly, dotfiles left out) or a .zip file. Archives up to ${formatBytes(MAX_DIRECT_UPLOAD_BYTES)} are sent in one request, larger ones through a presigned upload slot`,
    )
    .argument('<path>', 'scenario folder (with scenario.json and resources/) or .zip file')
    .option('--presigned', 'use a presigned upload slot whatever the size (or DSS_UPLOAD_PRESIGNED=1)')
    .option(
      '--wait-timeout <seconds>',
      `how long to wait for a presigned upload to be validated (default ${DEFAULT_WAIT_TIMEOUT_SECONDS})`,
      positiveNumber,
    )
    .addHelpText(
      'after',
      '\nExamples:\n  dss upload lobby/\n  dss upload lobby-1.0.0.zip\n  dss upload big-scenario.zip --wait-timeout 900\n\nExit code 1 when the version exists (409), the quota is exceeded (413) or the archive is refused (422: every violation is listed).',
    )
    .action(uploadScenarioAt);
}

/** Action of `dss upload`. @throws the upload's rejection when a presigned upload ends other than STORED */
async function uploadScenarioAt(path: string, options: UploadOptions, command: Command): Promise<void> {
  const { dss, json, company, settings } = await invocationOf(command);
  const companyId = company();
  const source = await archiveOf(path);
  const presigned = options.presigned === true || process.env.DSS_UPLOAD_PRESIGNED === '1' || source.size > MAX_DIRECT_UPLOAD_BYTES;
  if (!presigned) {
    const { stored, location } = await uploadDirect(dss, companyId, source);
    if (json) printJson(stored);
    else printStored(stored, location === null ? undefined : addressOf(settings.baseUrl, location));
    return;
  }
  const waitTimeoutMs = (options.waitTimeout ?? DEFAULT_WAIT_TIMEOUT_SECONDS) * 1000;
  const { status, response } = await uploadPresigned(dss, companyId, source, { waitTimeoutMs });
  if (json) printJson(status);
  if (status.status === 'STORED' && status.result !== undefined) {
    if (!json) printStored(status.result, addressOf(settings.baseUrl, versionPath(companyId, status.result)));
    return;
  }
  throw rejection(status, response);
}

/** `dss scenarios`: lists the company's scenarios, or shows one, or one version of one. */
function registerScenarios(program: Command): void {
  program
    .command('scenarios')
    .description("List the company's scenarios, or show one with its versions, or one version with its download URL")
    .argument('[scenarioId]', 'a scenario id: show it and its versions')
    .option('--version <semver>', 'with a scenario id: show this version (size, SHA-256, uploader, download URL)')
    .option('--limit <n>', 'scenarios per page (1 to 1000; the service defaults to 100)', positiveInteger)
    .option('--cursor <cursor>', 'continue a listing from the cursor a previous page printed')
    .option('--all', 'follow every page')
    .addHelpText(
      'after',
      '\nExamples:\n  dss scenarios\n  dss scenarios --all --json\n  dss scenarios acme-welcome\n  dss scenarios acme-welcome --version 1.1.0',
    )
    .action(showScenarios);
}

/**
 * Action of `dss scenarios`: picks the listing, the scenario or the version view.
 * @throws UsageError on --version without a scenario id
 */
async function showScenarios(scenarioId: string | undefined, options: ScenariosOptions, command: Command): Promise<void> {
  const invocation = await invocationOf(command);
  const companyId = invocation.company();
  if (scenarioId === undefined) {
    if (options.version !== undefined)
      throw new UsageError('--version needs a scenario id: dss scenarios <scenarioId> --version <semver>.');
    await listScenarios(invocation, companyId, options);
  } else if (options.version !== undefined) await showScenarioVersion(invocation, companyId, scenarioId, options.version);
  else await showScenario(invocation, companyId, scenarioId);
}

/** Prints one page of the company's scenarios (or every page with --all), and the cursor of the next. */
async function listScenarios({ dss, json }: Invocation, companyId: string, options: ScenariosOptions): Promise<void> {
  const listing = await readPages(
    async (cursor) => {
      return expectOk(
        await dss.main.GET('/companies/{companyId}/resources/scenarios', {
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
      { head: 'ID', value: (scenario) => scenario.id },
      { head: 'NAME', value: (scenario) => scenario.name },
      { head: 'LATEST', value: (scenario) => scenario.latestVersion },
      { head: 'VERSIONS', value: (scenario) => scenario.versions.join(', ') },
      { head: 'UPDATED', value: (scenario) => scenario.updated },
    ],
    { empty: 'No scenarios.', more: 'scenarios' },
  );
}

/** Prints one stored version of a scenario, with its download URL. */
async function showScenarioVersion({ dss, json }: Invocation, companyId: string, scenarioId: string, versionName: string): Promise<void> {
  const version = expectOk(
    await dss.main.GET('/companies/{companyId}/resources/scenarios/{scenarioId}/versions/{version}', {
      params: { path: { companyId, scenarioId, version: versionName } },
    }),
  );
  if (json) printJson(version);
  else {
    printRecord({
      scenario: scenarioId,
      version: version.version,
      size: bytesText(version.size),
      sha256: version.sha256,
      uploadedBy: version.uploadedBy,
      created: version.created,
    });
    // On a line of its own, where it can be copied whole (a table would wrap it).
    say(`Download URL (until ${version.download.expiresAt}):`);
    say(version.download.url);
  }
}

/** Prints one scenario and the table of its versions. */
async function showScenario({ dss, json }: Invocation, companyId: string, scenarioId: string): Promise<void> {
  const detail = expectOk(
    await dss.main.GET('/companies/{companyId}/resources/scenarios/{scenarioId}', { params: { path: { companyId, scenarioId } } }),
  );
  if (json) {
    printJson(detail);
    return;
  }
  printRecord({
    id: detail.id,
    name: detail.name,
    description: detail.description ?? undefined,
    latestVersion: detail.latestVersion,
    created: detail.created,
    updated: detail.updated,
  });
  printTable(detail.versions, [
    { head: 'VERSION', value: (version) => version.version },
    { head: 'SIZE', value: (version) => formatBytes(version.size) },
    { head: 'SHA-256', value: (version) => version.sha256 },
    { head: 'UPLOADED BY', value: (version) => version.uploadedBy },
    { head: 'CREATED', value: (version) => version.created },
  ]);
  note(`Download URLs: dss scenarios ${detail.id} --version <version>`);
}

/** `dss usage`: shows the company's storage quota, use and availability. */
function registerUsage(program: Command): void {
  program
    .command('usage')
    .description("Show the company's storage quota, the bytes its stored archives use, and the bytes available")
    .addHelpText('after', '\nExample:\n  dss usage --company acme')
    .action(showUsage);
}

/** Action of `dss usage`. */
async function showUsage(_options: unknown, command: Command): Promise<void> {
  const { dss, json, company } = await invocationOf(command);
  const companyId = company();
  const usage = expectOk(await dss.main.GET('/companies/{companyId}/resources/scenarios/usage', { params: { path: { companyId } } }));
  if (json) printJson(usage);
  else
    printRecord({
      company: companyId,
      quota: bytesText(usage.quotaBytes),
      used: bytesText(usage.usedBytes),
      available: bytesText(usage.availableBytes),
    });
}

interface SkeletonOptions {
  version?: string;
  output?: string;
  zip?: string;
  force?: boolean;
}

interface UploadOptions {
  presigned?: boolean;
  waitTimeout?: number;
}

interface ScenariosOptions {
  version?: string;
  limit?: number;
  cursor?: string;
  all?: boolean;
}

/** A folder zipped in memory, or a .zip file. */
async function archiveOf(path: string): Promise<ArchiveSource> {
  const info = await stat(path).catch(() => undefined);
  if (info === undefined) throw new UsageError(`Cannot read ${path}: no such file or folder.`);
  if (!info.isDirectory()) return archiveFile(path);
  const { bytes, files } = await zipFolder(path);
  note(`Zipped ${files.length} files of ${path} (${formatBytes(bytes.byteLength)}).`);
  const name = resolve(path).split(/[\\/]/).filter(Boolean).at(-1) ?? 'scenario';
  return { filename: `${name}.zip`, size: bytes.byteLength, bytes };
}

/** The main address's path of a stored version (what a 201's Location names). */
function versionPath(companyId: string, stored: StoredScenario): string {
  return `/companies/${encodeURIComponent(companyId)}/resources/scenarios/${encodeURIComponent(stored.id)}/versions/${encodeURIComponent(stored.version)}`;
}

/** A Location path as an address of the main API (kept whole when it is already absolute). */
function addressOf(baseUrl: string, location: string): string {
  return location.startsWith('/') ? `${baseUrl}${location}` : location;
}

function printStored(stored: StoredScenario, location: string | undefined): void {
  say(`Stored ${stored.id} ${stored.version}.`);
  printRecord({
    id: stored.id,
    version: stored.version,
    name: stored.name,
    size: bytesText(stored.size),
    sha256: stored.sha256,
    created: stored.created,
    location,
  });
}

/** `12.0 MiB (12,582,912 bytes)`. */
function bytesText(bytes: number): string {
  return bytes < 1024 ? formatBytes(bytes) : `${formatBytes(bytes)} (${bytes.toLocaleString('en-US')} bytes)`;
}
