/**
 * `dss admin companies create|list|get|update`: companies administration (`dss admin users` is in admin-users.ts), for a platform administrator's token
 * (`companies:read`, `companies:write`; docs/contract.md, "Companies administration"). The commands act on the company
 * they name, not on the token's companies, so `--company` does not apply.
 */
import { type Command, InvalidArgumentError } from 'commander';
import { type components, expectOk } from '../../client/index.js';
import { MAX_QUOTA_BYTES } from '../../functions/core/companies/admin.js';
import { positiveInteger } from '../arguments.js';
import { invocationOf } from '../context.js';
import { formatBytes, note, printJson, printRecord, say, UsageError } from '../output.js';
import { pageQuery, printListing, readPages } from '../paging.js';
import { registerAdminApiClientCommands } from './admin-api-clients.js';
import { registerAdminAuditCommands } from './admin-audit.js';
import { registerAdminUserCommands } from './admin-users.js';

type AdminCompany = components['schemas']['AdminCompany'];

const BINARY_UNITS: Readonly<Record<string, number>> = { '': 1, B: 1, KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3, TiB: 1024 ** 4 };

/**
 * Parses a quota: bytes (`10485760`) or a whole number of a binary unit (`10MiB`, `1 GiB`), from 0 to 1 TiB.
 * @throws InvalidArgumentError (bad usage, exit 2) otherwise
 */
export function quotaArgument(value: string): number {
  const match = /^\s*([0-9]+)\s*(B|KiB|MiB|GiB|TiB)?\s*$/.exec(value);
  const bytes = match === null ? Number.NaN : Number(match[1]) * (BINARY_UNITS[match[2] ?? ''] as number);
  if (!Number.isSafeInteger(bytes) || bytes > MAX_QUOTA_BYTES) {
    throw new InvalidArgumentError('expected bytes, or a whole number of KiB, MiB, GiB or TiB (e.g. 10MiB), at most 1TiB.');
  }
  return bytes;
}

/** Adds `dss admin` and its `companies`, `users`, `api-clients` and `audit` subcommands. */
export function registerAdminCommands(program: Command): void {
  const admin = program
    .command('admin')
    .description('Administration: companies (a platform administrator token), users, API clients and the audit log');
  const companies = admin.command('companies').description('Create, list, show and change companies and their storage quotas');
  registerCompanyCreate(companies);
  registerCompanyList(companies);
  registerCompanyGet(companies);
  registerCompanyUpdate(companies);
  registerAdminUserCommands(admin);
  registerAdminApiClientCommands(admin);
  registerAdminAuditCommands(admin);
}

/** `dss admin companies create`: creates a company with its quota. */
function registerCompanyCreate(companies: Command): void {
  companies
    .command('create')
    .description('Create a company (nothing stored, no device)')
    .argument('<companyId>', 'its id, for good: 1 to 128 letters, digits, ".", "_" or "-", starting with a letter or digit')
    .requiredOption('--name <name>', 'display name, 1 to 100 characters')
    .requiredOption('--quota <size>', 'storage quota for scenario archives: bytes, or e.g. 10MiB, 5GiB (at most 1TiB)', quotaArgument)
    .addHelpText('after', "\nExample:\n  dss admin companies create initech --name 'Initech' --quota 10MiB")
    .action(async (companyId: string, options: { name: string; quota: number }, command: Command) => {
      const { dss, json } = await invocationOf(command);
      const created = expectOk(
        await dss.main.POST('/admin/companies', { body: { id: companyId, name: options.name, quotaBytes: options.quota } }),
      );
      if (json) printJson(created);
      else {
        say(`Created company ${created.id}.`);
        printCompany(created);
      }
    });
}

/** `dss admin companies list`: lists the companies with their storage used and quota. */
function registerCompanyList(companies: Command): void {
  companies
    .command('list')
    .description('List the companies with their storage used and quota (in no meaningful order)')
    .option('--limit <n>', 'companies per page (1 to 1000; the service defaults to 100)', positiveInteger)
    .option('--cursor <cursor>', 'continue a listing from the cursor a previous page printed')
    .option('--all', 'follow every page')
    .addHelpText('after', '\nExamples:\n  dss admin companies list\n  dss admin companies list --all --json')
    .action(async (options: { limit?: number; cursor?: string; all?: boolean }, command: Command) => {
      const { dss, json } = await invocationOf(command);
      const listing = await readPages(
        async (cursor) => expectOk(await dss.main.GET('/admin/companies', { params: { query: pageQuery(options.limit, cursor) } })),
        options.all === true,
        options.cursor,
      );
      printListing(
        listing,
        json,
        [
          { head: 'ID', value: (item) => item.id },
          { head: 'NAME', value: (item) => item.name },
          { head: 'USED', value: (item) => formatBytes(item.usedBytes) },
          { head: 'QUOTA', value: (item) => formatBytes(item.quotaBytes) },
          { head: 'OVER QUOTA', value: (item) => (item.overQuota ? 'yes' : '') },
        ],
        { empty: 'No companies.', more: 'companies' },
      );
    });
}

/** `dss admin companies get`: shows a company with its device and user counts. */
function registerCompanyGet(companies: Command): void {
  companies
    .command('get')
    .description('Show a company: storage used, quota, device count and user count')
    .argument('<companyId>', 'the company')
    .addHelpText('after', '\nExample:\n  dss admin companies get initech')
    .action(async (companyId: string, _options: unknown, command: Command) => {
      const { dss, json } = await invocationOf(command);
      const company = expectOk(await dss.main.GET('/admin/companies/{companyId}', { params: { path: { companyId } } }));
      if (json) printJson(company);
      else printCompany(company, { devices: company.deviceCount, users: company.userCount });
    });
}

/** `dss admin companies update`: changes a company's name and/or quota, noting a quota now below its usage. */
function registerCompanyUpdate(companies: Command): void {
  companies
    .command('update')
    .description("Change a company's name and/or quota (a quota below its usage is accepted: uploads then answer 413)")
    .argument('<companyId>', 'the company')
    .option('--name <name>', 'new display name, 1 to 100 characters')
    .option('--quota <size>', 'new storage quota: bytes, or e.g. 10MiB, 5GiB (at most 1TiB)', quotaArgument)
    .addHelpText(
      'after',
      "\nExamples:\n  dss admin companies update initech --name 'Initech Corp'\n  dss admin companies update initech --quota 1GiB",
    )
    .action(async (companyId: string, options: { name?: string; quota?: number }, command: Command) => {
      if (options.name === undefined && options.quota === undefined) throw new UsageError('give --name, --quota or both.');
      const { dss, json } = await invocationOf(command);
      const updated = expectOk(
        await dss.main.PATCH('/admin/companies/{companyId}', {
          params: { path: { companyId } },
          body: {
            ...(options.name === undefined ? {} : { name: options.name }),
            ...(options.quota === undefined ? {} : { quotaBytes: options.quota }),
          },
        }),
      );
      if (json) {
        printJson(updated);
        return;
      }
      say(`Updated company ${updated.id}.`);
      printCompany(updated);
      if (updated.overQuota) {
        note(
          `Company ${updated.id} now stores more than its quota (${formatBytes(updated.usedBytes)} of ${formatBytes(updated.quotaBytes)}): its uploads answer 413 until the quota is raised.`,
        );
      }
    });
}

/** A company as a two-column record (with its device and user counts when known). */
function printCompany(company: AdminCompany, counts?: { devices: number; users: number }): void {
  printRecord({
    id: company.id,
    name: company.name,
    used: `${formatBytes(company.usedBytes)} (${company.usedBytes} bytes)`,
    quota: `${formatBytes(company.quotaBytes)} (${company.quotaBytes} bytes)`,
    overQuota: company.overQuota,
    devices: counts?.devices,
    users: counts?.users,
  });
}
