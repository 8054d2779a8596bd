/**
 * `dss admin audit list`: the audit log of administrative changes (docs/contract.md, "Audit"), newest first, for a
 * token with `users:read`: every entry for a platform administrator, a company administrator names one of theirs with
 * `--company`.
 */
import type { Command } from 'commander';
import { type components, expectOk } from '../../client/index.js';
import { positiveInteger } from '../arguments.js';
import { invocationOf } from '../context.js';
import { pageQuery, printListing, readPages } from '../paging.js';

type AuditEntry = components['schemas']['AuditEntry'];

/** Shown values of a change: `quotaBytes 1000 → 2000`; every value after a creation, before a deletion. */
export function changeSummary(entry: Pick<AuditEntry, 'before' | 'after'>): string {
  const before = entry.before ?? {};
  const after = entry.after ?? {};
  const shown = (value: unknown) => (value === undefined ? '–' : JSON.stringify(value));
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])];
  const changed =
    entry.before === undefined || entry.after === undefined
      ? keys
      : keys.filter((key) => JSON.stringify(before[key]) !== JSON.stringify(after[key]));
  return changed
    .map((key) => {
      if (entry.before === undefined) return `${key} ${shown(after[key])}`;
      if (entry.after === undefined) return `${key} was ${shown(before[key])}`;
      return `${key} ${shown(before[key])} → ${shown(after[key])}`;
    })
    .join(', ');
}

/** Adds `dss admin audit` and its `list` subcommand to `admin`. */
export function registerAdminAuditCommands(admin: Command): void {
  const audit = admin.command('audit').description('The audit log of administrative changes (who changed what, when)');

  audit
    .command('list')
    .description(
      'List administrative changes, newest first: with --company (or DSS_COMPANY) only those concerning it (a company administrator must name one of theirs)',
    )
    .option('--actor <username>', 'only the changes this user made')
    .option('--limit <n>', 'entries per page (1 to 1000; the service defaults to 100)', positiveInteger)
    .option('--cursor <cursor>', 'continue a listing from the cursor a previous page printed')
    .option('--all', 'follow every page')
    .addHelpText('after', '\nExamples:\n  dss admin audit list\n  dss admin audit list --company initech --actor root --json')
    .action(async (options: { actor?: string; limit?: number; cursor?: string; all?: boolean }, command: Command) => {
      const { dss, json, settings } = await invocationOf(command);
      // The global --company (or DSS_COMPANY) is the filter: unlike company-scoped commands, none means every company.
      const filters = {
        ...(settings.company === undefined ? {} : { company: settings.company }),
        ...(options.actor === undefined ? {} : { actor: options.actor }),
      };
      const listing = await readPages(
        async (cursor) =>
          expectOk(await dss.main.GET('/admin/audit', { params: { query: { ...filters, ...pageQuery(options.limit, cursor) } } })),
        options.all === true,
        options.cursor,
      );
      printListing(
        listing,
        json,
        [
          { head: 'AT', value: (item) => item.at },
          { head: 'ACTOR', value: (item) => item.actor },
          { head: 'ACTION', value: (item) => item.action },
          { head: 'TARGET', value: (item) => `${item.target.kind} ${item.target.id}` },
          { head: 'CHANGES', value: changeSummary },
        ],
        { empty: 'No administrative changes.', more: 'changes' },
      );
    });
}
