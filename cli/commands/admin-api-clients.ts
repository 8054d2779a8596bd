/**
 * `dss admin api-clients create|list|get|update|rotate|disable|enable|delete`: API clients administration, for a company
 * admin's token (their companies) or a platform admin's (any company): `users:read`, `users:write` (docs/cli.md,
 * "API clients"). A client's secret is printed once, by create and rotate; `dss login --client-id … --client-secret-stdin`
 * gets a token with it.
 */
import { type Command, InvalidArgumentError } from 'commander';
import { type components, expectOk } from '../../client/index.js';
import { API_CLIENT_ROLES, type ApiClientRole, MAX_PREVIOUS_SECRET_SECONDS } from '../../functions/core/clients/model.js';
import { positiveInteger } from '../arguments.js';
import { invocationOf } from '../context.js';
import { note, printJson, printRecord, say, UsageError } from '../output.js';
import { pageQuery, printListing, readPages } from '../paging.js';

type ApiClient = components['schemas']['ApiClient'];
type ApiClientWithSecret = ApiClient & { clientSecret: string };

/** Parses `--role`. @throws InvalidArgumentError (bad usage, exit 2) naming the roles a client may hold */
export function clientRoleArgument(value: string): ApiClientRole {
  const role = API_CLIENT_ROLES.find((known) => known === value);
  if (role === undefined) throw new InvalidArgumentError(`expected one of ${API_CLIENT_ROLES.join(', ')}.`);
  return role;
}

/** Parses `--previous-secret-valid-seconds`: 0 to 86400. @throws InvalidArgumentError (bad usage, exit 2) otherwise */
export function overlapArgument(value: string): number {
  const seconds = /^[0-9]+$/.test(value.trim()) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(seconds) || seconds > MAX_PREVIOUS_SECRET_SECONDS) {
    throw new InvalidArgumentError(`expected whole seconds from 0 to ${MAX_PREVIOUS_SECRET_SECONDS} (24 hours).`);
  }
  return seconds;
}

/** Adds `dss admin api-clients` and its subcommands to `admin`. */
export function registerAdminApiClientCommands(admin: Command): void {
  const clients = admin
    .command('api-clients')
    .description(
      "API clients: a company's systems that get tokens with their own id and secret (a company admin's or platform admin's token)",
    );
  registerCreate(clients);
  registerList(clients);
  registerGet(clients);
  registerUpdate(clients);
  registerRotate(clients);
  registerChange(clients, 'disable', 'Disable a client: it gets no token, and its live tokens stop within a minute', () => ({
    enabled: false,
  }));
  registerChange(clients, 'enable', 'Enable a disabled client again', () => ({ enabled: true }));
  registerDelete(clients);
}

/**
 * Prints a client with its secret (create, rotate): with `json` the API's answer on stdout, else the client and the
 * secret; either way a note on stderr to store the secret now.
 */
function printWithSecret(client: ApiClientWithSecret, json: boolean, heading: string): void {
  if (json) printJson(client);
  else {
    const { clientSecret, ...shown } = client;
    say(heading);
    printClient(shown);
    say(`Client secret: ${clientSecret}`);
  }
  note(
    `Store the client secret now, with the client id ${client.clientId}: it is not shown again (dss admin api-clients rotate draws a new one).`,
  );
}

/** `dss admin api-clients create`: creates a client of one company; prints its secret once. */
function registerCreate(clients: Command): void {
  clients
    .command('create')
    .description("Create an API client of a company (--company, or the token's only company); prints its secret, once")
    .requiredOption('--name <name>', 'what it is for (e.g. "Store back office"), 1 to 128 characters')
    .requiredOption('--role <role>', `one of ${API_CLIENT_ROLES.join(', ')}`, clientRoleArgument)
    .addHelpText(
      'after',
      "\nExample:\n  dss admin api-clients create --company acme --name 'Store back office' --role operator\n\nThe secret is not shown again: store it with the client id, where the client's system keeps its secrets.",
    )
    .action(async (options: { name: string; role: ApiClientRole }, command: Command) => {
      const { dss, json, company } = await invocationOf(command);
      const created = expectOk(
        await dss.main.POST('/admin/api-clients', { body: { name: options.name, company: company(), role: options.role } }),
      ) as ApiClientWithSecret;
      printWithSecret(created, json, `API client ${created.clientId} created.`);
    });
}

/** `dss admin api-clients list`: lists the clients, of one company with --company. */
function registerList(clients: Command): void {
  clients
    .command('list')
    .description("List the API clients (without their secrets): of --company's, or every one the token may see")
    .option('--limit <n>', 'clients per page (1 to 1000; the service defaults to 100)', positiveInteger)
    .option('--cursor <cursor>', 'continue a listing from the cursor a previous page printed')
    .option('--all', 'follow every page')
    .addHelpText('after', '\nExamples:\n  dss admin api-clients list --company acme\n  dss admin api-clients list --all --json')
    .action(async (options: { limit?: number; cursor?: string; all?: boolean }, command: Command) => {
      const { dss, json, settings } = await invocationOf(command);
      const company = settings.company;
      const listing = await readPages(
        async (cursor) =>
          expectOk(
            await dss.main.GET('/admin/api-clients', {
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
          { head: 'CLIENT ID', value: (client) => client.clientId },
          { head: 'NAME', value: (client) => client.name },
          { head: 'COMPANY', value: (client) => client.company },
          { head: 'ROLE', value: (client) => client.role },
          { head: 'ENABLED', value: (client) => (client.enabled ? 'yes' : 'no') },
          { head: 'LAST USED', value: (client) => client.lastUsedAt ?? 'never' },
          { head: 'PREVIOUS SECRET UNTIL', value: (client) => client.previousSecretExpiresAt },
        ],
        { empty: 'No API clients.', more: 'API clients' },
      );
    });
}

/** `dss admin api-clients get`: shows a client. */
function registerGet(clients: Command): void {
  clients
    .command('get')
    .description('Show an API client (without its secret): company, role, whether enabled, last use')
    .argument('<clientId>', 'the client id (api_…)')
    .action(async (clientId: string, _options: unknown, command: Command) => {
      const { dss, json } = await invocationOf(command);
      const client = expectOk(await dss.main.GET('/admin/api-clients/{clientId}', { params: { path: { clientId } } }));
      if (json) printJson(client);
      else printClient(client);
    });
}

/** `dss admin api-clients rotate`: draws a new secret, printed once; the previous one works for the overlap. */
function registerRotate(clients: Command): void {
  clients
    .command('rotate')
    .description('Draw a new secret for a client, printed once; the previous one keeps working for the overlap')
    .argument('<clientId>', 'the client id (api_…)')
    .option(
      '--previous-secret-valid-seconds <s>',
      `how long the previous secret keeps working, 0 (it stops now) to ${MAX_PREVIOUS_SECRET_SECONDS} (the default, 24 hours)`,
      overlapArgument,
    )
    .addHelpText(
      'after',
      '\nExamples:\n  dss admin api-clients rotate api_01JPA2B4D6F8H0K2M4P6R8T0W2\n  dss admin api-clients rotate api_01JPA2B4D6F8H0K2M4P6R8T0W2 --previous-secret-valid-seconds 0   (a leaked secret)',
    )
    .action(async (clientId: string, options: { previousSecretValidSeconds?: number }, command: Command) => {
      const { dss, json } = await invocationOf(command);
      const seconds = options.previousSecretValidSeconds;
      const rotated = expectOk(
        await dss.main.POST('/admin/api-clients/{clientId}/secret', {
          params: { path: { clientId } },
          ...(seconds === undefined ? {} : { body: { previousSecretValidSeconds: seconds } }),
        }),
      ) as ApiClientWithSecret;
      const until = rotated.previousSecretExpiresAt;
      printWithSecret(
        rotated,
        json,
        until === undefined
          ? `New secret of ${rotated.clientId}; the previous one no longer works.`
          : `New secret of ${rotated.clientId}; the previous one keeps working until ${until}.`,
      );
    });
}

/** What `update`, `disable` and `enable` change. */
type ClientChanges = { name?: string; role?: ApiClientRole; enabled?: boolean };

/** `dss admin api-clients update`: renames a client and/or changes its role. */
function registerUpdate(clients: Command): void {
  const command = registerChange(
    clients,
    'update',
    'Rename a client and/or change its role (a lower role reaches its live tokens within a minute)',
    (options) => {
      if (options.name === undefined && options.role === undefined) throw new UsageError('give --name, --role or both.');
      return {
        ...(options.name === undefined ? {} : { name: options.name }),
        ...(options.role === undefined ? {} : { role: options.role }),
      };
    },
  );
  command
    .option('--name <name>', 'new name, 1 to 128 characters')
    .option('--role <role>', `new role: one of ${API_CLIENT_ROLES.join(', ')}`, clientRoleArgument)
    .addHelpText(
      'after',
      "\nExamples:\n  dss admin api-clients update api_01JPA2B4D6F8H0K2M4P6R8T0W2 --role viewer\n  dss admin api-clients update api_01JPA2B4D6F8H0K2M4P6R8T0W2 --name 'Back office (Lyon)'",
    );
}

/**
 * A subcommand `name` that PATCHes a client with what `changes` makes of its options, then prints it as changed.
 * @returns the subcommand, for more options
 */
function registerChange(
  clients: Command,
  name: string,
  description: string,
  changes: (options: { name?: string; role?: ApiClientRole }) => ClientChanges,
): Command {
  return clients
    .command(name)
    .description(description)
    .argument('<clientId>', 'the client id (api_…)')
    .action(async (clientId: string, options: { name?: string; role?: ApiClientRole }, command: Command) => {
      const body = changes(options);
      const { dss, json } = await invocationOf(command);
      const client = expectOk(await dss.main.PATCH('/admin/api-clients/{clientId}', { params: { path: { clientId } }, body }));
      if (json) {
        printJson(client);
        return;
      }
      const verb = body.enabled === undefined ? 'Updated' : body.enabled ? 'Enabled' : 'Disabled';
      say(`${verb} API client ${client.clientId}.`);
      printClient(client);
    });
}

/** `dss admin api-clients delete`: deletes a client for good. */
function registerDelete(clients: Command): void {
  clients
    .command('delete')
    .description('Delete an API client for good: it gets no token, and its live tokens stop within a minute')
    .argument('<clientId>', 'the client id (api_…)')
    .action(async (clientId: string, _options: unknown, command: Command) => {
      const { dss, json } = await invocationOf(command);
      expectOk(await dss.main.DELETE('/admin/api-clients/{clientId}', { params: { path: { clientId } } }));
      if (json) printJson({ deleted: clientId });
      else say(`Deleted API client ${clientId}.`);
    });
}

/** A client as a two-column record. */
function printClient(client: ApiClient): void {
  printRecord({
    clientId: client.clientId,
    name: client.name,
    company: client.company,
    role: client.role,
    enabled: client.enabled,
    lastUsed: client.lastUsedAt ?? 'never',
    previousSecretUntil: client.previousSecretExpiresAt,
    created: `${client.created} by ${client.createdBy}`,
    updated: client.updated,
  });
}
