/** Bodies of the webhooks routes (docs/webhooks.md, "API"). */
import * as z from 'zod';
import { displayText } from '../../core/shared/display-text.js';
import { ULID_PATTERN } from '../../core/shared/identifiers.js';
import { withThousandsSeparators } from '../../core/shared/thousands.js';
import {
  DELIVERY_STATES,
  MAX_DELIVERY_ATTEMPTS,
  MAX_KEPT_ATTEMPTS,
  MAX_WEBHOOK_DESCRIPTION_LENGTH,
  MAX_WEBHOOK_URL_LENGTH,
  WEBHOOK_EVENT_TYPES,
} from '../../core/webhooks/model.js';

const dateTime = (description: string) => z.iso.datetime({ offset: true }).describe(description);
const ulidId = (description: string) => z.string().regex(ULID_PATTERN).describe(description);

export const WebhookEventType = z.enum(WEBHOOK_EVENT_TYPES).meta({
  id: 'WebhookEventType',
  description: 'An event a webhook may subscribe to (docs/webhooks.md, "Event types", documents each body).',
});

const url = displayText(z.string().min(1).max(MAX_WEBHOOK_URL_LENGTH), 'line').describe(
  `Where deliveries are POSTed: an absolute \`https\` URL (\`http\` only for the hosts \`WEBHOOK_ALLOWED_HTTP_HOSTS\` names), without user name, password or fragment, at most ${withThousandsSeparators(MAX_WEBHOOK_URL_LENGTH)} characters. An IP address in a private, loopback, link-local, carrier-grade NAT or metadata range is refused; a host name is resolved, and checked, at every delivery.`,
);

const events = z
  .array(WebhookEventType)
  .min(1)
  .max(WEBHOOK_EVENT_TYPES.length)
  .refine((types) => new Set(types).size === types.length, { error: 'must not name an event type twice' })
  .describe('The event types delivered: at least one, each once.');

const description = displayText(z.string().max(MAX_WEBHOOK_DESCRIPTION_LENGTH), 'line').describe(
  `What the webhook is for, at most ${MAX_WEBHOOK_DESCRIPTION_LENGTH} characters, one line.`,
);

export const WebhookCreateBody = z.strictObject({ url, events, description: description.nullable().optional() }).meta({
  id: 'WebhookCreate',
  examples: [{ url: 'https://hooks.example.com/kiosks', events: ['deployment.failed', 'device.disconnected'], description: 'On-call' }],
});

export const WebhookUpdateBody = z
  .strictObject({
    url: url.optional(),
    events: events.optional(),
    description: description.nullable().optional(),
    enabled: z
      .boolean()
      .optional()
      .describe('false stops deliveries; true resumes them (also after the service disabled a webhook failing for 5 days).'),
  })
  .refine((body) => Object.keys(body).length > 0, { error: 'must change at least one of url, events, description, enabled' })
  .meta({ id: 'WebhookUpdate', examples: [{ events: ['deployment.failed'], enabled: true }] });

const webhookShape = {
  id: ulidId('ULID: sorts by creation time.'),
  url: z.string(),
  events: z.array(WebhookEventType),
  description: z.string().nullable(),
  enabled: z.boolean().describe('false: nothing is delivered (disabled by a PATCH, or by the service after 5 days of failures).'),
  created: dateTime('ISO-8601.'),
  updated: dateTime('ISO-8601: the last change.'),
  by: z.string().describe('Who created it (a username).'),
  failingSince: dateTime('ISO-8601: since when every delivery has failed; null when the last one succeeded.').nullable(),
  previousSecretExpiresAt: dateTime(
    'ISO-8601: until when the secret before the last rotation still signs beside the current one; null when none does.',
  ).nullable(),
};

export const Webhook = z
  .object(webhookShape)
  .strict()
  .meta({ id: 'Webhook', description: 'A webhook: where events of the company are delivered. Its secret is never shown again.' });

export const WebhookWithSecret = z
  .object({
    ...webhookShape,
    secret: z
      .string()
      .regex(/^whsec_[A-Za-z0-9+/]+={0,2}$/)
      .describe(
        'The signing secret (`whsec_` + base64 of 32 bytes; Standard Webhooks): shown only in this answer. Keep it to verify `webhook-signature`.',
      ),
  })
  .strict()
  .meta({ id: 'WebhookWithSecret', description: 'A webhook with its new signing secret (create and rotate only).' });

export const WebhookPage = z
  .object({
    items: z.array(Webhook).describe('Oldest first.'),
    nextCursor: z.string().nullable().describe('Pass as `cursor` to get the next page; null on the last page.'),
  })
  .strict()
  .meta({ id: 'WebhookPage' });

export const DeliveryAttempt = z
  .object({
    at: dateTime('ISO-8601: when the attempt started.'),
    status: z.int().nullable().describe("The receiver's HTTP status; null when none came (refused, unreachable, timed out)."),
    error: z.string().nullable().describe('Why the attempt failed (e.g. `refused: 10.0.0.1 is a private address`); null on success.'),
    durationMs: z.number().min(0).nullable().describe('ms from connect to the status; null when refused before connecting.'),
  })
  .strict()
  .meta({ id: 'DeliveryAttempt' });

export const WebhookDelivery = z
  .object({
    id: ulidId('ULID (time part: the event’s), the same whenever the event is replayed.'),
    eventId: z.string().describe('The event delivered.'),
    messageId: z.string().describe('The `webhook-id` header of every attempt: `msg_` + the delivery id.'),
    type: WebhookEventType,
    state: z
      .enum(DELIVERY_STATES)
      .describe(`PENDING until a 2xx (SUCCEEDED) or its last attempt failed (FAILED; at most ${MAX_DELIVERY_ATTEMPTS} attempts).`),
    attempts: z.int().min(0).describe('Attempts made so far.'),
    lastStatus: z.int().nullable().describe("The last attempt's HTTP status; null when none answered (or none was made)."),
    nextAttemptAt: dateTime('ISO-8601: when the next attempt is due; null once final.').nullable(),
    created: dateTime('ISO-8601.'),
    history: z.array(DeliveryAttempt).max(MAX_KEPT_ATTEMPTS).describe(`The attempts, oldest first (the latest ${MAX_KEPT_ATTEMPTS}).`),
  })
  .strict()
  .meta({ id: 'WebhookDelivery', description: 'One event’s delivery to a webhook, with its attempts.' });

export const WebhookDeliveryPage = z
  .object({
    items: z.array(WebhookDelivery).describe('Newest first.'),
    nextCursor: z.string().nullable().describe('Pass as `cursor` to get the next page; null on the last page.'),
  })
  .strict()
  .meta({ id: 'WebhookDeliveryPage' });
