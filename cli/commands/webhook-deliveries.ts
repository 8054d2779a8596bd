/**
 * `dss webhooks test|deliveries|redeliver`: a test event for a webhook, its deliveries with their attempts (the
 * receiver's status, or why none answered), and a delivery sent again with the same `webhook-id` (docs/webhooks.md).
 */
import type { Command } from 'commander';
import { type components, expectOk } from '../../client/index.js';
import { positiveInteger } from '../arguments.js';
import { invocationOf } from '../context.js';
import { note, printJson, printRecord, printTable, say } from '../output.js';
import { pageQuery, printListing, readPages } from '../paging.js';

type WebhookDelivery = components['schemas']['WebhookDelivery'];

/** Adds `test`, `deliveries` and `redeliver` to `dss webhooks`. */
export function registerWebhookDeliveryCommands(webhooks: Command): void {
  registerTest(webhooks);
  registerDeliveries(webhooks);
  registerRedeliver(webhooks);
}

/** `dss webhooks test`: queues a webhook.test delivery. */
function registerTest(group: Command): void {
  group
    .command('test')
    .description('Send a webhook.test event to a webhook (enabled or not), delivered and retried like any other')
    .argument('<webhookId>', 'webhook id')
    .addHelpText('after', '\nExample:\n  dss webhooks test 01JPA2B4D6F8H0K2M4P6R8T0W2')
    .action(async (webhookId: string, _options: unknown, command: Command) => {
      const { dss, json, company } = await invocationOf(command);
      const delivery = expectOk(
        await dss.main.POST('/companies/{companyId}/webhooks/{webhookId}/test', {
          params: { path: { companyId: company(), webhookId } },
        }),
      );
      printDelivery(delivery, json, `Test event queued: delivery ${delivery.id} is ${delivery.state}.`);
      note(`Follow it: dss webhooks deliveries ${webhookId} ${delivery.id}`);
    });
}

/** `dss webhooks deliveries`: a webhook's deliveries, newest first, or one with its attempts. */
function registerDeliveries(group: Command): void {
  group
    .command('deliveries')
    .description("List a webhook's deliveries, newest first, or show one delivery with its attempts")
    .argument('<webhookId>', 'webhook id')
    .argument('[deliveryId]', 'a delivery: show it with each attempt')
    .option('--limit <n>', 'deliveries per page (the service defaults to 100)', positiveInteger)
    .option('--cursor <cursor>', 'continue a listing from the cursor a previous page printed')
    .option('--all', 'follow every page')
    .addHelpText(
      'after',
      '\nExamples:\n  dss webhooks deliveries 01JPA2B4D6F8H0K2M4P6R8T0W2\n  dss webhooks deliveries 01JPA2B4D6F8H0K2M4P6R8T0W2 01JPB7C2M9D4F6H8K0N2Q4S6V8',
    )
    .action(listDeliveries);
}

/** Action of `dss webhooks deliveries`: one delivery with its attempts, or a table of the listing. */
async function listDeliveries(
  webhookId: string,
  deliveryId: string | undefined,
  options: { limit?: number; cursor?: string; all?: boolean },
  command: Command,
): Promise<void> {
  const { dss, json, company } = await invocationOf(command);
  const companyId = company();
  if (deliveryId !== undefined) {
    const delivery = expectOk(
      await dss.main.GET('/companies/{companyId}/webhooks/{webhookId}/deliveries/{deliveryId}', {
        params: { path: { companyId, webhookId, deliveryId } },
      }),
    );
    printDelivery(delivery, json);
    return;
  }
  const listing = await readPages(
    async (cursor) =>
      expectOk(
        await dss.main.GET('/companies/{companyId}/webhooks/{webhookId}/deliveries', {
          params: { path: { companyId, webhookId }, query: pageQuery(options.limit, cursor) },
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
      { head: 'TYPE', value: (item) => item.type },
      { head: 'STATE', value: (item) => item.state },
      { head: 'ATTEMPTS', value: (item) => item.attempts },
      { head: 'LAST STATUS', value: (item) => item.lastStatus },
      { head: 'NEXT ATTEMPT', value: (item) => item.nextAttemptAt },
      { head: 'LAST ERROR', value: (item) => item.history.at(-1)?.error },
      { head: 'CREATED', value: (item) => item.created },
    ],
    { empty: 'No deliveries.', more: 'deliveries' },
  );
}

/** `dss webhooks redeliver`: the delivery PENDING again, an attempt due now, the same webhook-id. */
function registerRedeliver(group: Command): void {
  group
    .command('redeliver')
    .description('Send a delivery again now, with the same webhook-id and body (its earlier attempts kept)')
    .argument('<webhookId>', 'webhook id')
    .argument('<deliveryId>', 'delivery id')
    .addHelpText('after', '\nExample:\n  dss webhooks redeliver 01JPA2B4D6F8H0K2M4P6R8T0W2 01JPB7C2M9D4F6H8K0N2Q4S6V8')
    .action(async (webhookId: string, deliveryId: string, _options: unknown, command: Command) => {
      const { dss, json, company } = await invocationOf(command);
      const delivery = expectOk(
        await dss.main.POST('/companies/{companyId}/webhooks/{webhookId}/deliveries/{deliveryId}/redeliver', {
          params: { path: { companyId: company(), webhookId, deliveryId } },
        }),
      );
      printDelivery(delivery, json, `Delivery ${delivery.id} is ${delivery.state} again, its next attempt due now.`);
    });
}

/** Prints a delivery: the API's JSON, or `heading`, the delivery as a record and its attempts as a table. */
function printDelivery(delivery: WebhookDelivery, json: boolean, heading?: string): void {
  if (json) {
    printJson(delivery);
    return;
  }
  if (heading !== undefined) say(heading);
  const { history, ...rest } = delivery;
  printRecord(rest);
  if (history.length === 0) return;
  say('Attempts:');
  printTable(history, [
    { head: 'AT', value: (attempt) => attempt.at },
    { head: 'STATUS', value: (attempt) => attempt.status },
    { head: 'MS', value: (attempt) => (attempt.durationMs === null ? null : Math.round(attempt.durationMs)) },
    { head: 'ERROR', value: (attempt) => attempt.error },
  ]);
}
