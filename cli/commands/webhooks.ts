/**
 * `dss webhooks create|list|get|update|rotate|delete`: a company's webhooks (docs/webhooks.md), each a URL the
 * service POSTs its events to, signed with the webhook's secret, which create and rotate print once. The test event,
 * the deliveries and redelivery are in webhook-deliveries.ts.
 */
import type { Command } from 'commander';
import { type components, type DssClient, expectOk } from '../../client/index.js';
import { positiveInteger } from '../arguments.js';
import { invocationOf } from '../context.js';
import { note, printJson, printRecord, say, UsageError } from '../output.js';
import { pageQuery, printListing, readPages } from '../paging.js';
import { registerWebhookDeliveryCommands } from './webhook-deliveries.js';

type Webhook = components['schemas']['Webhook'];
type WebhookWithSecret = components['schemas']['WebhookWithSecret'];
type WebhookEventType = components['schemas']['WebhookEventType'];
type WebhookUpdateBody = components['schemas']['WebhookUpdate'];

/** Adds `dss webhooks` and its subcommands. */
export function registerWebhookCommands(program: Command): void {
  const webhooks = program
    .command('webhooks')
    .description("Webhooks: URLs the service POSTs the company's events to, signed (create, list, test, follow deliveries)");
  registerCreate(webhooks);
  registerList(webhooks);
  registerGet(webhooks);
  registerUpdate(webhooks);
  registerRotate(webhooks);
  registerDelete(webhooks);
  registerWebhookDeliveryCommands(webhooks);
}

/** `a,b` or a repeated option as event types, each once (the service refuses unknown ones, naming the known ones). */
function eventTypes(value: string, previous: WebhookEventType[] | undefined): WebhookEventType[] {
  const types = value
    .split(',')
    .map((type) => type.trim())
    .filter((type) => type !== '');
  return [...new Set([...(previous ?? []), ...(types as WebhookEventType[])])];
}

const EVENTS_HELP =
  'event types, comma-separated or repeated: deployment.succeeded, deployment.failed, device.connected, device.disconnected, rollout.paused, rollout.completed, command.succeeded, command.failed, command.expired, alert.raised, alert.resolved, webhook.test';

/** `dss webhooks create`: subscribes a URL; prints the secret once. */
function registerCreate(group: Command): void {
  group
    .command('create')
    .description('Subscribe a URL to events of the company; prints its signing secret, once')
    .requiredOption('--url <url>', 'where events are POSTed: https (http only for the hosts WEBHOOK_ALLOWED_HTTP_HOSTS names)')
    .requiredOption('--events <types>', EVENTS_HELP, eventTypes)
    .option('--description <text>', 'what it is for (one line)')
    .addHelpText(
      'after',
      '\nExamples:\n  dss webhooks create --url https://hooks.example.com/kiosks --events deployment.failed,device.disconnected --description On-call\n  dss webhooks create --url http://127.0.0.1:9000/hook --events rollout.paused --json   (locally)\n\nThe secret (whsec_…) verifies the webhook-signature header of each delivery (Standard Webhooks); it is not shown again: dss webhooks rotate draws a new one.',
    )
    .action(async (options: { url: string; events: WebhookEventType[]; description?: string }, command: Command) => {
      const { dss, json, company } = await invocationOf(command);
      const created = expectOk(
        await dss.main.POST('/companies/{companyId}/webhooks', {
          params: { path: { companyId: company() } },
          body: {
            url: options.url,
            events: options.events,
            ...(options.description === undefined ? {} : { description: options.description }),
          },
        }),
      );
      printWithSecret(created, json, `Webhook ${created.id} created.`);
    });
}

/**
 * Prints a webhook with its secret (create, rotate): with `json` the API's answer on stdout, else the webhook and the
 * secret; either way a note on stderr that the secret is not shown again.
 */
function printWithSecret(webhook: WebhookWithSecret, json: boolean, heading: string): void {
  if (json) printJson(webhook);
  else {
    const { secret, ...shown } = webhook;
    say(heading);
    printRecord(webhookRecord(shown));
    say(`Secret: ${secret}`);
  }
  note('Store the secret now: it is not shown again (dss webhooks rotate draws a new one).');
}

/** `dss webhooks list`: the company's webhooks, oldest first. */
function registerList(group: Command): void {
  group
    .command('list')
    .description("List the company's webhooks, oldest first (without their secrets)")
    .option('--limit <n>', 'webhooks per page (the service defaults to 100)', positiveInteger)
    .option('--cursor <cursor>', 'continue a listing from the cursor a previous page printed')
    .option('--all', 'follow every page')
    .addHelpText('after', '\nExamples:\n  dss webhooks list\n  dss webhooks list --all --json')
    .action(async (options: { limit?: number; cursor?: string; all?: boolean }, command: Command) => {
      const { dss, json, company } = await invocationOf(command);
      const companyId = company();
      const listing = await readPages(
        async (cursor) =>
          expectOk(
            await dss.main.GET('/companies/{companyId}/webhooks', {
              params: { path: { companyId }, query: pageQuery(options.limit, cursor) },
            }),
          ),
        options.all === true,
        options.cursor,
      );
      printListing(
        listing,
        json,
        [
          { head: 'ID', value: (item) => item.id },
          { head: 'URL', value: (item) => item.url },
          { head: 'EVENTS', value: (item) => item.events.join(', ') },
          { head: 'ENABLED', value: (item) => item.enabled },
          { head: 'FAILING SINCE', value: (item) => item.failingSince },
          { head: 'DESCRIPTION', value: (item) => item.description },
        ],
        { empty: 'No webhooks.', more: 'webhooks' },
      );
    });
}

/** `dss webhooks get`: one webhook. */
function registerGet(group: Command): void {
  group
    .command('get')
    .description('Show a webhook (without its secret)')
    .argument('<webhookId>', 'webhook id')
    .addHelpText('after', '\nExample:\n  dss webhooks get 01JPA2B4D6F8H0K2M4P6R8T0W2')
    .action(async (webhookId: string, _options: unknown, command: Command) => {
      const { dss, json, company } = await invocationOf(command);
      const found = await readWebhook(dss, company(), webhookId);
      if (json) printJson(found);
      else printRecord(webhookRecord(found));
    });
}

interface UpdateOptions {
  url?: string;
  events?: WebhookEventType[];
  description?: string | false;
  enable?: boolean;
  disable?: boolean;
}

/** `dss webhooks update`: changes what it names, nothing else. */
function registerUpdate(group: Command): void {
  group
    .command('update')
    .description('Change a webhook: its URL, events, description, or turn its deliveries off and on')
    .argument('<webhookId>', 'webhook id')
    .option('--url <url>', 'the new URL')
    .option('--events <types>', `the event types, replacing the current ones: ${EVENTS_HELP}`, eventTypes)
    .option('--description <text>', 'the new description')
    .option('--no-description', 'remove the description')
    .option('--enable', 'deliver again (also a webhook the service disabled after 5 days of failures)')
    .option('--disable', 'deliver nothing until --enable')
    .addHelpText(
      'after',
      '\nExamples:\n  dss webhooks update 01JPA2B4D6F8H0K2M4P6R8T0W2 --events deployment.failed\n  dss webhooks update 01JPA2B4D6F8H0K2M4P6R8T0W2 --enable',
    )
    .action(async (webhookId: string, options: UpdateOptions, command: Command) => {
      const body = updateBody(options);
      const { dss, json, company } = await invocationOf(command);
      const updated = expectOk(
        await dss.main.PATCH('/companies/{companyId}/webhooks/{webhookId}', {
          params: { path: { companyId: company(), webhookId } },
          body,
        }),
      );
      if (json) printJson(updated);
      else {
        say(`Webhook ${updated.id} updated.`);
        printRecord(webhookRecord(updated));
      }
    });
}

/**
 * The PATCH body of `dss webhooks update`'s options.
 * @throws UsageError when they change nothing, or say both --enable and --disable
 */
function updateBody(options: UpdateOptions): WebhookUpdateBody {
  if (options.enable === true && options.disable === true) throw new UsageError('Give --enable or --disable, not both.');
  const body: WebhookUpdateBody = {
    ...(options.url === undefined ? {} : { url: options.url }),
    ...(options.events === undefined ? {} : { events: options.events }),
    ...(options.description === undefined ? {} : { description: options.description === false ? null : options.description }),
    ...(options.enable === true ? { enabled: true } : {}),
    ...(options.disable === true ? { enabled: false } : {}),
  };
  if (Object.keys(body).length === 0) {
    throw new UsageError('Nothing to change: give --url, --events, --description, --no-description, --enable or --disable.');
  }
  return body;
}

/** `dss webhooks rotate`: a new secret, printed once; the old one signs beside it for 24 hours. */
function registerRotate(group: Command): void {
  group
    .command('rotate')
    .description('Draw a new signing secret, printed once; for 24 hours deliveries are signed with both the new and the old one')
    .argument('<webhookId>', 'webhook id')
    .addHelpText('after', '\nExample:\n  dss webhooks rotate 01JPA2B4D6F8H0K2M4P6R8T0W2')
    .action(async (webhookId: string, _options: unknown, command: Command) => {
      const { dss, json, company } = await invocationOf(command);
      const rotated = expectOk(
        await dss.main.POST('/companies/{companyId}/webhooks/{webhookId}/secret', {
          params: { path: { companyId: company(), webhookId } },
        }),
      );
      printWithSecret(rotated, json, `New secret for webhook ${rotated.id}.`);
      if (rotated.previousSecretExpiresAt !== null) {
        note(`The previous secret signs beside it until ${rotated.previousSecretExpiresAt}: switch the receiver before then.`);
      }
    });
}

/** `dss webhooks delete`: nothing more is delivered to it. */
function registerDelete(group: Command): void {
  group
    .command('delete')
    .description('Delete a webhook: nothing more is delivered to it, retries included')
    .argument('<webhookId>', 'webhook id')
    .addHelpText('after', '\nExample:\n  dss webhooks delete 01JPA2B4D6F8H0K2M4P6R8T0W2')
    .action(async (webhookId: string, _options: unknown, command: Command) => {
      const { dss, json, company } = await invocationOf(command);
      const answer = await dss.main.DELETE('/companies/{companyId}/webhooks/{webhookId}', {
        params: { path: { companyId: company(), webhookId } },
      });
      expectOk(answer);
      if (json) printJson({ id: webhookId, deleted: true });
      else say(`Webhook ${webhookId} deleted.`);
    });
}

async function readWebhook(dss: DssClient, companyId: string, webhookId: string): Promise<Webhook> {
  return expectOk(await dss.main.GET('/companies/{companyId}/webhooks/{webhookId}', { params: { path: { companyId, webhookId } } }));
}

/** A webhook as a two-column table. */
export function webhookRecord(webhook: Webhook): Record<string, unknown> {
  return {
    id: webhook.id,
    url: webhook.url,
    events: webhook.events.join(', '),
    description: webhook.description,
    enabled: webhook.enabled,
    failingSince: webhook.failingSince,
    previousSecretExpiresAt: webhook.previousSecretExpiresAt,
    by: webhook.by,
    created: webhook.created,
    updated: webhook.updated,
  };
}
