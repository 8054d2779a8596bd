/**
 * The webhooks calls of the Integrations page, each answering its data or the message to show (device/load.ts's
 * Loaded): a company's webhooks a page at a time, create one (its secret answered once), change, delete, rotate its
 * secret (the new one answered once), send a test event, a page of its deliveries, redeliver one.
 */
import type { components } from '../../../client/index.js';
import { refusalText } from '../admin/refusal.js';
import { attempt, type Loaded } from '../device/load.js';
import { api, problemText } from '../session.js';

/** A webhook as the API answers it (never its secret, but on create and rotate). */
export type Webhook = components['schemas']['Webhook'];
/** A webhook with its new secret: the answer of a create or a rotation. */
export type WebhookWithSecret = components['schemas']['WebhookWithSecret'];
/** One event's delivery to a webhook, with its attempts. */
export type Delivery = components['schemas']['WebhookDelivery'];
/** One of the event types a webhook subscribes to. */
export type WebhookEventType = Webhook['events'][number];
/** What a new webhook is made of. */
export type WebhookCreate = components['schemas']['WebhookCreate'];

/** Deliveries one page of the deliveries table shows. */
export const DELIVERIES_PAGE = 20;

/** Deliveries read per webhook for the list's "Last deliveries" column. */
export const LAST_DELIVERIES = 5;

/** A page of the company's webhooks, from `cursor` (the first page without it). */
export function loadWebhooks(company: string, cursor?: string): Promise<Loaded<{ items: Webhook[]; nextCursor: string | null }>> {
  return attempt(() =>
    api.main.GET('/companies/{companyId}/webhooks', {
      params: { path: { companyId: company }, query: cursor === undefined ? {} : { cursor } },
    }),
  );
}

/** One webhook of the company; a 404 has `status` 404. */
export function loadWebhook(company: string, webhookId: string): Promise<Loaded<Webhook>> {
  return attempt(() =>
    api.main.GET('/companies/{companyId}/webhooks/{webhookId}', { params: { path: { companyId: company, webhookId } } }),
  );
}

/**
 * Creates a webhook: it with its secret, or the refusal with each field the service names (`url: must be https…`).
 */
export async function createWebhook(company: string, body: WebhookCreate): Promise<Loaded<WebhookWithSecret>> {
  try {
    const { data, error, response } = await api.main.POST('/companies/{companyId}/webhooks', {
      params: { path: { companyId: company } },
      body,
    });
    if (data !== undefined) return { ok: true, data };
    return { ok: false, message: refusalText(error, response.status), status: response.status };
  } catch {
    return { ok: false, message: problemText(undefined) };
  }
}

/** Enables or disables a webhook: the webhook as changed. */
export function setEnabled(company: string, webhookId: string, enabled: boolean): Promise<Loaded<Webhook>> {
  return attempt(() =>
    api.main.PATCH('/companies/{companyId}/webhooks/{webhookId}', {
      params: { path: { companyId: company, webhookId } },
      body: { enabled },
    }),
  );
}

/** Deletes a webhook (its deliveries stop). */
export function deleteWebhook(company: string, webhookId: string): Promise<Loaded<null>> {
  return attempt(async () => {
    const answer = await api.main.DELETE('/companies/{companyId}/webhooks/{webhookId}', {
      params: { path: { companyId: company, webhookId } },
    });
    return { ...answer, data: answer.response.ok ? null : undefined };
  });
}

/** Rotates a webhook's secret: the webhook with its new secret (the previous one signs until previousSecretExpiresAt). */
export function rotateSecret(company: string, webhookId: string): Promise<Loaded<WebhookWithSecret>> {
  return attempt(() =>
    api.main.POST('/companies/{companyId}/webhooks/{webhookId}/secret', { params: { path: { companyId: company, webhookId } } }),
  );
}

/** Sends a `webhook.test` event: its delivery, PENDING. */
export function sendTest(company: string, webhookId: string): Promise<Loaded<Delivery>> {
  return attempt(() =>
    api.main.POST('/companies/{companyId}/webhooks/{webhookId}/test', { params: { path: { companyId: company, webhookId } } }),
  );
}

/** A page of a webhook's deliveries, newest first, `limit` of them, from `cursor` (the first page without it). */
export function loadDeliveries(
  company: string,
  webhookId: string,
  limit: number,
  cursor?: string,
): Promise<Loaded<{ items: Delivery[]; nextCursor: string | null }>> {
  return attempt(() =>
    api.main.GET('/companies/{companyId}/webhooks/{webhookId}/deliveries', {
      params: { path: { companyId: company, webhookId }, query: { limit, ...(cursor === undefined ? {} : { cursor }) } },
    }),
  );
}

/** Sends a delivery again (a new series of attempts, the same `webhook-id`): the delivery, PENDING. */
export function redeliver(company: string, webhookId: string, deliveryId: string): Promise<Loaded<Delivery>> {
  return attempt(() =>
    api.main.POST('/companies/{companyId}/webhooks/{webhookId}/deliveries/{deliveryId}/redeliver', {
      params: { path: { companyId: company, webhookId, deliveryId } },
    }),
  );
}
