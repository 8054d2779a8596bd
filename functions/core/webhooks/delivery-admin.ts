/**
 * A company's view of its webhooks' deliveries (docs/webhooks.md, "API"): send a test event, list and read
 * deliveries with their attempts, redeliver one. A test or a redelivery is one write of the delivery; the delivery
 * function makes the attempt from the webhooks table's stream, never these requests.
 */
import { ulid } from 'ulid';
import { NotFoundError } from '../shared/errors.js';
import type { ListParameters, Page } from '../shared/paging.js';
import { authorizeCompany, type Principal } from '../shared/principal.js';
import { existingWebhook } from './admin.js';
import { newDelivery } from './deliveries.js';
import type { StoredDelivery, WebhookDelivery, WebhookEvent } from './model.js';
import type { DeliveryStore, WebhookStore } from './ports.js';

/** What the delivery use cases need. */
export interface DeliveryAdminDependencies {
  webhooks: Pick<WebhookStore, 'get'>;
  deliveries: DeliveryStore;
  now?: () => Date;
}

/** A delivery as answered: without its company and webhook (the path names them) and its body. */
export type DeliveryView = Omit<WebhookDelivery, 'company' | 'webhookId'>;

/** The delivery as answered. */
export function deliveryView(delivery: StoredDelivery): DeliveryView {
  const { company: _company, webhookId: _webhookId, payload: _payload, ...view } = delivery;
  return view;
}

/** The `webhook.test` event sent to `webhookId` at `now`: its own id, so that each test is a new delivery. */
export function testEvent(company: string, webhookId: string, now: Date): WebhookEvent {
  return {
    company,
    eventId: `test_${ulid(now.getTime())}`,
    type: 'webhook.test',
    timestamp: now.toISOString(),
    data: { webhookId, message: 'A test event sent from the webhooks API: this endpoint receives and verifies deliveries.' },
  };
}

/**
 * Writes a `webhook.test` delivery to the webhook (PENDING, due now), whether it is enabled or not: the delivery
 * function sends it as soon as the table's stream shows it.
 * @throws ForbiddenError for a company not the caller's; NotFoundError for an unknown webhook.
 */
export async function testWebhook(
  deps: DeliveryAdminDependencies,
  principal: Principal,
  company: string,
  webhookId: string,
): Promise<DeliveryView> {
  authorizeCompany(principal, company);
  const webhook = await existingWebhook(deps.webhooks, company, webhookId);
  const now = deps.now?.() ?? new Date();
  const delivery = newDelivery(testEvent(company, webhook.id, now), webhook, now);
  await deps.deliveries.createEach([delivery]);
  return deliveryView(delivery);
}

/**
 * A webhook's deliveries, newest first, each with its attempts.
 * @throws ForbiddenError for a company not the caller's; NotFoundError for an unknown webhook; BadRequestError for a
 *   cursor of another listing.
 */
export async function listDeliveries(
  deps: DeliveryAdminDependencies,
  principal: Principal,
  company: string,
  webhookId: string,
  paging: ListParameters,
): Promise<Page<DeliveryView>> {
  authorizeCompany(principal, company);
  const [, page] = await Promise.all([
    existingWebhook(deps.webhooks, company, webhookId),
    deps.deliveries.list(company, webhookId, paging),
  ]);
  return { items: page.items.map(deliveryView), nextCursor: page.nextCursor };
}

/** The delivery of an existing webhook. @throws NotFoundError for an unknown webhook or delivery. */
async function existingDelivery(
  deps: DeliveryAdminDependencies,
  company: string,
  webhookId: string,
  deliveryId: string,
): Promise<StoredDelivery> {
  const [, delivery] = await Promise.all([
    existingWebhook(deps.webhooks, company, webhookId),
    deps.deliveries.get(company, webhookId, deliveryId),
  ]);
  if (delivery === undefined) throw new NotFoundError(`Webhook '${webhookId}' has no delivery '${deliveryId}'.`);
  return delivery;
}

/**
 * One delivery of a webhook, with its attempts.
 * @throws ForbiddenError for a company not the caller's; NotFoundError for an unknown webhook or delivery.
 */
export async function getDelivery(
  deps: DeliveryAdminDependencies,
  principal: Principal,
  company: string,
  webhookId: string,
  deliveryId: string,
): Promise<DeliveryView> {
  authorizeCompany(principal, company);
  return deliveryView(await existingDelivery(deps, company, webhookId, deliveryId));
}

/**
 * Sends a delivery again: PENDING with an attempt due now, the same `webhook-id` and body, its earlier attempts kept.
 * @returns the delivery as it is once made PENDING again.
 * @throws ForbiddenError for a company not the caller's; NotFoundError for an unknown webhook or delivery.
 */
export async function redeliver(
  deps: DeliveryAdminDependencies,
  principal: Principal,
  company: string,
  webhookId: string,
  deliveryId: string,
): Promise<DeliveryView> {
  authorizeCompany(principal, company);
  await existingDelivery(deps, company, webhookId, deliveryId);
  const now = (deps.now?.() ?? new Date()).toISOString();
  if (!(await deps.deliveries.redeliver(company, webhookId, deliveryId, now))) {
    throw new NotFoundError(`Webhook '${webhookId}' has no delivery '${deliveryId}'.`);
  }
  return deliveryView(await existingDelivery(deps, company, webhookId, deliveryId));
}
