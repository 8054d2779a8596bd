/**
 * `dss admin users invite|list|get|update|disable|enable|delete|reset-password`: users administration, for a company
 * admin's or a platform admin's token (`users:read`, `users:write`; docs/contract.md, "Users administration"). A
 * temporary password (of an invitation or a reset) is printed once, locally only: on AWS Cognito emails it.
 */
import { type Command, InvalidArgumentError } from 'commander';
import { type components, expectOk } from '../../client/index.js';
import { isRole, ROLE_NAMES, type Role } from '../../functions/core/access/roles.js';
import { positiveInteger } from '../arguments.js';
import { invocationOf } from '../context.js';
import { note, printJson, printRecord, say, UsageError } from '../output.js';
import { pageQuery, printListing, readPages } from '../paging.js';

type User = components['schemas']['User'];

/** Parses `--role`. @throws InvalidArgumentError (bad usage, exit 2) naming the roles */
export function roleArgument(value: string): Role {
  if (!isRole(value)) throw new InvalidArgumentError(`expected one of ${ROLE_NAMES.join(', ')}.`);
  return value;
}

/** Parses `--companies`: company ids separated by commas (`acme,globex`); empty for none. */
export function companiesArgument(value: string): string[] {
  return value
    .split(',')
    .map((id) => id.trim())
    .filter((id) => id !== '');
}

/** Says a temporary password once, on stdout, and what to do with it on stderr. */
function showTemporaryPassword(username: string, password: string | undefined): void {
  if (password === undefined) {
    note(`The temporary password was emailed to ${username}; they set their own at their first sign-in.`);
    return;
  }
  say(`Temporary password: ${password}`);
  note(`Shown this once: hand it to ${username}, who sets their own password at their first sign-in.`);
}

/** Adds `dss admin users` and its subcommands to `admin`. */
export function registerAdminUserCommands(admin: Command): void {
  const users = admin
    .command('users')
    .description(
      "Invite, list, show, change, disable, delete users and reset their passwords (a company admin's or platform admin's token)",
    );
  registerUserInvite(users);
  registerUserList(users);
  registerUserGet(users);
  registerUserUpdate(users);
  registerUserDisable(users);
  registerUserEnable(users);
  registerUserDelete(users);
  registerUserResetPassword(users);
}

/** `dss admin users invite`: invites a user, printing their temporary password once (locally). */
function registerUserInvite(users: Command): void {
  users
    .command('invite')
    .description('Invite a user: they get a temporary password and set their own at their first sign-in')
    .argument('<username>', 'for good: 1 to 128 letters, digits, ".", "_", "@" or "-", starting with a letter or digit')
    .requiredOption('--email <email>', 'where the invitation and password resets are sent')
    .requiredOption('--role <role>', `one of ${ROLE_NAMES.join(', ')} (a company admin gives at most their own)`, roleArgument)
    .option('--companies <ids>', 'companies the user acts on, comma-separated (every role but platform-admin needs one)', companiesArgument)
    .addHelpText('after', '\nExample:\n  dss admin users invite carol --email carol@example.com --role operator --companies acme')
    .action(async (username: string, options: { email: string; role: Role; companies?: string[] }, command: Command) => {
      const { dss, json } = await invocationOf(command);
      const invited = expectOk(
        await dss.main.POST('/admin/users', {
          body: { username, email: options.email, role: options.role, companies: options.companies ?? [] },
        }),
      );
      if (json) {
        printJson(invited);
        return;
      }
      say(`Invited ${invited.user.username}.`);
      printUser(invited.user);
      showTemporaryPassword(invited.user.username, invited.temporaryPassword);
    });
}

/** `dss admin users list`: lists the users in username order, of one company with --company. */
function registerUserList(users: Command): void {
  users
    .command('list')
    .description('List the users in username order (a company admin names one of their companies with --company)')
    .option('--limit <n>', 'users per page (1 to 1000; the service defaults to 100)', positiveInteger)
    .option('--cursor <cursor>', 'continue a listing from the cursor a previous page printed')
    .option('--all', 'follow every page')
    .addHelpText('after', '\nExamples:\n  dss admin users list --all\n  dss admin users list --company acme --json')
    .action(async (options: { limit?: number; cursor?: string; all?: boolean }, command: Command) => {
      const { dss, json, settings } = await invocationOf(command);
      const company = settings.company;
      const listing = await readPages(
        async (cursor) =>
          expectOk(
            await dss.main.GET('/admin/users', {
              params: { query: { ...(company === undefined ? {} : { company }), ...pageQuery(options.limit, cursor) } },
            }),
          ),
        options.all === true,
        options.cursor,
      );
      printListing(
        listing,
        json,
        [
          { head: 'USERNAME', value: (user) => user.username },
          { head: 'ROLE', value: (user) => user.role },
          { head: 'COMPANIES', value: (user) => user.companies.join(', ') },
          { head: 'ENABLED', value: (user) => (user.enabled ? 'yes' : 'no') },
          { head: 'STATUS', value: (user) => user.status },
          { head: 'EMAIL', value: (user) => user.email },
        ],
        { empty: 'No users.', more: 'users' },
      );
    });
}

/** `dss admin users get`: shows a user. */
function registerUserGet(users: Command): void {
  users
    .command('get')
    .description('Show a user: email, role, companies, whether enabled, password status')
    .argument('<username>', 'the user')
    .action(async (username: string, _options: unknown, command: Command) => {
      const { dss, json } = await invocationOf(command);
      const user = expectOk(await dss.main.GET('/admin/users/{username}', { params: { path: { username } } }));
      if (json) printJson(user);
      else printUser(user);
    });
}

/** `dss admin users update`: changes a user's role and/or companies. */
function registerUserUpdate(users: Command): void {
  users
    .command('update')
    .description("Change a user's role and/or companies (their next token carries them)")
    .argument('<username>', 'the user')
    .option('--role <role>', `new role: one of ${ROLE_NAMES.join(', ')}`, roleArgument)
    .option('--companies <ids>', 'new companies, comma-separated (replacing theirs)', companiesArgument)
    .addHelpText(
      'after',
      '\nExamples:\n  dss admin users update carol --role company-admin\n  dss admin users update carol --companies acme,globex',
    )
    .action(async (username: string, options: { role?: Role; companies?: string[] }, command: Command) => {
      if (options.role === undefined && options.companies === undefined) throw new UsageError('give --role, --companies or both.');
      await changeUser(command, username, {
        ...(options.role === undefined ? {} : { role: options.role }),
        ...(options.companies === undefined ? {} : { companies: options.companies }),
      });
    });
}

/** `dss admin users disable`: disables a user and ends their sessions. */
function registerUserDisable(users: Command): void {
  users
    .command('disable')
    .description('Disable a user: they cannot sign in, and their sessions end (refresh tokens are refused)')
    .argument('<username>', 'the user')
    .action((username: string, _options: unknown, command: Command) => changeUser(command, username, { enabled: false }));
}

/** `dss admin users enable`: enables a disabled user again. */
function registerUserEnable(users: Command): void {
  users
    .command('enable')
    .description('Enable a disabled user again')
    .argument('<username>', 'the user')
    .action((username: string, _options: unknown, command: Command) => changeUser(command, username, { enabled: true }));
}

/** `dss admin users delete`: deletes a user for good. */
function registerUserDelete(users: Command): void {
  users
    .command('delete')
    .description('Delete a user for good and end their sessions')
    .argument('<username>', 'the user')
    .action(async (username: string, _options: unknown, command: Command) => {
      const { dss, json } = await invocationOf(command);
      expectOk(await dss.main.DELETE('/admin/users/{username}', { params: { path: { username } } }));
      if (json) printJson({ deleted: username });
      else say(`Deleted user ${username}.`);
    });
}

/** `dss admin users reset-password`: gives a user a new temporary password, printed once (locally). */
function registerUserResetPassword(users: Command): void {
  users
    .command('reset-password')
    .description('Give a user a new temporary password and end their sessions; they set their own at the next sign-in')
    .argument('<username>', 'the user')
    .action(async (username: string, _options: unknown, command: Command) => {
      const { dss, json } = await invocationOf(command);
      const reset = expectOk(await dss.main.POST('/admin/users/{username}/reset-password', { params: { path: { username } } }));
      if (json) printJson(reset);
      else showTemporaryPassword(username, reset.temporaryPassword);
    });
}

/** PATCHes the user and prints them after the change. */
async function changeUser(
  command: Command,
  username: string,
  body: { role?: Role; companies?: string[]; enabled?: boolean },
): Promise<void> {
  const { dss, json } = await invocationOf(command);
  const user = expectOk(await dss.main.PATCH('/admin/users/{username}', { params: { path: { username } }, body }));
  if (json) {
    printJson(user);
    return;
  }
  say(`Updated user ${user.username}.`);
  printUser(user);
}

/** A user as a two-column record. */
function printUser(user: User): void {
  printRecord({
    username: user.username,
    email: user.email,
    role: user.role,
    companies: user.companies.join(', '),
    enabled: user.enabled,
    disabledBy: user.disabledBy === undefined ? undefined : `${user.disabledBy.username} (${user.disabledBy.role})`,
    status: user.status,
    created: user.createdAt,
    updated: user.updatedAt,
  });
}
