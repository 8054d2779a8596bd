/**
 * Webhooks (docs/webhooks.md): a company's subscriptions to the service's events, each delivered as the Standard
 * Webhooks specification says (https://www.standardwebhooks.com/: `webhook-id`, `webhook-timestamp`,
 * `webhook-signature`), at least once, retried on a fixed schedule.
 */

/** Every event type a webhook may subscribe to (docs/webhooks.md documents each body). */
export const WEBHOOK_EVENT_TYPES = [
  'deployment.succeeded',
  'deployment.failed',
  'device.connected',
  'device.disconnected',
  'rollout.paused',
  'rollout.completed',
  'command.succeeded',
  'command.failed',
  'command.expired',
  'alert.raised',
  'alert.resolved',
  'webhook.test',
] as const;

/** One of WEBHOOK_EVENT_TYPES. */
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** Whether `value` is one of WEBHOOK_EVENT_TYPES. */
export function isWebhookEventType(value: string): value is WebhookEventType {
  return (WEBHOOK_EVENT_TYPES as readonly string[]).includes(value);
}

/**
 * One event as a receiver gets it: the body of every delivery (Standard Webhooks' payload structure). `data` is the
 * event's own fields, never a whole archive or device document: at most MAX_WEBHOOK_DATA_BYTES of JSON.
 */
export interface WebhookEvent {
  /** The company the event belongs to (not sent: each webhook belongs to one company). */
  company: string;
  /**
   * What identifies the event, stable across replays of the change it comes from (a stream batch or a bus event
   * delivered twice gives the same id): the deliveries' `webhook-id` derives from it.
   */
  eventId: string;
  type: WebhookEventType;
  /** ISO-8601: when the change happened. */
  timestamp: string;
  data: Record<string, unknown>;
}

/** The bound of an event's `data`, bytes of JSON (UTF-8): larger data is cut to its identifiers (docs/webhooks.md). */
export const MAX_WEBHOOK_DATA_BYTES = 16 * 1024;

/** Webhooks a company may have. */
export const MAX_WEBHOOKS_PER_COMPANY = 100;

/** The longest webhook URL accepted, characters. */
export const MAX_WEBHOOK_URL_LENGTH = 2048;

/** The longest webhook description accepted, characters. */
export const MAX_WEBHOOK_DESCRIPTION_LENGTH = 256;

/** How long a rotated-out secret keeps signing beside the new one, ms (24 h). */
export const PREVIOUS_SECRET_OVERLAP_MS = 24 * 60 * 60 * 1000;

/** A receiver's answer must arrive within this, ms; otherwise the attempt failed. */
export const DELIVERY_TIMEOUT_MS = 10_000;

/**
 * The wait after each failed attempt before the next one, ms, first attempt's failure first: 5 s, 5 min, 30 min,
 * 2 h, 5 h, 10 h, 10 h (about 27.6 h in all), each ±10 % jitter. After the last, the delivery is FAILED.
 */
export const RETRY_SCHEDULE_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000] as const;

/** Attempts a delivery gets at most: the first and one per RETRY_SCHEDULE_MS entry. */
export const MAX_DELIVERY_ATTEMPTS = RETRY_SCHEDULE_MS.length + 1;

/** Jitter of each retry's wait, as a fraction of it (±). */
export const RETRY_JITTER = 0.1;

/** A webhook whose deliveries have failed without a success for this long is disabled, ms (5 days). */
export const DISABLE_AFTER_FAILING_MS = 5 * 24 * 60 * 60 * 1000;

/** A delivery's state: PENDING until a 2xx (SUCCEEDED) or its last attempt failed (FAILED). */
export const DELIVERY_STATES = ['PENDING', 'SUCCEEDED', 'FAILED'] as const;

/** One of DELIVERY_STATES. */
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/** A webhook as answered (its secrets never are, except once on create and rotate). */
export interface Webhook {
  /** ULID. */
  id: string;
  company: string;
  url: string;
  events: WebhookEventType[];
  description: string | null;
  /** False once disabled (by a PATCH, or after failing DISABLE_AFTER_FAILING_MS): nothing is delivered to it. */
  enabled: boolean;
  /** ISO-8601. */
  created: string;
  /** ISO-8601. */
  updated: string;
  /** Who created it (a user's subject). */
  by: string;
  /** ISO-8601: since when every delivery has failed (reset by a success); null when the last one succeeded. */
  failingSince: string | null;
  /** ISO-8601: until when the previous secret still signs, after a rotation; null otherwise. */
  previousSecretExpiresAt: string | null;
}

/** A webhook as stored: with its signing secrets (`whsec_` + base64 of 32 random bytes). */
export interface StoredWebhook extends Webhook {
  secret: string;
  /** The secret before the last rotation, signing beside `secret` until previousSecretExpiresAt. */
  previousSecret: string | null;
}

/** One attempt of a delivery. */
export interface DeliveryAttempt {
  /** ISO-8601. */
  at: string;
  /** The receiver's HTTP status, or null when none came (refused, unreachable, timed out). */
  status: number | null;
  /** Why the attempt failed, for a person (e.g. "refused: 10.0.0.1 is a private address"), null on success. */
  error: string | null;
  /** ms from connect to the answer's status, null when refused before connecting. */
  durationMs: number | null;
}

/** The attempts a delivery keeps (its last ones), bounded so the item stays small. */
export const MAX_KEPT_ATTEMPTS = MAX_DELIVERY_ATTEMPTS + 4;

/** One event's delivery to one webhook. */
export interface WebhookDelivery {
  /** ULID (time part: the event's timestamp), derived from the event id and the webhook id: the same on a replay. */
  id: string;
  company: string;
  webhookId: string;
  /** The event's id (WebhookEvent.eventId). */
  eventId: string;
  /** The `webhook-id` header of every attempt: `msg_` + the delivery id. */
  messageId: string;
  type: WebhookEventType;
  state: DeliveryState;
  /** Attempts made so far. */
  attempts: number;
  /** The last attempt's HTTP status, null when none answered. */
  lastStatus: number | null;
  /** ISO-8601: when the next attempt is due; null once final. */
  nextAttemptAt: string | null;
  /** ISO-8601. */
  created: string;
  /** The attempts, oldest first (at most MAX_KEPT_ATTEMPTS, the latest kept). */
  history: DeliveryAttempt[];
}

/** A delivery as stored: with the body it sends (`{type, timestamp, data}`, JSON). */
export interface StoredDelivery extends WebhookDelivery {
  payload: string;
}
